"""CHA2DS2-VASc from typed facts (hand-worked profiles), the AF anticoagulation criterion by
score and sex, vaccinations due by age from Immunization facts, and recent high-stakes events
read from Conditions and Encounters."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest

from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import Encounter, PatientProfile

from .criteria_factory import AS_OF, Builder


def _profile(age: int, sex: str, *groups: str, resolved: tuple[str, ...] = ()) -> Builder:
    b = Builder(age=age, sex=sex)
    for g in groups:
        b.condition(g)
    for g in resolved:
        b.condition(g)
        b.problems[-1] = replace(b.problems[-1], clinical_status="resolved", abatement=AS_OF)
    return b


def _fired(cid: str, profile: PatientProfile) -> list[object]:
    c = next(x for x in CRITERIA if x.id == cid)
    return [f for f in evaluate((c,), Facts(profile)) if f.criterion.id == cid]


# -- CHA2DS2-VASc, worked by hand -------------------------------------------------------------


@pytest.mark.parametrize(
    ("builder", "score", "labels"),
    [
        # 78-year-old woman: age >= 75 (2), female (1), hypertension (1), diabetes (1), a past
        # stroke even though resolved (2) = 7
        (
            _profile(78, "female", "hypertension", "diabetes", resolved=("stroke",)),
            7,
            {"age 78", "female sex", "hypertension", "diabetes", "stroke or TIA"},
        ),
        # 68-year-old man: age 65-74 (1), heart failure (1), peripheral arterial disease (1) = 3
        (
            _profile(68, "male", "heart-failure", "pad"),
            3,
            {"age 68", "heart failure", "vascular disease"},
        ),
        # 50-year-old man with atrial fibrillation only: 0
        (_profile(50, "male", "af"), 0, set()),
        # 64-year-old woman, TIA: female (1) + TIA (2) = 3; no age point below 65
        (_profile(64, "female", "tia"), 3, {"female sex", "stroke or TIA"}),
    ],
    ids=["woman-78-seven", "man-68-three", "man-50-zero", "woman-64-three"],
)
def test_cha2ds2_vasc_by_hand(builder: Builder, score: int, labels: set[str]) -> None:
    st = Facts(builder.build()).stroke
    assert st.score == score
    assert {label for label, _, _ in st.parts} == labels
    assert sum(p for _, p, _ in st.parts) == score


def test_a_refuted_stroke_scores_nothing() -> None:
    b = _profile(60, "male", "stroke")
    b.problems[0] = replace(b.problems[0], verification="refuted")
    assert Facts(b.build()).stroke.score == 0


# -- AF anticoagulation by score and sex ------------------------------------------------------

AF = "af-anticoagulation-cha2ds2vasc"


@pytest.mark.parametrize(
    ("age", "sex", "fires"),
    [
        (66, "male", False),  # score 1: below the men's threshold of 2
        (76, "male", True),  # score 2
        (66, "female", False),  # score 2: below the women's threshold of 3
        (76, "female", True),  # score 3
    ],
)
def test_af_threshold_depends_on_sex(age: int, sex: str, fires: bool) -> None:
    assert bool(_fired(AF, _profile(age, sex, "af").build())) is fires


def test_af_texts_state_the_score_and_its_parts() -> None:
    (f,) = _fired(AF, _profile(76, "female", "af").build())
    text = " ".join(p.text for p in f.proposal.points)  # type: ignore[attr-defined]
    assert "CHA2DS2-VASc score of 3 from age 76 (2), female sex (1)" in text
    assert f.proposal.id == "opt-start-anticoagulant"  # type: ignore[attr-defined]
    assert "Patient/p" in f.proposal.refs  # type: ignore[attr-defined]


def test_af_exceptions_anticoagulated_or_bleeding() -> None:
    on = _profile(80, "female", "af")
    on.med("apixaban")
    assert not _fired(AF, on.build())
    bled = _profile(80, "female", "af", "gi-bleed")
    assert not _fired(AF, bled.build())


# -- vaccinations ---------------------------------------------------------------------------


def _vaccines(profile: PatientProfile) -> set[str]:
    return {
        f.criterion.id for f in evaluate(CRITERIA, Facts(profile)) if "vaccine" in f.criterion.id
    }


def test_every_vaccine_due_at_seventy_with_no_record_and_one_activity() -> None:
    p = Builder(age=70).build()
    assert _vaccines(p) == {
        "vaccine-influenza-older",
        "vaccine-pneumococcal-older",
        "vaccine-zoster-recombinant",
        "vaccine-tetanus-booster",
        "vaccine-covid-older",
    }
    plan = [x for x in analyse(p).proposals if x.id == "opt-vaccinations-due"]
    assert len(plan) == 1 and len(plan[0].criteria) == 5


def test_at_fifty_five_only_zoster_and_tetanus() -> None:
    assert _vaccines(Builder(age=55).build()) == {
        "vaccine-zoster-recombinant",
        "vaccine-tetanus-booster",
    }


def test_an_old_flu_dose_is_out_of_date_and_a_recent_one_is_not() -> None:
    old = Builder(age=70)
    old.immunization("140", AS_OF - timedelta(days=400))
    (f,) = _fired("vaccine-influenza-older", old.build())
    texts = " ".join(p.text for p in f.proposal.points)  # type: ignore[attr-defined]
    assert "the record shows 1 dose, the last 13 months before the record date" in texts
    assert old.imms[0].ref in f.proposal.refs  # type: ignore[attr-defined]
    recent = Builder(age=70)
    recent.immunization("150", AS_OF - timedelta(days=100))
    assert not _fired("vaccine-influenza-older", recent.build())


def test_zoster_needs_two_recombinant_doses() -> None:
    one = Builder(age=60)
    one.immunization("187", date(2022, 1, 1))
    assert _fired("vaccine-zoster-recombinant", one.build())
    live = Builder(age=60)
    live.immunization("121", date(2015, 1, 1))
    live.immunization("121", date(2016, 1, 1))
    assert _fired("vaccine-zoster-recombinant", live.build())  # the live vaccine does not count
    two = Builder(age=60)
    two.immunization("187", date(2022, 1, 1))
    two.immunization("187", date(2022, 4, 1))
    assert not _fired("vaccine-zoster-recombinant", two.build())


def test_a_dose_not_given_does_not_count() -> None:
    b = Builder(age=70)
    b.immunization("133", date(2023, 1, 1))
    b.imms[0] = replace(b.imms[0], status="not-done")
    assert _fired("vaccine-pneumococcal-older", b.build())


# -- recent events --------------------------------------------------------------------------


def test_an_emergency_visit_for_overdose_is_addressed() -> None:
    b = Builder(age=45)
    b.encounter("overdose", "EMER", AS_OF - timedelta(days=40))
    p = b.build()
    (f,) = _fired("event-overdose-recent", p)
    prop = f.proposal  # type: ignore[attr-defined]
    assert prop.priority == "safety" and prop.category == "immediate-safety"
    assert b.encs[0].ref in prop.refs
    assert any(pt.role == "addiction-psychiatrist" for pt in prop.points)
    assert "emergency visit 40 days before the record date" in " ".join(
        pt.text for pt in prop.points
    )
    # In the whole analysis the problem is accepted and the activity kept with safety priority.
    a = analyse(p)
    assert a.problem("prob-recent-overdose") is not None
    assert any(x.id == "opt-overdose-relapse-prevention" for x in a.proposals)


def test_an_office_visit_or_an_old_admission_is_not_a_recent_overdose_event() -> None:
    office = Builder(age=45)
    office.encounter("overdose", "AMB", AS_OF - timedelta(days=40))
    assert not _fired("event-overdose-recent", office.build())
    old = Builder(age=45)
    old.encounter("overdose", "EMER", AS_OF - timedelta(days=400))
    assert not _fired("event-overdose-recent", old.build())


def test_a_recent_fracture_on_a_bisphosphonate_is_treatment_failure() -> None:
    b = Builder(age=80, onset_days=30)
    b.condition("fragility-fracture")
    b.med("alendronate")
    b.lab("egfr", 28.0)
    (f,) = _fired("event-fracture-on-bisphosphonate", b.build())
    text = " ".join(p.text for p in f.proposal.points)  # type: ignore[attr-defined]
    assert "treatment failure" in text and "28" in text
    falls = _fired("event-fracture-falls", b.build())
    assert falls and any(p.role == "physiotherapist" for p in falls[0].proposal.points)  # type: ignore[attr-defined]


def test_new_chemotherapy_brings_the_oncologist() -> None:
    b = Builder(age=70)
    b.med("cisplatin", authored=AS_OF - timedelta(days=21))
    (f,) = _fired("event-chemotherapy-started", b.build())
    roles = {p.role for p in f.proposal.points}  # type: ignore[attr-defined]
    assert {"oncologist", "pharmacist"} <= roles
    old = Builder(age=70)
    old.med("cisplatin", authored=AS_OF - timedelta(days=400))
    assert not _fired("event-chemotherapy-started", old.build())


def test_a_new_copd_diagnosis_without_an_inhaler() -> None:
    b = Builder(age=70, onset_days=30)
    b.condition("copd")
    assert _fired("event-new-copd-untreated", b.build())
    b.med("tiotropium")
    assert not _fired("event-new-copd-untreated", b.build())


def test_a_detoxification_admission_counts_as_the_event() -> None:
    b = Builder(age=45)
    b.encs.append(
        Encounter(
            "Encounter/detox",
            "Drug detoxification",
            AS_OF - timedelta(days=90),
            AS_OF - timedelta(days=85),
            class_code="IMP",
        )
    )
    (f,) = _fired("event-overdose-recent", b.build())
    text = " ".join(pt.text for pt in f.proposal.points)  # type: ignore[attr-defined]
    assert "Drug detoxification (hospital stay 3 months before the record date)" in text
    assert "Encounter/detox" in f.proposal.refs  # type: ignore[attr-defined]


async def test_event_criteria_bring_their_specialists_onto_the_panel() -> None:
    from tests.inference.test_panel_domains import panel_of

    detox = Builder(age=45)
    detox.encs.append(
        Encounter(
            "Encounter/d", "Drug detoxification", AS_OF - timedelta(days=20), class_code="IMP"
        )
    )
    _, roles = await panel_of(detox.build())
    assert "addiction-psychiatrist" in roles
    chemo = Builder(age=60)
    chemo.med("cisplatin", authored=AS_OF - timedelta(days=14))
    _, roles = await panel_of(chemo.build())
    assert {"oncologist", "pharmacist"} <= set(roles)
    calm = Builder(age=45)
    _, roles = await panel_of(calm.build())
    assert "addiction-psychiatrist" not in roles and "oncologist" not in roles


@pytest.mark.parametrize(
    ("age", "sex", "recommended", "considered"),
    [
        (50, "male", False, False),  # score 0
        (66, "male", False, True),  # score 1
        (66, "female", False, True),  # score 2 (1 is for sex)
        (76, "male", True, False),  # score 2
        (76, "female", True, False),  # score 3
    ],
)
def test_af_recommended_or_considered_by_score_and_sex(
    age: int, sex: str, recommended: bool, considered: bool
) -> None:
    p = _profile(age, sex, "af").build()
    assert bool(_fired(AF, p)) is recommended
    assert bool(_fired("af-anticoagulation-consider", p)) is considered


def test_a_healed_fracture_on_a_bisphosphonate_is_treatment_failure_not_a_holiday() -> None:
    b = Builder(age=83, onset_days=900)
    b.med("alendronate", authored=date(2000, 1, 1))
    b.condition("fragility-fracture")
    b.problems[-1] = replace(b.problems[-1], clinical_status="resolved", abatement=AS_OF)
    p = b.build()
    (f,) = _fired("event-fracture-during-bisphosphonate", p)
    assert "treatment failure" in " ".join(pt.text for pt in f.proposal.points)  # type: ignore[attr-defined]
    assert not _fired("deprescribe-bisphosphonate-duration", p)
    before = Builder(age=83, onset_days=900)
    before.med("alendronate", authored=AS_OF - timedelta(days=100))
    before.condition("fragility-fracture")
    assert not _fired("event-fracture-during-bisphosphonate", before.build())
