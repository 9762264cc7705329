"""A patient on dialysis is under a kidney unit: the plan neither refers them to nephrology nor
asks for a urine albumin-creatinine ratio, and starts no statin (KDIGO 2013 lipid guideline,
2.3.2). Beside each, the neighbour with the same kidney function not on dialysis, where the same
lines are said."""

from __future__ import annotations

from datetime import date

import pytest

from inference.knowledge import analyse
from service.record.profile import (
    Code,
    Condition,
    Encounter,
    Medication,
    Observation,
    PatientProfile,
)
from service.record.vocabulary import SNOMED

AS_OF = date(2026, 6, 1)
CKD5 = Code(SNOMED, "433146000", "Chronic kidney disease stage 5 (disorder)")
ON_DIALYSIS = Code(SNOMED, "236435004", "End stage renal failure on dialysis (disorder)")
DIABETES = Code(SNOMED, "44054006", "Diabetes mellitus type 2")
DIALYSIS_LINES = {"start-statin-ckd", "start-statin-diabetes", "monitor-uacr"}


def _problem(ref: str, code: Code) -> Condition:
    return Condition(
        f"Condition/{ref}", code.display, (code,), "active", "confirmed", date(2015, 1, 1)
    )


def _patient(kidney: Code, encounters: tuple[Encounter, ...] = ()) -> PatientProfile:
    egfr = [
        Observation("Observation/o0", "33914-3", "eGFR", 9.0, "mL/min", date(2026, 1, 1)),
        Observation("Observation/o1", "33914-3", "eGFR", 8.0, "mL/min", AS_OF),
    ]
    amlodipine = Medication(
        "MedicationRequest/m1", "Amlodipine 5 MG Oral Tablet", (), "active", "order", AS_OF
    )
    return PatientProfile(
        "Patient/p1",
        "male",
        date(1960, 1, 1),
        AS_OF,
        problems=(_problem("c1", kidney), _problem("c2", DIABETES)),
        medications=(amlodipine,),
        observations=(egfr[1],),
        readings=tuple(egfr),
        encounters=encounters,
    )


def _criteria(p: PatientProfile) -> set[str]:
    return {c for x in analyse(p).proposals for c in x.criteria}


def test_without_dialysis_the_statin_albuminuria_and_referral_lines_are_said() -> None:
    got = _criteria(_patient(CKD5))
    assert DIALYSIS_LINES | {"refer-nephrology-low-egfr"} <= got


@pytest.mark.parametrize(
    "p",
    [
        _patient(ON_DIALYSIS),
        _patient(
            CKD5,
            (Encounter("Encounter/e1", "Haemodialysis session", date(2026, 5, 20)),),
        ),
    ],
    ids=["coded", "a recent dialysis session"],
)
def test_on_dialysis_no_statin_start_no_albuminuria_test_and_no_referral(p: PatientProfile) -> None:
    got = _criteria(p)
    assert not got & (DIALYSIS_LINES | {"refer-nephrology-low-egfr"})
    assert "monitor-hba1c" in got  # the rest of the plan still runs
