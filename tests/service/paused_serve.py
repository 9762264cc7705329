"""``canoe serve`` whose store holds every write transaction open for a while (crash tests).

    python -m tests.service.paused_serve SECONDS

Replaces the store's ``_in_transaction`` seam so the process prints a marker line and sleeps
inside the transaction; the test then kills it there (or sends SIGTERM) and checks what survived.
The runtime itself reads no test variable.
"""

from __future__ import annotations

import asyncio
import sys

from service import cli
from service.store._sql import SqlPlanStore

PAUSED = "canoe-test: paused inside a store transaction"


def main(argv: list[str]) -> int:
    seconds = float(argv[0])

    async def pause(self: SqlPlanStore) -> None:
        print(PAUSED, file=sys.stderr, flush=True)
        await asyncio.sleep(seconds)

    SqlPlanStore._in_transaction = pause  # type: ignore[method-assign]
    return cli.main(["serve"])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
