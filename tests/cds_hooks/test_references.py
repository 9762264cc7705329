"""References and alerts over the real CDS Hooks transport (a real HTTP server, a signed client
JWT, the fake EHR FHIR server): the stored plan of a hook call points the patient's record at the
client's ``fhirServer`` (and marks it as the source's when the call names none), every reference
resolves by R4's Bundle rules, and a card about a safety finding names its detected-issue code
(v3 ActCode, as the plan's DetectedIssue carries it) as its source's topic."""

from __future__ import annotations

import json
from typing import Any

from fhir_mapping.definitions import DEFAULT_BASE, ext_url
from tests.cds_hooks.conftest import Servers, cds_fixture
from tests.fhir_mapping.fhir_checks import resolve_by_bundle_rules

PV = "careplan-patient-view"
OSEL = "careplan-order-select"
MARK = ext_url("source-reference")
ACT_CODE = "http://terminology.hl7.org/CodeSystem/v3-ActCode"
FAILURES = {"nowhere", "wrong-server", "version-mismatch"}


def _stored_bundle(servers: Servers, card: dict[str, Any]) -> dict[str, Any]:
    ctx = json.loads(card["links"][0]["appContext"])
    rec = servers.call(
        servers.service.store.get_version(
            tenant="ehr-test", plan_id=ctx["planId"], version=ctx["version"]
        )
    )
    bundle: dict[str, Any] = rec.bundle
    return bundle


def _outcomes(bundle: dict[str, Any]) -> list[tuple[str, str, str]]:
    found = resolve_by_bundle_rules(bundle, service_base=DEFAULT_BASE, source_mark=MARK)
    assert not [x for x in found if x[2] in FAILURES]
    return found


def _careplan(bundle: dict[str, Any]) -> dict[str, Any]:
    (cp,) = [e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "CarePlan"]
    return cp


def test_the_record_points_at_the_clients_fhir_server(servers: Servers) -> None:
    body = cds_fixture("requests", "patient-view_trey_berge.json")
    body |= {"fhirServer": servers.fhir_base, "fhirAuthorization": servers.fhir_auth()}
    r = servers.post(PV, body)
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    bundle = _stored_bundle(servers, card)
    patient = _careplan(bundle)["subject"]["reference"]
    assert patient == f"{servers.fhir_base}/Patient/{body['context']['patientId']}"
    record = [ref for _w, ref, o in _outcomes(bundle) if o == "source"]
    assert len(record) > 5
    assert all(ref.startswith(servers.fhir_base + "/") for ref in record), record[:5]
    assert MARK not in json.dumps(bundle)


def test_without_a_fhir_server_the_record_is_marked_as_the_sources(servers: Servers) -> None:
    body = cds_fixture("requests", "patient-view_trey_berge.json")
    del body["fhirServer"]  # optional in CDS Hooks: a fully prefetched call may omit it
    r = servers.post(PV, body)
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    bundle = _stored_bundle(servers, card)
    subject = _careplan(bundle)["subject"]
    assert subject["extension"] == [{"url": MARK, "valueBoolean": True}]
    assert "source" in {o for _w, _r, o in _outcomes(bundle)}


def test_an_interaction_card_names_its_detected_issue_code(servers: Servers) -> None:
    r = servers.post(OSEL, cds_fixture("requests", "order-select_trey_berge_naproxen.json"))
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    topic = card["source"]["topic"]
    assert topic["system"] == ACT_CODE
    bundle = _stored_bundle(servers, card)
    codes = {
        c["code"]
        for e in bundle["entry"]
        if e["resource"]["resourceType"] == "DetectedIssue"
        for c in e["resource"]["code"]["coding"]
    }
    assert topic["code"] in codes
