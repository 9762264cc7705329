"""How the clinician summary words a cited fact: a blood pressure panel as a clinician writes it
(systolic/diastolic in whole mmHg, with its date), any other observation with its value."""

from __future__ import annotations

from datetime import date

from service.record.profile import Observation, PatientProfile
from service.text.summary import fact_words

DAY = date(2021, 1, 4)


def _profile(*obs: Observation) -> PatientProfile:
    return PatientProfile("Patient/p", "male", date(1913, 1, 1), DAY, observations=obs)


def test_a_blood_pressure_panel_reads_systolic_over_diastolic_in_whole_mmhg() -> None:
    # diastolic listed first, as a bundle may hold the components
    p = _profile(
        Observation("Observation/bp", "8462-4", "Diastolic Blood Pressure", 101.7, "mm[Hg]", DAY),
        Observation("Observation/bp", "8480-6", "Systolic Blood Pressure", 188.7, "mm[Hg]", DAY),
    )
    assert fact_words(p, ["Observation/bp"]) == (
        ("Observation/bp", "Blood pressure 189/102 mmHg on 2021-01-04"),
    )


def test_other_observations_keep_their_name_value_and_date() -> None:
    p = _profile(
        Observation("Observation/c", "2160-0", "Creatinine", 2.5, "mg/dL", DAY),
        # a systolic reading on its own is not a panel: named as recorded
        Observation("Observation/s", "8480-6", "Systolic Blood Pressure", 150.2, "mm[Hg]", DAY),
    )
    assert dict(fact_words(p, ["Observation/c", "Observation/s"])) == {
        "Observation/c": "Creatinine 2.5 mg/dL on 2021-01-04",
        "Observation/s": "Systolic Blood Pressure 150.2 mmHg on 2021-01-04",
    }
