"""Positive and negative cases for these corrections: z-drugs are not antiseizure
medicines; every benzodiazepine taper turns into a neurology review when a seizure disorder is on
record; heart failure therapy asks for the ejection fraction first when none is recorded; a
chemotherapy-class drug with no cancer coded is confirmed with its prescriber, not oncology."""

from __future__ import annotations

from datetime import date

from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal
from inference.knowledge.rules import CRITERIA
from service.record.profile import PatientProfile

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


# -- heart failure: the ejection fraction before the medicines that depend on it ----------------

HF_STARTS = (
    "opt-start-acei-arb-heart-failure",
    "opt-start-beta-blocker-heart-failure",
    "opt-start-sglt2i",
)


def _heart_failure(group: str = "heart-failure", lvef: float | None = None) -> dict[str, Proposal]:
    b = Builder(age=70)
    b.condition(group)
    if lvef is not None:
        b.lab("lvef", lvef)
    return _proposals(b.build())


def test_no_ejection_fraction_asks_for_an_echocardiogram_before_any_start() -> None:
    got = _heart_failure()
    assert not any(o in got for o in HF_STARTS)
    review = got["opt-review-heart-failure-therapy"]
    assert review.criteria == ("hf-ef-unknown-therapy-review",)
    assert "echocardiogram" in review.description
    assert all("EB-HF-003" in p.evidence for p in review.points if p.stance == "support")


def test_a_reduced_ejection_fraction_coded_or_measured_keeps_every_start() -> None:
    for got in (_heart_failure("hf-reduced-ef"), _heart_failure(lvef=30.0)):
        assert all(o in got for o in HF_STARTS)
        assert "opt-review-heart-failure-therapy" not in got


def test_a_preserved_ejection_fraction_keeps_only_the_sglt2_inhibitor() -> None:
    for got in (_heart_failure("hf-preserved-ef"), _heart_failure(lvef=60.0)):
        assert "opt-start-sglt2i" in got
        assert "opt-start-acei-arb-heart-failure" not in got
        assert "opt-start-beta-blocker-heart-failure" not in got
        assert "opt-review-heart-failure-therapy" not in got


def test_the_echo_review_and_the_kidney_review_are_one_activity() -> None:
    # the review for discordant kidney estimates proposes the same activity: one line, not two
    b = Builder(age=67)
    b.condition("heart-failure")
    b.lab("egfr", 84.0)
    b.lab("creatinine", 2.85)
    got = _proposals(b.build())
    review = got["opt-review-heart-failure-therapy"]
    assert set(review.criteria) == {
        "hf-ef-and-therapy-review-kidney-unclear",
        "hf-ef-unknown-therapy-review",
    }
    assert not any(o in got for o in HF_STARTS)


def test_combined_systolic_and_diastolic_failure_leaves_the_type_unknown() -> None:
    from inference.knowledge.conditions import classify
    from service.record.profile import Code, Condition
    from service.record.vocabulary import SNOMED

    text = "Chronic combined systolic and diastolic heart failure (disorder)"
    p = Condition("Condition/c", text, (Code(SNOMED, "153941000119100", text),), "active", "", None)
    assert classify(p) == ("heart-failure",)


# -- chemotherapy-class drugs with no cancer coded ----------------------------------------------


def _cyclophosphamide(*, resolved_cancer: bool = False) -> Proposal:
    b = Builder(age=66)
    b.med("cyclophosphamide", date(2023, 1, 1))
    b.condition("rheumatoid-arthritis")
    if resolved_cancer:
        b.resolved("cancer")
    got = _proposals(b.build())
    return got.get("opt-reconcile-cyclophosphamide") or got["opt-review-cyclophosphamide"]


def test_no_cancer_ever_recorded_asks_the_prescriber_not_oncology() -> None:
    p = _cyclophosphamide()
    assert p.criteria == ("chemotherapy-reconcile-no-cancer-recorded",)
    assert "prescribing specialist" in p.title
    texts = [p.title, p.description, *(x.text for x in p.points)]
    assert not any("oncolog" in t.lower() for t in texts)
    assert all(x.evidence == ("EB-ONC-003",) for x in p.points)
    assert not any(x.role == "oncologist" for x in p.points)


def test_a_resolved_cancer_still_asks_oncology() -> None:
    p = _cyclophosphamide(resolved_cancer=True)
    assert p.criteria == ("chemotherapy-reconcile-no-active-cancer",)
    assert "oncology" in p.title
    assert "no longer active" in p.description and "cancer" in p.description


def test_an_active_cancer_is_neither_reconciliation() -> None:
    b = Builder(age=66)
    b.med("cyclophosphamide", date(2023, 1, 1))
    b.condition("cancer")
    got = analyse(b.build())
    assert not any(p.id.startswith("opt-reconcile-") for p in got.proposals)
    assert "chemotherapy-review" in got.fired


def test_a_long_standing_order_is_dated_in_years_not_weeks() -> None:
    # ordered 2004-01-01, record date 2024-06-01: twenty years, not a thousand-odd weeks
    b = Builder(age=80)
    b.med("cyclophosphamide", date(2004, 1, 1))
    b.condition("rheumatoid-arthritis")
    p = _proposals(b.build())["opt-reconcile-cyclophosphamide"]
    texts = " ".join([p.description, *(x.text for x in p.points)])
    assert "for 20 years" in texts and " weeks" not in texts
