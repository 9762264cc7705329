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

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from fhir_mapping.careplan import careplan_id
from fhir_mapping.definitions import CS_ACTION, CS_INPUT
from service.cds_hooks.cards import CARD_NAMESPACE, CardRecord
from service.errors import InputError, Issue, LimitError
from service.jsonio import load_json_object
from service.store import IssuedCard

__all__ = [
    "CardLedger",
    "CardStore",
    "Feedback",
    "StoreCardLedger",
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


def parse_feedback(body: bytes, *, max_items: int | None = None) -> tuple[Feedback, ...]:
    """The items of a feedback body, each repeated item (same card, outcome and accepted
    suggestions) once, the first kept. More than ``max_items`` items is a LimitError, raised
    before any item is looked at."""
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
    distinct = {(f.card, f.outcome, f.accepted_suggestions): f for f in reversed(out)}
    return tuple(f for f in out if distinct[(f.card, f.outcome, f.accepted_suggestions)] is f)


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
