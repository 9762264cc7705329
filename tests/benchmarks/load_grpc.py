"""Load test: GeneratePlan and Contest over gRPC on loopback, N concurrent clients.

Starts ``canoe serve`` (embedded backend, a fresh SQLite store in a temp dir) as a separate
process on a free loopback port, unless ``--target host:port`` names a running server. Each
client has its own channel (its own HTTP/2 connection). Phase 1 sends GeneratePlan with the
fixture bundles round-robin; phase 2 has each client contest its own plans, alternately
rejecting and reinstating an argument, version after version. Both phases are bounded by a
request count and a time limit. Run:

    .venv/bin/python -m tests.benchmarks.load_grpc [--clients 16] [--requests 320] [--seconds 60]
        [--workers N] [--store sqlite|postgresql] [--postgres-dsn DSN] [--max-concurrent-plans N]

``--workers`` is ``canoe serve --workers`` (the clients' connections are spread over the
workers by the kernel); ``--store postgresql`` runs against a fresh schema of ``--postgres-dsn``
(default the local test server), dropped afterwards; ``--max-concurrent-plans`` is the server's
bound per worker (default 0: none the clients can reach).

Each client is closed-loop and behaves as a real one: a request refused as busy
(RESOURCE_EXHAUSTED with a retry pushback) is retried after canoe_client's ``RetryPolicy``
backoff (the server's hint or an exponential backoff, jittered, at most the library's default
2 s unless ``--max-backoff-s`` says otherwise). Per phase it reports the rate
of answered requests, p50/p99 of the attempts the server admitted ("served": what the bound
keeps short), the share of attempts refused ("shed"), and p50/p99 from a request's first attempt
to its answer ("client-seen": with closed-loop clients this is clients / rate by Little's law,
bound or not).

Side by side, the same run measures the in-process rate on the same fixtures (``bench_plan``'s
steps: parse, profile, deliberation, CarePlan bundle and text, one plan after another on one
thread), once before the served phases and once after, and prints the served rate over it and
the served p50/p99 over the in-process time per plan: on a shared machine only these ratios mean
much. It also prints CPU time a plan: the in-process plans' own (thread CPU time) against the
spawned server's over the GeneratePlan phase (all its workers, from /proc; a PostgreSQL
server's work is not counted), and their quotient, the share of the server's work that is
planning: on a busy machine the rates swing with the neighbours, the CPU times much less.
``--inprocess-rounds 0`` skips it; ``--contest-requests 0`` skips the Contest phase.

Open loop (``--rate R``, ``--rate-of-inprocess F``, both repeatable): after the closed-loop
phase, on the same server, GeneratePlan requests arrive as a Poisson process, R a second or F
times the in-process rate just measured, whether or not earlier ones are answered: an EHR's
traffic does not wait for the service. Each arrival goes out on the next client connection; a
request refused as busy is retried as above until ``--give-up-s`` after its arrival. Reported
per rate: served p50/p99 (admitted attempts), client-seen p50/p99 (arrival to answer, backoff
and retries included), the shed answers' own time (p50/p99/max: how fast a refusal comes back),
errors and abandoned requests, and an ``open | ...`` row with client-seen p99 over the in-process
time a plan (the shares are of the in-process rate measured before the served phases; the time
a plan is the mean of the runs before and after, as in the closed-loop row). With a rate
given, the server keeps its default bound unless ``--max-concurrent-plans`` says otherwise.
E.g. the two rows of the serving goal (``--requests`` high: the phases end on time)::

    .venv/bin/python -m tests.benchmarks.load_grpc --workers 1 --seconds 20 --requests 100000 \
        --rate-of-inprocess 0.7 --rate-of-inprocess 1.5 --contest-requests 0

Prints requests/s and latency percentiles per phase and a last ``row | ...`` line for the
comparison table (``--json`` for machines). Not a test. The serving goal: one worker at 16
clients serves at least 0.7 of the in-process rate, and with a bound a served p99 within 4
times the in-process time per plan. E.g.::

    .venv/bin/python -m tests.benchmarks.load_grpc --clients 16 --seconds 30 --workers 1
    .venv/bin/python -m tests.benchmarks.load_grpc --clients 16 --seconds 30 --workers 1 \
        --max-concurrent-plans 2
    .venv/bin/python -m tests.benchmarks.load_grpc --clients 16 --seconds 30 --workers 2 \
        --store postgresql
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import itertools
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from canoe_client import RetryPolicy
from canoe_client._status import retry_after_s
from tests.conftest import REALISTIC_BUNDLES, REPO_ROOT
from tests.service.conftest import first_argument, pb, pb_grpc, reject_task

_UNBOUNDED = 1_000_000
# A client that retries a refusal as busy for as long as the phase lasts, backing off as
# canoe_client does by default (up to 2 s; --max-backoff-s). A shorter cap keeps more clients
# knocking: at 0.25 s each waiting client was refused about four times a second, and answering
# those refusals was most of what a bounded server did besides planning.
_RETRY = RetryPolicy(attempts=1_000_000)


@contextlib.contextmanager
def postgres_schema(server: str) -> Iterator[str]:
    """A fresh schema of ``server`` as a DSN whose search_path is it; dropped afterwards."""
    import psycopg

    schema = f"canoe_load_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in server else "?"
    try:
        yield f"{server}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(server, autocommit=True) as c:
            c.execute(f"DROP SCHEMA {schema} CASCADE")


async def start_serve(
    environ: dict[str, str], timeout_s: float = 120
) -> tuple[asyncio.subprocess.Process, int]:
    """``canoe serve`` as its own process (log level info or lower); returns it and the gRPC port
    its ``server.started`` line names. Its stderr stays piped: the caller drains it. A server
    that does not start in time is killed, not left running."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", "serve",
        cwd=REPO_ROOT, env=environ,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        while True:
            line = await asyncio.wait_for(proc.stderr.readline(), timeout_s)
            if not line:
                raise RuntimeError("canoe serve exited before it started")
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if event.get("event") == "server.started":
                    return proc, int(event["port"])
    except BaseException:
        if proc.returncode is None:
            proc.kill()  # its workers die with it (parent-death signal)
        await proc.wait()
        raise


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` and its live descendants
    (``canoe serve``'s workers), from Linux's /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        with contextlib.suppress(OSError, ValueError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
    return total


@contextlib.asynccontextmanager
async def spawned_server(env: dict[str, str], pids: list[int] | None = None) -> AsyncIterator[str]:
    """``canoe serve`` on a free port; its pid is appended to ``pids``."""
    tmp = tempfile.mkdtemp(prefix="canoe-load-")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    environ.update(
        CANOE_GRPC_HOST="127.0.0.1",
        CANOE_GRPC_PORT="0",
        CANOE_HTTP_PORT="0",
        CANOE_METRICS_PORT="0",
        CANOE_STORE_DSN=f"sqlite:///{tmp}/canoe.sqlite3",
        CANOE_LOG_LEVEL="warning",
        # This checkout first; then the caller's path (a checkout's own client/src, say).
        PYTHONPATH=os.pathsep.join(filter(None, (str(REPO_ROOT), os.environ.get("PYTHONPATH")))),
    )
    environ.update(env)
    environ["CANOE_LOG_LEVEL"] = "info"  # the start-up line carries the port
    proc, port = await start_serve(environ)
    if pids is not None:
        pids.append(proc.pid)

    async def drain() -> None:  # keep the pipe from filling up (one log line per request)
        assert proc.stderr is not None
        while await proc.stderr.readline():
            pass

    drainer = asyncio.ensure_future(drain())
    try:
        await _all_serving(f"127.0.0.1:{port}")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        await proc.wait()
        await drainer


async def _all_serving(target: str) -> None:
    """Health SERVING, which with several workers means every worker is ready."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with grpc.aio.insecure_channel(target) as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        for _ in range(600):
            got = await stub.Check(health_pb2.HealthCheckRequest())
            if got.status == health_pb2.HealthCheckResponse.SERVING:
                return
            await asyncio.sleep(0.1)
    raise RuntimeError("canoe serve never became SERVING")


def inprocess(rounds: int) -> dict[str, Any]:
    """Plans per second planning the fixtures in this process, one after another, ``rounds``
    times over (after one warm-up plan): what the computation allows one worker."""
    from inference.embedded import EmbeddedExperts
    from inference.evidence import EvidenceBase
    from service.pipeline import Planner
    from tests.benchmarks.bench_plan import one

    evidence = EvidenceBase.load()
    planner = Planner(EmbeddedExperts(evidence.version), evidence)
    one(REALISTIC_BUNDLES[0], planner)
    cpu0 = time.thread_time()  # this thread's CPU: what the plans cost, however busy the box
    times = [one(p, planner)["total"] for _ in range(rounds) for p in REALISTIC_BUNDLES]
    return {
        "plans": len(times),
        "rps": round(len(times) / sum(times), 2),
        "cpu_ms": round((time.thread_time() - cpu0) / len(times) * 1000.0, 1),
        "mean_ms": round(statistics.fmean(times) * 1000.0, 1),
        "p50_ms": round(statistics.median(times) * 1000.0, 1),
    }


def compare(
    served: dict[str, Any], before: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    """The served phase against the mean of the in-process runs before and after it."""
    rps = (before["rps"] + after["rps"]) / 2
    mean_ms = (before["mean_ms"] + after["mean_ms"]) / 2
    cpu_ms = (before["cpu_ms"] + after["cpu_ms"]) / 2
    served_cpu = served.get("server_cpu_ms_per_plan")
    return {
        "inprocess_rps": round(rps, 2),
        "inprocess_mean_ms": round(mean_ms, 1),
        "inprocess_cpu_ms": round(cpu_ms, 1),
        # In-process CPU a plan over the server's CPU an answered plan: the share of the
        # server's work that is planning; unlike the rates it holds on a busy machine.
        "cpu_efficiency": round(cpu_ms / served_cpu, 3) if served_cpu else None,
        "served_over_inprocess": round(served.get("rps", 0.0) / rps, 3),
        "p50_over_inprocess_time": round(served.get("p50_ms", 0.0) / mean_ms, 2),
        "p99_over_inprocess_time": round(served.get("p99_ms", 0.0) / mean_ms, 2),
    }


def _pct(lat: list[float], p: float) -> float:
    return round(lat[min(len(lat) - 1, round(p / 100.0 * (len(lat) - 1)))] * 1000.0, 1)


@dataclass
class _Tally:
    """One phase's outcome. ``served``: the time of each admitted attempt (what the server's
    bound keeps short); ``waited``: from a request's first attempt to its answer, backing off
    and retrying after refusals included (what the client sees); ``shed``: attempts refused
    as busy (RESOURCE_EXHAUSTED with a retry hint); ``abandoned``: requests still refused when
    the phase ended (open loop: when the request's own time ran out)."""

    served: list[float] = field(default_factory=list)
    waited: list[float] = field(default_factory=list)
    refused: list[float] = field(default_factory=list)  # the time of each shed answer
    errors: dict[str, int] = field(default_factory=dict)
    shed: int = 0
    abandoned: int = 0

    def stats(self, wall: float) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": len(self.served), "errors": self.errors}
        attempts = len(self.served) + self.shed + sum(self.errors.values())
        out.update(
            seconds=round(wall, 2),
            shed=self.shed,
            abandoned=self.abandoned,
            shed_pct=round(100.0 * self.shed / attempts, 1) if attempts else 0.0,
        )
        if self.refused:
            refused = sorted(self.refused)
            out.update(
                shed_p50_ms=_pct(refused, 50),
                shed_p99_ms=_pct(refused, 99),
                shed_max_ms=round(refused[-1] * 1000.0, 1),
            )
        if not self.served:
            return out
        lat, waited = sorted(self.served), sorted(self.waited)
        out.update(
            rps=round(len(lat) / wall, 2),
            p50_ms=_pct(lat, 50),
            p90_ms=_pct(lat, 90),
            p99_ms=_pct(lat, 99),
            mean_ms=round(statistics.fmean(lat) * 1000.0, 1),
            max_ms=round(lat[-1] * 1000.0, 1),
            waited_p50_ms=_pct(waited, 50),
            waited_p99_ms=_pct(waited, 99),
        )
        return out


async def _attempts(
    one: Callable[[], Awaitable[None]],
    policy: RetryPolicy,
    until: float,
    tally: _Tally,
    first: float | None = None,
) -> None:
    """One request as a client with ``policy`` makes it: refused as busy, it backs off (the
    server's hint or its own backoff, jittered) and tries again, until ``until``. ``first``:
    when the request arose (open loop: its arrival, however late the first attempt left)."""
    first = time.perf_counter() if first is None else first
    for retry in itertools.count():
        s = time.perf_counter()
        try:
            await one()
        except grpc.aio.AioRpcError as exc:
            hint = retry_after_s(exc.trailing_metadata())
            if exc.code() is not grpc.StatusCode.RESOURCE_EXHAUSTED or hint is None:
                tally.errors[exc.code().name] = tally.errors.get(exc.code().name, 0) + 1
                return
            tally.shed += 1
            tally.refused.append(time.perf_counter() - s)
            wait = policy.delay_s(retry, hint)
            if time.perf_counter() + wait >= until:
                tally.abandoned += 1
                return
            await asyncio.sleep(wait)
            continue
        done = time.perf_counter()
        tally.served.append(done - s)
        tally.waited.append(done - first)
        return


async def run_phase(
    clients: int,
    requests: int,
    seconds: float,
    one: Callable[[int, int], Awaitable[None]],
    policy: RetryPolicy | None = None,
) -> dict[str, Any]:
    """``clients`` workers call ``one(client, k)`` until ``requests`` are done or time is up,
    each retrying refusals as busy under ``policy`` (default: canoe_client's backoff, retrying
    for as long as the phase lasts)."""
    policy = policy or _RETRY
    tally = _Tally()
    issued = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds

    async def worker(c: int) -> None:
        nonlocal issued
        k = 0
        while issued < requests and time.perf_counter() < deadline:
            issued += 1
            await _attempts(functools.partial(one, c, k), policy, deadline, tally)
            k += 1

    await asyncio.gather(*(worker(c) for c in range(clients)))
    return tally.stats(time.perf_counter() - t0)


async def open_phase(
    rate: float,
    requests: int,
    seconds: float,
    one: Callable[[int, int], Awaitable[None]],
    clients: int,
    policy: RetryPolicy,
    give_up_s: float,
    seed: int = 0,
) -> dict[str, Any]:
    """Open loop: requests arrive as a Poisson process of ``rate`` a second (exponential gaps,
    ``seed``ed) for ``seconds`` or ``requests`` arrivals, whatever is answered or refused; each
    is ``one(k % clients, k)`` on the next of the clients' connections. A request refused as
    busy is retried under ``policy`` until ``give_up_s`` after its arrival (then abandoned).
    Client-seen time runs from the arrival, so a late start counts against the server too.
    Waits for every request before it returns."""
    tally = _Tally()
    rng = random.Random(seed)
    pending: set[asyncio.Task[None]] = set()
    t0 = time.perf_counter()
    at, k, lag = t0, 0, 0.0
    while k < requests:
        at += rng.expovariate(rate)
        if at >= t0 + seconds:
            break
        await asyncio.sleep(max(0.0, at - time.perf_counter()))
        lag = max(lag, time.perf_counter() - at)  # how far behind the arrivals this client fell
        call = functools.partial(one, k % clients, k)
        task = asyncio.ensure_future(_attempts(call, policy, at + give_up_s, tally, first=at))
        pending.add(task)
        task.add_done_callback(pending.discard)
        k += 1
    arrivals_s = time.perf_counter() - t0
    await asyncio.gather(*pending)
    out = tally.stats(time.perf_counter() - t0)
    out.update(
        offered_rps=round(rate, 2),
        arrivals=k,
        arrival_rps=round(k / arrivals_s, 2) if arrivals_s else 0.0,
        client_lag_max_ms=round(lag * 1000.0, 1),
    )
    return out


async def main(args: argparse.Namespace) -> dict[str, Any]:
    rounds = args.inprocess_rounds
    # On a thread of its own: bench_plan's steps run their own event loop.
    before = await asyncio.to_thread(inprocess, rounds) if rounds else {}
    # Open-loop rates: --rate as given, --rate-of-inprocess as shares of the rate just measured.
    rates = [(None, r) for r in args.rate]
    if args.rate_of_inprocess and not before:
        raise SystemExit("--rate-of-inprocess needs the in-process rate (--inprocess-rounds > 0)")
    rates += [(f, f * before["rps"]) for f in args.rate_of_inprocess]
    served = await serve_and_load(args, rates)
    for phase in served["GeneratePlan open loop"]:  # the rate the shares were taken of
        phase["inprocess_rps_before"] = before.get("rps")
    if rounds:
        after = await asyncio.to_thread(inprocess, rounds)
        served["InProcess"] = {"before": before, "after": after}
        served["GeneratePlan vs in-process"] = compare(
            served["GeneratePlan"], before, served["InProcess"]["after"]
        )
    return served


async def _stubs(stack: contextlib.AsyncExitStack, target: str, clients: int) -> list[Any]:
    """One channel and stub per client, each its own connection, closed with ``stack``."""
    options = [
        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        # Without it, channels to one target share one connection (gRPC's global subchannel
        # pool): every client would be one connection, served by one worker.
        ("grpc.use_local_subchannel_pool", 1),
    ]
    channels = [grpc.aio.insecure_channel(target, options=options) for _ in range(clients)]
    for ch in channels:
        stack.push_async_callback(ch.close)
    await asyncio.gather(*(ch.channel_ready() for ch in channels))
    return [pb_grpc.CarePlanServiceStub(ch) for ch in channels]


async def serve_and_load(
    args: argparse.Namespace, rates: Sequence[tuple[float | None, float]] = ()
) -> dict[str, Any]:
    bundles = [p.read_bytes() for p in REALISTIC_BUNDLES]
    env = {"CANOE_WORKERS": str(args.workers)}
    if args.max_concurrent_plans is not None:  # else the server's default
        # 0: no bound any load here reaches (the clients' requests all run at once).
        env["CANOE_MAX_CONCURRENT_PLANS"] = str(args.max_concurrent_plans or _UNBOUNDED)
    async with contextlib.AsyncExitStack() as stack:
        if args.store == "postgresql":
            env["CANOE_STORE_DSN"] = stack.enter_context(postgres_schema(args.postgres_dsn))
        pids: list[int] = []
        target = args.target or await stack.enter_async_context(spawned_server(env, pids))
        stubs = await _stubs(stack, target, args.clients)

        # Warm-up, not measured: imports, caches, first SQLite pages. Every connection once,
        # so that every worker is warm too; one after another, so that no bound refuses one.
        for c, stub in enumerate(stubs):
            await stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundles[c % 3]), timeout=120)

        plans: dict[int, list[pb.GeneratePlanResponse]] = {c: [] for c in range(args.clients)}

        async def generate(c: int, k: int) -> None:
            b = bundles[(c + k * args.clients) % len(bundles)]
            r = await stubs[c].GeneratePlan(pb.GeneratePlanRequest(bundle_json=b), timeout=120)
            plans[c].append(r)

        cpu0 = cpu_s(pids[0]) if pids else 0.0
        retry = dataclasses.replace(_RETRY, max_backoff_s=args.max_backoff_s)
        gen = await run_phase(args.clients, args.requests, args.seconds, generate, retry)
        if pids and gen["ok"]:
            gen["server_cpu_ms_per_plan"] = round((cpu_s(pids[0]) - cpu0) / gen["ok"] * 1000, 1)
        # What the server says its store write took (timings_ms.store), over the answered plans.
        stored = [r.summary.timings_ms["store"] for rs in plans.values() for r in rs]
        if stored:
            gen["store_p50_ms"] = _pct(sorted(x / 1000.0 for x in stored), 50)
            gen["store_p99_ms"] = _pct(sorted(x / 1000.0 for x in stored), 99)

        # Open loop, after the closed loop on the same server: Poisson arrivals at each rate.
        opened: list[dict[str, Any]] = []
        for share, rate in rates:
            phase = await open_phase(
                rate, args.requests, args.seconds, generate, args.clients, retry, args.give_up_s
            )
            opened.append({"share_of_inprocess": share, **phase})

        # Contest: each client works through its own plans; one contest per version.
        state: dict[int, list[tuple[str, int, str, str]]] = {}
        for c, rs in plans.items() if args.contest_requests else ():
            state[c] = []
            if not rs:  # every request of this client was refused: it needs one plan to contest
                tally = _Tally()
                while not plans[c]:
                    until = time.perf_counter() + 60
                    await _attempts(functools.partial(generate, c, 0), _RETRY, until, tally)
            for r in rs[: args.plans_per_client]:
                got = await stubs[c].GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id))
                doc = json.loads(got.deliberation_json)
                state[c].append((r.plan_id, 1, first_argument(doc), doc["patient_ref"]))

        async def contest(c: int, k: int) -> None:
            mine = state[c]
            i = k % len(mine)
            plan_id, version, arg, patient = mine[i]
            task = reject_task(plan_id, version, arg, tid=f"load-{c}-{k}", patient=patient)
            if version % 2 == 0:  # reinstate what the previous contest rejected
                task["code"]["coding"][0]["code"] = "accept"
            out = await stubs[c].Contest(
                pb.ContestRequest(
                    plan_id=plan_id, version=version, tasks_json=json.dumps(task).encode()
                ),
                timeout=60,
            )
            mine[i] = (plan_id, out.version, arg, patient)

        con = await run_phase(args.clients, args.contest_requests, args.seconds, contest, retry)
    return {
        "clients": args.clients,
        "workers": args.workers,
        "max_concurrent_plans": args.max_concurrent_plans,
        "max_backoff_s": args.max_backoff_s,
        "store": args.store,
        "cpus": os.cpu_count(),
        "GeneratePlan": gen,
        "GeneratePlan open loop": opened,
        "Contest": con,
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--requests", type=int, default=320, help="GeneratePlan requests (max)")
    p.add_argument("--contest-requests", type=int, default=640, help="Contest requests (max)")
    p.add_argument("--seconds", type=float, default=60.0, help="time limit per phase")
    p.add_argument("--plans-per-client", type=int, default=2)
    p.add_argument("--target", help="host:port of a running server (default: spawn one)")
    p.add_argument("--workers", type=int, default=1, help="canoe serve --workers")
    p.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    p.add_argument(
        "--max-concurrent-plans",
        type=int,
        default=None,
        help="the server's bound per worker (CANOE_MAX_CONCURRENT_PLANS); 0: unbounded; "
        "default: unbounded, or the server's default when an open-loop rate is given",
    )
    p.add_argument(
        "--rate",
        type=float,
        action="append",
        default=[],
        help="an open-loop GeneratePlan phase with Poisson arrivals at this many a second "
        "(repeatable; after the closed-loop phase, on the same server)",
    )
    p.add_argument(
        "--rate-of-inprocess",
        type=float,
        action="append",
        default=[],
        help="the same, at this share of the in-process rate measured first (0.7, 1.5)",
    )
    p.add_argument(
        "--give-up-s",
        type=float,
        default=10.0,
        help="open loop: how long after its arrival a request refused as busy is retried",
    )
    p.add_argument("--postgres-dsn", default="postgresql://postgres@127.0.0.1:5432/test")
    p.add_argument(
        "--max-backoff-s",
        type=float,
        default=_RETRY.max_backoff_s,
        help="the clients' longest wait before retrying a refusal as busy: longer waits cost "
        "the server fewer refusals but can leave its places empty for a while",
    )
    p.add_argument(
        "--inprocess-rounds",
        type=int,
        default=5,
        help="times over the fixtures for the in-process rate, before and after (0: skip)",
    )
    p.add_argument("--json", action="store_true")
    return p


def report(result: dict[str, Any], contest: bool) -> list[str]:
    """The human-readable lines of a run; the last one is the row of the comparison table."""
    bound = {None: "default", 0: "none"}.get(result["max_concurrent_plans"])
    bound = bound or result["max_concurrent_plans"]
    lines = [
        f"{result['clients']} clients, {result['workers']} worker(s), {result['store']}, "
        f"bound {bound} per worker (CANOE_MAX_CONCURRENT_PLANS), clients back off up to "
        f"{result['max_backoff_s']} s, {result['cpus']} CPUs"
    ]
    for phase in ("GeneratePlan", "Contest") if contest else ("GeneratePlan",):
        r = result[phase]
        lines.append(
            f"{phase:13s} {r.get('rps', 0):7.2f} req/s  served p50 {r.get('p50_ms', 0):7.1f} ms"
            f"  p99 {r.get('p99_ms', 0):7.1f} ms  shed {r['shed_pct']:5.1f} % ({r['shed']})  "
            f"client-seen p50 {r.get('waited_p50_ms', 0):7.1f} ms  "
            f"p99 {r.get('waited_p99_ms', 0):7.1f} ms  ok {r['ok']}  errors {r['errors']}  "
            f"abandoned {r['abandoned']}  ({r['seconds']} s)"
        )
    if "store_p50_ms" in result["GeneratePlan"]:
        g = result["GeneratePlan"]
        lines.append(
            f"{'store write':13s} p50 {g['store_p50_ms']} ms  p99 {g['store_p99_ms']} ms "
            "(timings_ms.store of the answered plans)"
        )
    for r in result["GeneratePlan open loop"]:
        lines.append(
            f"{'open loop':13s} offered {r['offered_rps']:6.2f}/s ({r['arrivals']} arrivals)  "
            f"answered {r.get('rps', 0):6.2f}/s  served p50 {r.get('p50_ms', 0):7.1f} ms  "
            f"p99 {r.get('p99_ms', 0):7.1f} ms  client-seen p50 {r.get('waited_p50_ms', 0):7.1f}"
            f" ms  p99 {r.get('waited_p99_ms', 0):7.1f} ms  shed {r['shed_pct']:5.1f} % "
            f"({r['shed']}, answered p50 {r.get('shed_p50_ms', '-')} p99 "
            f"{r.get('shed_p99_ms', '-')} max {r.get('shed_max_ms', '-')} ms)  errors "
            f"{r['errors']}  abandoned {r['abandoned']}  client lag max "
            f"{r['client_lag_max_ms']} ms"
        )
    if "InProcess" not in result:
        return lines
    b, a = result["InProcess"]["before"], result["InProcess"]["after"]
    v = result["GeneratePlan vs in-process"]
    g = result["GeneratePlan"]
    lines += [
        f"{'in-process':13s} {v['inprocess_rps']:7.2f} plans/s (before {b['rps']}, after "
        f"{a['rps']}; {v['inprocess_mean_ms']} ms a plan, one thread)",
        f"{'served/in-proc':13s} {v['served_over_inprocess']:7.3f}       served p50 "
        f"{v['p50_over_inprocess_time']:5.2f}x  p99 {v['p99_over_inprocess_time']:5.2f}x "
        "the in-process time a plan",
        f"{'CPU a plan':13s} in-process {v['inprocess_cpu_ms']} ms, server "
        f"{g.get('server_cpu_ms_per_plan', '-')} ms (all workers, store server not counted): "
        f"efficiency {v['cpu_efficiency']}",
        "row | workers | store | bound | in-process/s | plans/s | served/in-proc | p50 ms | "
        "p99 ms | p99/in-proc time | shed % | in-proc CPU ms | server CPU ms | efficiency",
        f"row | {result['workers']} | {result['store']} | {bound} | {v['inprocess_rps']} | "
        f"{g.get('rps', 0)} | {v['served_over_inprocess']} | {g.get('p50_ms', 0)} | "
        f"{g.get('p99_ms', 0)} | {v['p99_over_inprocess_time']} | {g['shed_pct']} | "
        f"{v['inprocess_cpu_ms']} | {g.get('server_cpu_ms_per_plan', '-')} | "
        f"{v['cpu_efficiency']}",
    ]
    if result["GeneratePlan open loop"]:
        lines.append(
            "open | workers | store | bound | in-process/s before | in-proc ms | offered | "
            "offered/s | "
            "answered/s | served p50 ms | served p99 ms | served p99/in-proc | client p50 ms | "
            "client p99 ms | client p99/in-proc | shed % | shed answer p99 ms | shed max ms | "
            "errors | abandoned"
        )
    for r in result["GeneratePlan open loop"]:
        share = r["share_of_inprocess"]
        mean = v["inprocess_mean_ms"]
        lines.append(
            f"open | {result['workers']} | {result['store']} | {bound} | "
            f"{r.get('inprocess_rps_before', '-')} | "
            f"{mean} | {f'{share:.0%}' if share else '-'} | {r['offered_rps']} | "
            f"{r.get('rps', 0)} | {r.get('p50_ms', '-')} | {r.get('p99_ms', '-')} | "
            f"{round(r.get('p99_ms', 0) / mean, 2)} | {r.get('waited_p50_ms', '-')} | "
            f"{r.get('waited_p99_ms', '-')} | {round(r.get('waited_p99_ms', 0) / mean, 2)} | "
            f"{r['shed_pct']} | {r.get('shed_p99_ms', '-')} | {r.get('shed_max_ms', '-')} | "
            f"{sum(r['errors'].values())} | {r['abandoned']}"
        )
    return lines


if __name__ == "__main__":
    ns = _parser().parse_args()
    if ns.max_concurrent_plans is None and not (ns.rate or ns.rate_of_inprocess):
        ns.max_concurrent_plans = 0  # closed loop alone: unbounded, as it always ran
    out = asyncio.run(main(ns))
    print(json.dumps(out, indent=2) if ns.json else "\n".join(report(out, ns.contest_requests > 0)))
