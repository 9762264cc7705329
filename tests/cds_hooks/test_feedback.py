"""Feedback over real HTTP (uvicorn on loopback, the real CarePlanService and SQLite store):
an outcomeTimestamp ahead of the service's clock is stored as a Task authored no later than it
was written, the time sent kept; every refusal names the element in the caller's own body
(``feedback[1].outcomeTimestamp``), never the Bundle of Tasks the bridge builds from it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fhir_mapping.definitions import ext_url
from service.cds_hooks.feedback import Feedback, feedback_path
from tests.cds_hooks.conftest import Servers, cds_fixture

OSEL = "careplan-order-select"
TENANT = "ehr-test"
ORIGINAL = ext_url("original-authored-on")


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _order_card(servers: Servers) -> tuple[dict[str, Any], str]:
    """A fresh plan's order card (its own plan id, version 1) and that plan id."""
    r = servers.post(OSEL, cds_fixture("requests", "order-select_trey_berge_naproxen.json"))
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    return card, json.loads(card["links"][0]["appContext"])["planId"]


def _override(card: dict[str, Any], at: str, reason: int = 0) -> dict[str, Any]:
    item = cds_fixture("spec", "feedback_overridden_with_reason.json")["feedback"][0]
    return {
        **item,
        "card": card["uuid"],
        "outcomeTimestamp": at,
        "overrideReason": {**item["overrideReason"], "reason": card["overrideReasons"][reason]},
    }


# ------------------------------------------------------------- a sender's clock ahead of ours


@pytest.mark.parametrize(
    "ahead",
    [timedelta(minutes=10), timedelta(days=3)],  # within, and beyond, the clock-skew allowance
    ids=["within-skew", "beyond-skew"],
)
def test_an_outcome_timestamp_ahead_of_the_clock_is_clamped_and_kept(
    servers: Servers, ahead: timedelta
) -> None:
    card, plan_id = _order_card(servers)
    sent = (datetime.now(UTC) + ahead).strftime("%Y-%m-%dT%H:%M:%SZ")
    done = servers.feedback(OSEL, {"feedback": [_override(card, sent)]})
    assert done.status_code == 200, done.text
    assert done.json() == {"recorded": 1, "contested": 1}

    v2 = servers.call(servers.service.store.get_version(tenant=TENANT, plan_id=plan_id))
    assert v2.version == 2
    tasks = [e["resource"] for e in v2.bundle["entry"] if e["resource"]["resourceType"] == "Task"]
    assert tasks
    stored = servers.call(
        servers.service.store.get_tasks(tenant=TENANT, task_ids=[t["id"] for t in tasks])
    )
    for task in [*tasks, *(r.outcome for r in stored.values())]:
        # FHIR Task inv-1: authoredOn <= lastModified; both are the time of writing here.
        assert _instant(task["authoredOn"]) <= _instant(task["lastModified"])
        assert task["authoredOn"] == task["lastModified"] == v2.created
        assert task["extension"] == [{"url": ORIGINAL, "valueDateTime": sent}]
    # The plan's own record of the contestation is dated no later than the version either.
    assert all(_instant(c["at"]) <= _instant(v2.created) for c in v2.deliberation["contestations"])
    # The feedback record keeps what the client sent.
    (kept,) = servers.call(servers.service.store.list_feedback(tenant=TENANT, plan_id=plan_id))
    assert kept.payload["outcomeTimestamp"] == sent


def test_an_outcome_timestamp_in_the_past_is_stored_as_sent(servers: Servers) -> None:
    card, plan_id = _order_card(servers)
    sent = "2020-12-11T00:00:00Z"
    assert servers.feedback(OSEL, {"feedback": [_override(card, sent)]}).status_code == 200
    v2 = servers.call(servers.service.store.get_version(tenant=TENANT, plan_id=plan_id))
    tasks = [e["resource"] for e in v2.bundle["entry"] if e["resource"]["resourceType"] == "Task"]
    assert tasks and all(t["authoredOn"] == sent and "extension" not in t for t in tasks)


# ------------------------------------------------------- refusals name the caller's elements


@pytest.fixture(scope="module")
def card(servers: Servers) -> Iterator[dict[str, Any]]:
    yield _order_card(servers)[0]


def _assert_names_the_body(r: Any, status: int, *expected: str) -> list[dict[str, Any]]:
    assert r.status_code == status, r.text
    oo = r.json()
    assert oo["resourceType"] == "OperationOutcome"
    paths = [x for i in oo["issue"] for x in i.get("expression", ())]
    assert set(expected) <= set(paths), paths
    assert all(p == "feedback" or p.startswith("feedback[") for p in paths), paths
    assert "Bundle" not in r.text and "entry[" not in r.text and "authoredOn" not in r.text
    issues: list[dict[str, Any]] = oo["issue"]
    return issues


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"outcomeTimestamp": "yesterday"}, "outcomeTimestamp"),
        ({"outcomeTimestamp": "2026-02-30T09:00:00Z"}, "outcomeTimestamp"),  # no such day
        ({"outcomeTimestamp": "2026-11-30"}, "outcomeTimestamp"),  # a date, not an instant
        ({"outcomeTimestamp": "2026-11-30T09:00:00"}, "outcomeTimestamp"),  # no offset
        ({"outcomeTimestamp": 12345}, "outcomeTimestamp"),
        ({"outcomeTimestamp": None}, "outcomeTimestamp"),
        ({"reason": {"code": "x", "colour": "red"}}, "overrideReason.reason.colour"),
        ({"reason": {"code": 5}}, "overrideReason.reason.code"),
        ({"reason": {"code": "x", "display": ""}}, "overrideReason.reason.display"),
        ({"reason": {"system": "urn:x"}}, "overrideReason.reason"),
        ({"userComment": 7}, "overrideReason.userComment"),
        ({"overrideReason": "because"}, "overrideReason"),
        ({"card": "not-a-uuid"}, "card"),
    ],
)
def test_a_bad_element_of_the_feedback_is_a_422_naming_its_path_in_the_body(
    servers: Servers, card: dict[str, Any], change: dict[str, Any], path: str
) -> None:
    """The bad item sits second, after a good one: the path names it by its own index."""
    good = _override(card, "2026-11-30T09:00:00Z")
    bad = _override(card, "2026-11-30T09:05:00Z")
    for key, value in change.items():
        if key in ("reason", "userComment"):
            bad["overrideReason"] = {**bad["overrideReason"], key: value}
        else:
            bad[key] = value
    r = servers.feedback(OSEL, {"feedback": [good, bad]})
    (issue,) = _assert_names_the_body(r, 422, f"feedback[1].{path}")
    assert issue["code"] == "invalid" and issue["diagnostics"].startswith(f"feedback[1].{path}")


def test_every_bad_element_is_named_at_once(servers: Servers, card: dict[str, Any]) -> None:
    bad = _override(card, "soon")
    bad["overrideReason"] = {"reason": {"code": 5}, "userComment": ["no"]}
    r = servers.feedback(OSEL, {"feedback": [bad]})
    _assert_names_the_body(
        r,
        422,
        "feedback[0].outcomeTimestamp",
        "feedback[0].overrideReason.reason.code",
        "feedback[0].overrideReason.userComment",
    )


def test_an_unknown_card_is_named_by_its_place_in_the_body(
    servers: Servers, card: dict[str, Any]
) -> None:
    good = _override(card, "2026-11-30T09:00:00Z")
    stranger = {**good, "card": str(uuid.uuid4())}
    r = servers.feedback(OSEL, {"feedback": [good, stranger]})
    (issue,) = _assert_names_the_body(r, 404, "feedback[1].card")
    assert issue["code"] == "not-found"


def test_a_refusal_after_the_body_was_read_still_names_the_body(servers: Servers) -> None:
    """The same override (card and time) sent again with another reason is another decision
    under the Tasks' ids: refused by the contestation (409), which names the item's reason,
    not the Task element it became."""
    card, _plan_id = _order_card(servers)
    assert len(card["overrideReasons"]) > 1
    at = "2026-11-30T09:00:00Z"
    assert servers.feedback(OSEL, {"feedback": [_override(card, at)]}).status_code == 200
    other = _override(card, at, reason=1)
    r = servers.feedback(OSEL, {"feedback": [other]})
    (issue,) = _assert_names_the_body(r, 409, "feedback[0].overrideReason")
    assert issue["expression"] == ["feedback[0].overrideReason"]


# ------------------------------------------------------------------------- the path mapping


def test_feedback_path_maps_each_task_element_to_the_item_it_came_from() -> None:
    first = Feedback(card=str(uuid.uuid4()), outcome="overridden", timestamp="t", index=0)
    third = Feedback(card=str(uuid.uuid4()), outcome="overridden", timestamp="t", index=2)
    made_from = [first, third, third]  # the third item's card stands for two options
    assert feedback_path("Bundle.entry[2].resource.authoredOn", made_from) == (
        "feedback[2].outcomeTimestamp"
    )
    assert feedback_path("Bundle.entry[1].resource.reasonCode.coding[0].code", made_from) == (
        "feedback[2].overrideReason.reason.code"
    )
    assert feedback_path("Bundle.entry[0].resource.reasonCode.text", made_from) == (
        "feedback[0].overrideReason"
    )
    assert feedback_path("Bundle.entry[0].resource.note[0].text", made_from) == (
        "feedback[0].overrideReason.userComment"
    )
    assert feedback_path("Bundle.entry[1].resource.input[0].valueString", made_from) == (
        "feedback[2].card"
    )
    assert feedback_path("Bundle.entry[9].resource.id", made_from) == "feedback"
    assert feedback_path("Task.focus", made_from) == "feedback"
