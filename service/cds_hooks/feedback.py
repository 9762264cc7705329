"""Feedback on our cards: the body checked, the cards remembered, overrides turned into Tasks.

``parse_feedback`` checks a ``{"feedback": [...]}`` body (card UUID, ``accepted`` or
``overridden``, acceptedSuggestions only with accepted, overrideReason only with overridden,
``outcomeTimestamp``). ``CardLedger`` remembers, per tenant and card UUID, the plan version and
options a card came from (``StoreCardLedger``: in the plan store, shared by every replica).
``override_tasks`` turns an override *with a reason* on an order card into contestation Tasks:
one ``decide`` / ``exclude`` per option behind the card (the clinician overrules the panel's
"do not give this" for this patient), requested by the hook's user, with the reason as
``reasonCode`` and the user's comment as a note. Task ids are derived from card, option and
timestamp, so a feedback sent twice is applied once; an item repeated within one request (same
card, outcome and accepted suggestions) is taken once. No I/O of its own (the ledger goes through
the service to the store); never logs the comment.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Protocol

from pydantic import ValidationError

from fhir_mapping.careplan import careplan_id
from fhir_mapping.definitions import CS_ACTION, CS_INPUT
from fhir_mapping.r4 import Coding
from service.cds_hooks.cards import CARD_NAMESPACE, CardRecord
from service.errors import CanoeError, FeedbackError, InputError, Issue, LimitError
from service.jsonio import load_json_object
from service.store import IssuedCard

__all__ = [
    "CardLedger",
    "CardStore",
    "Feedback",
    "StoreCardLedger",
    "at_feedback",
    "feedback_path",
    "override_tasks",
    "parse_feedback",
]

_OUTCOMES: Final = frozenset({"accepted", "overridden"})
# outcomeTimestamp becomes Task.authoredOn: an instant (to the second, with its UTC offset).
_INSTANT: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]((0\d|1[0-3]):[0-5]\d|14:00))"
)
_INSTANT_FORM: Final = (
    "an ISO 8601 instant with seconds and a UTC offset, e.g. 2026-11-30T09:00:00Z"
)
_CONTESTING_USERS: Final = ("Practitioner/", "PractitionerRole/")


@dataclass(frozen=True, slots=True)
class Feedback:
    card: str
    outcome: str
    timestamp: str
    accepted_suggestions: tuple[str, ...] = ()
    reason: Mapping[str, Any] | None = None  # a Coding
    comment: str = ""
    index: int = 0  # the item's place in the request's ``feedback`` array

    @property
    def path(self) -> str:
        """Where the item sits in the caller's body: what an OperationOutcome names."""
        return f"feedback[{self.index}]"

    def payload(self) -> dict[str, Any]:
        """What is stored with the feedback record (the comment stays: it is the clinician's
        own account and belongs with the plan; it is never logged)."""
        out: dict[str, Any] = {"outcomeTimestamp": self.timestamp}
        if self.accepted_suggestions:
            out["acceptedSuggestions"] = list(self.accepted_suggestions)
        if self.reason is not None:
            out["overrideReason"] = dict(self.reason)
        if self.comment:
            out["userComment"] = self.comment
        return out


def _is_uuid(value: object) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return isinstance(value, str)


def _instant_problem(value: object) -> str | None:
    """Why ``value`` is no ``outcomeTimestamp`` (an ISO 8601 instant: a date, a time to the
    second and a UTC offset, as a FHIR instant); None when it is one. The value itself is never
    echoed."""
    if not isinstance(value, str) or not value:
        return f"is required ({_INSTANT_FORM})"
    if _INSTANT.fullmatch(value) is None:
        return f"must be {_INSTANT_FORM}"
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return f"names a date or time that does not exist ({_INSTANT_FORM})"
    return None


def _coding_problems(value: object, path: str) -> list[tuple[str, str]]:
    """(path, message) for each way ``value`` is not an R4 Coding with a code."""
    if not isinstance(value, Mapping) or not value.get("code"):
        return [(path, "must be a Coding with a code")]
    try:
        Coding.model_validate(dict(value))
    except ValidationError as exc:
        out: list[tuple[str, str]] = []
        for err in exc.errors():
            where = path
            for part in err.get("loc", ()):
                where += f"[{part}]" if isinstance(part, int) else f".{part}"
            out.append((where, str(err.get("msg", "invalid"))))
        return out
    return []


class _Problems:
    def __init__(self) -> None:
        self.items: list[Issue] = []

    def add(self, path: str, msg: str) -> None:
        self.items.append(Issue("error", "invalid", f"{path}: {msg}", (path,)))


def _override(
    item: Mapping[str, Any], path: str, problems: _Problems
) -> tuple[Mapping[str, Any] | None, str]:
    """The override reason (a Coding) and the user's comment of one item."""
    override = item.get("overrideReason")
    if override is None:
        return None, ""
    if item.get("outcome") != "overridden":
        problems.add(f"{path}.overrideReason", "only with outcome 'overridden'")
    if not isinstance(override, Mapping):
        problems.add(f"{path}.overrideReason", "must be an object")
        return None, ""
    reason = override.get("reason")
    if reason is not None:
        for where, msg in _coding_problems(reason, f"{path}.overrideReason.reason"):
            problems.add(where, msg)
    comment = override.get("userComment", "")
    if not isinstance(comment, str):
        problems.add(f"{path}.overrideReason.userComment", "must be a string")
        comment = ""
    return (reason if isinstance(reason, Mapping) else None), comment


def _item(item: object, index: int, problems: _Problems) -> Feedback | None:
    """One item of the body, or None with its problems added (each naming its own path)."""
    path = f"feedback[{index}]"
    if not isinstance(item, Mapping):
        problems.add(path, "must be an object")
        return None
    before = len(problems.items)
    card, outcome, ts = item.get("card"), item.get("outcome"), item.get("outcomeTimestamp")
    if not _is_uuid(card):
        problems.add(f"{path}.card", "must be the UUID of a card this service returned")
    if outcome not in _OUTCOMES:
        problems.add(f"{path}.outcome", "must be 'accepted' or 'overridden'")
    bad_time = _instant_problem(ts)
    if bad_time is not None:
        problems.add(f"{path}.outcomeTimestamp", bad_time)
    accepted = item.get("acceptedSuggestions") or []
    if accepted and outcome != "accepted":
        problems.add(f"{path}.acceptedSuggestions", "only with outcome 'accepted'")
    if not isinstance(accepted, list) or not all(
        isinstance(s, Mapping) and isinstance(s.get("id"), str) for s in accepted
    ):
        problems.add(f"{path}.acceptedSuggestions", 'must be an array of {"id": ...}')
        accepted = []
    reason, comment = _override(item, path, problems)
    if len(problems.items) > before:
        return None
    return Feedback(
        card=str(card),
        outcome=str(outcome),
        timestamp=str(ts),
        accepted_suggestions=tuple(str(s["id"]) for s in accepted),
        reason=reason,
        comment=comment,
        index=index,
    )


def parse_feedback(body: bytes, *, max_items: int | None = None) -> tuple[Feedback, ...]:
    """The items of a feedback body, each repeated item (same card, outcome and accepted
    suggestions) once, the first kept. A body that is no ``{"feedback": [...]}`` is an
    InputError; items whose elements are unusable a FeedbackError naming each element by its
    path in the body (``feedback[0].outcomeTimestamp``). More than ``max_items`` items is a
    LimitError, raised before any item is looked at."""
    data = load_json_object(body, what="feedback")
    items = data.get("feedback")
    if not isinstance(items, list) or not items:
        raise InputError("feedback: 'feedback' must be a non-empty array")
    if max_items is not None and len(items) > max_items:
        msg = (
            f"the feedback request holds {len(items)} items; at most {max_items} are taken "
            "per request (CANOE_MAX_FEEDBACK_ITEMS)"
        )
        raise LimitError(msg, issues=(Issue("error", "too-costly", msg, ("feedback",)),))
    problems = _Problems()
    parsed = [_item(item, i, problems) for i, item in enumerate(items)]
    if problems.items:
        first = problems.items[0].diagnostics
        raise FeedbackError(f"feedback is not usable: {first}", issues=tuple(problems.items))
    out = [f for f in parsed if f is not None]
    distinct = {(f.card, f.outcome, f.accepted_suggestions): f for f in reversed(out)}
    return tuple(f for f in out if distinct[(f.card, f.outcome, f.accepted_suggestions)] is f)


# Where each element of an override's Task comes from in the feedback item it was made from
# (and whether the rest of the Task's path goes on inside it); the rest of the Task (focus, for,
# requester, inputs) comes from the card the item names.
_TASK_SOURCES: Final = (
    ("authoredOn", "outcomeTimestamp", False),
    ("reasonCode.coding[0]", "overrideReason.reason", True),
    ("reasonCode", "overrideReason", False),  # its text: the reason's display or the comment
    ("note", "overrideReason.userComment", False),
)
_TASK_IN_BUNDLE: Final = re.compile(r"^Bundle\.entry\[(\d+)\]\.resource(?:\.(.*))?$")


def feedback_path(expression: str, made_from: Sequence[Feedback]) -> str:
    """The place in the caller's feedback body behind ``expression``, a path into a Bundle of
    Tasks whose entry i was made from the item ``made_from[i]``:
    ``Bundle.entry[0].resource.authoredOn`` -> ``feedback[3].outcomeTimestamp``. A path in no
    such Task is ``feedback``."""
    m = _TASK_IN_BUNDLE.match(expression)
    if m is None or int(m.group(1)) >= len(made_from):
        return "feedback"
    item, element = made_from[int(m.group(1))], m.group(2) or ""
    for task_element, source, goes_on in _TASK_SOURCES:
        if element == task_element or element.startswith((task_element + ".", task_element + "[")):
            rest = element[len(task_element) :] if goes_on else ""
            return f"{item.path}.{source}{rest}"
    return f"{item.path}.card"


def at_feedback(err: CanoeError, made_from: Sequence[Feedback]) -> None:
    """Re-address ``err``, raised over a Bundle of Tasks whose entry i was made from
    ``made_from[i]``, in place: every issue (and its diagnostics) then names the caller's
    feedback body instead of that internal Bundle."""
    moved: dict[str, str] = {}
    issues: list[Issue] = []
    for issue in err.issues:
        paths = tuple(feedback_path(x, made_from) for x in issue.expression)
        moved.update(zip(issue.expression, paths, strict=True))
        # Two Tasks of one item (one per option behind its card) name one element once.
        issues.append(
            Issue(issue.severity, issue.code, issue.diagnostics, tuple(dict.fromkeys(paths)))
        )

    def reword(text: str) -> str:
        for old in sorted(moved, key=len, reverse=True):  # a path before its own prefix
            text = text.replace(old, moved[old])
        return text

    err.issues = tuple(
        Issue(i.severity, i.code, reword(i.diagnostics), i.expression) for i in issues
    )
    err.message = reword(err.message)


class CardLedger(Protocol):
    """Where the bridge remembers the cards it issued, for feedback to find them."""

    async def remember(self, records: Sequence[CardRecord]) -> None: ...

    async def lookup(self, tenant: str, card_id: str) -> CardRecord | None: ...


class CardStore(Protocol):
    """What ``StoreCardLedger`` needs of ``service.app.CarePlanService``."""

    async def record_cards(
        self,
        *,
        tenant: str,
        plan_id: str,
        version: int,
        service_id: str,
        cards: Mapping[str, Mapping[str, Any]],
    ) -> None: ...

    async def card(self, *, tenant: str, card_id: str) -> IssuedCard | None: ...


class StoreCardLedger:
    """The card ledger in the plan store (``cds_cards``): feedback reaching any replica, or
    arriving after a restart, finds the card. Lookups are per tenant, so another tenant's
    card id is exactly as unknown as a made-up one."""

    def __init__(self, service: CardStore) -> None:
        self._service = service

    async def remember(self, records: Sequence[CardRecord]) -> None:
        groups: dict[tuple[str, str, int, str], dict[str, Mapping[str, Any]]] = {}
        for r in records:
            key = (r.tenant, r.plan_id, r.version, r.service_id)
            groups.setdefault(key, {})[r.card_id] = {
                "patient_ref": r.patient_ref,
                "user_ref": r.user_ref,
                "kind": r.kind,
                "option_ids": list(r.option_ids),
                "draft_ref": r.draft_ref,
            }
        for (tenant, plan_id, version, service_id), cards in groups.items():
            await self._service.record_cards(
                tenant=tenant, plan_id=plan_id, version=version, service_id=service_id, cards=cards
            )

    async def lookup(self, tenant: str, card_id: str) -> CardRecord | None:
        got = await self._service.card(tenant=tenant, card_id=card_id)
        if got is None:
            return None
        p = got.payload
        return CardRecord(
            card_id=got.card_id,
            tenant=got.tenant,
            service_id=got.service_id,
            plan_id=got.plan_id,
            version=got.version,
            patient_ref=str(p["patient_ref"]),
            user_ref=str(p["user_ref"]),
            kind="order" if p["kind"] == "order" else "summary",
            option_ids=tuple(str(o) for o in p["option_ids"]),
            draft_ref=str(p["draft_ref"]),
        )


def _input(kind: str, key: str, value: object) -> dict[str, Any]:
    return {"type": {"coding": [{"system": CS_INPUT, "code": kind}]}, key: value}


def override_tasks(fb: Feedback, record: CardRecord, *, version: int) -> list[dict[str, Any]]:
    """The contestation Tasks an override with a reason stands for ([] when none applies:
    no reason coding, a summary card, or a user who is not a practitioner). A comment alone
    is not a reason: it is recorded with the feedback, but it chose none of the reasons the
    card offered, so nothing is decided on the clinician's behalf."""
    if fb.outcome != "overridden" or fb.reason is None:
        return []
    if record.kind != "order" or not record.user_ref.startswith(_CONTESTING_USERS):
        return []
    reason = dict(fb.reason)
    text = str(reason.get("display") or fb.comment or reason.get("code"))
    tasks: list[dict[str, Any]] = []
    for option_id in record.option_ids:
        task_id = str(uuid.uuid5(CARD_NAMESPACE, f"override|{fb.card}|{option_id}|{fb.timestamp}"))
        task: dict[str, Any] = {
            "resourceType": "Task",
            "id": task_id,
            "status": "requested",
            "intent": "order",
            "code": {
                "coding": [{"system": CS_ACTION, "code": "decide", "display": "Decide"}],
            },
            "description": "CDS Hooks card overridden: the clinician goes ahead with the order",
            "focus": {"reference": f"CarePlan/{careplan_id(record.plan_id, version)}"},
            "for": {"reference": record.patient_ref},
            "requester": {"reference": record.user_ref},
            "authoredOn": fb.timestamp,
            "reasonCode": {"text": text, "coding": [reason]},
            "input": [
                _input("target", "valueString", option_id),
                _input("decision", "valueCode", "exclude"),
            ],
        }
        if fb.comment:
            task["note"] = [{"text": fb.comment}]
        tasks.append(task)
    return tasks
