"""The criteria's FHIRPath, run by an independent engine (fhirpathpy), against the interpreter.

Every exported condition is evaluated over every fixture and vignette record, with ``%asOf``
the day the interpreter reads the record on, and compared with the interpreter's own decision
(``service.knowledge.explain``) for each (criterion, record) pair: the trigger alone where it is
written, and whether the criterion fires where its trigger and every exception are written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from fhir_mapping.knowledge import NOT_EXECUTABLE
from inference.knowledge.criteria import Criterion
from inference.knowledge.site import shipped
from service.criteria_fhirpath import to_fhirpath
from service.knowledge import explain, knowledge_files
from service.record.profile import PatientProfile
from tests.conftest import REPO_ROOT

fhirpathpy = pytest.importorskip("fhirpathpy", reason="fhirpathpy comes with the dev extra")
from fhirpathpy.models import models  # noqa: E402

RECORDS = sorted(
    p
    for pattern in ("examples/fixtures/fhir/*.json", "examples/vignettes*/*.json")
    for p in REPO_ROOT.glob(pattern)
    if not p.name.startswith("bad_")
)


@dataclass(frozen=True, slots=True)
class Record:
    name: str
    bundle: dict[str, Any]
    profile: PatientProfile


@cache
def records() -> tuple[Record, ...]:
    """Every record, planned whole; the Bundle the engine walks keeps the resource types the
    exported expressions read (``ofType``), in their order: the same answers, without walking
    the claims and reports a large record carries."""
    read = _read_types()
    out = []
    for path in RECORDS:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("resourceType") == "Bundle":
            kept = [
                e
                for e in data.get("entry", ())
                if "*" in read or e["resource"]["resourceType"] in read
            ]
            name = f"{path.parent.name}/{path.name}"
            out.append(Record(name, {**data, "entry": kept}, ingest(data)))
    return tuple(out)


@cache
def _read_types() -> frozenset[str]:
    """The resource types any exported expression reads; an expression that reads the Bundle
    another way keeps every entry."""
    exprs = [e for _, conditions in _exported() for e in conditions]
    if any("entry.resource" in e.replace("entry.resource.ofType(", "") for e in exprs):
        return frozenset({"*"})
    return frozenset(t for e in exprs for t in re.findall(r"ofType\((\w+)\)", e))


@cache
def _compiled(expression: str) -> Callable[..., list[Any]]:
    compiled: Callable[..., list[Any]] = fhirpathpy.compile(expression, models["r4"])
    return compiled


def holds(expression: str, record: Record) -> bool:
    got = _compiled(expression)(record.bundle, {"asOf": record.profile.plan_day.isoformat()})
    assert got in ([], [True], [False]), f"not a boolean: {got!r}"
    return got == [True]


@dataclass(frozen=True, slots=True)
class Pair:
    criterion: str
    record: str
    what: str  # "trigger" or "fires"
    interpreter: bool
    fhirpath: bool


@cache
def _exported() -> tuple[tuple[Criterion, tuple[str, ...]], ...]:
    """Each criterion whose trigger is written, with the expressions of its PlanDefinition's
    applicability conditions as exported (the trigger, then "not" each exception)."""
    files = knowledge_files("https://fhir.example.test/canoe")
    out = []
    for c in shipped().criteria:
        action = files[f"PlanDefinition-{c.id}.json"]["action"][0]
        found = tuple(cond["expression"]["expression"] for cond in action["condition"])
        if found[0] != NOT_EXECUTABLE:
            out.append((c, found))
    return tuple(out)


# The suite evaluates every record on which the interpreter finds a criterion's trigger, and
# one record in NEGATIVE_STRIDE of the others, in turn (fhirpathpy takes tens of milliseconds a
# record); ``pairs(..., stride=1)`` is every pair, as the agreement report counts them.
NEGATIVE_STRIDE = 6


def pairs(
    c: Criterion, conditions: tuple[str, ...], offset: int = 0, stride: int = 1
) -> Iterator[Pair]:
    """The (criterion, record) pairs the exported FHIRPath can decide, for one criterion: the
    trigger alone, and whether the rule fires where every condition is written. Every record
    where the interpreter holds the trigger, and of the others those at ``offset`` modulo
    ``stride``."""
    for k, record in enumerate(records()):
        results = {x.part: x.holds for x in explain(c, record.profile)}
        if not results["trigger"] and k % stride != offset % stride:
            continue
        t_int, t_fp = results["trigger"], holds(conditions[0], record)
        yield Pair(c.id, record.name, "trigger", t_int, t_fp)
        if NOT_EXECUTABLE in conditions:
            continue
        excused = [v for k, v in results.items() if k.startswith("exceptions")]
        fires_int = t_int and not any(excused)
        # FHIRPath's own short cut: once the trigger is false, the rule does not apply.
        fires_fp = t_fp and all(holds(e, record) for e in conditions[1:])
        yield Pair(c.id, record.name, "fires", fires_int, fires_fp)


def share(criteria: tuple[Criterion, ...]) -> tuple[int, int, int, int]:
    """(conditions written, conditions, criteria wholly written, criteria)."""
    written = total = whole = 0
    for c in criteria:
        params = dict(c.params)
        got = [to_fhirpath(t, params) for t in (c.trigger, *c.exceptions)]
        written += sum(g is not None for g in got)
        total += len(got)
        whole += all(g is not None for g in got)
    return written, total, whole, len(criteria)


@pytest.mark.bundle_sweep  # each criterion over every record
@pytest.mark.parametrize("index", range(len(_exported())), ids=[c.id for c, _ in _exported()])
def test_every_written_condition_agrees_with_the_interpreter_on_every_record(index: int) -> None:
    # One criterion over every record (its regular expressions stay in the re module's cache).
    c, conditions = _exported()[index]
    found = list(pairs(c, conditions, offset=index, stride=NEGATIVE_STRIDE))
    disagree = [p for p in found if p.interpreter != p.fhirpath]
    assert found and disagree == [], disagree[:10]


def test_the_records_are_the_fixtures_and_the_vignettes() -> None:
    names = {r.name.split("/")[0] for r in records()}
    assert len(records()) >= 40 and {"fhir", "vignettes", "vignettes2", "vignettes3"} <= names


def test_written_triggers_hold_where_the_record_says_so() -> None:
    """Not vacuous: on the warfarin, naproxen and sertraline vignette some written triggers
    hold (by both readings) and some do not."""
    (record,) = [r for r in records() if r.name == "vignettes3/warfarin_naproxen_sertraline.json"]
    seen = {holds(conditions[0], record) for _c, conditions in _exported()}
    assert seen == {True, False}


def test_a_fair_share_of_the_conditions_is_written() -> None:
    written, total, _whole, _n = share(shipped().criteria)
    assert written / total > 0.2, (written, total)
