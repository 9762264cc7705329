"""`canoe serve` as a real process: a crash (SIGKILL) inside a store transaction leaves the old
version or the new one, never a part; SIGTERM lets in-flight plans finish within the grace
period, then the process exits 0."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc

from tests.conftest import REPO_ROOT
from tests.service.conftest import bundle_bytes, first_argument, pb, pb_grpc, reject_task

PAUSED = "paused inside a store transaction"


class ServerProcess:
    """``python -m service.cli serve`` on a free loopback port, its stderr read line by line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.port: int | None = None
        self.http_port: int | None = None
        self._started = asyncio.Event()
        self._paused = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        async for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.lines.append(line)
            if PAUSED in line:
                self._paused.set()
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if event.get("event") == "http.started":
                    self.http_port = int(event["port"])
                if event.get("event") == "server.started":
                    self.port = int(event["port"])
                    self._started.set()

    async def started(self, timeout: float = 60) -> int:
        """The gRPC port once it serves; a process that exits first fails at once, with its
        stderr, rather than after the whole timeout."""
        started = asyncio.ensure_future(self._started.wait())
        exited = asyncio.ensure_future(self.proc.wait())
        try:
            await asyncio.wait({started, exited}, timeout=timeout, return_when="FIRST_COMPLETED")
        finally:
            started.cancel()
            exited.cancel()
        if self.port is None:
            await asyncio.sleep(0.1)  # let the reader take the last lines
            state = "exited" if self.proc.returncode is not None else "did not start in time"
            raise AssertionError(f"canoe serve {state}:\n" + "\n".join(self.lines[-20:]))
        return self.port

    async def paused(self, timeout: float = 60) -> None:
        await asyncio.wait_for(self._paused.wait(), timeout)

    async def wait(self, timeout: float = 60) -> int:
        rc = await asyncio.wait_for(self.proc.wait(), timeout)
        await self._reader
        return rc


@contextlib.asynccontextmanager
async def canoe_serve(db: Path, *, pause_s: float = 0, **env: str) -> AsyncIterator[ServerProcess]:
    """``canoe serve``; with ``pause_s`` every store write sleeps inside its transaction."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    environ.update(
        CANOE_GRPC_HOST="127.0.0.1",
        CANOE_GRPC_PORT="0",
        CANOE_LOG_LEVEL="info",
        PYTHONPATH=str(REPO_ROOT),
        # One process unless asked: these tests are about one; test_workers.py runs several.
        # Every listener on port 0 (metrics: off), so a `canoe serve` on the default ports
        # beside the suite changes nothing.
        **{
            "CANOE_WORKERS": "1",
            "CANOE_HTTP_PORT": "0",
            "CANOE_METRICS_PORT": "0",
            "CANOE_STORE_DSN": f"sqlite:///{db}",
            **env,
        },
    )
    command = (
        ("-m", "tests.service.paused_serve", str(pause_s))
        if pause_s
        else ("-m", "service.cli", "serve")
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *command,
        cwd=REPO_ROOT, env=environ,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    server = ServerProcess(proc)
    try:
        await server.started()
        yield server
    finally:
        if proc.returncode is None:
            proc.kill()
        await server.wait()


@contextlib.asynccontextmanager
async def client(port: int) -> AsyncIterator[Any]:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        await asyncio.wait_for(channel.channel_ready(), 30)
        yield pb_grpc.CarePlanServiceStub(channel)
    finally:
        await channel.close()


async def _serving(port: int) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        for _ in range(300):
            got = await stub.Check(health_pb2.HealthCheckRequest())
            if got.status == health_pb2.HealthCheckResponse.SERVING:
                return
            await asyncio.sleep(0.1)
    raise AssertionError("never SERVING")


def _patient() -> str:
    raw = json.loads(bundle_bytes())
    (p,) = [e["resource"] for e in raw["entry"] if e["resource"]["resourceType"] == "Patient"]
    return f"Patient/{p['id']}"


async def test_a_crash_inside_a_write_leaves_the_old_version_or_the_new(tmp_path: Path) -> None:
    db = tmp_path / "canoe.sqlite3"
    async with canoe_serve(db) as srv, client(await srv.started()) as stub:
        r = await stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
        doc = json.loads(
            (
                await stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id))
            ).deliberation_json
        )
    task = reject_task(r.plan_id, 1, first_argument(doc), tid="crash-task", patient=_patient())
    contest = pb.ContestRequest(plan_id=r.plan_id, version=1, tasks_json=json.dumps(task).encode())

    # Contest, and kill the process while the new version is half written.
    async with canoe_serve(db, pause_s=60) as srv, client(await srv.started()) as stub:
        pending = asyncio.ensure_future(stub.Contest(contest))
        await srv.paused()
        srv.proc.send_signal(signal.SIGKILL)
        assert await srv.wait() == -signal.SIGKILL
        try:
            await pending
            raise AssertionError("the killed server answered")
        except grpc.aio.AioRpcError as exc:
            assert exc.code() == grpc.StatusCode.UNAVAILABLE

    # Same for a new plan killed mid-write.
    async with canoe_serve(db, pause_s=60) as srv, client(await srv.started()) as stub:
        pending = asyncio.ensure_future(
            stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
        )
        await srv.paused()
        srv.proc.send_signal(signal.SIGKILL)
        await srv.wait()
        with contextlib.suppress(grpc.aio.AioRpcError):
            await pending

    # After a restart: the old version only, and the Task can be applied as if never seen.
    async with canoe_serve(db) as srv, client(await srv.started()) as stub:
        listed = await stub.ListPlanVersions(pb.ListPlanVersionsRequest(patient_ref=_patient()))
        assert [(v.plan_id, v.version) for v in listed.versions] == [(r.plan_id, 1)]
        latest = await stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id))
        assert latest.version == 1 and json.loads(latest.deliberation_json) == doc
        c = await stub.Contest(contest)
        assert (c.version, c.replayed) == (2, False)


async def test_sigterm_lets_the_plan_in_flight_finish(tmp_path: Path) -> None:
    db = tmp_path / "canoe.sqlite3"
    async with canoe_serve(db, pause_s=1.5, CANOE_GRACE_PERIOD_S="20") as srv:
        port = await srv.started()
        await _serving(port)
        async with client(port) as stub:
            pending = asyncio.ensure_future(
                stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
            )
            await srv.paused()  # mid-plan, inside the store write
            srv.proc.send_signal(signal.SIGTERM)
            r = await pending  # still answered, and stored
            assert r.version == 1
        assert await srv.wait() == 0
        assert any('"server.stopped"' in line for line in srv.lines)

    async with canoe_serve(db) as srv, client(await srv.started()) as stub:
        got = await stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id))
        assert got.version == 1


async def test_past_the_grace_period_work_is_cut_and_nothing_half_stored(tmp_path: Path) -> None:
    db = tmp_path / "canoe.sqlite3"
    async with canoe_serve(db, pause_s=30, CANOE_GRACE_PERIOD_S="0.5") as srv:
        async with client(await srv.started()) as stub:
            pending = asyncio.ensure_future(
                stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
            )
            await srv.paused()
            srv.proc.send_signal(signal.SIGTERM)
            try:
                await pending
                raise AssertionError("a plan past the grace period was answered")
            except grpc.aio.AioRpcError as exc:
                assert exc.code() in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE)
        assert await srv.wait(30) == 0
    async with canoe_serve(db) as srv, client(await srv.started()) as stub:
        listed = await stub.ListPlanVersions(pb.ListPlanVersionsRequest(patient_ref=_patient()))
        assert list(listed.versions) == []


async def test_serve_runs_the_cds_hooks_side_too(tmp_path: Path) -> None:
    import httpx

    async with canoe_serve(tmp_path / "canoe.sqlite3") as srv:
        await srv.started()
        for _ in range(100):
            if srv.http_port:
                break
            await asyncio.sleep(0.05)
        assert srv.http_port
        async with httpx.AsyncClient() as http:
            got = await http.get(f"http://127.0.0.1:{srv.http_port}/cds-services")
        # Discovery wants the CDS client's JWT: an answer from the CDS app, not a dead port.
        assert got.status_code == 401
        assert got.json()["resourceType"] == "OperationOutcome"
        srv.proc.send_signal(signal.SIGTERM)
        assert await srv.wait() == 0


@contextlib.contextmanager
def _holding(ports: tuple[int, ...]) -> Any:
    """Listen on ``ports`` of loopback, as a `canoe serve` with the defaults would; a port that
    something else already holds is held all the same."""
    import socket

    socks = []
    try:
        for port in ports:
            sock = socket.socket()
            try:
                sock.bind(("127.0.0.1", port))
                sock.listen()
            except OSError:
                sock.close()
                continue
            socks.append(sock)
        yield
    finally:
        for sock in socks:
            sock.close()


async def test_serve_in_tests_starts_while_the_default_ports_are_taken(tmp_path: Path) -> None:
    from service.settings import Settings

    defaults = Settings().server
    held = (defaults.grpc_port, defaults.http_port, defaults.metrics_port)
    assert held == (50051, 8080, 9464)
    with _holding(held):
        async with canoe_serve(tmp_path / "canoe.sqlite3") as srv:
            port = await srv.started(timeout=30)
            assert port not in held
            async with client(port) as stub:
                listed = await stub.ListPlanVersions(
                    pb.ListPlanVersionsRequest(patient_ref=_patient())
                )
                assert list(listed.versions) == []
