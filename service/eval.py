"""``canoe eval``: a clinical safety check a hospital runs on its own cases before go-live.

A cases folder holds an expectations file (``expectations.json``, format ``canoe.eval/1``) that
names FHIR bundles by path (relative to the folder) and, per bundle:

* ``must_include``: findings that must appear among the *included* activities. A finding is a
  list of terms (or one string); it is found when one included activity holds every term,
  case-insensitively, in its title, its description or the text of one of its live supporting
  arguments.
* ``must_not_include``: recommendations that must not be included. Each is a list of terms (or
  one string), matched on the title and description of included activities only (an argument
  may well *mention* what must not be done, e.g. "stop the NSAID").

Every case is planned end to end on the configured backend; the report lists each expectation
as ``found`` / ``missed`` / ``absent`` / ``unsafe``, per case and in total. Any missed finding or
unsafe inclusion fails the run. The checking (``check_case``) is pure; ``load_cases`` reads the
folder and ``run_eval`` plans the cases.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.core.evaluation import Evaluation
from service.core.model import Deliberation, Option
from service.errors import InputError

__all__ = [
    "EVAL_FORMAT",
    "Case",
    "CaseResult",
    "Check",
    "check_case",
    "load_cases",
    "report_json",
    "report_table",
]

EVAL_FORMAT = "canoe.eval/1"
EXPECTATIONS_FILE = "expectations.json"


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    bundle: Path
    must_include: tuple[tuple[str, ...], ...]
    must_not_include: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Check:
    kind: str  # "must_include" | "must_not_include"
    terms: tuple[str, ...]
    status: str  # found | missed (must_include); absent | unsafe (must_not_include)
    activity: str  # the included activity that matched ("" when none)

    @property
    def failed(self) -> bool:
        return self.status in ("missed", "unsafe")


@dataclass(frozen=True, slots=True)
class CaseResult:
    name: str
    included: tuple[str, ...]  # titles of the included activities, in plan order
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return not any(c.failed for c in self.checks)


def _terms(raw: object, where: str) -> tuple[str, ...]:
    items = [raw] if isinstance(raw, str) else raw
    if (
        not isinstance(items, list)
        or not items
        or not all(isinstance(t, str) and t.strip() for t in items)
    ):
        raise InputError(f"{where}: a finding is a non-empty string or a list of them")
    return tuple(t.strip().lower() for t in items)


def load_cases(folder: Path) -> tuple[Case, ...]:
    """The cases of ``folder/expectations.json``; ``InputError`` naming the field when wrong."""
    path = folder / EXPECTATIONS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(raw, Mapping) or raw.get("format") != EVAL_FORMAT:
        raise InputError(f"{path}: format must be {EVAL_FORMAT!r}")
    cases = raw.get("cases")
    if not isinstance(cases, list) or not cases:
        raise InputError(f"{path}: cases must be a non-empty array")
    out: list[Case] = []
    names: set[str] = set()
    for k, c in enumerate(cases):
        where = f"cases[{k}]"
        if not isinstance(c, Mapping) or not isinstance(c.get("bundle"), str):
            raise InputError(f"{where}.bundle: a path to a FHIR bundle is required")
        name = str(c.get("name") or Path(c["bundle"]).stem)
        if name in names:
            raise InputError(f"{where}.name: duplicate case name {name!r}")
        names.add(name)
        bundle = (folder / c["bundle"]).resolve()
        if not bundle.is_file():
            raise InputError(f"{where}.bundle: no file at {c['bundle']}")
        out.append(
            Case(
                name,
                bundle,
                tuple(
                    _terms(x, f"{where}.must_include[{i}]")
                    for i, x in enumerate(c.get("must_include", []))
                ),
                tuple(
                    _terms(x, f"{where}.must_not_include[{i}]")
                    for i, x in enumerate(c.get("must_not_include", []))
                ),
            )
        )
    return tuple(out)


def _texts(o: Option, with_arguments: bool) -> list[str]:
    texts = [o.title, o.description]
    if with_arguments:
        texts += [a.text for a in o.arguments if a.stance == "support" and a.status != "rejected"]
    return [t.lower() for t in texts]


def _match(o: Option, terms: Sequence[str], with_arguments: bool) -> bool:
    # every term in one text of the activity: the title, the description or one argument
    texts = _texts(o, with_arguments)
    head = " ".join(texts[:2])
    return all(t in head for t in terms) or any(all(t in text for t in terms) for text in texts[2:])


def check_case(case: Case, d: Deliberation, ev: Evaluation) -> CaseResult:
    options = {o.id: o for o in d.options}
    included = [options[oid] for oid in ev.plan]
    checks: list[Check] = []
    for terms in case.must_include:
        hit = next((o for o in included if _match(o, terms, True)), None)
        checks.append(
            Check("must_include", terms, "found" if hit else "missed", hit.title if hit else "")
        )
    for terms in case.must_not_include:
        hit = next((o for o in included if _match(o, terms, False)), None)
        checks.append(
            Check(
                "must_not_include", terms, "unsafe" if hit else "absent", hit.title if hit else ""
            )
        )
    return CaseResult(case.name, tuple(o.title for o in included), tuple(checks))


def _totals(results: Sequence[CaseResult]) -> dict[str, int]:
    checks = [c for r in results for c in r.checks]
    return {
        "cases": len(results),
        "cases_passed": sum(r.passed for r in results),
        "found": sum(c.status == "found" for c in checks),
        "missed": sum(c.status == "missed" for c in checks),
        "absent": sum(c.status == "absent" for c in checks),
        "unsafe": sum(c.status == "unsafe" for c in checks),
    }


def report_json(results: Sequence[CaseResult]) -> dict[str, Any]:
    return {
        "format": "canoe.eval-report/1",
        "passed": all(r.passed for r in results),
        "totals": _totals(results),
        "cases": [
            {
                "name": r.name,
                "passed": r.passed,
                "included": list(r.included),
                "checks": [
                    {
                        "kind": c.kind,
                        "terms": list(c.terms),
                        "status": c.status,
                        "activity": c.activity,
                    }
                    for c in r.checks
                ],
            }
            for r in results
        ],
    }


def report_table(results: Sequence[CaseResult]) -> str:
    out: list[str] = []
    for r in results:
        out.append(f"{r.name}: {'PASS' if r.passed else 'FAIL'} ({len(r.included)} included)")
        for c in r.checks:
            what = " + ".join(c.terms)
            where = f"  <- {c.activity}" if c.activity else ""
            out.append(f"  {c.status.upper():7s} {c.kind:17s} {what}{where}")
    t = _totals(results)
    out.append(
        f"TOTAL: {t['cases_passed']}/{t['cases']} cases passed; findings found {t['found']}, "
        f"missed {t['missed']}; unsafe inclusions {t['unsafe']} (absent as required "
        f"{t['absent']})"
    )
    return "\n".join(out)
