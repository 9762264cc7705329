"""Plan a bundle, contest it, read the history: the blocking client.

    python examples/python/plan_sync.py BUNDLE.json [HOST:PORT] [TASKS.json]

HOST:PORT defaults to 127.0.0.1:50051 (``canoe serve``); CANOE_TOKEN, when set, is sent as the
bearer token. TASKS.json (one of examples/tasks/) is re-aimed at the new plan before it is
sent; without it, the plan's first agent argument is rejected.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from canoe_client import CarePlanClient, aim_tasks
from canoe_client.errors import CanoeError


def reject_first(
    deliberation: dict[str, Any], patient: str, plan_id: str, version: int
) -> dict[str, Any]:
    argument = next(
        n for o in deliberation["options"] for n in o["nodes"] if n["kind"] == "argument"
    )
    system = "https://canoe.example.org/fhir/CodeSystem/"
    return {
        "resourceType": "Task",
        "id": f"reject-{plan_id[:8]}",
        "status": "requested",
        "intent": "order",
        "code": {"coding": [{"system": system + "contestation-action", "code": "reject"}]},
        "focus": {"reference": f"CarePlan/{plan_id}-v{version}"},
        "for": {"reference": patient},
        "requester": {"reference": "Practitioner/example-planner"},
        "authoredOn": "2026-11-30T10:00:00Z",
        "input": [
            {
                "type": {"coding": [{"system": system + "contestation-input", "code": "target"}]},
                "valueString": argument["id"],
            }
        ],
    }


def main(argv: list[str]) -> int:
    bundle = Path(argv[1])
    target = argv[2] if len(argv) > 2 else "127.0.0.1:50051"
    with CarePlanClient(target, token=os.environ.get("CANOE_TOKEN", ""), timeout_s=120) as client:
        try:
            plan = client.plan(bundle)
            print(f"plan {plan['plan_id']} v{plan['version']}: {plan['summary']['counts']}")
            doc = client.deliberation(plan["plan_id"])
            if len(argv) > 3:
                tasks = aim_tasks(
                    json.loads(Path(argv[3]).read_text()), plan["plan_id"], plan["version"]
                )
            else:
                tasks = reject_first(doc, doc["patient_ref"], plan["plan_id"], plan["version"])
            contested = client.contest(plan["plan_id"], plan["version"], tasks)
            print(f"contested -> v{contested['version']}: {contested['results']}")
            for v in client.versions(plan["plan_id"]):
                print(f"  v{v['version']} {v['kind']} current={v['current']}")
        except CanoeError as exc:
            # The service's OperationOutcome travels with the error.
            print(f"refused ({type(exc).__name__}): {exc.message}", file=sys.stderr)
            print(json.dumps(exc.outcome, indent=2), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
