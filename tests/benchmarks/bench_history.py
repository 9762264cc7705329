"""Benchmark: the plan store's size and the time of a contestation as one plan is contested
version after version.

Plans one fixture on the embedded backend, then applies ``--versions`` contestations through
``CarePlanService.contest`` (one Task each, alternately rejecting and accepting one argument),
and prints the store's size every ``--every`` versions, with the bytes the last step added:
under linear history each step adds about the same. At the end, the time of the first and of
the last quarter of the contestations (the store's size is read outside them): when a
contestation costs the same whatever the history before it, the two are about equal. Run:

    .venv/bin/python -m tests.benchmarks.bench_history [--versions 1000] [--dsn DSN]

``--dsn`` defaults to a fresh SQLite file (its size: page_count x page_size, WAL included); with
``postgresql://...`` the size is ``pg_total_relation_size('plan_versions')`` (TOAST and indexes
included). Not a test: numbers go in the closing note.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from fhir_mapping.definitions import CS_ACTION, CS_INPUT
from service.app import CarePlanService
from service.settings import load_settings
from service.store import sqlite_path
from tests.conftest import fixture_bundle


def contest_task(plan_id: str, version: int, argument: str, patient: str) -> dict[str, Any]:
    """The Task making version ``version + 1``: reject the argument, then accept it again."""
    return {
        "resourceType": "Task",
        "id": f"history-{version}",
        "status": "requested",
        "intent": "order",
        "code": {"coding": [{"system": CS_ACTION, "code": "reject" if version % 2 else "accept"}]},
        "focus": {"reference": f"CarePlan/{plan_id}-v{version}"},
        "for": {"reference": patient},
        "requester": {"reference": "Practitioner/planner-1"},
        "authoredOn": "2026-11-30T11:00:00Z",
        "reasonCode": {"text": "reviewed again"},
        "input": [
            {
                "type": {"coding": [{"system": CS_INPUT, "code": "target"}]},
                "valueString": argument,
            }
        ],
    }


def first_argument(document: dict[str, Any]) -> str:
    for option in document["options"]:
        for node in option["nodes"]:
            if node["kind"] == "argument":
                return str(node["id"])
    raise ValueError("the plan has no argument")


async def store_bytes(app: CarePlanService, dsn: str) -> int:
    """The plan store's size now (what a new version adds to it is the difference)."""
    if dsn.startswith("sqlite"):
        with sqlite3.connect(sqlite_path(dsn)) as c:
            pages = c.execute("PRAGMA page_count").fetchone()[0]
            size = c.execute("PRAGMA page_size").fetchone()[0]
        return int(pages) * int(size)
    async with app.store.driver.transaction() as tx:  # type: ignore[attr-defined]
        rows = await tx.fetchall("SELECT pg_total_relation_size('plan_versions')")
    return int(rows[0][0])


async def run(versions: int, every: int, dsn: str, fixture: str) -> None:
    app = await CarePlanService.create(load_settings({}, store_dsn=dsn))
    try:
        plan = await app.generate(fixture_bundle(fixture).read_bytes(), tenant="bench")
        argument = first_argument(plan.deliberation)
        patient = plan.deliberation["patient_ref"]
        start = last = await store_bytes(app, dsn)
        print(f"version 1: store {start / 1e6:.2f} MB")
        # spent[v], cpu[v]: wall-clock and CPU seconds (this process, all its threads) of the
        # contestation making version v + 1; on a shared machine the CPU time is the steadier.
        spent, cpu = [0.0] * (versions + 1), [0.0] * (versions + 1)
        for v in range(1, versions + 1):
            task = contest_task(plan.plan_id, v, argument, patient)
            t0, c0 = time.perf_counter(), time.process_time()
            await app.contest(task, tenant="bench", plan_id=plan.plan_id, version=v)
            spent[v], cpu[v] = time.perf_counter() - t0, time.process_time() - c0
            if v % every == 0:
                now = await store_bytes(app, dsn)
                print(
                    f"version {v + 1}: store {now / 1e6:8.2f} MB, the last {every} added "
                    f"{(now - last) / every / 1e3:8.1f} kB each, "
                    f"{sum(spent[v - every + 1 : v + 1]) / every * 1e3:6.1f} ms a contestation "
                    f"({sum(cpu[v - every + 1 : v + 1]) / every * 1e3:6.1f} ms CPU)"
                )
                last = now
        print(f"{versions} contested versions: {(last - start) / 1e6:.1f} MB")
        quarter = max(1, versions // 4)
        for what, xs in (("time", spent), ("CPU time", cpu)):
            first, final = sum(xs[1 : 1 + quarter]), sum(xs[versions - quarter + 1 :])
            print(
                f"{what} of the first {quarter} contestations {first:.2f} s, of the last "
                f"{quarter} {final:.2f} s: last / first = {final / first:.2f}"
            )
    finally:
        await app.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versions", type=int, default=1000)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--dsn", default="")
    ap.add_argument("--fixture", default="adalberto")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dsn = args.dsn or f"sqlite:///{Path(tmp) / 'history.sqlite3'}"
        asyncio.run(run(args.versions, args.every, dsn, args.fixture))


if __name__ == "__main__":
    main()
