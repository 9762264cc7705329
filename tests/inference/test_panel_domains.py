"""Panel by domain: the roles a record's domains need are on the panel whatever the
complexity, configured sizes are a floor, and complexity counts severe conditions."""

from __future__ import annotations

from datetime import date

import pytest

from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.protocol import AssemblePanel, Assess, CallContext
from service.record.profile import Code, Condition, Medication, Observation, PatientProfile
from service.record.vocabulary import SNOMED

AS_OF = date(2024, 6, 1)


def condition(key: str, code: str, text: str, onset: date = date(2015, 1, 1)) -> Condition:
    return Condition(
        f"Condition/{key}", text, (Code(SNOMED, code, text),), "active", "confirmed", onset
    )


def profile(
    *problems: Condition, age: int = 70, egfr: float | None = None, meds: int = 0
) -> PatientProfile:
    obs = (
        (Observation("Observation/egfr", "33914-3", "eGFR", egfr, "mL/min/{1.73_m2}", AS_OF),)
        if egfr is not None
        else ()
    )
    medications = tuple(
        Medication(f"MedicationRequest/m{i}", f"Vitamin {i}", (), "active", "order", AS_OF)
        for i in range(meds)
    )
    return PatientProfile(
        ref="Patient/p",
        sex="male",
        birth_date=date(AS_OF.year - age, 1, 1),
        as_of=AS_OF,
        problems=problems,
        observations=obs,
        medications=medications,
    )


async def panel_of(p: PatientProfile, **kw: object) -> tuple[str, list[str]]:
    ex = EmbeddedExperts(**kw)  # type: ignore[arg-type]
    ctx = CallContext()
    a = await ex.run(Assess(p, EvidenceBase.load().retrieve(p)), ctx)
    return a.complexity, [m.role for m in await ex.run(AssemblePanel(p, a), ctx)]


HF = condition("hf", "84114007", "Heart failure")
COPD = condition("copd", "185086009", "Chronic obstructive lung disease")
STROKE = condition("stroke", "230690007", "Cerebrovascular accident")
AF = condition("af", "49436004", "Atrial fibrillation")
CANCER = condition("ca", "363406005", "Malignant neoplasm of colon")
OVERDOSE = condition("od", "55680006", "Drug overdose", onset=date(2024, 3, 1))


async def test_heart_failure_copd_stroke_egfr_below_30_gets_the_roles_that_matter() -> None:
    complexity, roles = await panel_of(profile(HF, COPD, STROKE, age=70, egfr=24.0))
    assert complexity != "low"  # four severe conditions count
    assert roles[0] == "gp"
    assert {"cardiologist", "nephrologist", "physiotherapist"} <= set(roles)


@pytest.mark.parametrize(
    ("kw", "role"),
    [
        ({"problems": (AF,)}, "cardiologist"),
        ({"problems": (HF,)}, "cardiologist"),
        ({"problems": (COPD,)}, "physiotherapist"),
        ({"problems": (CANCER,)}, "oncologist"),
        ({"problems": (OVERDOSE,)}, "addiction-psychiatrist"),
        ({"egfr": 22.0}, "nephrologist"),
        ({"age": 80}, "geriatrician"),
        ({"meds": 5}, "pharmacist"),
    ],
)
async def test_each_domain_brings_its_role(kw: dict[str, object], role: str) -> None:
    problems = kw.pop("problems", ())
    _, roles = await panel_of(profile(*problems, **kw))  # type: ignore[arg-type]
    assert role in roles


async def test_no_domain_no_specialist() -> None:
    _, roles = await panel_of(profile(age=50))
    assert not {"cardiologist", "nephrologist", "oncologist", "addiction-psychiatrist"} & set(roles)


async def test_configured_size_is_a_floor_not_a_cap() -> None:
    sizes = {"low": (2, 2), "moderate": (2, 2), "high": (2, 2), "very high": (2, 2)}
    p = profile(HF, COPD, CANCER, age=80, egfr=20.0)
    _, roles = await panel_of(p, panel_sizes=sizes)
    assert {"cardiologist", "physiotherapist", "oncologist", "nephrologist", "geriatrician"} <= set(
        roles
    )
    big = {"low": (6, 6), "moderate": (6, 6), "high": (6, 6), "very high": (6, 6)}
    _, roles = await panel_of(profile(age=50), panel_sizes=big)
    assert len(roles) == 6  # the floor fills up with the most relevant roles
