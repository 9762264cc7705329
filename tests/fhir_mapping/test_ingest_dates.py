"""Dates a record cannot have are not facts: a clinical date after the request (beyond the
clock-skew allowance) or before the birth date, a birth date in the future or implying an age
above ``MAX_AGE_YEARS``. Each is listed as unusable with its reason; the record date never lies
after the request; and, over records with arbitrary dates (hypothesis), no computed fact (age,
kidney function, durations, months since a test) is negative or absurd."""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fhir_mapping.ingest import ingest
from inference.knowledge.facts import Facts
from inference.knowledge.rules import analyse
from service.errors import BundleError
from service.record.profile import MAX_AGE_YEARS, PatientProfile
from tests.conftest import REALISTIC_BUNDLES, REPO_ROOT

RECEIVED = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
VIGNETTES = REPO_ROOT / "examples" / "vignettes"
NEGATIVE = re.compile(r"(?<![\w.])-\d")
_NOT_BUNDLES = ("expectations.json", "known_gaps.json")


@cache
def _bundle(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((VIGNETTES / f"{name}.json").read_bytes())
    return loaded


def _resources(bundle: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == kind]


def _with_birth(name: str, born: str) -> dict[str, Any]:
    out = copy.deepcopy(_bundle(name))
    _resources(out, "Patient")[0]["birthDate"] = born
    return out


def _with_creatinine(name: str, when: str, value: float = 2.2) -> dict[str, Any]:
    out = copy.deepcopy(_bundle(name))
    patient = _resources(out, "Patient")[0]
    rid = "0d1c1d9e-0000-4000-8000-000000002999"
    out["entry"].append(
        {
            "fullUrl": f"urn:uuid:{rid}",
            "resource": {
                "resourceType": "Observation",
                "id": rid,
                "status": "final",
                "code": {"coding": [{"system": "http://loinc.org", "code": "2160-0"}]},
                "subject": {"reference": f"Patient/{patient['id']}"},
                "effectiveDateTime": when,
                "valueQuantity": {"value": value, "unit": "mg/dL"},
            },
        }
    )
    return out


def _texts(profile: PatientProfile) -> str:
    a = analyse(profile)
    return "\n".join(pt.text for p in a.proposals for pt in p.points)


def _unusable(profile: PatientProfile, field: str) -> list[str]:
    return [u.reason for u in profile.unused if u.field == field]


# -- the three records the attack run found -------------------------------------------------


def test_a_birth_date_in_the_future_is_unusable_and_gives_no_age() -> None:
    profile = ingest(_with_birth("opioid_gabapentin_benzo", "2090-01-01"), received=RECEIVED)
    (why,) = _unusable(profile, "Patient.birthDate")
    assert "2090-01-01" in why and "after the request" in why
    assert profile.birth_date is None and profile.age is None
    assert not re.search(r"-\d+-year-old", _texts(profile))


def test_a_birth_date_implying_an_impossible_age_gives_no_clearance() -> None:
    profile = ingest(_with_birth("ckd4_metformin", "1850-01-01"), received=RECEIVED)
    (why,) = _unusable(profile, "Patient.birthDate")
    assert f"plausible maximum {MAX_AGE_YEARS} years" in why and "176" in why
    f = Facts(profile)
    assert f.age is None
    # The reported eGFR is still a fact; nothing is computed from an impossible age.
    assert f.kidney is not None and f.kidney.crcl is None and f.kidney.computed is None
    assert f.kidney.value == 22.0
    assert not NEGATIVE.search(_texts(profile))


def test_an_observation_dated_after_the_request_does_not_move_the_record_date() -> None:
    before = ingest(_bundle("ckd4_metformin"), received=RECEIVED)
    profile = ingest(_with_creatinine("ckd4_metformin", "2999-01-01", 0.5), received=RECEIVED)
    (why,) = _unusable(profile, "Observation.effective[x]")
    assert "2999-01-01" in why and "after the request (2026-11-30" in why
    assert profile.as_of == before.as_of == date(2026, 10, 14)
    assert all(o.effective != date(2999, 1, 1) for o in profile.readings)
    assert Facts(profile).kidney == Facts(before).kidney
    assert _texts(profile) == _texts(before)


def test_the_clock_skew_allowance_keeps_a_date_just_ahead_but_not_the_record_date() -> None:
    tomorrow = (RECEIVED + timedelta(hours=20)).date().isoformat()
    profile = ingest(_with_creatinine("ckd4_metformin", tomorrow), received=RECEIVED)
    assert not _unusable(profile, "Observation.effective[x]")
    assert profile.as_of == RECEIVED.date()  # never past the request
    f = Facts(profile)
    assert f.days_since(date.fromisoformat(tomorrow)) == 0
    tight = ingest(
        _with_creatinine("ckd4_metformin", tomorrow), received=RECEIVED, clock_skew=timedelta(0)
    )
    assert _unusable(tight, "Observation.effective[x]")


def test_other_resources_keep_their_facts_without_the_impossible_date() -> None:
    bundle = copy.deepcopy(_bundle("ckd4_metformin"))
    med = _resources(bundle, "MedicationRequest")[0]
    med["authoredOn"] = "2999-05-01"
    cond = _resources(bundle, "Condition")[0]
    cond["onsetDateTime"] = "1800-01-01"
    profile = ingest(bundle, received=RECEIVED)
    assert _unusable(profile, "MedicationRequest.authoredOn")
    (why,) = _unusable(profile, "Condition.onset[x]")
    assert "before the patient's birth date (1944-03-12)" in why
    m = next(m for m in profile.medications if m.ref.endswith(med["id"]))
    c = next(p for p in profile.problems if p.ref.endswith(cond["id"]))
    assert m.authored is None and c.onset is None


def test_without_a_request_time_only_the_order_of_dates_is_checked() -> None:
    profile = ingest(_with_creatinine("ckd4_metformin", "2999-01-01"))
    assert profile.as_of == date(2999, 1, 1)
    (why,) = _unusable(profile, "Patient.birthDate")
    assert "implies an age of 1054 on the record's latest usable date (2999-01-01" in why
    assert profile.age is None


def test_valid_records_are_unchanged_by_the_request_time() -> None:
    written = [p for p in sorted(VIGNETTES.glob("*.json")) if p.name not in _NOT_BUNDLES]
    for path in [*written, *REALISTIC_BUNDLES]:
        raw = path.read_bytes()
        # the request's day is kept as the plan day; every fact read from the record is the same
        assert replace(ingest(raw, received=RECEIVED), received=None) == ingest(raw), path.name


# -- property: no computed fact is negative or absurd, whatever the dates -----------------

_DAY = st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31))
_NEAR = st.dates(min_value=date(1800, 1, 1), max_value=date(2200, 12, 31))
_ANY_DAY = st.one_of(_DAY, _NEAR, _NEAR, _NEAR)


def _dated(bundle: dict[str, Any], days: list[date], born: date | None) -> dict[str, Any]:
    """``bundle`` with every clinical date replaced, in turn, by ``days``."""
    out = copy.deepcopy(bundle)
    it = iter(days * 50)
    for e in out["entry"]:
        r = e["resource"]
        kind = r["resourceType"]
        if kind == "Patient":
            if born is None:
                r.pop("birthDate", None)
            else:
                r["birthDate"] = born.isoformat()
        elif kind == "Observation":
            r["effectiveDateTime"] = next(it).isoformat()
        elif kind == "Condition":
            r["onsetDateTime"] = next(it).isoformat()
        elif kind == "MedicationRequest":
            r["authoredOn"] = next(it).isoformat()
        elif kind == "Encounter":
            r["period"] = {"start": next(it).isoformat()}
        elif kind == "Immunization":
            r["occurrenceDateTime"] = next(it).isoformat()
    return out


def _check_bounds(profile: PatientProfile, received: datetime | None) -> None:
    if received is not None:
        assert profile.as_of <= received.date()
    assert profile.age is None or 0 <= profile.age <= MAX_AGE_YEARS
    f = Facts(profile)
    for o in profile.readings:
        days = f.days_since(o.effective)
        assert days is None or 0 <= days <= 366 * MAX_AGE_YEARS
    for m in f.meds:
        years = f.years_on(m)
        assert years is None or 0 <= years <= MAX_AGE_YEARS
    if f.kidney is not None:
        for v in (f.kidney.value, f.kidney.computed, f.kidney.crcl):
            assert v is None or (math.isfinite(v) and 0 < v < 10_000), f.kidney
        assert all(u.days >= 0 and u.implied_egfr > 0 for u in f.kidney.unsteady)
    texts = _texts(profile)
    assert not NEGATIVE.search(texts), NEGATIVE.search(texts)
    months = [int(m) for m in re.findall(r"(\d+) months before the record date", texts)]
    # texts count months of 30 days: a lifetime of 366-day years is the most there can be
    assert all(m <= 366 * MAX_AGE_YEARS // 30 for m in months), months


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    name=st.sampled_from(["ckd4_metformin", "opioid_gabapentin_benzo", "af_aspirin_only"]),
    days=st.lists(_ANY_DAY, min_size=1, max_size=6),
    born=st.one_of(st.none(), _ANY_DAY),
    received=st.one_of(
        st.none(),
        st.datetimes(
            min_value=datetime(1900, 1, 1), max_value=datetime(2300, 1, 1), timezones=st.just(UTC)
        ),
    ),
)
def test_no_computed_fact_is_negative_or_absurd_whatever_the_dates(
    name: str, days: list[date], born: date | None, received: datetime | None
) -> None:
    try:
        profile = ingest(_dated(_bundle(name), days, born), received=received)
    except BundleError as exc:  # every date impossible and no Bundle.timestamp: refused
        assert received is not None and "timestamp" in exc.issues[0].diagnostics
        return
    _check_bounds(profile, received)
