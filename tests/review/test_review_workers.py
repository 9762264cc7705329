"""The review app under `canoe serve --workers 2` as real processes, with no signing key
configured: every SMART launch and page load is honoured whichever worker the kernel hands the
connection to (the supervisor makes one key for all), a replayed state or authorization code is
refused on every worker (the store, SQLite or PostgreSQL, remembers them), and a half-open
HTTP connection is cut off after the header timeout."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.review.smart_server import SmartServer, free_port
from tests.service.conftest import (
    bundle_bytes,
    pb,
    postgres_dsn,  # noqa: F401 (a fixture)
    postgres_server,  # noqa: F401 (a fixture)
)
from tests.service.test_lifecycle import ServerProcess, _patient, _serving, canoe_serve, client
from tests.service.test_workers import established_owners, workers_of

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux only")

USER = "Practitioner/dr-ana"
LAUNCHES = 12
HEADER_TIMEOUT_S = 1.0


@pytest.fixture(params=["sqlite", "postgres"])
def dsn(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/canoe.sqlite3"
    pg: str = request.getfixturevalue("postgres_dsn")
    return pg


class Cluster:
    def __init__(self, srv: ServerProcess, smart: SmartServer, base: str, plan_id: str) -> None:
        self.srv, self.smart, self.base, self.plan_id = srv, smart, base, plan_id

    def fresh(self, cookies: httpx.Cookies | None = None) -> httpx.AsyncClient:
        """A client that opens a new connection for every request, so the kernel picks a worker
        each time (SO_REUSEPORT)."""
        return httpx.AsyncClient(
            base_url=self.base,
            cookies=cookies,
            follow_redirects=False,
            timeout=30,
            limits=httpx.Limits(max_keepalive_connections=0),
        )

    async def authorize(self, http: httpx.AsyncClient) -> str:
        """The EHR launch up to the EHR's redirect back: the callback path and query."""
        launch_id = self.smart.launch(user=USER, patient=_patient(), plan_id=self.plan_id)
        start = await http.get("/review", params={"iss": self.smart.iss, "launch": launch_id})
        assert start.status_code == 303, start.text
        async with httpx.AsyncClient(follow_redirects=False) as ehr:
            auth = await ehr.get(start.headers["location"])
        assert auth.status_code == 302, auth.text
        back = urlsplit(auth.headers["location"])
        return f"{back.path}?{back.query}"


@asynccontextmanager
async def cluster(tmp_path: Path, dsn: str) -> AsyncIterator[Cluster]:
    smart = SmartServer()
    smart_task = await smart.serve_here()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        "CANOE_WORKERS": "2",
        "CANOE_STORE_DSN": dsn,
        "CANOE_METRICS_PORT": "0",
        "CANOE_HTTP_PORT": str(port),
        "CANOE_CDS_BASE_URL": base,
        "CANOE_REVIEW_SMART_ISSUERS": f"default={smart.iss}",
        "CANOE_HTTP_HEADER_TIMEOUT_S": str(HEADER_TIMEOUT_S),
    }  # and no CANOE_REVIEW_SIGNING_KEY: canoe_serve passes no other CANOE_* variable
    try:
        async with canoe_serve(tmp_path / "canoe.sqlite3", **env) as srv:
            grpc_port = await srv.started()
            await _serving(grpc_port)
            for _ in range(600):
                if sum('"http.started"' in line for line in srv.lines) >= 2:
                    break
                await asyncio.sleep(0.1)
            async with client(grpc_port) as stub:
                made = await stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
            yield Cluster(srv, smart, base, made.plan_id)
    finally:
        await smart.stop_here(smart_task)


async def test_launches_pages_and_replays_across_two_workers_without_a_configured_key(
    tmp_path: Path, dsn: str
) -> None:
    async with cluster(tmp_path, dsn) as c:
        assert not any("signing" in line.lower() for line in c.srv.lines)  # the key is not logged
        sessions: list[httpx.Cookies] = []
        callbacks: list[tuple[str, httpx.Cookies]] = []
        for _ in range(LAUNCHES):
            async with c.fresh() as http:
                back = await c.authorize(http)
                launch_cookies = httpx.Cookies(http.cookies)
                done = await http.get(back)  # a new connection: maybe the other worker
                assert done.status_code == 303, done.text
                assert done.headers["location"].endswith(f"/review/plans/{c.plan_id}")
                sessions.append(httpx.Cookies(http.cookies))
                callbacks.append((back, launch_cookies))
        assert c.smart.token_requests == LAUNCHES

        # Two page loads per session, each on a new connection: every one is accepted.
        for cookies in sessions:
            async with c.fresh(cookies) as http:
                for path in (f"/review/plans/{c.plan_id}", f"/review/plans/{c.plan_id}/history"):
                    page = await http.get(path)
                    assert page.status_code == 200, page.text

        # The kernel really spread these clients over both workers: hold connections open at
        # once and see which process owns each (batches of 16, at most eight: on a loaded
        # machine one batch can all land on one worker).
        pids = workers_of(c.srv)
        assert len(pids) == 2
        port = urlsplit(c.base).port
        assert port is not None
        held: list[httpx.AsyncClient] = []
        try:
            for _ in range(8):
                batch = [
                    httpx.AsyncClient(base_url=c.base, cookies=sessions[i % LAUNCHES], timeout=30)
                    for i in range(16)
                ]
                held += batch
                pages = await asyncio.gather(*(h.get(f"/review/plans/{c.plan_id}") for h in batch))
                assert all(p.status_code == 200 for p in pages)
                if set(established_owners(port, pids)) == set(pids):
                    break
            assert set(established_owners(port, pids)) == set(pids)
        finally:
            await asyncio.gather(*(h.aclose() for h in held))

        # A replayed callback (same state, same code) is refused, whichever worker takes it.
        before = c.smart.token_requests
        for back, launch_cookies in callbacks:
            async with c.fresh(launch_cookies) as http:
                again = await http.get(back)
                assert again.status_code == 401, again.text
                assert "launch was already completed" in again.text
        # A used code under a new launch's state: refused before it reaches an EHR that would
        # (wrongly) honour it twice.
        c.smart.reuse_codes = True
        for back, _ in callbacks[:4]:
            async with c.fresh() as http:
                fresh_back = await c.authorize(http)
                fresh_state = _query(fresh_back)["state"]
                stolen = _query(back)["code"]
                replay = await http.get(
                    "/review/callback", params={"code": stolen, "state": fresh_state}
                )
                assert replay.status_code == 401, replay.text
                assert "authorization code was already used" in replay.text
        assert c.smart.token_requests == before  # no replayed code was ever sent to the EHR

        # A client that connects and sends half a request line is cut off after the timeout.
        port = urlsplit(c.base).port
        assert port is not None
        closed_after = await asyncio.to_thread(_half_open, port)
        assert HEADER_TIMEOUT_S * 0.5 <= closed_after <= HEADER_TIMEOUT_S + 4


def _query(path_and_query: str) -> dict[str, str]:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(urlsplit(path_and_query).query))


def _half_open(port: int) -> float:
    """Seconds until the server closes a connection whose request headers never end."""
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        t0 = time.monotonic()
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n")
        got: Any = sock.recv(1024)
        assert got == b"", got  # closed without an answer
        return time.monotonic() - t0
