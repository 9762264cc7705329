"""Benchmark: how fast ``/livez`` answers while the service is busy.

Starts ``canoe serve`` (embedded backend, fresh SQLite store) as its own process, then for
``--seconds``: ``--clients`` gRPC clients send GeneratePlan back to back (fixture bundles
round-robin), one more client keeps a Contest of ``--tasks`` Tasks in flight (sent again as soon
as it is answered), and a prober GETs ``/livez`` on the HTTP port (same process, same event
loop) every ``--probe-ms``. Prints the probe latency percentiles, plans/s and the Contest
round-trips. Run:

    .venv/bin/python -m tests.benchmarks.livez_under_load [--clients 16] [--tasks 10000]
        [--seconds 30] [--max-tasks 10000] [--json]

``--max-tasks`` sets ``CANOE_MAX_TASKS_PER_REQUEST`` so that the Contest is really parsed and
validated (with the default 200 it is refused at once, after the JSON parse). Not a test: the
numbers depend on the machine; run it on the target machine to know them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import tempfile
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx

from tests.benchmarks.load_grpc import start_serve
from tests.conftest import REALISTIC_BUNDLES, REPO_ROOT
from tests.service.conftest import first_argument, pb, pb_grpc, reject_task

SLOW: list[str] = []  # with --debug-loop: the event loop's own reports of slow steps


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def spawned(env: dict[str, str]) -> AsyncIterator[tuple[str, int]]:
    tmp = tempfile.mkdtemp(prefix="canoe-livez-")
    http_port = _free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    environ.update(
        CANOE_GRPC_HOST="127.0.0.1",
        CANOE_GRPC_PORT="0",
        CANOE_HTTP_PORT=str(http_port),
        CANOE_METRICS_PORT="0",
        CANOE_STORE_DSN=f"sqlite:///{tmp}/canoe.sqlite3",
        CANOE_LOG_LEVEL="info",  # the start-up line carries the gRPC port
        PYTHONPATH=str(REPO_ROOT),
        **env,
    )
    proc, port = await start_serve(environ, timeout_s=120)

    async def drain() -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            if b'"asyncio"' in line and b"took" in line:
                SLOW.append(line.decode(errors="replace").strip())

    drainer = asyncio.ensure_future(drain())
    try:
        async with httpx.AsyncClient() as client:
            for _ in range(600):
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"http://127.0.0.1:{http_port}/livez")).status_code:
                        break
                await asyncio.sleep(0.1)
        yield f"127.0.0.1:{port}", http_port
    finally:
        proc.terminate()
        await proc.wait()
        await drainer


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    env = {
        "CANOE_MAX_CONCURRENT_PLANS": str(args.clients + 1),
        "CANOE_MAX_TASKS_PER_REQUEST": str(args.max_tasks),
        "CANOE_MAX_MESSAGE_BYTES": str(64 * 1024 * 1024),
    }
    if args.debug_loop:
        env["PYTHONASYNCIODEBUG"] = "1"  # asyncio logs every step that holds the loop > 100 ms
    bundles = [p.read_bytes() for p in REALISTIC_BUNDLES]
    options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
    async with spawned(env) as (target, http_port):
        channels = [
            grpc.aio.insecure_channel(target, options=options) for _ in range(args.clients + 1)
        ]
        stubs = [pb_grpc.CarePlanServiceStub(c) for c in channels]
        # The Contest: one plan, then ``tasks`` Tasks against its version 1 (rejecting the
        # same argument; refused after the parse, so the plan stays at version 1 and the same
        # request can be sent again and again).
        first = await stubs[-1].GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundles[0]))
        doc = json.loads(
            (
                await stubs[-1].GetDeliberation(pb.GetDeliberationRequest(plan_id=first.plan_id))
            ).deliberation_json
        )
        arg = first_argument(doc)
        tasks = {
            "resourceType": "Bundle",
            "type": "transaction",
            "entry": [
                {
                    "resource": reject_task(
                        first.plan_id, 1, arg, tid=f"bench-{i}", patient=doc["patient_ref"]
                    )
                }
                for i in range(args.tasks)
            ],
        }
        contest_body = json.dumps(tasks).encode()
        stop_at = time.perf_counter() + args.seconds
        plans: list[float] = []
        plan_errors: dict[str, int] = {}
        contests: list[tuple[float, str]] = []
        probes: list[float] = []

        async def planner(i: int) -> None:
            n = i
            while time.perf_counter() < stop_at:
                t0 = time.perf_counter()
                try:
                    await stubs[i].GeneratePlan(
                        pb.GeneratePlanRequest(bundle_json=bundles[n % len(bundles)])
                    )
                    plans.append(time.perf_counter() - t0)
                except grpc.aio.AioRpcError as err:
                    plan_errors[err.code().name] = plan_errors.get(err.code().name, 0) + 1
                n += 1

        async def contester() -> None:
            while time.perf_counter() < stop_at:
                t0 = time.perf_counter()
                code = "OK"
                try:
                    await stubs[-1].Contest(
                        pb.ContestRequest(plan_id=first.plan_id, version=1, tasks_json=contest_body)
                    )
                except grpc.aio.AioRpcError as err:
                    code = err.code().name
                contests.append((time.perf_counter() - t0, code))

        async def prober() -> None:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_port}") as client:
                while time.perf_counter() < stop_at:
                    t0 = time.perf_counter()
                    r = await client.get("/livez", timeout=60)
                    assert r.status_code == 200
                    probes.append(time.perf_counter() - t0)
                    await asyncio.sleep(args.probe_ms / 1000)

        await asyncio.gather(prober(), contester(), *(planner(i) for i in range(args.clients)))
        for c in channels:
            await c.close()
    ms = [p * 1000 for p in probes]
    return {
        "clients": args.clients,
        "tasks_per_contest": args.tasks,
        "contest_bytes": len(contest_body),
        "max_tasks_per_request": args.max_tasks,
        "seconds": args.seconds,
        "livez_ms": {
            "n": len(ms),
            "p50": round(_pct(ms, 0.50), 1),
            "p90": round(_pct(ms, 0.90), 1),
            "p99": round(_pct(ms, 0.99), 1),
            "max": round(max(ms), 1) if ms else None,
        },
        "plans": {
            "ok": len(plans),
            "per_s": round(len(plans) / args.seconds, 2),
            "p50_ms": round(_pct(plans, 0.5) * 1000, 1),
            "errors": plan_errors,
        },
        "contests": {
            "n": len(contests),
            "p50_ms": round(_pct([c[0] for c in contests], 0.5) * 1000, 1),
            "codes": sorted({c[1] for c in contests}),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--max-tasks", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--probe-ms", type=float, default=50.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--debug-loop", action="store_true", help="print what held the loop")
    args = ap.parse_args()
    out = asyncio.run(run(args))
    if args.json:
        print(json.dumps(out))
        return
    lz = out["livez_ms"]
    print(
        f"/livez over {lz['n']} probes: p50 {lz['p50']} ms, p90 {lz['p90']} ms, "
        f"p99 {lz['p99']} ms, max {lz['max']} ms"
    )
    print(
        f"GeneratePlan x{out['clients']} clients: {out['plans']['ok']} plans "
        f"({out['plans']['per_s']}/s, p50 {out['plans']['p50_ms']} ms), "
        f"errors {out['plans']['errors']}"
    )
    print(
        f"Contest of {out['tasks_per_contest']} Tasks ({out['contest_bytes']} bytes, cap "
        f"{out['max_tasks_per_request']}): {out['contests']['n']} round-trips, "
        f"p50 {out['contests']['p50_ms']} ms, codes {out['contests']['codes']}"
    )
    for line in SLOW:
        # Worker threads run loops of their own (the embedded planner): only the serving
        # loop's steps matter here.
        if "off_loop" not in line and "pipeline.py" not in line:
            print("slow serving-loop step:", line[:160], "...", line[line.rfind("took") :][:24])


if __name__ == "__main__":
    main()
