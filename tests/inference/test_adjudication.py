"""The clash comparator (inference.adjudication.compare): each rule on hand-built clashes, the
order between rules, no keyword matching, and worked examples on the fixtures."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from inference.adjudication import compare, fact_status
from inference.embedded import EmbeddedExperts
from inference.protocol import Adjudicate, ArgumentDraft, CallContext, CandidateOption
from service.record.profile import Observation, PatientProfile
from tests.conftest import fixture_bundle
from tests.e2e.test_plan_end_to_end import plan_of
from tests.inference.test_embedded_fixtures import load, run

TODAY = date(2024, 6, 1)
BP = "Observation/bp"
PROFILE = PatientProfile(
    ref="Patient/p",
    sex="female",
    birth_date=date(1940, 1, 1),
    as_of=TODAY,
    observations=(
        Observation(BP, "8462-4", "Diastolic blood pressure", 115.0, "mm[Hg]", date(2024, 5, 1)),
        Observation(BP, "8480-6", "Systolic blood pressure", 146.0, "mm[Hg]", date(2024, 5, 1)),
        Observation("Observation/old", "33914-3", "eGFR", 25.0, "mL/min", date(2019, 1, 1)),
        Observation("Observation/k", "6298-4", "Potassium", 4.2, "mmol/L", date(2024, 5, 1)),
    ),
)
FACTS = fact_status(PROFILE)
GRADES = {"A1": "A", "B1": "B", "C1": "C", "X1": "expert consensus"}
OPTION = CandidateOption("opt-x", "Do x", "medication", "")
TAPER = replace(OPTION, id="opt-taper-x", answers=("abrupt-withdrawal",))


def draft(stance: str, *, text: str = "an argument", **kw: object) -> ArgumentDraft:
    base = ArgumentDraft(
        id=f"arg-{stance}",
        option_id="opt-x",
        role="gp",
        stance=stance,  # type: ignore[arg-type]
        text=text,
        evidence=("B1",),
        facts=("Observation/k",),
        tau=0.5,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_fact_status_reads_values_and_dates_not_text() -> None:
    assert FACTS[BP].recent_abnormal  # diastolic 115 within a year
    assert "115" in FACTS[BP].words and "2024-05-01" in FACTS[BP].words
    assert not FACTS["Observation/old"].recent_abnormal  # eGFR 25 but five years old
    assert "Observation/k" not in FACTS  # a normal potassium is not abnormal


def test_rule_answered_by_design() -> None:
    att = draft("attack", concern="abrupt-withdrawal", evidence=("A1",))
    sup = draft("support", evidence=("C1",))
    v = compare(TAPER, sup, att, GRADES, FACTS)
    assert v.winner == "support" and "design" in v.rationale
    # the same objection against an option not designed to answer it is weighed normally
    assert compare(OPTION, sup, att, GRADES, FACTS).winner == "attack"  # grade A over C


@pytest.mark.parametrize("side", ["support", "attack"])
def test_rule_recent_abnormal_fact_beats_generic(side: str) -> None:
    specific = dict(facts=(BP,), evidence=("C1",))
    generic = dict(facts=("Patient/p",), generic=True, evidence=("A1",))
    sup = draft("support", **(specific if side == "support" else generic))
    att = draft("attack", **(generic if side == "support" else specific))
    v = compare(OPTION, sup, att, GRADES, FACTS)
    assert v.winner == side
    assert "115" in v.rationale  # the reason names the value


def test_an_old_abnormal_fact_is_not_recent() -> None:
    sup = draft("support", facts=("Observation/old",), evidence=("C1",))
    att = draft("attack", facts=("Patient/p",), generic=True, evidence=("C1",))
    assert compare(OPTION, sup, att, GRADES, FACTS).winner is None


@pytest.mark.parametrize("other", [{"concern": "treatment-burden"}, {"harm": "minor"}])
def test_rule_severe_harm_beats_convenience_or_minor_harm(other: dict[str, object]) -> None:
    sup = draft("support", harm="severe", evidence=("C1",))
    att = draft("attack", evidence=("A1",), **other)
    v = compare(OPTION, sup, att, GRADES, FACTS)
    assert v.winner == "support" and "severe" in v.rationale
    # a severe harm argued generically (no fact about this patient) is not "likely"
    generic = replace(sup, generic=True, facts=("Patient/p",))
    assert compare(OPTION, generic, att, GRADES, FACTS).winner == "attack"  # then grade decides


@pytest.mark.parametrize(
    ("s", "a", "winner"),
    [("A1", "B1", "support"), ("C1", "B1", "attack"), ("C1", "X1", "support"), ("B1", "B1", None)],
)
def test_rule_evidence_grade(s: str, a: str, winner: str | None) -> None:
    v = compare(
        OPTION, draft("support", evidence=(s,)), draft("attack", evidence=(a,)), GRADES, FACTS
    )
    assert v.winner == winner


def test_no_rule_no_winner_and_no_keyword_matching() -> None:
    scary = "stopping abruptly risks withdrawal, falls, bleeding and toxicity"
    v = compare(OPTION, draft("support"), draft("attack", text=scary), GRADES, FACTS)
    assert v.winner is None and v.rationale  # the text alone decides nothing
    v2 = compare(TAPER, draft("support"), draft("attack", text=scary), GRADES, FACTS)
    assert v2.winner is None  # the taper answers a typed concern, not a word


def test_rules_apply_in_order() -> None:
    # design beats a better grade and a recent abnormal fact on the other side
    att = draft("attack", concern="abrupt-withdrawal", evidence=("A1",), facts=(BP,))
    sup = draft("support", evidence=("C1",), generic=True, facts=("Patient/p",))
    assert compare(TAPER, sup, att, GRADES, FACTS).winner == "support"
    # a recent abnormal fact beats a better grade
    sup = draft("support", evidence=("C1",), facts=(BP,))
    att = draft("attack", evidence=("A1",), generic=True, facts=("Patient/p",))
    assert compare(OPTION, sup, att, GRADES, FACTS).winner == "support"


# ---------------------------------------------------------------- worked examples on fixtures


def test_gayla_naproxen_supporter_wins_its_clash_and_bp_review_is_included() -> None:
    result = plan_of(fixture_bundle("gayla_ferry"))
    o = next(o for o in result.deliberation.options if o.id == "opt-review-bp")
    r = result.evaluation.option(o.id)
    assert o.id in result.evaluation.plan and not r.borderline
    naproxen = next(a for a in o.arguments if a.role == "pharmacist")
    assert "aproxen" in naproxen.text
    for c in o.clashes:
        assert c.reason  # every clash states its reason
        if c.support == naproxen.id:
            assert c.winner == "support"
    # the naproxen argument is not weakened by the arena any more (it was 0.55 -> 0.40)
    assert r.nodes[naproxen.id].tau_calibrated >= naproxen.tau


async def test_adalberto_taper_not_objected_to_by_abrupt_withdrawal() -> None:
    prof = load("adalberto")
    out = await run(prof)
    # with his seizure disorder the taper is agreed with neurology first; still a taper by design
    taper = next(
        o for o in out["assessment"].options if o.id == "opt-taper-diazepam-with-neurology"
    )
    assert taper.answers == ("abrupt-withdrawal",) and taper.priority == "safety"
    args = [x for x in out["args"] if x.option_id == taper.id]
    # the pharmacist's withdrawal concern is weighed inside their one (supporting) argument
    assert [x.stance for x in args if x.role == "pharmacist"] == ["support"]
    # and were it raised as an objection, the taper's design answers it
    objection = ArgumentDraft(
        "arg-o",
        taper.id,
        "nurse",
        "attack",
        "text",
        ("EB-MEDSAFE-002",),
        taper.refs,
        0.55,
        concern="abrupt-withdrawal",
    )
    sup = next(x for x in args if x.role == "pharmacist")
    (v,) = await EmbeddedExperts().run(
        Adjudicate(prof, taper, ((sup, objection),), out["evidence"]), CallContext()
    )
    assert v.winner == "support" and "design" in v.rationale


@pytest.mark.parametrize(
    "name", ["adalberto", "adan", "ali", "christin", "cruz", "eura", "gayla", "josue", "trey"]
)
async def test_one_stance_per_role_per_option(name: str) -> None:
    out = await run(load(name))
    seen = [(x.option_id, x.role) for x in out["args"]]
    assert len(seen) == len(set(seen))
