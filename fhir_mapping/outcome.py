"""Errors as FHIR OperationOutcome: the one place a refusal becomes FHIR JSON.

A ``CanoeError`` carries its own issues (severity, IssueType code, diagnostics, FHIRPath
expression); they are written as they are. Anything else is an internal failure: it becomes a
single ``exception`` issue with generic diagnostics, so no internals (messages, paths, patient
data inside them) leak to the caller. Only values from the R4 value sets are ever written.
"""

from __future__ import annotations

from typing import Any, Final

from service.errors import CanoeError, Issue

__all__ = ["ISSUE_TYPES", "operation_outcome"]

ISSUE_TYPES: Final = frozenset(
    {
        "invalid", "structure", "required", "value", "invariant", "security", "login",
        "unknown", "expired", "forbidden", "suppressed", "processing", "not-supported",
        "duplicate", "multiple-matches", "not-found", "deleted", "too-long", "code-invalid",
        "extension", "too-costly", "business-rule", "conflict", "transient", "lock-error",
        "no-store", "exception", "timeout", "incomplete", "throttled", "informational",
    }
)  # fmt: skip
_SEVERITIES: Final = frozenset({"fatal", "error", "warning", "information"})
_INTERNAL: Final = "internal error while processing the request"


def _issue(issue: Issue) -> dict[str, Any]:
    out: dict[str, Any] = {
        "severity": issue.severity if issue.severity in _SEVERITIES else "error",
        # A code outside the value set would make the whole resource invalid: fall back to the
        # most general code rather than lose the diagnostics.
        "code": issue.code if issue.code in ISSUE_TYPES else "processing",
    }
    if issue.diagnostics:
        out["diagnostics"] = issue.diagnostics
    expressions = [x for x in issue.expression if isinstance(x, str) and x]
    if expressions:
        out["expression"] = expressions
    return out


def operation_outcome(err: BaseException) -> dict[str, Any]:
    """The OperationOutcome (R4 JSON) for ``err``."""
    if isinstance(err, CanoeError):
        issues = [_issue(i) for i in err.issues] or [
            _issue(Issue("error", err.issue_code, err.message))
        ]
    else:
        issues = [{"severity": "fatal", "code": "exception", "diagnostics": _INTERNAL}]
    return {"resourceType": "OperationOutcome", "issue": issues}
