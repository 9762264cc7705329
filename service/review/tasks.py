"""A click in the review app -> the FHIR Task that gRPC ``Contest`` would receive.

The browser posts a small form (action, target, values); ``task_from_form`` writes the same
contestation Task a client of the gRPC API would write (``fhir_mapping.tasks`` documents its
shape), and the route hands it to ``CarePlanService.contest``: one path, one validation, one
idempotency rule and one stale-version check for every way in. Only the form's shape is checked
here (which fields an action takes); whether the target exists, the strength is in range and so
on is the contest path's job, and its refusal is what the page shows. A rejection and a decision
need a reason (the page asks for it on the confirmation step), which the Task records.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final

from fhir_mapping.careplan import careplan_id
from fhir_mapping.definitions import CS_ACTION, CS_INPUT
from service.errors import InputError

__all__ = ["FORM_ACTIONS", "task_from_form"]

# Form action -> (Task code, the decide target kind when it is a decision).
FORM_ACTIONS: Final = ("accept", "reject", "edit", "add", "decide")
_ID: Final = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")
_MAX_TEXT: Final = 4000


def _input(kind: str, key: str, value: Any) -> dict[str, Any]:
    return {"type": {"coding": [{"system": CS_INPUT, "code": kind}]}, key: value}


def _strength(raw: str, field: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"{field} must be a number between 0 and 1") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise InputError(f"{field} must be a number between 0 and 1")
    return value


def _text(form: Mapping[str, str], name: str) -> str:
    value = (form.get(name) or "").strip()
    if len(value) > _MAX_TEXT:
        raise InputError(f"{name} is longer than {_MAX_TEXT} characters")
    return value


def _edit_inputs(form: Mapping[str, str]) -> list[dict[str, Any]]:
    text, strength = _text(form, "text"), (form.get("strength") or "").strip()
    inputs = []
    if text:
        inputs.append(_input("text", "valueString", text))
    if strength:
        inputs.append(_input("strength", "valueDecimal", _strength(strength, "strength")))
    if not inputs:
        raise InputError("an edit needs a new text or a new strength")
    return inputs


def _add_inputs(form: Mapping[str, str]) -> list[dict[str, Any]]:
    text = _text(form, "text")
    if not text:
        raise InputError("a new argument needs its text")
    inputs = [
        _input("text", "valueString", text),
        _input("stance", "valueCode", form.get("stance", "")),
        _input("strength", "valueDecimal", _strength(form.get("strength", ""), "strength")),
    ]
    role = _text(form, "role")
    if role:
        inputs.append(_input("role", "valueString", role))
    for ev in _text(form, "evidence").replace(",", " ").split():
        inputs.append(_input("evidence", "valueString", ev))
    relation, other = form.get("relation", ""), form.get("relation_target", "")
    if relation in ("support", "attack") and other:
        inputs.append(_input("relation-add", "valueString", f"{relation} {other}"))
    return inputs


def _decide_inputs(form: Mapping[str, str]) -> list[dict[str, Any]]:
    return [_input("decision", "valueCode", form.get("decision", ""))]


def _none(form: Mapping[str, str]) -> list[dict[str, Any]]:
    return []


# The inputs each action's form adds beside its target (accept and reject add none).
_ACTION_INPUTS: Final[dict[str, Callable[[Mapping[str, str]], list[dict[str, Any]]]]] = {
    "edit": _edit_inputs,
    "add": _add_inputs,
    "decide": _decide_inputs,
}


def task_from_form(
    form: Mapping[str, str],
    *,
    plan_id: str,
    version: int,
    patient_ref: str,
    user: str,
    now: str,
) -> dict[str, Any]:
    """The contestation Task for one submitted form. ``form['task_id']`` is minted when the page
    is rendered, so a form sent twice (a double click, a retried POST) is one Task, applied once."""
    action = form.get("action", "")
    if action not in FORM_ACTIONS:
        raise InputError(f"unknown action {action!r}; one of {', '.join(FORM_ACTIONS)}")
    task_id = form.get("task_id", "")
    try:
        uuid.UUID(task_id)
    except ValueError:
        raise InputError("the form carries no valid task id; reload the page") from None
    target = form.get("target", "")
    if not _ID.match(target):
        raise InputError("the form names no valid target; reload the page")

    inputs = [_input("target", "valueString", target), *_ACTION_INPUTS.get(action, _none)(form)]
    reason = _text(form, "reason")
    if action in ("reject", "decide") and not reason:
        raise InputError("a rejection or a decision needs a reason: it is recorded with the change")

    task: dict[str, Any] = {
        "resourceType": "Task",
        "id": task_id,
        "status": "requested",
        "intent": "order",
        "code": {"coding": [{"system": CS_ACTION, "code": action}]},
        "description": "Contested in the CANOE review app",
        "focus": {"reference": f"CarePlan/{careplan_id(plan_id, version)}"},
        "for": {"reference": patient_ref},
        "requester": {"reference": user},
        "authoredOn": now,
        "input": inputs,
    }
    if reason:
        task["reasonCode"] = {"text": reason}
    return task
