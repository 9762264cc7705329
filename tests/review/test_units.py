"""Unit tests of the review app's pieces: Tasks from forms (read back by the contest path's own
parser), tokens, issuer settings, strengths in words, graph geometry and diffs."""

from __future__ import annotations

import uuid

import pytest

from fhir_mapping.careplan import careplan_id
from fhir_mapping.tasks import parse_tasks
from service.core import evaluate
from service.core.contest import RejectArgument, apply_all
from service.errors import AuthError, InputError
from service.review import review_link, smart, views
from service.review.tasks import task_from_form
from service.review.tokens import Signer
from service.settings import load_settings
from tests.e2e.test_plan_end_to_end import plan_of
from tests.service.conftest import ADALBERTO

KEY = "k" * 40


@pytest.fixture(scope="module")
def plan():
    return plan_of(ADALBERTO)


def _form(**over: str) -> dict[str, str]:
    return {"task_id": str(uuid.uuid4()), "version": "1", **over}


def _task(plan, **form: str) -> dict:
    d = plan.deliberation
    return task_from_form(
        _form(**form),
        plan_id=d.plan_id,
        version=d.version,
        patient_ref=d.patient_ref,
        user="Practitioner/dr-ana",
        now="2026-11-30T12:00:00Z",
    )


def test_every_form_action_is_a_task_the_contest_parser_accepts(plan) -> None:
    d = plan.deliberation
    o = d.options[0]
    a = o.arguments[0]
    p = d.problems[0]
    forms = [
        {"action": "accept", "target": a.id},
        {"action": "reject", "target": a.id, "reason": "not for this patient"},
        {"action": "edit", "target": a.id, "text": "Reworded.", "strength": "0.3"},
        {
            "action": "add",
            "target": o.id,
            "stance": "attack",
            "strength": "0.7",
            "text": "Declined by the patient.",
            "role": "gp",
            "evidence": "ev-1, ev-2",
            "relation": "attack",
            "relation_target": a.id,
        },
        {"action": "decide", "target": o.id, "decision": "exclude", "reason": "declined"},
        {"action": "decide", "target": p.id, "decision": "reject", "reason": "resolved"},
    ]
    for form in forms:
        task = _task(plan, **form)
        (parsed,) = parse_tasks(task, plan=d, careplan_id=careplan_id(d.plan_id, d.version))
        assert parsed.task_id == task["id"] and parsed.actor == "Practitioner/dr-ana"
        assert type(parsed.action).__name__.lower().startswith(form["action"])
    add = _task(plan, **forms[3])
    (parsed,) = parse_tasks(add, plan=d, careplan_id=careplan_id(d.plan_id, d.version))
    assert parsed.action.argument.evidence == ("ev-1", "ev-2")
    assert parsed.action.relations[0].relation == "attack"


@pytest.mark.parametrize(
    ("form", "needle"),
    [
        ({"action": "delete", "target": "x"}, "unknown action"),
        ({"action": "accept", "target": "x", "task_id": "not-a-uuid"}, "task id"),
        ({"action": "accept", "target": "x y"}, "target"),
        ({"action": "edit", "target": "x"}, "new text or a new strength"),
        ({"action": "edit", "target": "x", "strength": "lots"}, "between 0 and 1"),
        ({"action": "add", "target": "x", "stance": "support", "strength": "0.5"}, "its text"),
    ],
)
def test_malformed_forms_are_refused_before_any_task(plan, form, needle) -> None:
    with pytest.raises(InputError, match=needle):
        _task(plan, **form)


def test_tokens_are_bound_to_purpose_key_and_time() -> None:
    signer = Signer(KEY)
    link = signer.sign("link", {"plan": "p1"}, 60)
    assert signer.verify("link", link)["plan"] == "p1"
    with pytest.raises(AuthError, match="not a review session"):
        signer.verify("session", link)
    with pytest.raises(AuthError, match="not valid"):
        Signer("x" * 40).verify("link", link)
    with pytest.raises(AuthError, match="not valid"):
        signer.verify("link", link[:-2] + ("A" if link[-2] != "A" else "B") + link[-1])
    # Expiry is checked against the real clock by PyJWT, so mint one already expired.
    stale = Signer(KEY, clock=lambda: 1_000.0).sign("link", {}, 60)
    with pytest.raises(AuthError, match="expired"):
        Signer(KEY).verify("link", stale)
    with pytest.raises(AuthError, match="no review link"):
        signer.verify("link", None)


def test_issuers_setting_and_signing_key_are_checked_at_start() -> None:
    assert smart.parse_issuers("a=https://ehr.one/fhir/, b=http://127.0.0.1:9/fhir") == {
        "https://ehr.one/fhir": "a",
        "http://127.0.0.1:9/fhir": "b",
    }
    with pytest.raises(InputError, match="review_smart_issuers"):
        load_settings(environ={"CANOE_REVIEW_SMART_ISSUERS": "https://no-tenant"})
    with pytest.raises(InputError, match="at least 32 bytes"):
        load_settings(environ={"CANOE_REVIEW_SIGNING_KEY": "short"})
    with pytest.raises(InputError, match="signing key"):
        review_link(load_settings(environ={}), tenant="t", plan_id="p", user="Practitioner/1")
    s = load_settings(environ={"CANOE_REVIEW_SIGNING_KEY": KEY})
    with pytest.raises(InputError, match="Practitioner"):
        review_link(s, tenant="t", plan_id="p", user="Patient/1")
    url = review_link(s, tenant="t", plan_id="p", user="Practitioner/1")
    assert url.startswith(f"http://localhost:{s.server.http_port}/review/open?token=")


@pytest.mark.parametrize(
    ("x", "word"),
    [(None, "out of the graph"), (0.0, "very weak"), (0.2, "weak"), (0.5, "moderate"),
     (0.6, "strong"), (0.8, "very strong"), (1.0, "very strong")],
)  # fmt: skip
def test_strengths_in_words(x, word) -> None:
    assert views.strength_words(x) == word


def test_pkce_challenge_is_s256_of_the_verifier() -> None:
    import base64
    import hashlib

    verifier, challenge = smart.pkce_pair()
    assert 43 <= len(verifier) <= 128
    digest = hashlib.sha256(verifier.encode()).digest()
    assert challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_the_diff_names_moved_scores_flips_and_who(plan) -> None:
    d, ev = plan.deliberation, plan.evaluation
    top = ev.plan[0]
    o = next(x for x in d.options if x.id == top)
    sup = next(a for a in o.arguments if a.stance == "support")
    d2 = apply_all(
        d, [(RejectArgument(sup.id), "t-1", "Practitioner/dr-ana", "2026-11-30T12:00:00Z", "why")]
    )
    ev2 = evaluate(d2)
    diff = views.diff((d, ev), (d2, ev2))
    assert (diff.older, diff.newer) == (1, 2)
    (change,) = diff.options
    assert change.id == top and change.moved < 0
    assert change.flipped == (ev.option(top).decision != ev2.option(top).decision)
    (why,) = diff.why
    assert why["actor"] == "Practitioner/dr-ana" and why["reason"] == "why"
    assert why["what"].startswith("rejected S1 of")
    assert views.diff((d, ev), (d, ev)).empty


def test_graph_arrows_end_on_the_border_of_their_target(plan) -> None:
    d, ev = plan.deliberation, plan.evaluation
    for o in d.options:
        g = views.graph(o, ev.option(o.id))
        boxes = {n.id: n for n in g.nodes}
        assert len(boxes) == 1 + len(o.arguments)
        for line in g.lines:
            if line.relation == "clash":
                continue
            inside = [
                n
                for n in boxes.values()
                if abs(line.x2 - n.x) < views._HALF[n.kind][0] - 1e-6
                and abs(line.y2 - n.y) < views._HALF[n.kind][1] - 1e-6
            ]
            assert not inside, f"{line.title} ends inside a box"


def test_the_cli_prints_a_link_the_service_accepts() -> None:
    import os
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    env.update(PYTHONPATH=str(REPO_ROOT), CANOE_CDS_BASE_URL="https://canoe.example")
    cmd = [sys.executable, "-m", "service.cli", "review-link", "p1", "--user", "Practitioner/7"]
    refused = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "CANOE_REVIEW_SIGNING_KEY" in refused.stderr
    ok = subprocess.run(
        cmd, env={**env, "CANOE_REVIEW_SIGNING_KEY": KEY}, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    url = ok.stdout.strip()
    assert url.startswith("https://canoe.example/review/open?token=")
    claims = Signer(KEY).verify("link", url.split("token=", 1)[1])
    assert (claims["plan"], claims["sub"], claims["ten"]) == ("p1", "Practitioner/7", "default")


@pytest.mark.parametrize(
    ("form", "recorded"),
    [
        ({"action": "reject", "target": "arg-1"}, None),
        ({"action": "decide", "target": "opt-1", "decision": "include", "reason": "  "}, None),
        (
            {"action": "reject", "target": "arg-1", "reason": "seen at the visit"},
            "seen at the visit",
        ),
        ({"action": "accept", "target": "arg-1"}, ""),
    ],
)
def test_a_rejection_or_a_decision_needs_a_reason_which_the_task_records(
    plan, form: dict[str, str], recorded: str | None
) -> None:
    if recorded is None:
        with pytest.raises(InputError, match="needs a reason"):
            _task(plan, **form)
        return
    task = _task(plan, **form)
    assert task.get("reasonCode", {}).get("text", "") == recorded


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"appContext": '{"planId": "p1", "version": 2}'}, ("p1", 2)),
        ({"fhirContext": [{"reference": "CarePlan/" + "a" * 32 + "-v3"}]}, ("a" * 32, 3)),
        (
            {"fhirContext": [{"reference": "Encounter/e1"}, {"reference": "CarePlan/" + "b" * 32}]},
            ("b" * 32, None),
        ),
        ({"fhirContext": [{"reference": "CarePlan/not-ours"}]}, ("", None)),
        ({"patient": "123"}, ("", None)),  # the SMART App Launcher's patient-only context
    ],
)
def test_the_plan_comes_from_app_context_then_fhir_context_else_none(
    body: dict, expected: tuple[str, int | None]
) -> None:
    assert smart.plan_context(body) == expected


def test_the_patient_banner_gives_name_sex_and_age_or_the_reference_alone() -> None:
    from datetime import date

    today = date(2026, 3, 1)
    full = views.patient_banner(
        "Patient/p1", {"name": "Ana Souza", "sex": "female", "birth_date": "1947-03-02"}, today
    )
    assert full.age == 78
    assert full.words == "Ana Souza · female · 78 years (born 1947-03-02)"
    assert views.patient_banner("Patient/p1", None, today).words == "Patient/p1"
    odd = views.patient_banner(
        "Patient/p1", {"name": "X", "sex": "unknown", "birth_date": "bad"}, today
    )
    assert odd.words == "X · sex unknown · age unknown"


def test_cited_values_print_units_as_the_summary_does() -> None:
    from datetime import date

    from service.cited_facts import fact_index, patient_header
    from service.record.profile import Observation, PatientProfile

    inr = Observation("Observation/inr", "6301-6", "INR", 3.1, "{INR}", None)
    hb = Observation("Observation/hb", "718-7", "Hemoglobin", 12.5, "g/dL", None)
    profile = PatientProfile(
        "Patient/p1", "female", None, date(2026, 1, 1), observations=(inr, hb), name="Ana Souza"
    )
    facts = fact_index(profile, ["Observation/inr", "Observation/hb"])
    assert facts["Observation/inr"]["value"] == "3.1"
    assert facts["Observation/hb"]["value"] == "12.5 g/dL"
    assert patient_header(profile) == {"name": "Ana Souza", "sex": "female", "birth_date": ""}
