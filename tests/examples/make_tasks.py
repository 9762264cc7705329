"""Writes examples/tasks/*.json: one contestation Task per action, and a transaction Bundle,
aimed at the fixture plan every example uses (the Adalberto Hartmann bundle planned by
``canoe plan`` on the embedded backend; its plan id is derived from the bundle's bytes).

    .venv/bin/python -m tests.examples.make_tasks     # after a change to the plan's ids

The test in this folder re-renders them and fails when the committed files drift, and applies
each one to that plan. Targets are picked by rule (not by hand-copied id), so a change in the
expert knowledge only needs this script re-run.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from functools import cache
from typing import Any

from fhir_mapping.careplan import plan_bundle
from fhir_mapping.definitions import CS_ACTION, CS_INPUT
from fhir_mapping.ingest import ingest
from service.backends import build_planner
from service.core import to_document
from service.pipeline import new_plan_id
from service.settings import load_settings
from tests.conftest import REPO_ROOT, fixture_bundle

FIXTURE = "adalberto"
CREATED = "2026-11-30T09:00:00+00:00"
AUTHORED = "2026-11-30T10:00:00+00:00"
TASKS_DIR = REPO_ROOT / "examples" / "tasks"
REQUESTER = "Practitioner/example-planner"


@cache
def fixture_plan() -> tuple[dict[str, Any], dict[str, Any]]:
    """(plan Bundle, deliberation document) exactly as ``canoe plan --format fhir --created
    CREATED`` writes them for the fixture (default settings)."""
    settings = load_settings(environ={})
    raw = fixture_bundle(FIXTURE).read_bytes()
    profile = ingest(
        raw,
        max_resources=settings.limits.max_bundle_resources,
        received=datetime.fromisoformat(CREATED),
    )
    result = asyncio.run(
        build_planner(settings).plan(profile, plan_id=new_plan_id(raw), created=CREATED)
    )
    d, ev = result.deliberation, result.evaluation
    return plan_bundle(d, ev, recorded=CREATED), to_document(d, ev)


def _input(kind: str, value_key: str, value: object) -> dict[str, Any]:
    return {"type": {"coding": [{"system": CS_INPUT, "code": kind}]}, value_key: value}


def _task(
    doc: dict[str, Any], tid: str, action: str, reason: str, inputs: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "resourceType": "Task",
        "id": tid,
        "status": "requested",
        "intent": "order",
        "code": {"coding": [{"system": CS_ACTION, "code": action}]},
        "focus": {"reference": f"CarePlan/{doc['plan_id']}-v{doc['version']}"},
        "for": {"reference": doc["patient_ref"]},
        "requester": {"reference": REQUESTER},
        "authoredOn": AUTHORED,
        "reasonCode": {"text": reason},
        "input": inputs,
    }


def _arguments(option: dict[str, Any], stance: str) -> list[dict[str, Any]]:
    return [
        n
        for n in option["nodes"]
        if n["kind"] == "argument" and n["stance"] == stance and n.get("origin") == "agent"
    ]


def render() -> dict[str, dict[str, Any]]:
    """File name -> resource, for every example Task and the Bundle."""
    _, doc = fixture_plan()
    included = [o for o in doc["options"] if o["decision"] == "include"]
    excluded = [o for o in doc["options"] if o["decision"] == "exclude"]
    first = next(o for o in included if _arguments(o, "support") and _arguments(o, "attack"))
    supporters, attackers = _arguments(first, "support"), _arguments(first, "attack")
    other = next(o for o in included if o["id"] != first["id"] and _arguments(o, "support"))
    target_out = excluded[0] if excluded else included[-1]

    accept = _task(
        doc,
        "example-accept",
        "accept",
        "Checked against the record: this argument stands",
        [_input("target", "valueString", supporters[0]["id"])],
    )
    reject = _task(
        doc,
        "example-reject",
        "reject",
        "Not relevant for this patient",
        [_input("target", "valueString", attackers[0]["id"])],
    )
    edit = _task(
        doc,
        "example-edit",
        "edit",
        "Overstated for this patient: weaker than the panel judged",
        [
            _input("target", "valueString", _arguments(other, "support")[0]["id"]),
            _input("strength", "valueDecimal", 0.4),
            _input(
                "text",
                "valueString",
                "Still worth doing, but the patient's situation makes it less pressing.",
            ),
        ],
    )
    add = _task(
        doc,
        "example-add",
        "add",
        "The panel missed the patient's own preference",
        [
            _input("target", "valueString", target_out["id"]),
            _input("stance", "valueCode", "support"),
            _input("strength", "valueDecimal", 0.7),
            _input(
                "text",
                "valueString",
                "The patient asked for this at the last visit and is motivated to follow it.",
            ),
        ],
    )
    decision = "exclude" if target_out["decision"] == "include" else "include"
    decide = _task(
        doc,
        "example-decide",
        "decide",
        "Discussed with the patient and their family",
        [
            _input("target", "valueString", target_out["id"]),
            _input("decision", "valueCode", decision),
        ],
    )
    in_bundle = [
        {**reject, "id": "example-bundle-reject"},
        {**add, "id": "example-bundle-add"},
        {**decide, "id": "example-bundle-decide"},
    ]
    bundle = {
        "resourceType": "Bundle",
        "type": "transaction",
        "entry": [
            {
                "fullUrl": f"urn:uuid:{_uuid(t['id'])}",
                "resource": t,
                "request": {"method": "POST", "url": "Task"},
            }
            for t in in_bundle
        ],
    }
    return {
        "accept.json": accept,
        "reject.json": reject,
        "edit.json": edit,
        "add.json": add,
        "decide.json": decide,
        "transaction-bundle.json": bundle,
    }


def _uuid(name: str) -> str:
    import uuid

    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"canoe-example:{name}"))


def dumps(res: dict[str, Any]) -> str:
    return json.dumps(res, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    TASKS_DIR.mkdir(parents=True, exist_ok=True)
    for name, res in render().items():
        (TASKS_DIR / name).write_text(dumps(res), encoding="utf-8")
        print(TASKS_DIR / name)


if __name__ == "__main__":
    main()
