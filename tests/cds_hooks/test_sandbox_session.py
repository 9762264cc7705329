"""A session of the official CDS Hooks sandbox, replayed over the real HTTP app.

The requests in ``examples/fixtures/cds-hooks/sandbox/`` have the shapes the sandbox builds
(its source and commit are named in ``examples/fixtures/SOURCES.md``): patient-view with no
context beyond patient and user; Rx View's order-select fired on load with a draft
MedicationRequest that has no medicine and no ``intent``, then with a medicine chosen (R4
``doseAndRate``, ``category`` as one object), then again after a suggestion is taken (the draft
emptied once more); and the three feedback bodies its card list sends (a suggestion taken, a
dismiss with a reason, a dismiss without one). Each is signed ES384, as the sandbox signs.
Nothing in the session may answer an error.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.cds_hooks.conftest import Servers, cds_fixture

PV, OSEL = "careplan-patient-view", "careplan-order-select"


def _es384(servers: Servers, audience_path: str) -> dict[str, str]:
    token = servers.token(
        f"{servers.base}/cds-services/{audience_path}",
        key=servers.keys.ec,
        kid="ec-1",
        alg="ES384",
    )
    return {"Authorization": f"Bearer {token}", "Accept": "application/json"}


def _hook(servers: Servers, service_id: str, name: str) -> dict[str, Any]:
    r = httpx.post(
        f"{servers.base}/cds-services/{service_id}",
        json=cds_fixture("sandbox", name),
        headers=_es384(servers, service_id),
        timeout=120,
    )
    assert r.status_code == 200, (name, r.text)
    answer: dict[str, Any] = r.json()
    return answer


def _feedback(servers: Servers, name: str, **item: Any) -> dict[str, Any]:
    body = cds_fixture("sandbox", name)
    body["feedback"][0].update(item)
    r = httpx.post(
        f"{servers.base}/cds-services/{OSEL}/feedback",
        json=body,
        headers=_es384(servers, f"{OSEL}/feedback"),
        timeout=60,
    )
    assert r.status_code == 200, (name, r.text)
    answer: dict[str, Any] = r.json()
    return answer


def test_patient_view_as_the_sandbox_sends_it(servers: Servers) -> None:
    (card,) = _hook(servers, PV, "patient-view.json")["cards"]
    assert card["indicator"] in ("info", "warning", "critical") and card["links"]


def test_rx_view_session_with_feedback(servers: Servers) -> None:
    # On load: a draft with no medicine and no intent is an order not written yet.
    assert _hook(servers, OSEL, "rx-view_order-select_on-load.json") == {"cards": []}

    # Naproxen chosen for a patient on warfarin: one card, a drug interaction.
    (card,) = _hook(servers, OSEL, "rx-view_order-select_naproxen.json")["cards"]
    assert card["source"]["topic"]["code"] == "DRG"
    remove = card["suggestions"][0]
    assert remove["actions"][0] == {
        "type": "delete",
        "description": remove["actions"][0]["description"],
        "resourceId": "MedicationRequest/request-123",
    }
    plan_id = json.loads(card["links"][0]["appContext"])["planId"]

    # The suggestion taken: recorded, nothing contested; the sandbox fires order-select again
    # with the draft emptied (the condition it treats still chosen).
    taken = _feedback(
        servers,
        "feedback_accepted.json",
        card=card["uuid"],
        acceptedSuggestions=[{"id": remove["uuid"]}],
    )
    assert taken == {"recorded": 1, "contested": 0}
    assert _hook(servers, OSEL, "rx-view_order-select_after-suggestion.json") == {"cards": []}

    # Dismissed without a reason: recorded only. With one of the card's reasons (code and
    # system, no display, as the sandbox sends it): a contestation and a new plan version.
    assert _feedback(servers, "feedback_dismissed.json", card=card["uuid"]) == {
        "recorded": 1,
        "contested": 0,
    }
    reason = {k: card["overrideReasons"][0][k] for k in ("code", "system")}
    overridden = _feedback(
        servers,
        "feedback_overridden_with_reason.json",
        card=card["uuid"],
        overrideReason={"reason": reason},
    )
    assert overridden == {"recorded": 1, "contested": 1}
    d = servers.call(servers.service.deliberation(tenant="ehr-test", plan_id=plan_id))
    assert d["version"] == 2 and [c["action"] for c in d["contestations"]] == ["decide"]


def test_the_sandbox_fixtures_keep_the_shapes_it_sends() -> None:
    """What makes these the sandbox's requests, not ours: no fhirAuthorization (an open FHIR
    server), a draftOrders Bundle without ``type``, and an on-load draft without a medicine
    or an intent."""
    for name in ("patient-view.json", "rx-view_order-select_on-load.json"):
        body = cds_fixture("sandbox", name)
        assert set(body) == {"hookInstance", "hook", "fhirServer", "context", "prefetch"}
    on_load = cds_fixture("sandbox", "rx-view_order-select_on-load.json")["context"]
    assert set(on_load) == {"patientId", "userId", "selections", "draftOrders"}
    assert "type" not in on_load["draftOrders"]
    (entry,) = on_load["draftOrders"]["entry"]
    assert not {"intent", "medicationCodeableConcept"} & set(entry["resource"])
