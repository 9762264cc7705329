"""The bridge's pure parts: JWT verification, prefetch templates and resolution, cards, feedback."""

from __future__ import annotations

import ipaddress
import json
import time
import uuid
from datetime import date
from typing import Any

import jwt
import pytest

from service.cds_hooks.auth import JwtVerifier, ReplayCache, load_trusted_clients
from service.cds_hooks.cards import CardRecord, order_card, order_findings, summary_card
from service.cds_hooks.egress import EgressPolicy, EgressRefused
from service.cds_hooks.feedback import override_tasks, parse_feedback
from service.cds_hooks.prefetch import render_template, resolve_prefetch
from service.cds_hooks.request import parse_hook_request
from service.cds_hooks.services import SERVICES
from service.errors import AuthError, BundleError, InputError, PrefetchUnavailable
from tests.cds_hooks.conftest import ISS, Keys, cds_fixture

AUD = "https://cds.example.org/cds-services/careplan-order-sign"


def _token(keys: Keys, **over: Any) -> str:
    now = time.time()
    claims = {"iss": ISS, "aud": AUD, "iat": int(now), "exp": int(now + 60), "jti": "j1"}
    key = over.pop("key", keys.rsa)
    alg = over.pop("alg", "RS384")
    kid = over.pop("kid", "rsa-1")
    claims.update(over)
    return jwt.encode(claims, key, algorithm=alg, headers={"kid": kid})


@pytest.fixture
def verifier(keys: Keys) -> JwtVerifier:
    return JwtVerifier(load_trusted_clients({ISS: {"jwks": keys.jwks(), "tenant": "t1"}}))


async def test_verify_accepts_rs384_and_es384(verifier: JwtVerifier, keys: Keys) -> None:
    who = await verifier.verify(f"Bearer {_token(keys)}", [AUD])
    assert (who.iss, who.tenant, who.jti) == (ISS, "t1", "j1")
    who = await verifier.verify(
        f"Bearer {_token(keys, key=keys.ec, alg='ES384', kid='ec-1', jti='j2')}", [AUD]
    )
    assert who.jti == "j2"


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"aud": "https://elsewhere.example.org/cds-services"}, "audience"),
        ({"exp": int(time.time()) - 120}, "expired"),
        ({"iss": "https://stranger.example.org"}, "not a trusted"),
        ({"exp": int(time.time()) + 3600}, "lifetime"),
        ({"kid": "nope"}, "kid"),
    ],
)
async def test_verify_refuses(
    verifier: JwtVerifier, keys: Keys, over: dict[str, Any], message: str
) -> None:
    with pytest.raises(AuthError, match=f"(?i){message}"):
        await verifier.verify(f"Bearer {_token(keys, **over)}", [AUD])


async def test_verify_refuses_wrong_key_replay_none_and_hmac(
    verifier: JwtVerifier, keys: Keys
) -> None:
    with pytest.raises(AuthError, match=r"(?i)signature"):
        await verifier.verify(f"Bearer {_token(keys, key=keys.other)}", [AUD])
    good = _token(keys, jti="once")
    await verifier.verify(f"Bearer {good}", [AUD])
    with pytest.raises(AuthError, match="replay"):
        await verifier.verify(f"Bearer {good}", [AUD])
    unsigned = jwt.encode({"iss": ISS, "aud": AUD}, None, algorithm="none")
    with pytest.raises(AuthError, match="not accepted"):
        await verifier.verify(f"Bearer {unsigned}", [AUD])
    hmac = jwt.encode({"iss": ISS}, "k" * 32, algorithm="HS256")
    with pytest.raises(AuthError, match="not accepted"):
        await verifier.verify(f"Bearer {hmac}", [AUD])
    for header in (None, "", "Basic abc", "Bearer "):
        with pytest.raises(AuthError):
            await verifier.verify(header, [AUD])


async def test_jku_is_never_fetched_unless_configured(verifier: JwtVerifier, keys: Keys) -> None:
    token = jwt.encode(
        {"iss": ISS, "aud": AUD, "iat": int(time.time()), "exp": int(time.time()) + 60, "jti": "x"},
        keys.rsa,
        algorithm="RS384",
        headers={"kid": "rsa-1", "jku": "https://attacker.example.org/jwks.json"},
    )
    with pytest.raises(AuthError, match="jku"):
        await verifier.verify(f"Bearer {token}", [AUD])


def test_trusted_clients_forms(keys: Keys) -> None:
    plain = load_trusted_clients(keys.jwks())
    assert list(plain) == [""]
    both = {ISS: {"jwks": keys.jwks(), "jwks_url": "https://x/jwks"}}
    with pytest.raises(InputError, match="exactly one"):
        load_trusted_clients(both)
    with pytest.raises(InputError, match="unusable JWKS"):
        load_trusted_clients({ISS: {"jwks": {"keys": [{"kty": "nope"}]}}})


def test_replay_cache_forgets_expired_ids() -> None:
    now = [1000.0]
    cache = ReplayCache(clock=lambda: now[0])
    assert cache.check_and_add("i", "a", 1010)
    assert not cache.check_and_add("i", "a", 1010)
    assert cache.check_and_add("j", "a", 1010)  # another issuer's id space
    now[0] = 2000.0
    assert cache.check_and_add("i", "a", 2010)  # the old token is long expired


def test_render_template_tokens() -> None:
    ctx = {"patientId": "p 1", "userId": "PractitionerRole/r9", "encounterId": "e1"}
    today = date(2024, 5, 6)
    assert render_template("Patient/{{context.patientId}}", ctx, today) == "Patient/p%201"
    assert (
        render_template("PractitionerRole?_id={{userPractitionerRoleId}}", ctx, today)
        == "PractitionerRole?_id=r9"
    )
    assert render_template("Practitioner/{{userPractitionerId}}", ctx, today) is None
    assert render_template("Obs?date=ge{{today()}}", ctx, today) == "Obs?date=ge2024-05-06"
    assert render_template("Obs?x={{context.missing}}", ctx, today) is None


async def test_null_optional_and_patient_under_another_key() -> None:
    svc = SERVICES["careplan-patient-view"]
    body = cds_fixture("requests", "patient-view_trey_berge_partial-prefetch.json")
    req = parse_hook_request(json.dumps(body).encode(), svc)
    got = await resolve_prefetch(req, svc, None, today=date(2024, 1, 1))
    assert got.data["observations"] is None  # null: the client has none
    assert "allergies" not in got.data and any("allergies" in n for n in got.notes)
    spec = cds_fixture("spec", "request_patient-view.json")
    req = parse_hook_request(json.dumps(spec).encode(), svc)
    with pytest.raises(PrefetchUnavailable) as err:
        await resolve_prefetch(req, svc, None, today=date(2024, 1, 1))
    text = err.value.message
    assert "'conditions'" in text and "'medications'" in text
    assert "'patient'" not in text  # found under the spec's own key "patientToGreet"


def test_a_whole_resource_error_names_the_resource_not_an_empty_element() -> None:
    """A draft order with both medication choices fails R4 as a whole (pydantic reports no
    element): the issue names ``...entry[0].resource``, with no trailing dot."""
    order = cds_fixture("spec", "request_order-sign_paginated-prefetch.json")
    draft = order["context"]["draftOrders"]["entry"][0]["resource"]
    draft |= {
        "id": "draft-1",
        "status": "draft",
        "medicationCodeableConcept": {"text": "drug"},
        "medicationReference": {"reference": "Medication/1"},
    }
    with pytest.raises(BundleError) as err:
        parse_hook_request(json.dumps(order).encode(), SERVICES["careplan-order-sign"])
    (issue,) = err.value.issues
    assert issue.expression == ("context.draftOrders.entry[0].resource",)
    assert issue.diagnostics.startswith("context.draftOrders.entry[0].resource: ")


def test_request_validation_messages() -> None:
    sign = SERVICES["careplan-order-sign"]
    with pytest.raises(InputError, match="not valid JSON"):
        parse_hook_request(b"{", sign)
    with pytest.raises(InputError, match=r"context\.patientId"):
        parse_hook_request(
            json.dumps(cds_fixture("spec", "request_with_extension.json")).encode(),
            SERVICES["careplan-patient-view"],
        )
    paginated = cds_fixture("spec", "request_order-sign_paginated-prefetch.json")
    with pytest.raises(BundleError, match="not a FHIR id") as err:
        parse_hook_request(json.dumps(paginated).encode(), sign)
    assert err.value.issues[0].expression == ("context.draftOrders.entry[0].resource.id",)
    wrapped = {"hook": "order-sign", "hookInstance": str(uuid.uuid4())}
    wrapped |= cds_fixture("hook-contexts", "order-sign_context_R4.json")
    req = parse_hook_request(json.dumps(wrapped).encode(), sign)
    # The NutritionOrder without intent is not validated: it is kept out of the plan.
    assert req.other_drafts == ("NutritionOrder/pureeddiet-simple",)
    assert req.focus == ("MedicationRequest/smart-MedicationRequest-103",)
    # Its MedicationRequest carries the STU3 dosageInstruction.doseQuantity: left out, said so.
    assert any(n.startswith("dosageInstruction of draft") for n in req.notes)
    assert "dosageInstruction" not in req.drafts[0] and req.drafts[0]["intent"] == "order"


def _document(decision: str = "include", category: str = "immediate-safety") -> dict[str, Any]:
    return {
        "plan_id": "p1",
        "version": 1,
        "patient_ref": "Patient/x",
        "parameters": {"threshold": 0.5},
        "meta": {"panel": [{"role": "pharmacist", "focus": ""}, {"role": "gp", "focus": ""}]},
        "options": [
            {
                "id": "opt-1",
                "title": "Avoid naproxen while on warfarin",
                "category": category,
                "description": "NSAID with an anticoagulant: bleeding risk.",
                "refs": ["MedicationRequest/d1"],
                "medication_ref": "MedicationRequest/d1",
                "score": 0.86,
                "decision": decision,
                "borderline": False,
                "nodes": [
                    {"id": "opt-1", "kind": "option", "sigma": 0.86},
                    {
                        "id": "a1",
                        "kind": "argument",
                        "role": "pharmacist",
                        "stance": "support",
                        "text": "Bleeding risk",
                        "evidence": ["ev-1"],
                        "status": "active",
                        "sigma": 0.7,
                    },
                    {
                        "id": "a2",
                        "kind": "argument",
                        "role": "gp",
                        "stance": "attack",
                        "text": "Short course only",
                        "evidence": [],
                        "status": "active",
                        "sigma": 0.3,
                    },
                ],
            },
            {
                "id": "opt-2",
                "title": "Check HbA1c",
                "category": "monitoring",
                "score": 0.5,
                "decision": "exclude",
                "borderline": True,
                "nodes": [],
            },
        ],
    }


def _record(kind: str = "order") -> CardRecord:
    return CardRecord(
        card_id=str(uuid.uuid4()),
        tenant="t",
        service_id="careplan-order-sign",
        plan_id="p1",
        version=1,
        patient_ref="Patient/x",
        user_ref="Practitioner/123",
        kind=kind,  # type: ignore[arg-type]
        option_ids=("opt-1",),
        draft_ref="MedicationRequest/d1",
    )


def test_order_findings_need_inclusion_category_and_reference() -> None:
    assert [f.option_id for f in order_findings(_document(), ["MedicationRequest/d1"])] == ["opt-1"]
    assert order_findings(_document(), ["MedicationRequest/other"]) == []
    assert order_findings(_document(decision="exclude"), ["MedicationRequest/d1"]) == []
    assert order_findings(_document(category="monitoring"), ["MedicationRequest/d1"]) == []
    found = order_findings(_document(category="medication"), ["MedicationRequest/d1"])
    assert found[0].severity == "warning"  # no supporting sigma >= 0.8, not immediate-safety


def test_order_card_shape() -> None:
    doc = _document()
    card = order_card(
        order_findings(doc, ["MedicationRequest/d1"]),
        plan=doc,
        draft={"id": "d1", "medicationCodeableConcept": {"text": "Naproxen 220 MG"}},
        review_url="https://cds.example.org/review",
        record=_record(),
    )
    assert card["indicator"] == "critical"
    assert len(card["summary"]) <= 140 and card["summary"].startswith("Naproxen 220 MG")
    assert "**pharmacist**" in card["detail"] and "Against (gp)" in card["detail"]
    action = card["suggestions"][0]["actions"][0]
    assert action == {
        "type": "delete",
        "description": "Remove the draft order for Naproxen 220 MG",
        "resourceId": "MedicationRequest/d1",
    }
    assert card["selectionBehavior"] == "at-most-one"
    assert card["overrideReasons"] and card["links"][0]["type"] == "smart"


def test_summary_card_flags_safety_and_borderline() -> None:
    card = summary_card(_document(), review_url="https://r", record=_record("summary"))
    assert card["indicator"] == "warning"
    assert "Avoid naproxen" in card["summary"]
    assert "Awaiting a human decision" in card["detail"] and "Check HbA1c" in card["detail"]


@pytest.mark.parametrize(
    ("urgency_class", "indicator"),
    [("urgent", "warning"), ("resolve-first", "warning"), ("soon", "info"), (None, "info")],
)
def test_an_urgent_line_is_never_on_an_info_card(urgency_class: str | None, indicator: str) -> None:
    doc = _document(category="medication")
    doc["options"] = [o for o in doc["options"] if o["id"] == "opt-1"]
    if urgency_class is not None:
        doc["options"][0]["urgency_class"] = urgency_class
    card = summary_card(doc, review_url="https://r", record=_record("summary"))
    assert card["indicator"] == indicator
    if indicator == "warning":
        assert card["summary"] == "Care plan: urgent: Avoid naproxen while on warfarin"


def test_feedback_parsing_and_tasks() -> None:
    with pytest.raises(InputError, match="non-empty array"):
        parse_feedback(b'{"feedback": []}')
    with pytest.raises(InputError, match="outcome"):
        parse_feedback(json.dumps({"feedback": [{"card": str(uuid.uuid4())}]}).encode())
    bad = cds_fixture("spec", "feedback_overridden_with_reason.json")
    bad["feedback"][0]["outcome"] = "accepted"
    with pytest.raises(InputError, match="only with outcome 'overridden'"):
        parse_feedback(json.dumps(bad).encode())
    (fb,) = parse_feedback(
        json.dumps(cds_fixture("spec", "feedback_overridden_with_reason.json")).encode()
    )
    tasks = override_tasks(fb, _record(), version=3)
    assert len(tasks) == 1
    t = tasks[0]
    assert t["focus"] == {"reference": "CarePlan/p1-v3"}
    assert t["requester"] == {"reference": "Practitioner/123"}
    assert [i.get("valueString", i.get("valueCode")) for i in t["input"]] == ["opt-1", "exclude"]
    assert override_tasks(fb, _record(), version=3)[0]["id"] == t["id"]  # idempotent id
    assert override_tasks(fb, _record("summary"), version=3) == []
    (plain,) = parse_feedback(json.dumps(cds_fixture("spec", "feedback_overridden.json")).encode())
    assert override_tasks(plain, _record(), version=1) == []  # no reason: recorded only
    only_comment = dict(cds_fixture("spec", "feedback_overridden_with_reason.json")["feedback"][0])
    only_comment["overrideReason"] = {"userComment": "discussed with the patient"}
    (commented,) = parse_feedback(json.dumps({"feedback": [only_comment]}).encode())
    assert commented.comment == "discussed with the patient" and commented.reason is None
    assert override_tasks(commented, _record(), version=1) == []  # a comment is not a reason


# ------------------------------------------------------------------ egress policy (finding 1)


def _policy(**spec: Any) -> Any:
    return EgressPolicy.from_config("test-client", spec)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.9",
        "192.168.1.1",
        "169.254.169.254",  # the cloud metadata service
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",  # IPv4-mapped loopback, which Python 3.11 calls not-loopback
        "::ffff:10.0.0.1",
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    with pytest.raises(EgressRefused) as err:
        _policy(fhir_servers=["https://fhir.example.org"]).check_address(
            ipaddress.ip_address(address)
        )
    assert err.value.message == "could not read the FHIR server"  # the reason stays in logs
    allowed = _policy(fhir_servers=["https://x.org"], fhir_private_networks=["0.0.0.0/0", "::/0"])
    allowed.check_address(ipaddress.ip_address(address))


def test_public_addresses_pass() -> None:
    for address in ("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"):
        _policy(fhir_servers=["https://x.org"]).check_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://fhir.example.org/r4", True),
        ("https://fhir.example.org/r4/Patient/1", True),
        ("https://FHIR.example.org/r4", True),
        ("https://fhir.example.org:443/r4", True),
        ("https://fhir.example.org/r4x", False),
        ("https://fhir.example.org.evil.com/r4", False),
        ("https://fhir.example.org@evil.com/r4", False),
        ("https://user@fhir.example.org/r4", False),
        ("https://fhir.example.org:8443/r4", False),
        ("http://fhir.example.org/r4", False),  # https only
        ("http://lab.internal/fhir", True),  # plain http, explicitly allowed for this host
        ("ftp://fhir.example.org/r4", False),
        ("file:///etc/passwd", False),
    ],
)
def test_urls_under_the_listed_servers_only(url: str, ok: bool) -> None:
    policy = _policy(
        fhir_servers=["https://fhir.example.org/r4", "http://lab.internal/fhir"],
        fhir_http_hosts=["lab.internal"],
    )
    if ok:
        policy.check_url(url)
    else:
        with pytest.raises(EgressRefused):
            policy.check_url(url)


def test_no_fhir_servers_means_no_fetching() -> None:
    with pytest.raises(EgressRefused, match="fhir_servers"):
        _policy().check_url("https://fhir.example.org/r4")


@pytest.mark.parametrize(
    "spec",
    [
        {"fhir_servers": "https://one.org"},
        {"fhir_servers": ["not a url"]},
        {"fhir_servers": ["https://a.org/?q=1"]},
        {"fhir_private_networks": ["10.0.0.0/33"]},
        {"fhir_http_hosts": [1]},
    ],
)
def test_malformed_allowlists_are_refused_at_start_up(spec: dict[str, Any], keys: Keys) -> None:
    load_trusted_clients({"test-iss": {"jwks": keys.jwks()}})  # the keys themselves are fine
    with pytest.raises(InputError, match=r"test-iss.*fhir_"):
        load_trusted_clients({"test-iss": {"jwks": keys.jwks(), **spec}})


def test_busy_is_429_with_retry_after_and_a_request_over_a_limit_is_413() -> None:
    from service.cds_hooks.http import _error
    from service.errors import BusyError, LimitError

    busy = _error(BusyError("8 plans are in progress", retry_after_s=0.02))
    assert busy.status_code == 429
    assert busy.headers["Retry-After"] == "1"  # whole seconds, at least one
    assert json.loads(busy.body)["resourceType"] == "OperationOutcome"
    assert json.loads(busy.body)["issue"][0]["code"] == "throttled"
    assert _error(BusyError("busy", retry_after_s=2.5)).headers["Retry-After"] == "3"
    too_big = _error(LimitError("request body over 1024 bytes"))
    assert too_big.status_code == 413 and "Retry-After" not in too_big.headers


@pytest.mark.parametrize(
    ("title", "action", "findings", "against"),
    [
        ("Review naproxen", "switch", [], True),  # the action kind decides, not the title
        ("Review naproxen", "stop-now", [], True),
        ("Stop naproxen", "review", [], False),  # a title saying stop does not make a card
        ("Review naproxen", "review", [{"kind": "drug-drug", "severity": "major"}], True),
        ("Review naproxen", "check", [{"kind": "drug-drug", "severity": "major"}], False),
        ("Avoid naproxen while on warfarin", None, [], True),  # an older document: its words
    ],
)
def test_an_order_card_follows_the_options_action_kind(
    title: str, action: str | None, findings: list[dict[str, str]], against: bool
) -> None:
    doc = _document()
    option = doc["options"][0]
    option.update(title=title, description="", findings=findings)
    if action is None:
        option.pop("action", None)
    else:
        option["action"] = action
    found = order_findings(doc, ["MedicationRequest/d1"])
    assert [f.option_id for f in found] == (["opt-1"] if against else [])


def test_an_activity_for_today_is_urgent_on_the_card_whatever_its_class() -> None:
    from service.cds_hooks.cards import CardOption, _urgent

    def option(**fields: str) -> CardOption:
        return CardOption("o", "t", "monitoring", **fields)  # type: ignore[arg-type]

    assert _urgent(option(timeframe="now", urgency_class="routine"))
    assert not _urgent(option(timeframe="7d", urgency_class="urgent"))
    assert _urgent(option(urgency_class="urgent"))  # a document written before timeframes
