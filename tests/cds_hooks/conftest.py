"""A real CDS Hooks server (uvicorn on a loopback port, the real CarePlanService with the
embedded backend and a SQLite store) and a fake EHR FHIR server beside it, both in one
background thread with its own event loop; test keys made with ``cryptography`` at run time."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import jwt
import pytest
import uvicorn
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from tests.cds_hooks.fake_fhir import FakeFhir
from tests.conftest import CDS_FIXTURES, FHIR_FIXTURES, load_json

T = TypeVar("T")

ISS = "https://ehr.example.org/cds-client"
FHIR_TOKEN = "fixture-fhir-access-token"
SPEC_PATIENT = CDS_FIXTURES / "spec" / "request_patient-view.json"


@dataclass
class Keys:
    rsa: rsa.RSAPrivateKey
    ec: ec.EllipticCurvePrivateKey
    other: rsa.RSAPrivateKey  # not trusted: same kid as ``rsa`` to test the signature check

    def jwks(self) -> dict[str, Any]:
        rsa_jwk = json.loads(RSAAlgorithm.to_jwk(self.rsa.public_key()))
        ec_jwk = json.loads(ECAlgorithm.to_jwk(self.ec.public_key()))
        rsa_jwk.update(kid="rsa-1", use="sig", alg="RS384")
        ec_jwk.update(kid="ec-1", use="sig", alg="ES384")
        return {"keys": [rsa_jwk, ec_jwk]}


@pytest.fixture(scope="session")
def keys() -> Keys:
    return Keys(
        rsa=rsa.generate_private_key(public_exponent=65537, key_size=2048),
        ec=ec.generate_private_key(ec.SECP384R1()),
        other=rsa.generate_private_key(public_exponent=65537, key_size=2048),
    )


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    return sock


class Servers:
    """The CDS service and the fake FHIR server, running in a background thread."""

    def __init__(
        self,
        tmp: Path,
        keys: Keys,
        *,
        other_clients: Callable[[Servers], dict[str, Any]] | None = None,
        settings: dict[str, Any] | None = None,
        access_log: bool = False,
    ) -> None:
        self.keys = keys
        self._settings = settings or {}
        self._access_log = access_log
        self._cds_sock = _free_socket()
        self._fhir_sock = _free_socket()
        self.base = f"http://127.0.0.1:{self._cds_sock.getsockname()[1]}"
        self.fhir_base = f"http://127.0.0.1:{self._fhir_sock.getsockname()[1]}/fhir"
        # The same data as an open FHIR server (no token asked), allowed for this client.
        self.open_fhir_base = f"http://127.0.0.1:{self._fhir_sock.getsockname()[1]}/open/fhir"
        clients = tmp / "cds-clients.json"
        # Deny by default: the client names its FHIR server, and since the fake one listens
        # on loopback over plain http, allows exactly that.
        self.egress = {
            "fhir_servers": [self.fhir_base, self.open_fhir_base],
            "fhir_http_hosts": ["127.0.0.1"],
            "fhir_private_networks": ["127.0.0.1/32"],
        }
        more = other_clients(self) if other_clients is not None else {}
        clients.write_text(
            json.dumps(
                {
                    ISS: {"jwks": keys.jwks(), "tenant": "ehr-test", **self.egress},
                    **{iss: {"jwks": keys.jwks(), **spec} for iss, spec in more.items()},
                }
            )
        )
        self.clients_file = clients
        self.store = tmp / "plans.sqlite3"
        self.fhir = FakeFhir(token=FHIR_TOKEN, base=self.fhir_base).load(
            [
                FHIR_FIXTURES / "trey_berge_f46d1649.json",
                FHIR_FIXTURES / "adan_portillo_43b6ae50.json",
            ]
        )
        # The specification's example patient, so its own examples can be answered over REST.
        self.fhir.add(load_json(SPEC_PATIENT)["prefetch"]["patientToGreet"])
        self.loop = asyncio.new_event_loop()
        self.service: Any = None
        self._servers: list[uvicorn.Server] = []
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="cds-servers", daemon=True)

    def start(self) -> Servers:
        self._thread.start()
        if not self._ready.wait(120):
            raise RuntimeError("servers did not start")
        if self._error is not None:
            raise RuntimeError("servers failed to start") from self._error
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main())
        except BaseException as exc:  # surfaced to the test thread
            self._error = exc
            self._ready.set()
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()
            for sock in (self._cds_sock, self._fhir_sock):
                sock.close()

    async def _main(self) -> None:
        from service.app import CarePlanService
        from service.cds_hooks import create_app
        from service.settings import load_settings

        settings = load_settings(
            {},
            store_dsn=f"sqlite:///{self.store}",
            cds_base_url=self.base,
            cds_jwks_file=str(self.clients_file),
            max_concurrent_plans=4,
            **self._settings,
        )
        self.service = await CarePlanService.create(settings)
        common = {"log_config": None, "access_log": self._access_log, "lifespan": "on"}
        cds = uvicorn.Server(uvicorn.Config(create_app(self.service, settings), **common))
        fhir = uvicorn.Server(uvicorn.Config(self.fhir.app(), **common))
        self._servers = [cds, fhir]
        tasks = [
            asyncio.create_task(cds.serve(sockets=[self._cds_sock])),
            asyncio.create_task(fhir.serve(sockets=[self._fhir_sock])),
        ]
        while not all(s.started for s in self._servers):
            if any(t.done() for t in tasks):
                break
            await asyncio.sleep(0.02)
        self._ready.set()
        await asyncio.gather(*tasks)
        await self.service.aclose()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        """Run a coroutine on the servers' loop (e.g. read the store) and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        for s in self._servers:
            s.should_exit = True
        self._thread.join(30)

    # -- requests

    def token(
        self,
        aud: str | None = None,
        *,
        key: Any = None,
        kid: str = "rsa-1",
        alg: str = "RS384",
        iss: str = ISS,
        exp_in: float = 120,
        iat_ago: float = 0,
        jti: str | None = None,
        headers: dict[str, Any] | None = None,
    ) -> str:
        now = time.time()
        claims = {
            "iss": iss,
            "sub": "ehr-client-1",
            "aud": aud or f"{self.base}/cds-services",
            "iat": int(now - iat_ago),
            "exp": int(now + exp_in),
            "jti": jti or uuid.uuid4().hex,
        }
        return jwt.encode(
            claims,
            key if key is not None else self.keys.rsa,
            algorithm=alg,
            headers={"kid": kid, "typ": "JWT", **(headers or {})},
        )

    def auth(self, service_id: str | None = None, **kw: Any) -> dict[str, str]:
        aud = f"{self.base}/cds-services" + (f"/{service_id}" if service_id else "")
        return {"Authorization": f"Bearer {self.token(aud, **kw)}"}

    def post(self, service_id: str, body: Any, **kw: Any) -> httpx.Response:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **self.auth(service_id)}
        headers.update(kw.pop("headers", {}))
        return httpx.post(
            f"{self.base}/cds-services/{service_id}", content=content, headers=headers, timeout=120
        )

    def feedback(self, service_id: str, body: Any) -> httpx.Response:
        return httpx.post(
            f"{self.base}/cds-services/{service_id}/feedback",
            json=body,
            headers=self.auth(service_id),
            timeout=60,
        )

    def fhir_auth(self, token: str = FHIR_TOKEN) -> dict[str, Any]:
        return {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": 300,
            "scope": "user/*.read",
            "subject": "canoe-cds",
        }


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory, keys: Keys) -> Iterator[Servers]:
    s = Servers(tmp_path_factory.mktemp("cds"), keys).start()
    try:
        yield s
    finally:
        s.stop()


def cds_fixture(*parts: str) -> dict[str, Any]:
    return load_json(CDS_FIXTURES.joinpath(*parts))
