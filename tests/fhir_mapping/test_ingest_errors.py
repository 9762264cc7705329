"""Ingest on small hand-made bundles: the error contract, reference styles, bundle types, and
malformed shapes that must end as BundleError, never a traceback."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fhir_mapping._issues import MAX_ISSUES
from fhir_mapping.ingest import build_profile, ingest, parse_bundle
from service.errors import BundleError, CanoeError, LimitError
from service.record.profile import PatientProfile

PID = "p1"
UUIDS = {
    "Patient/p1": "urn:uuid:00000000-0000-4000-8000-000000000001",
    "Condition/c1": "urn:uuid:00000000-0000-4000-8000-000000000002",
    "MedicationRequest/m1": "urn:uuid:00000000-0000-4000-8000-000000000003",
    "Observation/o1": "urn:uuid:00000000-0000-4000-8000-000000000004",
    "Encounter/e1": "urn:uuid:00000000-0000-4000-8000-000000000005",
}
SNOMED = "http://snomed.info/sct"
LOINC = "http://loinc.org"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"


def patient(pid: str = PID, **extra: Any) -> dict[str, Any]:
    return {
        "resourceType": "Patient",
        "id": pid,
        "gender": "female",
        "birthDate": "1950-06-15",
        **extra,
    }


def condition(subject: str = "Patient/p1", cid: str = "c1", **extra: Any) -> dict[str, Any]:
    return {
        "resourceType": "Condition",
        "id": cid,
        "clinicalStatus": {"coding": [{"code": "active"}]},
        "verificationStatus": {"coding": [{"code": "confirmed"}]},
        "code": {"coding": [{"system": SNOMED, "code": "44054006", "display": "Diabetes"}]},
        "subject": {"reference": subject},
        "onsetDateTime": "2001-02-03",
        **extra,
    }


def medreq(subject: str = "Patient/p1", mid: str = "m1", **extra: Any) -> dict[str, Any]:
    return {
        "resourceType": "MedicationRequest",
        "id": mid,
        "status": "active",
        "intent": "order",
        "medicationCodeableConcept": {
            "coding": [{"system": RXNORM, "code": "860975", "display": "Metformin 500 MG"}],
            "text": "Metformin 500 MG",
        },
        "subject": {"reference": subject},
        "authoredOn": "2019-05-06T10:00:00+00:00",
        **extra,
    }


def bp(subject: str = "Patient/p1", oid: str = "o1", when: str = "2020-07-08") -> dict[str, Any]:
    def comp(code: str, value: float) -> dict[str, Any]:
        return {
            "code": {"coding": [{"system": LOINC, "code": code}]},
            "valueQuantity": {"value": value, "unit": "mm[Hg]"},
        }

    return {
        "resourceType": "Observation",
        "id": oid,
        "status": "final",
        "code": {"coding": [{"system": LOINC, "code": "85354-9", "display": "BP panel"}]},
        "subject": {"reference": subject},
        "effectiveDateTime": when,
        "component": [comp("8480-6", 142), comp("8462-4", 88)],
    }


def bundle(*resources: dict[str, Any], btype: str = "collection", style: str = "relative") -> dict:
    """A Bundle whose fullUrls and references follow ``style``: relative (Type/id, absolute
    fullUrls), uuid (urn:uuid fullUrls and references) or absolute (absolute references)."""
    entries = []
    for r in copy.deepcopy(list(resources)):
        ref = f"{r['resourceType']}/{r.get('id')}"
        if style == "uuid":
            full_url = UUIDS.get(ref, f"urn:uuid:00000000-0000-4000-8000-{len(entries):012d}")
            for key in ("subject", "patient"):
                if key in r and r[key].get("reference") in UUIDS:
                    r[key]["reference"] = UUIDS[r[key]["reference"]]
        else:
            full_url = f"https://ehr.example.org/fhir/{ref}"
            if style == "absolute":
                for key in ("subject", "patient"):
                    if key in r:
                        r[key]["reference"] = "https://ehr.example.org/fhir/" + r[key]["reference"]
        entry: dict[str, Any] = {"fullUrl": full_url, "resource": r}
        if btype in ("transaction", "batch"):
            entry["request"] = {"method": "POST", "url": r["resourceType"]}
        if btype == "searchset":
            entry["search"] = {"mode": "match"}
        entries.append(entry)
    return {"resourceType": "Bundle", "type": btype, "entry": entries}


def good() -> dict[str, Any]:
    return bundle(patient(), condition(), medreq(), bp())


def issues_of(raw: Any, **kw: Any) -> list[tuple[str, str]]:
    with pytest.raises(BundleError) as info:
        ingest(raw, **kw)
    return [(i.code, i.expression[0] if i.expression else "") for i in info.value.issues]


# --- the happy path on a small bundle


def test_small_bundle_profile() -> None:
    p = ingest(json.dumps(good()))
    assert p.ref == "Patient/p1" and p.sex == "female"
    assert p.as_of == date(2020, 7, 8) and p.age == 70
    assert [x.ref for x in p.problems] == ["Condition/c1"]
    assert p.problems[0].onset == date(2001, 2, 3) and p.problems[0].active
    med = p.medications[0]
    assert (med.ref, med.text, med.status, med.authored) == (
        "MedicationRequest/m1",
        "Metformin 500 MG",
        "active",
        date(2019, 5, 6),
    )
    assert p.source_refs == ("Patient/p1", "Condition/c1", "MedicationRequest/m1", "Observation/o1")


def test_blood_pressure_panel_becomes_two_observations() -> None:
    p = ingest(good())
    by_code = {o.loinc: o for o in p.observations}
    assert set(by_code) == {"8480-6", "8462-4"}
    assert by_code["8480-6"].value == 142 and by_code["8462-4"].value == 88
    assert by_code["8480-6"].ref == by_code["8462-4"].ref == "Observation/o1"
    assert by_code["8480-6"].effective == date(2020, 7, 8)


@pytest.mark.parametrize("style", ["uuid", "absolute"])
def test_reference_styles_give_the_same_profile(style: str) -> None:
    resources = (patient(), condition(), medreq(), bp())
    expected = ingest(bundle(*resources, style="relative"))
    got = ingest(bundle(*resources, style=style))
    # Where each resource lives at the source follows its fullUrl; every fact is the same.
    assert replace(got, sources=()) == replace(expected, sources=())
    assert [s.ref for s in got.sources] == [s.ref for s in expected.sources]


@pytest.mark.parametrize("btype", ["collection", "transaction", "batch", "searchset", "document"])
def test_accepted_bundle_types(btype: str) -> None:
    p = ingest(bundle(patient(), condition(), btype=btype))
    assert p.problems[0].ref == "Condition/c1"


@pytest.mark.parametrize("btype", ["history", "message", "transaction-response"])
def test_refused_bundle_types(btype: str) -> None:
    assert ("not-supported", "Bundle.type") in issues_of(bundle(patient(), btype=btype))


def test_searchset_outcome_entry_without_id_is_fine() -> None:
    b = bundle(patient(), condition(), btype="searchset")
    b["entry"].append(
        {
            "resource": {
                "resourceType": "OperationOutcome",
                "issue": [{"severity": "information", "code": "informational"}],
            },
            "search": {"mode": "outcome"},
        }
    )
    p = ingest(b)
    assert p.source_refs == ("Patient/p1", "Condition/c1")


def test_transaction_resource_without_id_is_named_by_its_urn_uuid() -> None:
    b = bundle(patient(), condition(), btype="transaction", style="uuid")
    del b["entry"][1]["resource"]["id"]
    p = ingest(b)
    assert p.problems[0].ref == "Condition/00000000-0000-4000-8000-000000000002"


def test_delete_entry_without_resource_is_skipped() -> None:
    b = bundle(patient(), condition(), btype="transaction")
    b["entry"].append({"request": {"method": "DELETE", "url": "Condition/old"}})
    assert len(ingest(b).problems) == 1


def test_medication_reference_to_bundled_and_contained_medication() -> None:
    med = {
        "resourceType": "Medication",
        "id": "med1",
        "code": {"coding": [{"system": RXNORM, "code": "855332", "display": "Warfarin 5 MG"}]},
    }
    bundled = medreq(mid="m1")
    del bundled["medicationCodeableConcept"]
    bundled["medicationReference"] = {"reference": "Medication/med1"}
    contained = medreq(mid="m2")
    del contained["medicationCodeableConcept"]
    contained["contained"] = [{**med, "id": "inner"}]
    contained["medicationReference"] = {"reference": "#inner"}
    dangling = medreq(mid="m3")
    del dangling["medicationCodeableConcept"]
    dangling["medicationReference"] = {"reference": "Medication/nowhere", "display": "Some pill"}
    p = ingest(bundle(patient(), med, bundled, contained, dangling))
    m1, m2, m3 = p.medications
    assert m1.text == m2.text == "Warfarin 5 MG" and m1.recognised and m2.recognised
    assert m1.codes[0].code == "855332"
    assert m3.text == "Some pill" and not m3.recognised
    assert [u.ref for u in p.unused] == ["MedicationRequest/m3"]


def test_partial_dates_and_dosage() -> None:
    m = medreq(
        dosageInstruction=[
            {
                "timing": {"repeat": {"frequency": 2, "period": 1, "periodUnit": "d"}},
                "route": {"text": "oral"},
                "doseAndRate": [{"doseQuantity": {"value": 500, "unit": "mg"}}],
            }
        ]
    )
    p = ingest(bundle(patient(birthDate="1950"), condition(onsetDateTime="1999"), m))
    assert p.birth_date == date(1950, 1, 1)
    assert p.problems[0].onset == date(1999, 1, 1)
    med = p.medications[0]
    assert (med.dose, med.frequency, med.route) == ("500 mg", "2 per 1 d", "oral")


def test_observation_without_subject_is_not_attached() -> None:
    o = bp()
    del o["subject"]
    p = ingest(bundle(patient(), condition(), o))
    assert p.observations == ()
    assert [(u.ref, u.field) for u in p.unused] == [("Observation/o1", "Observation.subject")]


def test_as_of_falls_back_to_bundle_timestamp_then_refuses() -> None:
    c = condition()
    del c["onsetDateTime"]
    b = bundle(patient(), c)
    with pytest.raises(BundleError) as info:
        ingest(b)
    assert info.value.issues[0].code == "required"
    b["timestamp"] = "2024-02-03T04:05:06Z"
    assert ingest(b).as_of == date(2024, 2, 3)


def test_repeated_active_problem_is_folded_keeping_earliest_onset() -> None:
    again = condition(cid="c2", onsetDateTime="1999-01-01")
    resolved = condition(
        cid="c3", clinicalStatus={"coding": [{"code": "resolved"}]}, onsetDateTime="1980-01-01"
    )
    p = ingest(bundle(patient(), condition(), again, resolved))
    assert [(x.ref, x.duplicates, x.onset) for x in p.problems] == [
        ("Condition/c1", ("Condition/c2",), date(1999, 1, 1)),
        ("Condition/c3", (), date(1980, 1, 1)),
    ]


def test_social_findings_are_split_from_problems() -> None:
    lives_alone = condition(
        cid="c2",
        code={
            "coding": [{"system": SNOMED, "code": "105529008", "display": "Lives alone (finding)"}]
        },
    )
    fall = condition(cid="c3", code={"text": "History of fall"})
    old_job = condition(
        cid="c4",
        code={
            "coding": [{"system": SNOMED, "code": "73438004", "display": "Unemployed (finding)"}]
        },
        clinicalStatus={"coding": [{"code": "resolved"}]},
    )
    p = ingest(bundle(patient(), condition(), lives_alone, fall, old_job))
    assert [x.ref for x in p.problems] == ["Condition/c1"]
    assert [(s.ref, s.kind) for s in p.social] == [
        ("Condition/c2", "lives_alone"),
        ("Condition/c3", "fall_history"),
    ]


# --- errors


@pytest.mark.parametrize(
    "raw", [b"{not json", b"\xff\xfe\x00garbage", "", "NaN", b'{"a": Infinity}', "[" * 100_000]
)
def test_not_json(raw: bytes | str) -> None:
    assert issues_of(raw) == [("structure", "Bundle")]


@pytest.mark.parametrize("raw", ["[]", "42", '"Bundle"', "null", "true"])
def test_not_an_object(raw: str) -> None:
    assert issues_of(raw) == [("structure", "Bundle")]


def test_not_a_bundle() -> None:
    assert issues_of(patient()) == [("invalid", "Bundle.resourceType")]
    assert issues_of({"type": "collection"}) == [("required", "Bundle")]


@pytest.mark.parametrize("entries", [None, []])
def test_empty_bundle(entries: list[Any] | None) -> None:
    b: dict[str, Any] = {"resourceType": "Bundle", "type": "collection"}
    if entries is not None:
        b["entry"] = entries
    assert issues_of(b) == [("required", "Bundle.entry")]


def test_two_patients() -> None:
    assert issues_of(bundle(patient(), patient("p2"), condition())) == [
        ("business-rule", "Bundle.entry[1].resource")
    ]


def test_same_patient_twice_is_a_duplicate() -> None:
    assert issues_of(bundle(patient(), patient(), condition())) == [
        ("duplicate", "Bundle.entry[1].resource")
    ]


def test_subject_that_is_not_the_patient() -> None:
    enc = {"resourceType": "Encounter", "id": "e1", "status": "finished", "class": {"code": "AMB"}}
    enc["subject"] = {"reference": "Patient/p1"}
    assert issues_of(bundle(patient(), enc, condition(subject="Encounter/e1"))) == [
        ("invalid", "Bundle.entry[2].resource.subject")
    ]


def test_all_issues_are_collected_with_fhirpaths() -> None:
    bad_status = condition(clinicalStatus="active")  # a string where a CodeableConcept belongs
    no_intent = medreq()
    del no_intent["intent"]
    bad_enum = bp()
    bad_enum["status"] = " final"  # the FHIR code pattern forbids leading whitespace
    dangling = condition(subject="Patient/other", cid="c9")
    got = issues_of(bundle(patient(), bad_status, no_intent, bad_enum, dangling))
    assert ("structure", "Bundle.entry[1].resource.clinicalStatus") in got
    assert ("required", "Bundle.entry[2].resource.intent") in got
    assert ("value", "Bundle.entry[3].resource.status") in got
    assert ("not-found", "Bundle.entry[4].resource.subject") in got


def test_nested_location_in_fhirpath() -> None:
    c = condition()
    c["code"]["coding"][0]["system"] = 42
    assert issues_of(bundle(patient(), c)) == [
        ("value", "Bundle.entry[1].resource.code.coding[0].system")
    ]


def test_issue_count_is_capped() -> None:
    b = bundle(patient(), *[condition(subject="Patient/x", cid=f"c{i}") for i in range(300)])
    with pytest.raises(BundleError) as info:
        ingest(b)
    issues = info.value.issues
    assert len(issues) == MAX_ISSUES + 1
    assert issues[-1].code == "too-costly" and "200 further" in issues[-1].diagnostics


def test_error_text_carries_no_patient_data() -> None:
    secret = "Zebulon-Quixotic"
    p = patient(name=[{"family": secret}], birthDate=secret, gender=secret)
    with pytest.raises(BundleError) as info:
        ingest(bundle(p, condition(note=[{"text": 7}])))
    text = info.value.message + " ".join(i.diagnostics for i in info.value.issues)
    assert secret not in text
    assert len(info.value.issues) >= 2


def test_max_resources() -> None:
    with pytest.raises(LimitError) as info:
        ingest(good(), max_resources=3)
    assert info.value.issues[0].code == "too-costly"
    assert ingest(good(), max_resources=4).ref == "Patient/p1"


def test_parse_then_build_equals_ingest() -> None:
    assert build_profile(parse_bundle(good())) == ingest(good())


# --- malformed shapes: BundleError, never a traceback


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    b = good()
    node: Any = b
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return b


MALFORMED = [
    _with(("entry",), {}),
    _with(("entry",), "entries"),
    _with(("entry", 1), None),
    _with(("entry", 1), 7),
    _with(("entry", 1), []),
    _with(("entry", 1, "resource"), None),
    _with(("entry", 1, "resource"), "Condition"),
    _with(("entry", 1, "resource"), [condition()]),
    _with(("entry", 1, "resource", "resourceType"), 12),
    _with(("entry", 1, "resource", "resourceType"), None),
    _with(("entry", 1, "resource", "resourceType"), ""),
    _with(("entry", 1, "resource", "resourceType"), "Coding"),
    _with(("entry", 1, "resource", "resourceType"), "condition"),
    _with(("entry", 1, "resource", "resourceType"), "Resource"),
    _with(("entry", 0, "resource", "resourceType"), "Person"),
    _with(("entry", 1, "resource", "subject"), "Patient/p1"),
    _with(("entry", 1, "resource", "subject"), {"reference": 5}),
    _with(("entry", 1, "resource", "contained"), [{"resourceType": "MedicationOrder"}]),
    _with(("entry", 1, "resource", "onsetDateTime"), "2020-13-45"),
    _with(("entry", 1, "fullUrl"), 3),
    _with(("entry", 1, "request"), "POST"),
    _with(("type",), 5),
    _with(("type",), None),
    _with(("resourceType",), ["Bundle"]),
    _with(("entry", 0, "resource", "birthDate"), {"year": 1950}),
]


@pytest.mark.parametrize("raw", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_shapes_are_bundle_errors(raw: dict[str, Any]) -> None:
    with pytest.raises(BundleError) as info:
        ingest(raw)
    assert info.value.issues and all(i.expression for i in info.value.issues)
    assert all(i.code != "exception" for i in info.value.issues)
    with pytest.raises(BundleError):
        ingest(json.dumps(raw).encode())


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


_PATHS = _paths(good())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(_PATHS) - 1), value=_json)
def test_fuzzed_values_never_escape(index: int, value: Any) -> None:
    raw = _with(_PATHS[index], value)
    try:
        result = ingest(raw)
    except CanoeError as exc:
        assert isinstance(exc, BundleError | LimitError)
        assert exc.issues
        # "exception" marks the safety net: a shape the checks did not foresee.
        assert all(i.code != "exception" for i in exc.issues), exc.issues
    else:
        assert isinstance(result, PatientProfile)
