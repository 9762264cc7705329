"""The trigger index (``inference.knowledge.triggers``) leaves out only criteria that cannot fire.

On every example bundle (the FHIR fixtures and every vignette) the criteria evaluated through the
index give exactly the firings, proposals, problems and withheld claims that evaluating every
criterion gives, and every criterion with a binding is among the candidates. The profile each
criterion's own data builds to satisfy it (``criteria_factory.positive``) makes it a candidate.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fhir_mapping.ingest import build_profile, parse_bundle
from inference.knowledge.analysis import Output
from inference.knowledge.criteria.interpret import _match, apply_criteria
from inference.knowledge.criteria.schema import Criterion, LabTest, Trigger
from inference.knowledge.drugs import DRUGS
from inference.knowledge.registry import Case, run_rules
from inference.knowledge.rules import NOT_IN_PREGNANCY, _record_problems
from inference.knowledge.site import firing, shipped
from inference.knowledge.triggers import build, candidates, clauses, trigger_index
from service.errors import CanoeError
from service.record.profile import PatientProfile
from tests.inference.criteria_factory import positive

ROOT = Path(__file__).resolve().parents[2]
_NOT_BUNDLES = {"expectations.json", "known_gaps.json", "blind_expectations.json"}


def _bundles() -> list[Path]:
    found = sorted((ROOT / "examples" / "fixtures" / "fhir").glob("*.json"))
    for folder in sorted(ROOT.glob("examples/vignettes*/")):
        found += sorted(p for p in folder.glob("*.json") if p.name not in _NOT_BUNDLES)
    return found


def _profile(path: Path) -> PatientProfile | None:
    try:
        return build_profile(parse_bundle(path.read_bytes(), max_resources=100_000))
    except CanoeError:
        return None  # a bad fixture: refused before any criterion is read


def _apply(profile: PatientProfile, criteria: tuple[Criterion, ...]) -> tuple[object, ...]:
    """What the criteria add to a plan, as ``rules._analyse`` applies them."""
    c = Case(profile)
    c.base = tuple(_record_problems(c))
    o = Output()
    skip = NOT_IN_PREGNANCY if c.pregnancy is not None else frozenset()
    run_rules(c, o, skip)
    fired = apply_criteria([x for x in criteria if x.id not in skip], c, o)
    return fired, o.proposals, o.problems, o.claims_checked, o.withheld, o.high_risk


BUNDLES = _bundles()


def test_there_are_bundles_to_compare() -> None:
    assert len(BUNDLES) > 100


@pytest.mark.parametrize("path", BUNDLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_indexed_evaluation_fires_exactly_as_evaluating_every_criterion(path: Path) -> None:
    profile = _profile(path)
    if profile is None:
        pytest.skip("refused bundle")
    everything = firing(shipped())
    chosen = candidates(trigger_index(shipped()), Case(profile))
    assert {c.id for c in chosen} <= {c.id for c in everything}
    f = Case(profile)
    able = {c.id for c in everything if next(_match(c.trigger, f, c.params), None) is not None}
    assert able <= {c.id for c in chosen}
    assert _apply(profile, chosen) == _apply(profile, everything)


def test_indexed_evaluation_skips_most_criteria_of_a_real_record() -> None:
    profile = _profile(ROOT / "examples" / "fixtures" / "fhir" / "adan_portillo_43b6ae50.json")
    assert profile is not None
    everything = firing(shipped())
    chosen = candidates(trigger_index(shipped()), Case(profile))
    assert len(chosen) < len(everything) / 2


@pytest.mark.parametrize("c", firing(shipped()), ids=lambda c: c.id)
def test_a_record_built_to_fire_a_criterion_makes_it_a_candidate(c: Criterion) -> None:
    f = Case(positive(c))
    if next(_match(c.trigger, f, c.params), None) is None:
        pytest.skip("the factory's record does not satisfy this trigger")
    assert c.id in {x.id for x in candidates(trigger_index(shipped()), f)}


def _with_trigger(c: Criterion, t: Trigger) -> Criterion:
    return c.model_copy(update={"trigger": t, "id": f"{c.id}-x"})


def test_clauses_read_the_necessary_parts_only() -> None:
    t = Trigger(
        drugs=("class:nsaid", "drug:warfarin"),
        any_conditions=("ckd", "heart-failure"),
        absent_drugs=("class:ppi",),
        labs=(LabTest(quantity="potassium", op=">", param="k"),),
    )
    assert set(clauses(t)) == {
        frozenset({"class:nsaid"}),
        frozenset({"drug:warfarin"}),
        frozenset({"group:ckd", "group:heart-failure"}),
        frozenset({"lab:potassium"}),
    }
    # An absence, and an alternative without a concept, give no clause; a table-driven
    # trigger binds from its table, not from ``drugs``, and needs only what the table reads.
    assert clauses(Trigger(absent_drugs=("class:statin",))) == ()
    assert clauses(Trigger(drugs=("class:nsaid",), renal_table=True)) == (
        frozenset({"fact:kidney"}),
    )
    assert clauses(Trigger(pregnant=False)) == ()
    assert clauses(Trigger(pregnant=True)) == (frozenset({"fact:pregnant"}),)
    either = Trigger(any_of=(Trigger(drugs=("drug:metformin",)), Trigger(sex="female")))
    assert clauses(either) == ()
    both = Trigger(any_of=(Trigger(drugs=("drug:metformin",)), Trigger(any_conditions=("dm",))))
    assert clauses(both) == (frozenset({"drug:metformin", "group:dm"}),)


def test_a_criterion_on_a_concept_the_record_lacks_is_not_evaluated() -> None:
    base = firing(shipped())[0]
    profile = _profile(ROOT / "examples" / "fixtures" / "fhir" / "adan_portillo_43b6ae50.json")
    assert profile is not None
    f = Case(profile)
    held = {n for m in f.meds for n in m.drugs}
    absent = next(f"drug:{d.name}" for d in DRUGS if d.name not in held)
    never = _with_trigger(base, Trigger(drugs=(absent,)))
    always = _with_trigger(base, Trigger(absent_drugs=(absent,)))
    index = build((never, always))
    assert candidates(index, f) == (always,)
    present = next(f"drug:{n}" for n in sorted(held))
    on_record = _with_trigger(base, Trigger(drugs=(present,)))
    assert candidates(build((never, on_record, always)), f) == (on_record, always)
