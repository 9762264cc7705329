"""Contestation Tasks aimed at a plan version: the one thing a caller must change in a Task
written for another plan (the examples' Tasks name the fixture plan). Plain dicts, no grpc."""

from __future__ import annotations

from typing import Any

__all__ = ["aim_tasks"]


def aim_tasks(tasks: dict[str, Any], plan_id: str, version: int) -> dict[str, Any]:
    """``tasks`` (one Task or a Bundle of Tasks) with ``focus`` set to
    ``CarePlan/<plan_id>-v<version>`` and each id made that plan version's own: a Task id is
    applied once per store, so the same Task sent for a second plan would otherwise be refused
    as applied to another plan. The input is left as it was.

    >>> aim_tasks({"resourceType": "Task", "id": "t1"}, "ab" * 16, 2)["focus"]
    {'reference': 'CarePlan/abababababababababababababababab-v2'}
    """
    focus = f"CarePlan/{plan_id}-v{version}"

    def one(task: dict[str, Any]) -> dict[str, Any]:
        return {
            **task,
            "focus": {"reference": focus},
            "id": f"{task['id']}-{plan_id[:8]}-v{version}",
        }

    if tasks.get("resourceType") == "Task":
        return one(tasks)
    return {**tasks, "entry": [{**e, "resource": one(e["resource"])} for e in tasks["entry"]]}
