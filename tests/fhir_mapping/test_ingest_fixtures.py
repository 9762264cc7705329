"""Ingest of the shared fixture bundles: every realistic one, each bad_* one, and the 2 MB one.

Expected facts come from the fixture data (see examples/fixtures/SOURCES.md, section 2), not from
the code under test.
"""

from __future__ import annotations

import json
import re
import time
from datetime import date
from pathlib import Path

import pytest

from fhir_mapping.ingest import build_profile, ingest, parse_bundle
from service.errors import BundleError, LimitError
from service.record.profile import PatientProfile
from service.record.vocabulary import LOINC_GROUPS, RXNORM, SNOMED
from tests.conftest import REALISTIC_BUNDLES, fixture_bundle, load_json

_DATE = re.compile(r'"(\d{4}-\d{2}-\d{2})')
_REF = re.compile(r"[A-Z][A-Za-z]+/[A-Za-z0-9\-.]{1,64}")


def _profile(name: str) -> PatientProfile:
    return ingest(fixture_bundle(name).read_bytes())


def _active_meds(p: PatientProfile) -> list[str]:
    return [m.text.lower() for m in p.active_medications]


@pytest.mark.parametrize("path", REALISTIC_BUNDLES, ids=lambda p: p.stem)
def test_every_realistic_bundle_ingests(path: Path) -> None:
    raw = path.read_bytes()
    doc = json.loads(raw)
    p = ingest(raw)
    patient = next(
        e["resource"] for e in doc["entry"] if e["resource"]["resourceType"] == "Patient"
    )
    assert p.ref == f"Patient/{patient['id']}"
    assert p.sex == patient["gender"]
    assert p.birth_date == date.fromisoformat(patient["birthDate"])
    # as_of is a date from the record itself: the latest date string in the file.
    latest_in_file = max(date.fromisoformat(d) for d in _DATE.findall(raw.decode()))
    assert p.as_of == latest_in_file
    assert p.age is not None and 50 <= p.age <= 110
    # Every resource is cited once, as Type/id; every fact cites one of them.
    assert len(p.source_refs) == len(doc["entry"])
    assert all(_REF.fullmatch(r) for r in p.source_refs)
    cited = [f.ref for f in (*p.problems, *p.medications, *p.observations, *p.social)]
    cited += [f.ref for f in (*p.allergies, *p.encounters)]
    assert set(cited) <= set(p.source_refs)
    assert p.problems and p.medications and p.encounters
    # Realistic data: every code is well formed, nothing unused.
    assert p.unused == ()
    assert all(x.recognised for x in (*p.problems, *p.medications, *p.observations))
    # Conditions split between problems and social findings, none lost or duplicated (resolved
    # social findings are the only ones dropped).
    n_conditions = sum(e["resource"]["resourceType"] == "Condition" for e in doc["entry"])
    assert len(p.problems) + len(p.social) <= n_conditions
    assert not any("(finding)" in s.text and s.kind == "" for s in p.social)


def test_adalberto_diazepam_with_alzheimers() -> None:
    p = _profile("adalberto")
    assert any("diazepam" in m for m in _active_meds(p))
    alz = [x for x in p.active_problems if "alzheimer" in x.text.lower()]
    assert alz and alz[0].verification == "confirmed"
    assert any(c.system == SNOMED and c.code == "26929004" for c in alz[0].codes)
    assert alz[0].onset is not None and alz[0].onset <= p.as_of


def test_renea_has_egfr_hba1c_and_uacr() -> None:
    p = _profile("renea")
    for group in ("egfr", "hba1c", "uacr", "creatinine", "potassium"):
        obs = p.latest_of(LOINC_GROUPS[group])
        assert obs is not None and obs.value is not None and obs.value > 0, group
        assert obs.effective is not None and obs.effective <= p.as_of
    a1c = p.latest("4548-4")
    assert a1c is not None and a1c.unit == "%"
    assert any("naproxen" in m for m in _active_meds(p))
    assert any("kidney disease" in x.text.lower() for x in p.active_problems)


@pytest.mark.parametrize("loinc", ["33914-3", "29463-7", "39156-5"])
def test_latest_lab_is_the_most_recent_one(loinc: str) -> None:
    path = fixture_bundle("trey")
    doc = load_json(path)
    results = {
        e["resource"]["effectiveDateTime"][:10]: e["resource"]["valueQuantity"]["value"]
        for e in doc["entry"]
        if e["resource"]["resourceType"] == "Observation"
        and e["resource"]["code"]["coding"][0]["code"] == loinc
    }
    assert len(results) >= 3  # several dates in the fixture, so "latest" is a real choice
    obs = ingest(path.read_bytes()).latest(loinc)
    newest = max(results)
    assert obs is not None and obs.effective == date.fromisoformat(newest)
    assert obs.value == pytest.approx(results[newest])


def test_trey_berge_anticoagulant_combination() -> None:
    p = _profile("trey")
    meds = " | ".join(_active_meds(p))
    for drug in ("warfarin", "clopidogrel", "digoxin", "verapamil"):
        assert drug in meds
    warfarin = next(m for m in p.active_medications if "warfarin" in m.text.lower())
    assert any(c.system == RXNORM and c.code.isdigit() for c in warfarin.codes)
    # Born 1913-01-13; latest fact 2021-01-04, before the birthday: 107.
    assert p.as_of == date(2021, 1, 4)
    assert p.age == 107
    assert any("atrial fibrillation" in x.text.lower() for x in p.active_problems)


def test_blood_pressure_components_are_flattened() -> None:
    p = _profile("trey")
    sys_, dia = p.latest("8480-6"), p.latest("8462-4")
    assert sys_ is not None and dia is not None
    assert sys_.ref == dia.ref and sys_.ref.startswith("Observation/")
    assert sys_.unit == dia.unit == "mm[Hg]"
    assert sys_.value is not None and dia.value is not None and sys_.value > dia.value
    assert p.latest("55284-4") is None  # the panel itself has no value


def test_yvone_collection_bundle_with_relative_refs() -> None:
    path = fixture_bundle("yvone889")
    doc = load_json(path)
    assert doc["type"] == "collection"
    assert doc["entry"][1]["resource"]["subject"]["reference"].startswith("Patient/")
    parsed = parse_bundle(path.read_bytes())
    # The absolute fullUrl and the relative reference both resolve to the one Patient.
    assert parsed.resolve(doc["entry"][0]["fullUrl"]) is parsed.patient
    assert parsed.resolve(parsed.patient.ref) is parsed.patient
    p = build_profile(parsed)
    assert any("lisinopril" in m for m in _active_meds(p))
    assert any("hydrochlorothiazide" in m for m in _active_meds(p))
    stopped = [m for m in p.medications if m.status == "stopped"]
    assert stopped and all(not m.active for m in stopped)
    # Dose and frequency from dosageInstruction.
    lis = next(m for m in p.active_medications if "lisinopril" in m.text.lower())
    assert lis.frequency == "1 per 1 d" and lis.dose == "1"


def test_yvone_sdoh_findings_are_social_not_problems() -> None:
    p = _profile("yvone889")
    kinds = {s.kind for s in p.social}
    assert {"stress", "criminal_record", "intimate_partner_abuse"} <= kinds
    assert not any("(finding)" in x.text and "obesity" not in x.text for x in p.problems)
    # Resolved employment findings are history, not the person's present.
    assert all(s.kind != "employment" or "Full-time" in s.text for s in p.social)


def test_obesity_finding_stays_a_problem() -> None:
    p = _profile("trey")
    assert any("obesity" in x.text.lower() for x in p.active_problems)


def test_allergies_are_mapped() -> None:
    p = _profile("christin")
    assert len(p.allergies) == 6
    assert all(a.substance and a.codes and a.recognised for a in p.allergies)
    assert {a.criticality for a in p.allergies} <= {"low", "high", "unable-to-assess", ""}


# --- bad_* fixtures


def test_wrong_resourcetype_is_refused_naming_each_entry() -> None:
    path = fixture_bundle("bad_wrong_resourcetype")
    doc = load_json(path)
    bad = [
        i for i, e in enumerate(doc["entry"]) if e["resource"]["resourceType"] == "MedicationOrder"
    ]
    with pytest.raises(BundleError) as info:
        ingest(path.read_bytes())
    exprs = [i.expression[0] for i in info.value.issues]
    assert exprs == [f"Bundle.entry[{i}].resource.resourceType" for i in bad]
    assert {i.code for i in info.value.issues} == {"not-supported"}
    assert "MedicationOrder" in info.value.issues[0].diagnostics


def test_missing_patient_is_refused() -> None:
    with pytest.raises(BundleError) as info:
        ingest(fixture_bundle("bad_missing_patient").read_bytes())
    assert [(i.code, i.expression) for i in info.value.issues] == [("required", ("Bundle.entry",))]


def test_dangling_patient_reference_is_refused_per_entry() -> None:
    path = fixture_bundle("bad_medreq_dangling_patient")
    doc = load_json(path)
    meds = [
        i
        for i, e in enumerate(doc["entry"])
        if e["resource"]["resourceType"] == "MedicationRequest"
    ]
    with pytest.raises(BundleError) as info:
        ingest(path.read_bytes())
    assert [i.expression[0] for i in info.value.issues] == [
        f"Bundle.entry[{i}].resource.subject" for i in meds
    ]
    assert {i.code for i in info.value.issues} == {"not-found"}


def test_unknown_codes_are_kept_and_flagged() -> None:
    p = _profile("bad_unknown_codes")
    unrecognised = [x for x in p.problems if not x.recognised]
    assert len(unrecognised) == 4  # bad SNOMED, local system, text only, no system
    assert sum(x.recognised for x in p.problems) == 2
    assert len([m for m in p.medications if not m.recognised]) == 4  # 0000000, local, text, NDC
    assert any(m.text.startswith("Grandma") for m in p.medications)  # text-only med kept
    bad_obs = [o for o in p.observations if not o.recognised]
    assert [o.loinc for o in bad_obs] == ["00000-0"]
    reasons = {(u.field, u.reason.split(":")[0]) for u in p.unused}
    assert ("Condition.code", "free text only, no coding") in reasons
    assert ("Condition.code.coding[0]", "'999999999999999'") in reasons
    assert ("MedicationRequest.medicationCodeableConcept.coding[0]", "'0000000'") in reasons
    assert ("Observation.code.coding[0]", "'00000-0'") in reasons
    assert any("no system" in u.reason for u in p.unused)
    assert any("NDC" in u.reason for u in p.unused)
    unused_refs = {u.ref for u in p.unused}
    assert unused_refs == {x.ref for x in (*unrecognised, *bad_obs)} | {
        m.ref for m in p.medications if not m.recognised
    }


def test_huge_bundle_ingests_fast() -> None:
    raw = fixture_bundle("bad_huge_many_conditions_2mb").read_bytes()
    t0 = time.perf_counter()
    parsed = parse_bundle(raw)
    t1 = time.perf_counter()
    p = build_profile(parsed)
    t2 = time.perf_counter()
    assert len(p.problems) + len(p.social) <= 1766
    assert len(p.source_refs) == 1774
    assert len(p.medications) == 7
    # Repeated records of one ongoing problem are folded: each active code appears once, and
    # every folded record is still cited.
    active = p.active_problems
    keys = [(x.codes[0].system, x.codes[0].code) for x in active]
    assert len(keys) == len(set(keys)) and len(active) < 100
    folded = [r for x in active for r in x.duplicates]
    assert len(folded) > 500 and set(folded) <= set(p.source_refs)
    for x in active:
        assert x.onset is not None and x.onset <= p.as_of
    # Target < 2 s on one core; the bound leaves room for a loaded CI machine.
    assert t2 - t0 < 5.0, (t1 - t0, t2 - t1)


def test_huge_bundle_respects_max_resources() -> None:
    raw = fixture_bundle("bad_huge_many_conditions_2mb").read_bytes()
    with pytest.raises(LimitError) as info:
        ingest(raw, max_resources=1000)
    assert info.value.issues[0].code == "too-costly"
    assert info.value.issues[0].expression == ("Bundle.entry",)
    assert "1774" in info.value.message
    assert ingest(raw, max_resources=1774).ref.startswith("Patient/")
