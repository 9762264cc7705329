"""A booked operation: each medicine line, the antiplatelet line and the anaesthetist line, with
a record where it fires and a neighbour where it does not (an operation beyond the window, a
stent older than its window, an allergy theatre does not care about); the timing of each line
before the day it names. Synthetic records only."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from inference.knowledge import analyse
from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.analysis import Proposal
from inference.knowledge.claims import Booked, check
from inference.knowledge.perioperative import (
    PERIOPERATIVE_FILE,
    booked_operation,
    load_perioperative,
)
from service.record.profile import PatientProfile
from tests.inference.reports_orders_bundles import PATIENT, SNOMED, condition, profile

PREFIX = "opt-prepare-for-operation-"


def med(mid: str, text: str) -> dict[str, Any]:
    return {
        "resourceType": "MedicationRequest",
        "id": mid,
        "status": "active",
        "intent": "order",
        "medicationCodeableConcept": {"text": text},
        "subject": PATIENT,
        "authoredOn": "2026-10-01",
    }


def operation(
    day: str, *, status: str = "active", category: str = "387713003", name: str = "Knee replacement"
) -> dict[str, Any]:
    return {
        "resourceType": "ServiceRequest",
        "id": "op",
        "status": status,
        "intent": "order",
        "category": [{"coding": [{"system": SNOMED, "code": category}]}],
        "code": {"text": name},
        "subject": PATIENT,
        "authoredOn": "2026-11-01",
        "occurrenceDateTime": day,
    }


def allergy(aid: str, text: str, status: str = "active") -> dict[str, Any]:
    return {
        "resourceType": "AllergyIntolerance",
        "id": aid,
        "patient": PATIENT,
        "clinicalStatus": {"coding": [{"code": status}]},
        "code": {"text": text},
    }


def lines(p: PatientProfile) -> list[Proposal]:
    return [x for x in analyse(p).proposals if x.id.startswith(PREFIX)]


def titles(*resources: dict[str, Any]) -> list[str]:
    return [x.title for x in lines(profile(*resources))]


# -- the operation ------------------------------------------------------------------------------


def test_a_booked_operation_within_the_window_is_read_with_its_day_and_name() -> None:
    op = booked_operation(profile(operation("2026-12-20")))
    assert op is not None
    assert (op.ref, op.day, op.name) == (
        "ServiceRequest/op",
        date(2026, 12, 20),
        "Knee replacement",
    )
    assert op.words() == 'the operation "Knee replacement" booked for 20 December 2026'


@pytest.mark.parametrize(
    "order",
    [
        operation("2027-03-30"),  # beyond the 84-day window
        operation("2026-11-20"),  # already past
        operation("2026-12-20", status="completed"),
        operation("2026-12-20", category="108252007"),  # a laboratory request
    ],
)
def test_no_operation_outside_the_window_or_not_booked(order: dict[str, Any]) -> None:
    p = profile(order, med("a", "Apixaban 5 MG Oral Tablet"), allergy("lx", "Latex"))
    assert booked_operation(p) is None
    assert lines(p) == []


def _uncategorised(name: str) -> dict[str, Any]:
    order = operation("2026-12-20", name=name)
    del order["category"]
    return order


@pytest.mark.parametrize(
    ("name", "booked"),
    [
        ("Laparoscopic cholecystectomy (day case, general anaesthetic)", True),
        ("Surgical removal of lower wisdom teeth under general anaesthetic", True),
        ("Total knee arthroplasty", True),
        ("Referral for cholecystectomy", False),  # a referral is not the operation
        ("Pre-operative assessment clinic", False),
        ("Stool culture", False),
    ],
)
def test_an_order_with_no_category_is_an_operation_by_its_words(name: str, booked: bool) -> None:
    """A blind set booked two operations as ServiceRequests with no surgical category; they were
    not seen, and with them the hydrocortisone cover, the MAOI and the pregnancy lines."""
    assert (booked_operation(profile(_uncategorised(name))) is not None) is booked


def test_the_booked_claim_holds_only_for_the_day_it_names() -> None:
    p = profile(operation("2026-12-20"))
    assert check(Booked("ServiceRequest/op", date(2026, 12, 20)), p, p.plan_day) is None
    assert check(Booked("ServiceRequest/op", date(2026, 12, 21)), p, p.plan_day) is not None
    assert check(Booked("ServiceRequest/op", date(2026, 12, 20)), p, date(2026, 12, 21))


# -- medicines ----------------------------------------------------------------------------------


def test_an_anticoagulant_gets_its_interruption_planned_by_the_class_lead() -> None:
    (line,) = lines(profile(operation("2026-12-20"), med("a", "Apixaban 5 MG Oral Tablet")))
    assert line.title == (
        "Plan the interruption of apixaban before 16 December 2026, for the operation "
        '"Knee replacement" booked for 20 December 2026'
    )
    assert line.medication_ref == "MedicationRequest/a"
    assert "ServiceRequest/op" in line.refs
    (vka,) = titles(operation("2026-12-20"), med("w", "Warfarin Sodium 5 MG Oral Tablet"))
    assert vka.startswith("Plan the interruption of warfarin before 15 December 2026")


def test_an_sglt2_inhibitor_is_stopped_by_its_label_days_a_drug_before_its_class() -> None:
    (dapa,) = titles(operation("2026-12-20"), med("d", "Dapagliflozin 10 MG Oral Tablet"))
    assert dapa.startswith("Stop dapagliflozin from 17 December 2026, 3 days before")
    (ertu,) = titles(operation("2026-12-20"), med("e", "Ertugliflozin 5 MG Oral Tablet"))
    assert ertu.startswith("Stop ertugliflozin from 16 December 2026, 4 days before")


def test_a_medicine_the_file_does_not_name_gets_no_line() -> None:
    assert titles(operation("2026-12-20"), med("m", "Metformin 500 MG Oral Tablet")) == []


@pytest.mark.parametrize(
    ("day", "criterion"),
    [
        ("2027-01-01", "net-perioperative-4w"),  # 28 days left before 28 December
        ("2026-12-31", "net-perioperative-7d"),  # 27 days left: a 4-week line could be late
        ("2026-12-11", "net-perioperative-7d"),  # 7 days left
        ("2026-12-10", "net-perioperative-72h"),  # 6 days left
        ("2026-12-07", "net-perioperative-72h"),  # 3 days left
        ("2026-12-06", "net-perioperative-now"),  # 2 days left
        ("2026-12-02", "net-perioperative-now"),  # the day to plan by has passed
    ],
)
def test_each_line_is_due_in_the_longest_timeframe_that_ends_by_its_day(
    day: str, criterion: str
) -> None:
    # apixaban: the plan is needed 4 days before the operation
    (line,) = lines(profile(operation(day), med("a", "Apixaban 5 MG Oral Tablet")))
    assert line.criteria == (criterion,)


# -- antiplatelets after a coronary event -------------------------------------------------------

STENT = ("stent", "Coronary stent placed", "415070008")
ACS = ("acs", "Acute coronary syndrome", "394659003")
DES = ("des", "Drug-eluting stent to circumflex", "0")


@pytest.mark.parametrize(
    ("event", "onset", "meds", "fires"),
    [
        (STENT, "2026-09-01", ("Clopidogrel 75 MG Oral Tablet",), True),
        (STENT, "2026-09-01", ("Aspirin 75 MG", "Dipyridamole 200 MG"), True),  # two
        (STENT, "2026-09-01", ("Aspirin 75 MG",), False),  # one, not a P2Y12 inhibitor
        (STENT, "2026-05-01", ("Clopidogrel 75 MG Oral Tablet",), False),  # older than 6 months
        (ACS, "2026-05-01", ("Ticagrelor 90 MG Oral Tablet",), True),  # within 12 months
        (ACS, "2025-11-01", ("Ticagrelor 90 MG Oral Tablet",), False),  # older than 12 months
        (DES, "2026-09-01", ("Prasugrel 10 MG",), True),  # named in words, no code
    ],
)
def test_antiplatelets_within_the_window_of_a_coronary_event_go_to_cardiology(
    event: tuple[str, str, str], onset: str, meds: tuple[str, ...], fires: bool
) -> None:
    taken = [med(f"m{k}", text) for k, text in enumerate(meds)]
    found = [
        x
        for x in titles(operation("2026-12-20"), condition(*event, onset), *taken)
        if x.startswith("Agree the timing")
    ]
    assert bool(found) is fires
    if fires:
        assert f'"{event[1]}" (' in found[0]
        assert "with cardiology before stopping" in found[0]


# -- the anaesthetist ---------------------------------------------------------------------------


def test_theatre_allergies_and_histories_are_quoted_for_the_anaesthetist() -> None:
    mh = condition("mh", "Family history of malignant hyperthermia", "000000", "2010-01-01")
    (line,) = titles(operation("2026-12-20"), allergy("lx", "Latex gloves"), mh)
    assert line == (
        'Tell the anaesthetist before the operation "Knee replacement" booked for 20 December '
        '2026: "Latex gloves" (allergy); "Family history of malignant hyperthermia" (recorded '
        "problem)"
    )


def test_a_recorded_problem_naming_suxamethonium_is_told_to_the_anaesthetist() -> None:
    sux = condition("sx", "Mother needed ventilation after suxamethonium", "0", "2015-01-01")
    (line,) = titles(operation("2026-12-20"), sux)
    assert line.endswith('"Mother needed ventilation after suxamethonium" (recorded problem)')


@pytest.mark.parametrize(
    "resource", [allergy("pn", "Penicillin"), allergy("lx", "Latex", status="resolved")]
)
def test_an_allergy_theatre_need_not_know_of_makes_no_line(resource: dict[str, Any]) -> None:
    assert titles(operation("2026-12-20"), resource) == []


# -- the file -----------------------------------------------------------------------------------


def test_a_medicine_rule_citing_an_unknown_source_is_refused(tmp_path: Path) -> None:
    text = PERIOPERATIVE_FILE.read_text().replace("source: fda-sglt2-2020}", "source: nowhere}")
    bad = tmp_path / "perioperative.yaml"
    bad.write_text(text)
    with pytest.raises(KnowledgeFileError, match="nowhere"):
        load_perioperative(bad)


# -- other records that book an operation -------------------------------------------------------


def planned_encounter(
    day: str, text: str = "Surgical procedure", status: str = "planned"
) -> dict[str, Any]:
    return {
        "resourceType": "Encounter",
        "id": "enc",
        "status": status,
        "class": {"code": "IMP"},
        "type": [{"text": text}],
        "subject": PATIENT,
        "period": {"start": day},
    }


def procedure(
    day: str, *, status: str = "preparation", category: str = "387713003"
) -> dict[str, Any]:
    return {
        "resourceType": "Procedure",
        "id": "proc",
        "status": status,
        "category": {"coding": [{"system": SNOMED, "code": category}]},
        "code": {"text": "Hip replacement"},
        "subject": PATIENT,
        "performedDateTime": day,
    }


def test_a_planned_encounter_in_the_future_books_the_operation() -> None:
    p = profile(planned_encounter("2026-12-20T09:00:00Z", "Laparoscopic cholecystectomy"))
    op = booked_operation(p)
    assert op is not None
    assert (op.ref, op.day, op.name) == (
        "Encounter/enc",
        date(2026, 12, 20),
        "Laparoscopic cholecystectomy",
    )
    assert check(Booked(op.ref, op.day), p, p.plan_day) is None
    assert not any(e.ref == "Encounter/enc" for e in p.encounters)  # not a contact that happened


def test_a_procedure_in_preparation_books_the_operation() -> None:
    op = booked_operation(profile(procedure("2026-12-18")))
    assert op is not None
    assert (op.ref, op.day, op.name) == ("Procedure/proc", date(2026, 12, 18), "Hip replacement")


@pytest.mark.parametrize(
    "booking",
    [
        planned_encounter("2026-12-20", "Pre-operative assessment clinic"),  # not the operation
        planned_encounter("2026-12-20", status="finished"),
        procedure("2026-12-18", status="completed"),
        procedure("2026-12-18", category="103693007"),  # a diagnostic procedure
        procedure("2027-04-18"),  # beyond the window
    ],
)
def test_no_operation_from_other_plans_or_other_statuses(booking: dict[str, Any]) -> None:
    assert booked_operation(profile(booking)) is None


def test_a_service_request_stays_the_first_source() -> None:
    op = booked_operation(profile(operation("2026-12-22"), procedure("2026-12-18")))
    assert op is not None and op.ref == "ServiceRequest/op"


# -- steroids, pregnancy and MAOIs --------------------------------------------------------------

ADDISON = ("ad", "Addison's disease", "363732003", "2010-01-01")


def steroid(mid: str, text: str, mg: float, per_day: int, since: str) -> dict[str, Any]:
    m = med(mid, text)
    m["authoredOn"] = since
    m["dosageInstruction"] = [
        {
            "timing": {"repeat": {"frequency": per_day, "period": 1, "periodUnit": "d"}},
            "doseAndRate": [{"doseQuantity": {"value": mg, "unit": "mg"}}],
        }
    ]
    return m


def test_adrenal_insufficiency_with_a_booked_operation_gets_hydrocortisone_cover() -> None:
    found = titles(operation("2026-12-20"), condition(*ADDISON))
    cover = [t for t in found if t.startswith("Plan peri-operative hydrocortisone")]
    assert cover == [
        "Plan peri-operative hydrocortisone cover for the operation on 20 December 2026 and tell "
        'the anaesthetist: the record holds "Addison\'s disease"'
    ]
    assert titles(condition(*ADDISON)) == []  # no operation: no cover line


@pytest.mark.parametrize(
    ("mg", "per_day", "since", "fires"),
    [
        (5, 1, "2026-09-01", True),  # prednisolone 5 mg a day for months: at the threshold
        (2.5, 1, "2026-09-01", False),  # below 5 mg
        (10, 1, "2026-11-20", False),  # started 10 days ago
    ],
)
def test_a_glucocorticoid_at_the_dose_and_duration_gets_cover(
    mg: float, per_day: int, since: str, fires: bool
) -> None:
    pred = steroid("pr", "Prednisolone 5 MG Oral Tablet", mg, per_day, since)
    found = [t for t in titles(operation("2026-12-20"), pred) if "hydrocortisone cover" in t]
    assert bool(found) is fires
    if fires:
        assert found[0].endswith("prednisolone 5 mg a day, first ordered 1 September 2026")


def test_hydrocortisone_is_read_as_its_prednisolone_equivalent() -> None:
    hc = steroid("hc", "Hydrocortisone 10 MG Oral Tablet", 10, 2, "2025-01-01")
    (found,) = [t for t in titles(operation("2026-12-20"), hc) if "hydrocortisone cover" in t]
    assert found.endswith(
        "hydrocortisone 20 mg a day (prednisolone 5 mg), first ordered 1 January 2025"
    )


def card_lines(*resources: dict[str, Any]) -> list[Proposal]:
    p = profile(*resources)
    return [x for x in analyse(p).proposals if x.id.startswith("opt-steroid-emergency-card-")]


def test_a_steroid_emergency_card_is_issued_when_none_is_recorded() -> None:
    (line,) = card_lines(condition(*ADDISON))
    assert line.title == (
        'Issue an NHS Steroid Emergency Card: the record holds "Addison\'s disease"; no card '
        "recorded"
    )
    pred = steroid("pr", "Prednisolone 5 MG Oral Tablet", 10, 1, "2026-06-01")
    assert len(card_lines(pred)) == 1


def test_no_card_line_when_a_card_is_recorded_or_the_dose_is_low() -> None:
    card = condition("card", "Steroid emergency card issued", "0", "2024-01-01")
    assert card_lines(condition(*ADDISON), card) == []
    assert card_lines(steroid("pr", "Prednisolone 1 MG Oral Tablet", 2, 1, "2026-06-01")) == []


def test_a_positive_pregnancy_test_before_an_operation_is_told_to_the_teams() -> None:
    hcg = {
        "resourceType": "Observation",
        "id": "hcg",
        "status": "final",
        "code": {"coding": [{"system": "http://loinc.org", "code": "19080-1"}], "text": "hCG"},
        "subject": PATIENT,
        "effectiveDateTime": "2026-11-25",
        "valueQuantity": {"value": 120, "unit": "IU/L"},
    }
    found = [t for t in titles(operation("2026-12-20"), hcg) if "pregnancy" in t]
    assert len(found) == 1
    assert found[0].startswith(
        "Tell the surgical and anaesthetic teams before the operation on 20 December 2026: "
        "pregnancy ("
    )
    assert [t for t in titles(hcg) if "pregnancy" in t] == []  # no operation booked


def test_an_irreversible_maoi_before_an_operation_is_told_to_the_anaesthetist() -> None:
    (line,) = titles(operation("2026-12-20"), med("ph", "Phenelzine 15 MG Oral Tablet"))
    assert line == (
        "Tell the anaesthetist before the operation on 20 December 2026: phenelzine (an "
        "irreversible MAOI) is being taken"
    )
    assert titles(operation("2026-12-20"), med("s", "Sertraline 50 MG Oral Tablet")) == []
