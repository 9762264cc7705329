"""The CDS Hooks service over real HTTP: uvicorn on loopback, httpx as the CDS client.

Every request here goes through the real app, the real CarePlanService (embedded backend,
SQLite store) and, for prefetch by REST, a fake EHR FHIR server on another loopback port.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

import httpx
import pytest

from tests.cds_hooks.conftest import FHIR_TOKEN, Servers, cds_fixture

PV, OSEL, OSIGN = "careplan-patient-view", "careplan-order-select", "careplan-order-sign"


def _uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _check_card(card: dict[str, Any]) -> None:
    """The specification's card rules, as a client would check them."""
    assert _uuid(card["uuid"])
    assert 0 < len(card["summary"]) <= 140
    assert card["indicator"] in ("info", "warning", "critical")
    assert card["source"]["label"]
    for link in card.get("links", []):
        assert link["type"] in ("absolute", "smart") and link["url"] and link["label"]
    if card.get("suggestions"):
        assert card["selectionBehavior"] in ("at-most-one", "any")
        for s in card["suggestions"]:
            assert s["label"] and _uuid(s["uuid"])
            for a in s.get("actions", []):
                assert a["type"] in ("create", "update", "delete") and a["description"]


# ------------------------------------------------------------------ discovery, CORS, auth


def test_discovery_lists_services_matching_the_fixture_prefetch(servers: Servers) -> None:
    r = httpx.get(f"{servers.base}/cds-services", headers=servers.auth())
    assert r.status_code == 200, r.text
    got = {s["id"]: s for s in r.json()["services"]}
    want = cds_fixture("requests", "discovery_response_matching_requests.json")["services"]
    for w in want:
        s = got[w["id"]]
        assert s["hook"] == w["hook"] and s["prefetch"] == w["prefetch"]
        assert s["title"] and s["description"] and s["usageRequirements"]


def test_cors_preflight_and_401_carry_cors_headers(servers: Servers) -> None:
    origin = "https://ehr-ui.example.org"
    pre = httpx.options(
        f"{servers.base}/cds-services/{OSIGN}",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert pre.status_code == 200
    assert pre.headers["access-control-allow-origin"] in ("*", origin)
    allowed = pre.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed and "content-type" in allowed
    assert "POST" in pre.headers["access-control-allow-methods"]
    r = httpx.get(f"{servers.base}/cds-services", headers={"Origin": origin})
    assert r.status_code == 401
    assert r.headers["access-control-allow-origin"] in ("*", origin)
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert r.json()["resourceType"] == "OperationOutcome"


def test_bad_jwts_are_refused_with_401(servers: Servers) -> None:
    body = cds_fixture("requests", "patient-view_trey_berge.json")
    aud = f"{servers.base}/cds-services/{PV}"
    bad = {
        "wrong key": servers.token(aud, key=servers.keys.other),
        "expired": servers.token(aud, exp_in=-120, iat_ago=200),
        "wrong audience": servers.token("https://other.example.org/cds-services/" + PV),
        "unknown issuer": servers.token(aud, iss="https://stranger.example.org"),
    }
    for why, token in bad.items():
        r = servers.post(PV, body, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 401, (why, r.status_code, r.text)
        assert r.json()["issue"][0]["code"] == "security"
    # Replay: the first use is fine, the second is refused.
    token = servers.token(f"{servers.base}/cds-services")
    first = httpx.get(f"{servers.base}/cds-services", headers={"Authorization": f"Bearer {token}"})
    again = httpx.get(f"{servers.base}/cds-services", headers={"Authorization": f"Bearer {token}"})
    assert (first.status_code, again.status_code) == (200, 401)
    assert "replay" in again.json()["issue"][0]["diagnostics"]
    # An EC key (ES384) of the same client is accepted.
    ok = httpx.get(
        f"{servers.base}/cds-services",
        headers=servers.auth(key=servers.keys.ec, kid="ec-1", alg="ES384"),
    )
    assert ok.status_code == 200


# ------------------------------------------------------------------ the constructed requests


def test_patient_view_full_prefetch(servers: Servers) -> None:
    before = len(servers.fhir.requests)
    r = servers.post(PV, cds_fixture("requests", "patient-view_trey_berge.json"))
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    _check_card(card)
    assert len(servers.fhir.requests) == before  # everything was prefetched
    assert card["indicator"] == "warning"  # the panel found immediate-safety issues
    # the clinician summary: ranked lines, a patient fact with its value, no FHIR ids
    assert "Ranked by when to act" in card["detail"] and "pharmacist" in card["detail"]
    # an old record's confirm line first, then the rest by when to act
    assert "\n2. Review the need for clopidogrel with warfarin — within 3 days" in card["detail"]
    assert "- 1." not in card["detail"]  # an ordered list, not numbers inside bullets
    assert "MedicationRequest/" not in card["detail"]
    link = card["links"][0]
    assert link["type"] == "smart"
    ctx = json.loads(link["appContext"])
    stored = servers.call(servers.service.deliberation(tenant="ehr-test", plan_id=ctx["planId"]))
    assert stored["version"] == ctx["version"] == 1
    included = [o for o in stored["options"] if o["decision"] == "include"]
    assert f"{len(included)} of {len(stored['options'])}" in card["detail"]


def test_patient_view_partial_prefetch_without_fhir_access(servers: Servers) -> None:
    r = servers.post(PV, cds_fixture("requests", "patient-view_trey_berge_partial-prefetch.json"))
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    assert "'allergies' was not available" in card["detail"]


def test_patient_view_partial_prefetch_fetches_the_rest(servers: Servers) -> None:
    body = cds_fixture("requests", "patient-view_trey_berge_partial-prefetch.json")
    body |= {"fhirServer": servers.fhir_base, "fhirAuthorization": servers.fhir_auth()}
    before = len(servers.fhir.requests)
    r = servers.post(PV, body)
    assert r.status_code == 200, r.text
    fetched = servers.fhir.requests[before:]
    # what the partial prefetch left out, reports, open orders, contacts and what the patient
    # says they take among it
    assert {p for p, _q, _a in fetched} == {
        "AllergyIntolerance",
        "Observation",
        "DiagnosticReport",
        "ServiceRequest",
        "Encounter",
        "MedicationStatement",
    }
    assert all(authed for _p, _q, authed in fetched)
    assert "not available" not in r.json()["cards"][0]["detail"]


def test_order_select_naproxen_on_warfarin(servers: Servers) -> None:
    r = servers.post(OSEL, cds_fixture("requests", "order-select_trey_berge_naproxen.json"))
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    _check_card(card)
    assert card["indicator"] in ("warning", "critical")
    assert "naproxen" in card["summary"].lower()
    # Naproxen beside warfarin: a drug interaction card (v3 ActCode DRG), not an age alert.
    assert card["source"]["topic"]["code"] == "DRG"
    assert "For (" in card["detail"] and "pharmacist" in card["detail"]
    remove = card["suggestions"][0]["actions"][0]
    assert remove == {
        "type": "delete",
        "description": remove["description"],
        "resourceId": "MedicationRequest/draft-naproxen-1",
    }
    assert card["overrideReasons"]


def test_order_sign_diphenhydramine_but_not_acetaminophen(servers: Servers) -> None:
    r = servers.post(
        OSIGN, cds_fixture("requests", "order-sign_adan_portillo_diphenhydramine.json")
    )
    assert r.status_code == 200, r.text
    cards = r.json()["cards"]
    assert len(cards) == 1
    _check_card(cards[0])
    assert "diphenhydramine" in cards[0]["summary"].lower()
    ids = [a["resourceId"] for s in cards[0]["suggestions"] for a in s["actions"]]
    assert "MedicationRequest/draft-diphenhydramine-1" in ids
    assert "MedicationRequest/draft-acetaminophen-1" not in ids


def test_missing_prefetch_without_fhir_access_is_412(servers: Servers) -> None:
    r = servers.post(OSIGN, cds_fixture("requests", "order-sign_adan_portillo_no-prefetch.json"))
    assert r.status_code == 412, r.text
    issues = r.json()["issue"]
    assert {i["expression"][0] for i in issues} == {
        "prefetch.patient",
        "prefetch.conditions",
        "prefetch.medications",
        "prefetch.allergies",
    }


def test_missing_prefetch_fetched_over_fhir_rest(servers: Servers) -> None:
    body = cds_fixture("requests", "order-sign_adan_portillo_no-prefetch.json")
    body |= {"fhirServer": servers.fhir_base, "fhirAuthorization": servers.fhir_auth()}
    before = len(servers.fhir.requests)
    r = servers.post(OSIGN, body)
    assert r.status_code == 200, r.text
    paths = sorted(p for p, _q, _a in servers.fhir.requests[before:])
    assert paths == sorted(
        [
            "Patient/43b6ae50-2cca-4934-ad38-282f8934b770",
            "Condition",
            "MedicationRequest",
            "AllergyIntolerance",
        ]
    )
    (card,) = r.json()["cards"]
    assert "diphenhydramine" in card["summary"].lower()
    # A token the FHIR server refuses: the data cannot be had, so 412 again.
    body["fhirAuthorization"] = servers.fhir_auth("not-the-token")
    refused = servers.post(OSIGN, body)
    assert refused.status_code == 412
    # Said without the transport detail (which would tell ports apart): it went to the log.
    assert "could not read the FHIR server" in refused.text and "401" not in refused.text


def test_an_open_fhir_server_the_client_may_read_is_read_without_a_token(
    servers: Servers,
) -> None:
    """No fhirAuthorization and no prefetch: an open FHIR server (a real HTTP server on
    loopback) allowed for this client is read, and no Authorization header goes out."""
    body = cds_fixture("requests", "order-sign_adan_portillo_no-prefetch.json")
    body["fhirServer"] = servers.open_fhir_base
    body.pop("fhirAuthorization", None)
    before, headers_before = len(servers.fhir.requests), len(servers.fhir.open_headers)
    r = servers.post(OSIGN, body)
    assert r.status_code == 200, r.text
    paths = sorted(p for p, _q, _a in servers.fhir.requests[before:])
    assert paths == sorted(
        [
            "open:Patient/43b6ae50-2cca-4934-ad38-282f8934b770",
            "open:Condition",
            "open:MedicationRequest",
            "open:AllergyIntolerance",
        ]
    )
    assert servers.fhir.open_headers[headers_before:] == [None] * 4
    (card,) = r.json()["cards"]
    assert "diphenhydramine" in card["summary"].lower()


def test_an_open_fhir_server_the_client_may_not_read_is_412(servers: Servers) -> None:
    """The same open server on a path this client's fhir_servers do not cover: nothing is
    read, and the 412 says why."""
    body = cds_fixture("requests", "order-sign_adan_portillo_no-prefetch.json")
    body["fhirServer"] = servers.open_fhir_base.replace("/open/fhir", "/elsewhere/fhir")
    body.pop("fhirAuthorization", None)
    before = len(servers.fhir.requests)
    r = servers.post(OSIGN, body)
    assert r.status_code == 412, r.text
    assert "not under any of the client's fhir_servers" in r.text
    assert servers.fhir.requests[before:] == []


# ------------------------------------------------------------------ the specification's examples


def _with_fhir(servers: Servers, body: dict[str, Any]) -> dict[str, Any]:
    return body | {"fhirServer": servers.fhir_base, "fhirAuthorization": servers.fhir_auth()}


def test_spec_patient_view_example(servers: Servers) -> None:
    body = cds_fixture("spec", "request_patient-view.json")
    # As sent, its fhirServer is not one this client names: nothing is fetched, and the
    # service says it cannot get the data.
    body_elsewhere = copy.deepcopy(body) | {"fhirServer": "http://127.0.0.1:9"}
    r = servers.post(PV, body_elsewhere)
    assert r.status_code == 412 and "could not read the FHIR server" in r.text
    # With a reachable FHIR server holding that patient, it is answered with a plan card.
    r = servers.post(PV, _with_fhir(servers, body))
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    _check_card(card)


def test_spec_examples_that_are_refused_say_why(servers: Servers) -> None:
    paginated = servers.post(
        OSIGN, cds_fixture("spec", "request_order-sign_paginated-prefetch.json")
    )
    assert paginated.status_code == 422
    assert "not a FHIR id" in paginated.json()["issue"][0]["diagnostics"]
    extension = servers.post(PV, cds_fixture("spec", "request_with_extension.json"))
    assert extension.status_code == 400
    assert "context.patientId" in extension.text
    # The paginated example with a valid id: no fhirAuthorization to read its next page or the
    # missing keys, so 412.
    fixed = cds_fixture("spec", "request_order-sign_paginated-prefetch.json")
    fixed["context"]["draftOrders"]["entry"][0]["resource"]["id"] = "draft-rx-1"
    assert servers.post(OSIGN, fixed).status_code == 412


@pytest.mark.parametrize(
    ("name", "hook", "service"),
    [
        ("patient-view_context_1.json", "patient-view", PV),
        ("patient-view_context_2.json", "patient-view", PV),
        ("order-select_context_R4.json", "order-select", OSEL),
        ("order-select_context_STU3.json", "order-select", OSEL),
        ("order-select_context_DSTU2.json", "order-select", OSEL),
        ("order-sign_context_R4.json", "order-sign", OSIGN),
        ("order-sign_context_STU3.json", "order-sign", OSIGN),
        ("order-sign_context_DSTU2.json", "order-sign", OSIGN),
    ],
)
def test_spec_hook_contexts(servers: Servers, name: str, hook: str, service: str) -> None:
    body = {"hook": hook, "hookInstance": str(uuid.uuid4())} | cds_fixture("hook-contexts", name)
    r = servers.post(service, _with_fhir(servers, body))
    assert r.status_code == 200, r.text
    for card in r.json()["cards"]:
        _check_card(card)
    if hook == "patient-view":
        assert len(r.json()["cards"]) == 1


# ------------------------------------------------------------------ malformed bodies


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[]", 400, "JSON object"),
        ({"hook": "patient-view"}, 400, "hookInstance"),
        ({"hook": "order-sign", "hookInstance": "x", "context": {}}, 400, "was sent to"),
        (
            {
                "hook": "patient-view",
                "hookInstance": "x",
                "context": {"patientId": "p1", "userId": "Practitioner/1"},
                "prefetch": {"patient": "Patient/p1"},
            },
            400,
            "prefetch.patient",
        ),
    ],
)
def test_malformed_patient_view_bodies(
    servers: Servers, body: Any, status: int, needle: str
) -> None:
    r = servers.post(PV, body)
    assert r.status_code == status, r.text
    assert needle in r.text
    assert r.json()["resourceType"] == "OperationOutcome"


def test_malformed_order_bodies(servers: Servers) -> None:
    good = cds_fixture("requests", "order-select_trey_berge_naproxen.json")
    no_drafts = copy.deepcopy(good)
    del no_drafts["context"]["draftOrders"]
    r = servers.post(OSEL, no_drafts)
    assert r.status_code == 400 and "context.draftOrders" in r.text
    bad_status = copy.deepcopy(good)
    bad_status["context"]["draftOrders"]["entry"][0]["resource"]["status"] = "pending"
    r = servers.post(OSEL, bad_status)
    assert r.status_code == 422, r.text
    assert "entry[0].resource.status" in r.text
    wrong_type = servers.post(OSEL, good, headers={"Content-Type": "text/plain"})
    assert wrong_type.status_code == 400
    assert servers.post("no-such-service", good).status_code == 404
    huge = b'{"pad": "' + b"x" * (8 * 1024 * 1024 + 1) + b'"}'
    too_big = servers.post(OSEL, huge)
    assert too_big.status_code == 413 and "CANOE_MAX_MESSAGE_BYTES" in too_big.text


# ------------------------------------------------------------------ feedback


def test_feedback_override_with_reason_becomes_a_contestation(servers: Servers) -> None:
    r = servers.post(OSEL, cds_fixture("requests", "order-select_trey_berge_naproxen.json"))
    (card,) = r.json()["cards"]
    plan_id = json.loads(card["links"][0]["appContext"])["planId"]
    fb = cds_fixture("spec", "feedback_overridden_with_reason.json")
    fb["feedback"][0]["card"] = card["uuid"]
    fb["feedback"][0]["overrideReason"]["reason"] = card["overrideReasons"][0]
    done = servers.feedback(OSEL, fb)
    assert done.status_code == 200, done.text
    assert done.json() == {"recorded": 1, "contested": 1}
    d = servers.call(servers.service.deliberation(tenant="ehr-test", plan_id=plan_id))
    assert d["version"] == 2
    (c,) = d["contestations"]
    assert c["action"] == "decide" and c["actor"] == "Practitioner/example"
    option = next(o for o in d["options"] if o["id"] == c["target"])
    assert option["decision"] == "exclude" and option["decided_by"] == "human"
    assert option["medication_ref"] == "MedicationRequest/draft-naproxen-1"
    # The same feedback again is applied once.
    assert servers.feedback(OSEL, fb).status_code == 200
    again = servers.call(servers.service.deliberation(tenant="ehr-test", plan_id=plan_id))
    assert again["version"] == 2
    # Accepted feedback is recorded, not contested.
    ok = cds_fixture("spec", "feedback_accepted.json")
    ok["feedback"][0]["card"] = card["uuid"]
    ok["feedback"][0]["acceptedSuggestions"] = [{"id": card["suggestions"][0]["uuid"]}]
    accepted = servers.feedback(OSEL, ok)
    assert accepted.json() == {"recorded": 1, "contested": 0}


def test_an_override_with_only_a_comment_is_recorded_not_decided(servers: Servers) -> None:
    """A comment chose none of the card's reasons: kept with the feedback, no Task, no version."""
    r = servers.post(OSEL, cds_fixture("requests", "order-select_trey_berge_naproxen.json"))
    (card,) = r.json()["cards"]
    plan_id = json.loads(card["links"][0]["appContext"])["planId"]
    item = {
        "card": card["uuid"],
        "outcome": "overridden",
        "outcomeTimestamp": "2026-11-30T12:30:00Z",
        "overrideReason": {"userComment": "discussed with the patient"},
    }
    done = servers.feedback(OSEL, {"feedback": [item]})
    assert done.status_code == 200, done.text
    assert done.json() == {"recorded": 1, "contested": 0}
    d = servers.call(servers.service.deliberation(tenant="ehr-test", plan_id=plan_id))
    assert d["version"] == 1 and d["contestations"] == []
    kept = servers.call(servers.service.store.list_feedback(tenant="ehr-test", plan_id=plan_id))
    assert [k.payload.get("userComment") for k in kept] == ["discussed with the patient"]


def test_a_repeated_override_is_applied_once(servers: Servers) -> None:
    """Fifty copies of one override (same card and outcome; only the timestamps differ) in one
    request: one new version, one contestation per option behind the card, recorded once."""
    r = servers.post(OSEL, cds_fixture("requests", "order-select_trey_berge_naproxen.json"))
    (card,) = r.json()["cards"]
    plan_id = json.loads(card["links"][0]["appContext"])["planId"]
    item = cds_fixture("spec", "feedback_overridden_with_reason.json")["feedback"][0]
    item = {**item, "card": card["uuid"]}
    item["overrideReason"] = {**item["overrideReason"], "reason": card["overrideReasons"][0]}
    items = [{**item, "outcomeTimestamp": f"2026-11-30T11:{i:02d}:00Z"} for i in range(50)]
    done = servers.feedback(OSEL, {"feedback": items})
    assert done.status_code == 200, done.text
    assert done.json() == {"recorded": 1, "contested": 1}
    d = servers.call(servers.service.deliberation(tenant="ehr-test", plan_id=plan_id))
    assert d["version"] == 2
    assert {c["action"] for c in d["contestations"]} == {"decide"}
    targets = [c["target"] for c in d["contestations"]]
    assert len(targets) == len(set(targets)) >= 1
    kept = servers.call(servers.service.store.list_feedback(tenant="ehr-test", plan_id=plan_id))
    assert len(kept) == 1 and kept[0].payload["contested"]["version"] == 2


def test_feedback_items_per_request_are_capped(servers: Servers) -> None:
    item = cds_fixture("spec", "feedback_overridden.json")["feedback"][0]
    body = {"feedback": [{**item, "card": str(uuid.uuid4())} for _ in range(101)]}
    r = servers.feedback(OSEL, body)
    assert r.status_code == 413, r.text
    (issue,) = r.json()["issue"]
    assert issue["code"] == "too-costly" and issue["expression"] == ["feedback"]
    assert "101 items" in issue["diagnostics"] and "at most 100" in issue["diagnostics"]
    assert "CANOE_MAX_FEEDBACK_ITEMS" in issue["diagnostics"]
    # At the cap the request is taken (and refused only for its unknown cards).
    at_cap = servers.feedback(OSEL, {"feedback": body["feedback"][:100]})
    assert at_cap.status_code == 404, at_cap.text


def test_feedback_on_unknown_cards_and_bad_bodies(servers: Servers) -> None:
    for name in ("feedback_accepted.json", "feedback_overridden.json"):
        r = servers.feedback(OSEL, cds_fixture("spec", name))
        assert r.status_code == 404 and "not one this service returned" in r.text
    r = servers.feedback(OSEL, {"feedback": [{"card": "nope", "outcome": "maybe"}]})
    assert r.status_code == 422
    assert {"feedback[0].card", "feedback[0].outcome"} <= {
        i["expression"][0] for i in r.json()["issue"]
    }


def test_logs_carry_no_patient_data(servers: Servers, capfd: pytest.CaptureFixture[str]) -> None:
    body = cds_fixture("requests", "order-sign_adan_portillo_diphenhydramine.json")
    r = servers.post(OSIGN, body)
    assert r.status_code == 200
    out, err = capfd.readouterr()
    logs = out + err
    assert "cds.answered" in logs and "cds.cards" in logs  # the calls were logged
    patient = body["prefetch"]["patient"]
    family = patient["name"][0]["family"]
    for secret in (patient["id"], family, patient["birthDate"], FHIR_TOKEN):
        assert secret not in logs


def test_patient_view_plans_once_and_stores_the_bytes_it_made(servers: Servers) -> None:
    """The hook hands the assembled Bundle to the service as an object (no bytes round trip),
    and the plan's Bundle and document are stored as the very bytes the outcome carries."""
    service = servers.service
    seen: list[Any] = []
    real = service.generate

    async def generate(bundle: Any, **kw: Any) -> Any:
        assert isinstance(bundle, dict)
        seen.append(await real(bundle, **kw))
        return seen[-1]

    service.generate = generate
    try:
        r = servers.post(PV, cds_fixture("requests", "patient-view_trey_berge.json"))
    finally:
        del service.generate
    assert r.status_code == 200, r.text
    (outcome,) = seen
    assert "Ranked by when to act" in r.json()["cards"][0]["detail"]
    rec = servers.call(
        service.store.get_version(tenant="ehr-test", plan_id=outcome.plan_id, version=1)
    )
    assert rec.bundle_json == outcome.bundle_json and rec.bundle_json
    assert rec.deliberation_json == outcome.deliberation_json and rec.deliberation_json


@pytest.mark.parametrize(
    ("service_id", "name"),
    [
        (OSEL, "order-select_trey_berge_unfinished-draft.json"),
        (OSIGN, "order-sign_trey_berge_service-request-only.json"),
    ],
)
def test_an_order_not_written_yet_gets_no_card_not_an_error(
    servers: Servers, service_id: str, name: str
) -> None:
    r = servers.post(service_id, cds_fixture("requests", name))
    assert r.status_code == 200, r.text
    assert r.json() == {"cards": []}


def test_an_invalid_intent_on_a_written_order_is_still_refused(servers: Servers) -> None:
    body = cds_fixture("requests", "order-select_trey_berge_naproxen.json")
    body["context"]["draftOrders"]["entry"][0]["resource"]["intent"] = "wish"
    r = servers.post(OSEL, body)
    assert r.status_code == 422
    assert "intent" in r.text
