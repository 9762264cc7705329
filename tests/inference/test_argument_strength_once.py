"""Each strength dimension counts once (issue 41, item 4): the embedded scoring step reads the
five CANOE dimensions from one table (``inference.knowledge.strength``), so the evidence grade
moves tau by its own share alone (before 2026-12 grade A was counted twice, and the lack of
evidence or facts came off in ad-hoc steps)."""

from __future__ import annotations

from inference.embedded import _score
from inference.knowledge.analysis import Analysis, Point, Proposal
from inference.knowledge.parameters import param
from inference.knowledge.strength import Factors
from inference.protocol import ArgumentDraft, CandidateOption, EvidenceDoc, Score
from tests.pipeline.test_pipeline import PROFILE

MED = "MedicationRequest/m1"
FACTORS = Factors("major", "certain", "direct")


def _tau(
    grades: tuple[str, ...], *, facts: tuple[str, ...] = (MED,), stance: str = "support"
) -> float:
    pt = Point("pharmacist", stance, "A finding.", facts, (), 0.8, factors=FACTORS)  # type: ignore[arg-type]
    prop = Proposal("opt-x", "t", "medication", "d", (MED,), (), (pt,))
    a = Analysis(80, "moderate", 4, (), (), (), (prop,), (), ())
    docs = tuple(EvidenceDoc(f"E{i}", "t", "s", g, "src", 2020) for i, g in enumerate(grades))
    draft = ArgumentDraft(
        "arg-1",
        "opt-x",
        "pharmacist",
        stance,
        "A finding.",
        tuple(d.id for d in docs),
        facts,  # type: ignore[arg-type]
    )
    option = CandidateOption("opt-x", "t", "medication", "d", (MED,))
    (score,) = _score(a, Score(PROFILE, option, (draft,), docs))
    return score.tau


def test_the_grade_moves_tau_by_its_own_share_once() -> None:
    a, b = param("strength.consistency_a"), param("strength.consistency_b")
    assert round(_tau(("A",)) - _tau(("B",)), 2) == round((a - b) / 5, 2)
    # the best grade cited counts, once: citing A and B weighs as A alone
    assert _tau(("A", "B")) == _tau(("A",))


def test_no_retrieved_evidence_takes_away_exactly_its_dimension() -> None:
    assert round(_tau(("A",)) - _tau(()), 2) == round(param("strength.consistency_a") / 5, 2)


def test_the_strongest_case_is_the_mean_of_the_table_s_top_levels() -> None:
    tops = (
        param("strength.appropriateness_major"),
        param("strength.consistency_a"),
        param("strength.specificity_direct"),
        param("strength.transparency_certain"),
        param("strength.feasibility_unstated"),
    )
    assert _tau(("A",)) == round(sum(tops) / 5, 2)


def test_a_support_without_facts_is_about_the_person_and_keeps_its_levels() -> None:
    assert _tau(("A",), facts=()) == _tau(("A",))


def test_an_objection_without_facts_is_specific_to_no_one() -> None:
    lost = param("strength.specificity_direct") + param("strength.transparency_certain")
    cited, stock = _tau(("A",), stance="attack"), _tau(("A",), facts=(), stance="attack")
    assert round(cited - stock, 2) == round(lost / 5, 2)


def test_an_argument_no_point_stands_behind_is_left_unscored() -> None:
    pt = Point("pharmacist", "support", "A finding.", (MED,), (), 0.8)  # states no factors
    prop = Proposal("opt-x", "t", "medication", "d", (MED,), (), (pt,))
    a = Analysis(80, "moderate", 4, (), (), (), (prop,), (), ())
    draft = ArgumentDraft("arg-1", "opt-x", "pharmacist", "support", "x", (), (MED,))
    option = CandidateOption("opt-x", "t", "medication", "d", (MED,))
    assert _score(a, Score(PROFILE, option, (draft,), ())) == ()
