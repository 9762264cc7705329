"""Feedback on our cards: the body checked, the cards remembered, overrides turned into Tasks.

``parse_feedback`` checks a ``{"feedback": [...]}`` body (card UUID, ``accepted`` or
``overridden``, acceptedSuggestions only with accepted, overrideReason only with overridden,
``outcomeTimestamp``). ``CardLedger`` remembers, per card UUID, the plan version and options a
card came from (``InMemoryCardLedger``: per process, bounded, with a time to live).
``override_tasks`` turns an override *with a reason* on an order card into contestation Tasks:
one ``decide`` / ``exclude`` per option behind the card (the clinician overrules the panel's
"do not give this" for this patient), requested by the hook's user, with the reason as
``reasonCode`` and the user's comment as a note. Task ids are derived from card, option and
timestamp, so a feedback sent twice is applied once. No I/O; never logs the comment.
"""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from fhir_mapping.careplan import careplan_id
from fhir_mapping.definitions import CS_ACTION, CS_INPUT
from service.cds_hooks.cards import CARD_NAMESPACE, CardRecord
from service.cds_hooks.request import parse_json_object
from service.errors import InputError, Issue

__all__ = [
    "CardLedger",
    "Feedback",
    "InMemoryCardLedger",
    "override_tasks",
    "parse_feedback",
]

_OUTCOMES: Final = frozenset({"accepted", "overridden"})
_CONTESTING_USERS: Final = ("Practitioner/", "PractitionerRole/")


@dataclass(frozen=True, slots=True)
class Feedback:
    card: str
    outcome: str
    timestamp: str
    accepted_suggestions: tuple[str, ...] = ()
    reason: Mapping[str, Any] | None = None  # a Coding
    comment: str = ""

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


def parse_feedback(body: bytes) -> tuple[Feedback, ...]:
    data = parse_json_object(body, "feedback")
    items = data.get("feedback")
    if not isinstance(items, list) or not items:
        raise InputError("feedback: 'feedback' must be a non-empty array")
    out: list[Feedback] = []
    problems: list[Issue] = []

    def bad(path: str, msg: str) -> None:
        problems.append(Issue("error", "invalid", f"{path}: {msg}", (path,)))

    for i, item in enumerate(items):
        path = f"feedback[{i}]"
        if not isinstance(item, Mapping):
            bad(path, "must be an object")
            continue
        card, outcome, ts = item.get("card"), item.get("outcome"), item.get("outcomeTimestamp")
        if not _is_uuid(card):
            bad(f"{path}.card", "must be the UUID of a card this service returned")
        if outcome not in _OUTCOMES:
            bad(f"{path}.outcome", "must be 'accepted' or 'overridden'")
        if not isinstance(ts, str) or not ts:
            bad(f"{path}.outcomeTimestamp", "is required (an ISO 8601 instant)")
        accepted = item.get("acceptedSuggestions") or []
        if accepted and outcome != "accepted":
            bad(f"{path}.acceptedSuggestions", "only with outcome 'accepted'")
        if not isinstance(accepted, list) or not all(
            isinstance(s, Mapping) and isinstance(s.get("id"), str) for s in accepted
        ):
            bad(f"{path}.acceptedSuggestions", 'must be an array of {{"id": ...}}')
            accepted = []
        override = item.get("overrideReason")
        reason: Mapping[str, Any] | None = None
        comment = ""
        if override is not None:
            if outcome != "overridden":
                bad(f"{path}.overrideReason", "only with outcome 'overridden'")
            if not isinstance(override, Mapping):
                bad(f"{path}.overrideReason", "must be an object")
            else:
                r = override.get("reason")
                if r is not None and not (isinstance(r, Mapping) and r.get("code")):
                    bad(f"{path}.overrideReason.reason", "must be a Coding with a code")
                reason = r if isinstance(r, Mapping) else None
                c = override.get("userComment", "")
                comment = c if isinstance(c, str) else ""
        if problems:
            continue
        out.append(
            Feedback(
                card=str(card),
                outcome=str(outcome),
                timestamp=str(ts),
                accepted_suggestions=tuple(str(s["id"]) for s in accepted),
                reason=reason,
                comment=comment,
            )
        )
    if problems:
        first = problems[0].diagnostics
        raise InputError(f"feedback is not usable: {first}", issues=tuple(problems))
    return tuple(out)


class CardLedger(Protocol):
    def remember(self, record: CardRecord) -> None: ...

    def lookup(self, card_id: str) -> CardRecord | None: ...


class InMemoryCardLedger:
    """The cards this process returned. Feedback on a card from another replica, or after a
    restart, is answered 404: a shared ledger (in the plan store) would lift that."""

    def __init__(
        self,
        *,
        max_cards: int = 100_000,
        ttl_s: float = 7 * 24 * 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._cards: OrderedDict[str, tuple[float, CardRecord]] = OrderedDict()
        self._max = max_cards
        self._ttl = ttl_s
        self._clock = clock

    def remember(self, record: CardRecord) -> None:
        self._cards[record.card_id] = (self._clock() + self._ttl, record)
        self._cards.move_to_end(record.card_id)
        while len(self._cards) > self._max:
            self._cards.popitem(last=False)

    def lookup(self, card_id: str) -> CardRecord | None:
        got = self._cards.get(card_id)
        if got is None:
            return None
        if got[0] < self._clock():
            del self._cards[card_id]
            return None
        return got[1]


def _input(kind: str, key: str, value: object) -> dict[str, Any]:
    return {"type": {"coding": [{"system": CS_INPUT, "code": kind}]}, key: value}


def override_tasks(fb: Feedback, record: CardRecord, *, version: int) -> list[dict[str, Any]]:
    """The contestation Tasks an override with a reason stands for ([] when none applies:
    no reason, a summary card, or a user who is not a practitioner)."""
    if fb.outcome != "overridden" or (fb.reason is None and not fb.comment):
        return []
    if record.kind != "order" or not record.user_ref.startswith(_CONTESTING_USERS):
        return []
    reason = dict(fb.reason) if fb.reason is not None else None
    text = str((reason or {}).get("display") or fb.comment or (reason or {}).get("code"))
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
            "reasonCode": {"text": text, **({"coding": [reason]} if reason else {})},
            "input": [
                _input("target", "valueString", option_id),
                _input("decision", "valueCode", "exclude"),
            ],
        }
        if fb.comment:
            task["note"] = [{"text": fb.comment}]
        tasks.append(task)
    return tasks
