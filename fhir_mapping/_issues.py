"""Turn validation failures into OperationOutcome-ready ``Issue`` tuples with FHIRPath locations.

Private to ``fhir_mapping``. Diagnostics never echo the offending input value: a value may be
patient data, and these messages travel into logs and OperationOutcomes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from pydantic import ValidationError

from service.errors import Issue

__all__ = ["MAX_ISSUES", "IssueList", "fhirpath", "validation_issues"]

MAX_ISSUES: Final = 100  # one error carries at most this many issues, plus a "more" marker

_NAME: Final = re.compile(r"_?[A-Za-z][A-Za-z0-9_]*")

# pydantic error type -> FHIR IssueType. Anything not listed is "invalid".
_REQUIRED: Final = frozenset(
    {"missing", "model_field_validation.missing", "fhir-validation-missing-resource-type"}
)
_STRUCTURE: Final = frozenset(
    {"extra_forbidden", "json_invalid", "model_type", "model_attributes_type", "dict_type"}
)
_VALUE_SUFFIXES: Final = ("_type", "_parsing", "_pattern_mismatch", "_too_long", "_too_short")
_VALUE: Final = frozenset({"literal_error", "enum", "value_error", "assertion_error"})


def fhirpath(base: str, loc: Iterable[object]) -> str:
    """``fhirpath("Bundle.entry[3].resource", ("code", "coding", 0, "system"))`` ->
    ``Bundle.entry[3].resource.code.coding[0].system``. Parts that are not element names or
    indices (pydantic's union/validator tags) are dropped."""
    out = base
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and _NAME.fullmatch(part):
            out += f".{part}"
    return out


def _issue_code(kind: str) -> str:
    if kind in _REQUIRED:
        return "required"
    if kind in _STRUCTURE:
        return "structure"
    if kind in _VALUE or kind.endswith(_VALUE_SUFFIXES):
        return "value"
    return "invalid"


def _diagnostics(kind: str, msg: str) -> str:
    if kind == "json_invalid":
        # pydantic reports a scalar where an object belongs as "Invalid JSON"; say what it is.
        return "wrong JSON type for this element (expected an object)"
    return msg[:300]


def validation_issues(exc: ValidationError, base: str) -> list[Issue]:
    """One Issue per pydantic error, located under ``base`` (e.g. ``Bundle.entry[5].resource``)."""
    issues = []
    for err in exc.errors(include_input=False, include_url=False):
        kind = str(err.get("type", ""))
        loc: Sequence[object] = err.get("loc", ())
        issues.append(
            Issue(
                "error",
                _issue_code(kind),
                _diagnostics(kind, str(err.get("msg", "invalid"))),
                (fhirpath(base, loc),),
            )
        )
    return issues


class IssueList:
    """Collects issues for one Bundle, capped at ``MAX_ISSUES`` so a hostile bundle cannot make
    an error larger than itself."""

    __slots__ = ("_dropped", "_items")

    def __init__(self) -> None:
        self._items: list[Issue] = []
        self._dropped = 0

    def add(self, code: str, diagnostics: str, expression: str, severity: str = "error") -> None:
        self.extend([Issue(severity, code, diagnostics, (expression,))])

    def extend(self, issues: Iterable[Issue]) -> None:
        for issue in issues:
            if len(self._items) < MAX_ISSUES:
                self._items.append(issue)
            else:
                self._dropped += 1

    def __bool__(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items) + self._dropped

    def freeze(self) -> tuple[Issue, ...]:
        if not self._dropped:
            return tuple(self._items)
        more = Issue(
            "error",
            "too-costly",
            f"{self._dropped} further issue(s) not listed",
            ("Bundle",),
        )
        return (*self._items, more)
