"""Stream a plan's progress, then read its deliberation: the asyncio client.

    python examples/python/plan_async.py BUNDLE.json [HOST:PORT]

HOST:PORT defaults to 127.0.0.1:50051; CANOE_TOKEN, when set, is sent as the bearer token.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from canoe_client import AsyncCarePlanClient
from canoe_client.errors import CanoeError


async def main(argv: list[str]) -> int:
    bundle = Path(argv[1])
    target = argv[2] if len(argv) > 2 else "127.0.0.1:50051"
    async with AsyncCarePlanClient(target, token=os.environ.get("CANOE_TOKEN", "")) as client:
        try:
            plan = None
            async for event in client.stream_plan(bundle, timeout_s=120):
                if "progress" in event:
                    p = event["progress"]
                    calls = f"{p['calls_done']}/{p['calls_total']}"
                    print(f"{p['stage']:<12} {p['state']:<9} calls {calls}")
                else:
                    plan = event["plan"]
            assert plan is not None
            doc = await client.deliberation(plan["plan_id"], plan["version"])
            included = [o["title"] for o in doc["options"] if o["decision"] == "include"]
            print(f"plan {plan['plan_id']} v{plan['version']}: {len(included)} activities")
            for title in included:
                print(f"  - {title}")
        except CanoeError as exc:
            print(f"refused ({type(exc).__name__}): {exc.message}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(sys.argv)))
