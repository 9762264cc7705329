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

An expectation may also be an object, so that a case file can say why it expects what it does:
``{"terms": [...], "reason": "...", "source": "..."}``; ``"any_of": [[...], [...]]`` in place of
``terms`` accepts any one of several wordings (all terms of one alternative in one activity).
``"rank_at_most": N`` on a ``must_include`` expectation also asks that the activity be among the
first N of the plan (the clinician summary shows the first 8). ``"where": "arguments"`` on a
``must_not_include`` expectation looks for a claim that must not be made: every term in the
text of one argument of any proposed option, whatever its stance or fate (the clinician reads
them all in the detail view). ``"where": "summary"`` (either kind) reads the clinician
summary's lines instead: every term in one line's text (action, timeframe, deciding fact,
reason and who proposed it), so a case can ask which fact a line gives as its key fact;
``rank_at_most`` then bounds that line's rank. Plain strings and lists keep their meaning.

Every case is planned end to end on the configured backend; the report lists each expectation
as ``found`` / ``missed`` / ``absent`` / ``unsafe``, per case and in total. Any missed finding or
unsafe inclusion fails the run. Each case also reports the Flesch-Kincaid grade (FKGL) of its
clinician summary and of its patient version, with the mean and worst grade of each over the run
and how many patient versions read above grade 8 (reported, not a failure of the run;
``with_readability``). The checking (``check_case``) is pure; ``load_cases`` reads the folder
(``expectations.json`` unless another file of the folder is named, e.g. a file of known gaps
that is expected to fail until the plans improve).
"""

from __future__ import annotations

import asyncio
import json
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.core.evaluation import Evaluation
from service.core.model import Deliberation, Option
from service.errors import InputError
from service.pipeline import new_plan_id
from service.readability import MAX_PATIENT_GRADE, fkgl
from service.text.patient import patient_text
from service.text.summary import SummaryLine, summarise, summary_text

if TYPE_CHECKING:
    from service.pipeline import Planner, PlanResult
    from service.settings import Settings

__all__ = [
    "EVAL_FORMAT",
    "Case",
    "CaseResult",
    "Check",
    "Expectation",
    "PlannedCase",
    "check_case",
    "load_cases",
    "plan_cases",
    "report_json",
    "report_table",
    "uncovered_items",
    "with_readability",
]

EVAL_FORMAT = "canoe.eval/1"
EXPECTATIONS_FILE = "expectations.json"


WHERE = ("activities", "arguments", "summary")


@dataclass(frozen=True, slots=True)
class Expectation:
    """One finding (or forbidden recommendation): any one alternative, all of its terms."""

    alternatives: tuple[tuple[str, ...], ...]
    reason: str = ""
    source: str = ""
    # "arguments": a claim no argument may make (must_not_include); "summary": the terms in
    # one line of the clinician summary (either kind)
    where: str = "activities"
    rank_at_most: int | None = None  # must_include: found only this high in the plan order

    @property
    def terms(self) -> tuple[str, ...]:
        return self.alternatives[0]


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    bundle: Path
    must_include: tuple[Expectation, ...]
    must_not_include: tuple[Expectation, ...]


@dataclass(frozen=True, slots=True)
class Check:
    kind: str  # "must_include" | "must_not_include"
    terms: tuple[str, ...]  # the alternative that matched, else the first
    status: str  # found | missed (must_include); absent | unsafe (must_not_include)
    activity: str  # the included activity that matched ("" when none)
    expectation: Expectation | None = None

    @property
    def failed(self) -> bool:
        return self.status in ("missed", "unsafe")


@dataclass(frozen=True, slots=True)
class CaseResult:
    name: str
    included: tuple[str, ...]  # titles of the included activities, in plan order
    checks: tuple[Check, ...]
    # Flesch-Kincaid grade of the clinician summary and of the patient version (reported; the
    # patient's is bounded by MAX_PATIENT_GRADE, which the tests hold on every case)
    fkgl_clinician: float = 0.0
    fkgl_patient: float = 0.0
    # The record items no check of the knowledge covers (the coverage statement's "No check
    # covers" list), by risk; reported, not a failure of the run.
    uncovered: tuple[str, ...] = ()

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


def _expectation(raw: object, where: str, kind: str) -> Expectation:
    if not isinstance(raw, Mapping):
        return Expectation((_terms(raw, where),))
    unknown = set(raw) - {"terms", "any_of", "reason", "source", "where", "rank_at_most"}
    if unknown:
        raise InputError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    if ("terms" in raw) == ("any_of" in raw):
        raise InputError(f"{where}: give either terms or any_of")
    if "terms" in raw:
        alternatives: tuple[tuple[str, ...], ...] = (_terms(raw["terms"], f"{where}.terms"),)
    else:
        alts = raw["any_of"]
        if not isinstance(alts, list) or not alts:
            raise InputError(f"{where}.any_of: a non-empty array of findings is required")
        alternatives = tuple(_terms(a, f"{where}.any_of[{i}]") for i, a in enumerate(alts))
    texts: dict[str, str] = {}
    for field in ("reason", "source"):
        value = raw.get(field, "")
        if not isinstance(value, str):
            raise InputError(f"{where}.{field}: a string is required")
        texts[field] = value.strip()
    scope = raw.get("where", "activities")
    if scope not in WHERE or (scope == "arguments" and kind != "must_not_include"):
        raise InputError(
            f"{where}.where: 'activities', 'summary', or 'arguments' on a must_not_include "
            "expectation"
        )
    rank = raw.get("rank_at_most")
    if rank is not None and (
        kind != "must_include" or not isinstance(rank, int) or isinstance(rank, bool) or rank < 1
    ):
        raise InputError(
            f"{where}.rank_at_most: a whole number >= 1, on a must_include expectation"
        )
    return Expectation(alternatives, texts["reason"], texts["source"], str(scope), rank)


def _expectations(c: Mapping[str, Any], kind: str, where: str) -> tuple[Expectation, ...]:
    items = c.get(kind, [])
    if not isinstance(items, list):
        raise InputError(f"{where}.{kind}: an array is required")
    return tuple(_expectation(x, f"{where}.{kind}[{i}]", kind) for i, x in enumerate(items))


def load_cases(folder: Path, file: str = EXPECTATIONS_FILE) -> tuple[Case, ...]:
    """The cases of ``folder/file`` (``expectations.json`` by default); ``InputError`` naming
    the field when wrong."""
    path = folder / file
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
                _expectations(c, "must_include", where),
                _expectations(c, "must_not_include", where),
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


def _claimed(d: Deliberation, terms: Sequence[str]) -> Option | None:
    # a claim made by any argument of any proposed option, whatever its stance or fate
    for o in d.options:
        if any(all(t in a.text.lower() for t in terms) for a in o.arguments):
            return o
    return None


def _find(
    e: Expectation, d: Deliberation, included: Sequence[Option], with_arguments: bool
) -> tuple[tuple[str, ...], Option | None]:
    for terms in e.alternatives:
        if e.where == "arguments":
            hit = _claimed(d, terms)
        else:
            hit = next((o for o in included if _match(o, terms, with_arguments)), None)
        if hit is not None:
            return terms, hit
    return e.terms, None


def _in_summary(e: Expectation, lines: Sequence[SummaryLine]) -> tuple[tuple[str, ...], str]:
    """The alternative found and the line (its action and rank) holding all its terms; a line
    ranked below ``rank_at_most`` does not count."""
    for terms in e.alternatives:
        for line in lines:
            if e.rank_at_most is not None and line.rank > e.rank_at_most:
                break
            if all(t in line.text().lower() for t in terms):
                return terms, f"{line.action} (summary line {line.rank})"
    return e.terms, ""


def check_case(case: Case, plan: Deliberation, ev: Evaluation) -> CaseResult:
    options = {o.id: o for o in plan.options}
    included = [options[oid] for oid in ev.plan]
    wanted = any(e.where == "summary" for e in (*case.must_include, *case.must_not_include))
    lines = summarise(plan, ev).lines if wanted else ()
    checks: list[Check] = []
    for e in case.must_include:
        if e.where == "summary":
            terms, line = _in_summary(e, lines)
            checks.append(Check("must_include", terms, "found" if line else "missed", line, e))
            continue
        terms, hit = _find(e, plan, included, True)
        where = hit.title if hit else ""
        if hit is not None and e.rank_at_most is not None:
            # ranked too low to be seen where it must be (e.g. the clinician summary's first lines)
            rank = included.index(hit) + 1
            where = f"{hit.title} (rank {rank})"
            if rank > e.rank_at_most:
                hit = None
        checks.append(Check("must_include", terms, "found" if hit else "missed", where, e))
    for e in case.must_not_include:
        if e.where == "summary":
            terms, line = _in_summary(e, lines)
            checks.append(Check("must_not_include", terms, "unsafe" if line else "absent", line, e))
            continue
        terms, hit = _find(e, plan, included, False)
        checks.append(
            Check(
                "must_not_include",
                terms,
                "unsafe" if hit else "absent",
                hit.title if hit else "",
                e,
            )
        )
    return CaseResult(
        case.name, tuple(o.title for o in included), tuple(checks), uncovered=uncovered_items(plan)
    )


def uncovered_items(plan: Deliberation) -> tuple[str, ...]:
    """The record items no check covers, as the coverage statement names them, by risk."""
    c = plan.meta.coverage
    if c is None:
        return ()
    return tuple(
        f"{g.label} [high risk]" if g.high_risk else g.label
        for g in c.gaps
        if g.kind == "uncovered"
    )


@dataclass(frozen=True, slots=True)
class PlannedCase:
    """One case planned end to end and checked: its plan and the check's result."""

    case: Case
    plan: PlanResult
    result: CaseResult


def plan_cases(
    cases: Sequence[Case],
    planner: Planner,
    settings: Settings,
    *,
    created: str,
    received: datetime,
) -> Iterator[PlannedCase]:
    """Ingest, plan and check each case in turn, as ``canoe eval`` and the vignette
    repartition both do: ``created`` is the plans' request time, ``received`` the same instant
    as the time ingest judges the record's dates against. Each plan is named from its Bundle's
    bytes, as ``canoe plan`` names it."""
    from fhir_mapping.ingest import ingest

    for case in cases:
        try:
            raw = case.bundle.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {case.bundle}: {exc.strerror}") from exc
        profile = ingest(
            raw,
            max_resources=settings.limits.max_bundle_resources,
            received=received,
            clock_skew=settings.fhir.clock_skew,
        )
        plan = asyncio.run(planner.plan(profile, plan_id=new_plan_id(raw), created=created))
        yield PlannedCase(case, plan, check_case(case, plan.deliberation, plan.evaluation))


def with_readability(result: CaseResult, plan: Deliberation, ev: Evaluation) -> CaseResult:
    """The case's result with the Flesch-Kincaid grade of its clinician summary and of its
    patient version, one decimal."""
    return replace(
        result,
        fkgl_clinician=round(fkgl(summary_text(plan, ev)), 1),
        fkgl_patient=round(fkgl(patient_text(plan, ev)), 1),
    )


def _grades(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Per version, the mean and worst Flesch-Kincaid grade; how many patient versions are
    above the bound."""
    out: dict[str, Any] = {}
    for who in ("clinician", "patient"):
        g = [getattr(r, f"fkgl_{who}") for r in results]
        out[who] = {"mean": round(sum(g) / len(g), 1) if g else 0.0, "max": max(g, default=0.0)}
    out["patient_bound"] = MAX_PATIENT_GRADE
    out["patient_over_bound"] = sum(r.fkgl_patient > MAX_PATIENT_GRADE for r in results)
    return out


def _uncovered(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Uncovered items per plan: the median and the most over the run, and their total."""
    n = sorted(len(r.uncovered) for r in results)
    return {
        "median": statistics.median(n) if n else 0,
        "max": n[-1] if n else 0,
        "total": sum(n),
    }


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


def _check_json(c: Check) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": c.kind,
        "terms": list(c.terms),
        "status": c.status,
        "activity": c.activity,
    }
    e = c.expectation
    if e is not None:  # written only when the case file says it
        if len(e.alternatives) > 1:
            out["any_of"] = [list(a) for a in e.alternatives]
        if e.rank_at_most is not None:
            out["rank_at_most"] = e.rank_at_most
        if e.where != "activities":
            out["where"] = e.where
        for key in ("reason", "source"):
            if getattr(e, key):
                out[key] = getattr(e, key)
    return out


def report_json(results: Sequence[CaseResult]) -> dict[str, Any]:
    return {
        "format": "canoe.eval-report/1",
        "passed": all(r.passed for r in results),
        "totals": _totals(results),
        "fkgl": _grades(results),
        "uncovered": _uncovered(results),
        "cases": [
            {
                "name": r.name,
                "passed": r.passed,
                "fkgl": {"clinician": r.fkgl_clinician, "patient": r.fkgl_patient},
                "included": list(r.included),
                "checks": [_check_json(c) for c in r.checks],
                "uncovered": list(r.uncovered),
            }
            for r in results
        ],
    }


def report_table(results: Sequence[CaseResult]) -> str:
    out: list[str] = []
    for r in results:
        out.append(
            f"{r.name}: {'PASS' if r.passed else 'FAIL'} ({len(r.included)} included; "
            f"FKGL clinician {r.fkgl_clinician:.1f}, patient {r.fkgl_patient:.1f})"
        )
        for c in r.checks:
            what = " + ".join(c.terms)
            if c.expectation is not None and c.expectation.where != "activities":
                what = f"{'claim' if c.expectation.where == 'arguments' else 'summary'}: {what}"
            where = f"  <- {c.activity}" if c.activity else ""
            out.append(f"  {c.status.upper():7s} {c.kind:17s} {what}{where}")
            if c.failed and c.expectation is not None and c.expectation.reason:
                source = f" ({c.expectation.source})" if c.expectation.source else ""
                out.append(f"          why: {c.expectation.reason}{source}")
        if r.uncovered:
            out.append(f"  UNCOVERED ({len(r.uncovered)}): " + "; ".join(r.uncovered))
    t = _totals(results)
    out.append(
        f"TOTAL: {t['cases_passed']}/{t['cases']} cases passed; findings found {t['found']}, "
        f"missed {t['missed']}; unsafe inclusions {t['unsafe']} (absent as required "
        f"{t['absent']})"
    )
    u = _uncovered(results)
    out.append(
        f"UNCOVERED items per plan: median {u['median']:g}, max {u['max']} (total {u['total']})"
    )
    g = _grades(results)
    out.append(
        f"FKGL: clinician mean {g['clinician']['mean']:.1f}, max {g['clinician']['max']:.1f}; "
        f"patient mean {g['patient']['mean']:.1f}, max {g['patient']['max']:.1f} "
        f"({g['patient_over_bound']} above grade {MAX_PATIENT_GRADE:g})"
    )
    return "\n".join(out)
