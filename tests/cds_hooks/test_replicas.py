"""Two replicas behind one public URL, sharing one plan store (a SQLite file, and PostgreSQL):
a card issued by one takes feedback at the other, and a JWT used at one is refused at the other.

Each replica is a real ``CarePlanService`` (embedded backend) with its own CDS Hooks app under
uvicorn on its own loopback port, both on this test's event loop; httpx is the EHR.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import uvicorn

from service.app import CarePlanService
from service.cds_hooks import create_app
from service.settings import load_settings
from tests.cds_hooks.conftest import ISS, Keys, cds_fixture
from tests.service.conftest import postgres_dsn, postgres_server  # noqa: F401 (fixtures)

PUBLIC = "https://cds.example.org/canoe"  # the load balancer's URL: JWT aud for both replicas
OTHER_ISS = "https://other-ehr.example.org/cds-client"
OSEL = "careplan-order-select"


@dataclass
class Replica:
    service: CarePlanService
    server: uvicorn.Server
    task: asyncio.Task[None]
    url: str  # where this replica listens (the balancer would forward here)


@dataclass
class Pair:
    a: Replica
    b: Replica
    keys: Keys
    http: httpx.AsyncClient

    def token(self, service_id: str | None = None, *, iss: str = ISS, jti: str = "") -> str:
        now = time.time()
        aud = f"{PUBLIC}/cds-services" + (f"/{service_id}" if service_id else "")
        claims = {
            "iss": iss,
            "sub": "ehr-client-1",
            "aud": aud,
            "iat": int(now),
            "exp": int(now + 120),
            "jti": jti or uuid.uuid4().hex,
        }
        return jwt.encode(claims, self.keys.rsa, algorithm="RS384", headers={"kid": "rsa-1"})

    async def post(
        self, at: Replica, path: str, body: Any, *, token: str | None = None, iss: str = ISS
    ) -> httpx.Response:
        service_id = path.split("/")[0]
        bearer = token or self.token(service_id, iss=iss)
        return await self.http.post(
            f"{at.url}/canoe/cds-services/{path}",
            json=body,
            headers={"Authorization": f"Bearer {bearer}"},
            timeout=120,
        )

    async def discovery(self, at: Replica, token: str) -> httpx.Response:
        return await self.http.get(
            f"{at.url}/canoe/cds-services", headers={"Authorization": f"Bearer {token}"}
        )


def _socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    return sock


async def _replica(dsn: str, clients: Path) -> Replica:
    settings = load_settings(
        {},
        store_dsn=dsn,
        cds_base_url=PUBLIC,
        cds_jwks_file=str(clients),
        max_concurrent_plans=4,
    )
    service = await CarePlanService.create(settings)
    sock = _socket()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(service, settings), log_config=None, access_log=False, lifespan="on"
        )
    )
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            await task  # surface why it did not start
        await asyncio.sleep(0.02)
    return Replica(service, server, task, f"http://127.0.0.1:{sock.getsockname()[1]}")


async def _stop(r: Replica) -> None:
    r.server.should_exit = True
    await r.task
    await r.service.aclose()


@pytest.fixture(params=["sqlite", "postgres"])
async def pair(request: pytest.FixtureRequest, tmp_path: Path, keys: Keys) -> AsyncIterator[Pair]:
    if request.param == "sqlite":
        dsn = f"sqlite:///{tmp_path}/shared.sqlite3"
    else:
        dsn = request.getfixturevalue("postgres_dsn")
    clients = tmp_path / "cds-clients.json"
    clients.write_text(
        json.dumps(
            {
                ISS: {"jwks": keys.jwks(), "tenant": "ehr-test"},
                OTHER_ISS: {"jwks": keys.jwks(), "tenant": "ehr-other"},
            }
        )
    )
    # Started together, as replicas of one deployment are: both migrate the same store.
    a, b = await asyncio.gather(_replica(dsn, clients), _replica(dsn, clients))
    try:
        async with httpx.AsyncClient() as http:
            yield Pair(a, b, keys, http)
    finally:
        await asyncio.gather(_stop(a), _stop(b))


async def test_a_card_issued_by_one_replica_takes_feedback_at_the_other(pair: Pair) -> None:
    r = await pair.post(
        pair.a, OSEL, cds_fixture("requests", "order-select_trey_berge_naproxen.json")
    )
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    plan_id = json.loads(card["links"][0]["appContext"])["planId"]
    fb = cds_fixture("spec", "feedback_overridden_with_reason.json")
    fb["feedback"][0]["card"] = card["uuid"]
    fb["feedback"][0]["overrideReason"]["reason"] = card["overrideReasons"][0]

    # Another tenant cannot reach the card through either replica: as unknown as a made-up id.
    for at in (pair.a, pair.b):
        foreign = await pair.post(at, f"{OSEL}/feedback", fb, iss=OTHER_ISS)
        assert foreign.status_code == 404, foreign.text
        assert "not one this service returned" in foreign.text
    # Nor through another service of the same tenant.
    wrong_service = await pair.post(pair.b, "careplan-order-sign/feedback", fb)
    assert wrong_service.status_code == 404

    done = await pair.post(pair.b, f"{OSEL}/feedback", fb)
    assert done.status_code == 200, done.text
    assert done.json() == {"recorded": 1, "contested": 1}
    # Replica A, which issued the card, sees the contestation B applied (same store).
    d = await pair.a.service.deliberation(tenant="ehr-test", plan_id=plan_id)
    assert d["version"] == 2
    (c,) = d["contestations"]
    assert (c["action"], c["actor"]) == ("decide", "Practitioner/example")
    # The same feedback once more, now at A: applied once, the plan stays at version 2.
    again = await pair.post(pair.a, f"{OSEL}/feedback", fb)
    assert again.status_code == 200, again.text
    d = await pair.b.service.deliberation(tenant="ehr-test", plan_id=plan_id)
    assert d["version"] == 2
    store: Any = pair.a.service.store
    recorded = await store.list_feedback(tenant="ehr-test", plan_id=plan_id)
    assert [f.card_id for f in recorded] == [card["uuid"], card["uuid"]]


async def test_a_jwt_used_at_one_replica_is_refused_at_the_other(pair: Pair) -> None:
    jti = uuid.uuid4().hex
    token = pair.token(jti=jti)
    first = await pair.discovery(pair.a, token)
    assert first.status_code == 200, first.text
    replayed = await pair.discovery(pair.b, token)
    assert replayed.status_code == 401
    assert replayed.headers["www-authenticate"].startswith("Bearer")
    assert "replay" in replayed.json()["issue"][0]["diagnostics"]
    # The same jti from another issuer is another token: its id space is its own.
    other = await pair.discovery(pair.b, pair.token(iss=OTHER_ISS, jti=jti))
    assert other.status_code == 200, other.text
    # A fresh token sent to both replicas at once: exactly one of them accepts it.
    fresh = pair.token()
    raced = await asyncio.gather(*(pair.discovery(r, fresh) for r in (pair.a, pair.b) * 3))
    assert sorted(x.status_code for x in raced) == [200, 401, 401, 401, 401, 401]
