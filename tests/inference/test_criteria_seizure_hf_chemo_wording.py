"""Positive and negative cases for the issue-13d corrections: z-drugs are not antiseizure
medicines; every benzodiazepine taper turns into a neurology review when a seizure disorder is on
record; heart failure therapy asks for the ejection fraction first when none is recorded; a
chemotherapy-class drug with no cancer coded is confirmed with its prescriber, not oncology."""

from __future__ import annotations

from datetime import date

from inference.knowledge import analyse
from inference.knowledge.model import Proposal
from inference.knowledge.rules import CRITERIA
from service.core.profile import PatientProfile

from .criteria_factory import Builder


def _proposals(profile: PatientProfile) -> dict[str, Proposal]:
    return {p.id: p for p in analyse(profile).proposals}


# -- z-drugs and epilepsy -----------------------------------------------------------------------


def test_no_criterion_calls_a_z_drug_part_of_seizure_control() -> None:
    zdrug = [c for c in CRITERIA if any("z-drug" in s for s in c.trigger.drugs)]
    assert zdrug
    for c in zdrug:
        for pt in c.points:
            assert "seizure control" not in pt.text, c.id


def test_zolpidem_with_epilepsy_is_tapered_like_any_z_drug() -> None:
    def build(*groups: str) -> PatientProfile:
        b = Builder(age=78)
        b.med("zolpidem", date(2016, 1, 1))
        for g in groups:
            b.condition(g)
        return b.build()

    with_epilepsy = _proposals(build("epilepsy"))["opt-taper-zolpidem"]
    without = _proposals(build())["opt-taper-zolpidem"]
    assert not any("seizure" in p.text and "control" in p.text for p in with_epilepsy.points)
    assert [p.text for p in with_epilepsy.points] == [p.text for p in without.points]


# -- benzodiazepines with a seizure disorder: never a plain taper -------------------------------


def _diazepam(*groups: str, age: int = 50, opioid: bool = False) -> dict[str, Proposal]:
    b = Builder(age=age)
    b.med("diazepam", date(2015, 1, 1))
    if opioid:
        b.med("oxycodone")
    for g in groups:
        b.condition(g)
    return _proposals(b.build())


def _neurology_review(got: dict[str, Proposal]) -> Proposal:
    assert "opt-taper-diazepam" not in got and "opt-review-diazepam" not in got
    review = got["opt-taper-diazepam-with-neurology"]
    assert "neurology" in review.title
    objection = [p for p in review.points if p.role == "gp" and p.stance == "attack"]
    assert any("seizure" in p.text and "EB-NEURO-001" in p.evidence for p in objection)
    return review


def test_delirium_with_a_seizure_disorder_is_reviewed_with_neurology() -> None:
    review = _neurology_review(_diazepam("delirium", "epilepsy"))
    assert review.criteria == ("benzodiazepine-delirium-seizure-disorder",)
    assert "delirium" in review.title


def test_delirium_without_a_seizure_disorder_keeps_the_taper() -> None:
    got = _diazepam("delirium")
    assert "opt-taper-diazepam-with-neurology" not in got
    assert got["opt-taper-diazepam"].criteria == ("dd-benzodiazepine-delirium",)


def test_copd_with_a_seizure_disorder_is_reviewed_with_neurology() -> None:
    review = _neurology_review(_diazepam("copd", "epilepsy"))
    assert review.criteria == ("benzodiazepine-copd-seizure-disorder",)
    (breathing,) = [p for p in review.points if "breathing" in p.text]
    assert breathing.evidence == ("EB-MEDSAFE-022",)


def test_copd_without_a_seizure_disorder_keeps_the_review_and_cites_the_breathing_document() -> (
    None
):
    got = _diazepam("copd")
    assert "opt-taper-diazepam-with-neurology" not in got
    review = got["opt-review-diazepam"]
    assert review.criteria == ("dd-benzodiazepine-copd",)
    # it used to cite a statement about corticosteroids and theophylline in COPD
    assert all(p.evidence == ("EB-MEDSAFE-022",) for p in review.points if p.stance == "support")


def test_opioid_with_benzodiazepine_and_a_seizure_disorder_stays_a_safety_action() -> None:
    review = _neurology_review(_diazepam("epilepsy", opioid=True))
    assert review.priority == "safety"
    assert review.criteria == ("ddi-opioid-benzodiazepine-seizure-disorder",)
    assert "oxycodone" in review.title and "oxycodone" in review.description


def test_opioid_with_benzodiazepine_without_a_seizure_disorder_is_tapered() -> None:
    got = _diazepam(opioid=True)
    assert "opt-taper-diazepam-with-neurology" not in got
    taper = got["opt-taper-diazepam"]
    assert taper.priority == "safety" and taper.criteria == ("ddi-opioid-benzodiazepine",)


def test_every_seizure_reason_merges_into_one_neurology_review() -> None:
    review = _neurology_review(
        _diazepam("epilepsy", "delirium", "copd", "dementia", age=78, opioid=True)
    )
    assert review.priority == "safety"
    assert set(review.criteria) == {
        "benzodiazepine-seizure-disorder",
        "benzodiazepine-delirium-seizure-disorder",
        "benzodiazepine-copd-seizure-disorder",
        "ddi-opioid-benzodiazepine-seizure-disorder",
    }


def test_every_benzodiazepine_taper_stands_down_for_a_seizure_disorder() -> None:
    """Any criterion that would taper, stop or review a bound benzodiazepine either has a
    seizure-disorder exception or is itself the neurology review."""
    checked: set[str] = set()
    for c in CRITERIA:
        o = c.option
        if o.acts_on is None or not o.id.startswith(("opt-taper-", "opt-stop-", "opt-review-{")):
            continue
        slot = "ab".index(o.acts_on) if o.acts_on in "ab" else None
        if slot is None or slot >= len(c.trigger.drugs):
            continue
        if c.trigger.drugs[slot] != "class:benzodiazepine":
            continue
        if "with-neurology" in o.id:
            assert "epilepsy" in (
                *c.trigger.any_conditions,
                *(g for t in c.trigger.any_of for g in t.any_conditions),
            ), c.id
            continue
        excused = {g for e in c.exceptions for g in e.any_conditions}
        assert "epilepsy" in excused, c.id
        checked.add(c.id)
    assert {"dd-benzodiazepine-delirium", "dd-benzodiazepine-copd", "age-benzodiazepine"} <= checked
