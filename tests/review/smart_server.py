"""A small SMART App Launch 2.x authorization server for the review app's tests: a real
Starlette app under uvicorn on loopback, not a mock object.

It plays the EHR: ``launch(...)`` registers a launch id with its context (user, patient,
appContext); ``/authorize`` checks the client, the redirect URI, the launch, ``aud`` and the
PKCE S256 challenge, and sends the browser back with a code; ``/token`` checks the code, the
redirect URI and the PKCE verifier, and answers with the launch context and an RS256-signed
``id_token`` naming ``fhirUser``; ``/jwks.json`` publishes the key. It can run in a thread of
its own (for Selenium tests, whose driver blocks) or on the test's event loop.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

CLIENT_ID = "canoe-review"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SmartServer:
    port: int = field(default_factory=free_port)
    client_id: str = CLIENT_ID
    launches: dict[str, dict[str, Any]] = field(default_factory=dict)
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    token_requests: int = 0
    # An EHR that wrongly accepts a code more than once (the review app must refuse the replay).
    reuse_codes: bool = False

    def __post_init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(4)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def iss(self) -> str:
        return f"http://127.0.0.1:{self.port}/fhir"

    def launch(
        self, *, user: str, patient: str, plan_id: str | None, version: int | None = None
    ) -> str:
        """Register an EHR launch; its opaque id is what the EHR passes as ``launch``. With no
        ``plan_id`` the launch carries patient context only, as a plain EHR launch does."""
        launch_id = secrets.token_urlsafe(16)
        self.launches[launch_id] = {"user": user, "patient": patient}
        if plan_id is not None:
            ctx: dict[str, Any] = {"planId": plan_id}
            if version is not None:
                ctx["version"] = version
            self.launches[launch_id]["appContext"] = json.dumps(ctx)
        return launch_id

    # ------------------------------------------------------------------ endpoints

    async def configuration(self, _r: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.iss,
                "authorization_endpoint": f"{self.iss}/authorize",
                "token_endpoint": f"{self.iss}/token",
                "jwks_uri": f"{self.iss}/jwks.json",
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "scopes_supported": ["openid", "fhirUser", "launch"],
                "response_types_supported": ["code"],
                "capabilities": [
                    "launch-ehr",
                    "client-public",
                    "context-ehr-patient",
                    "sso-openid-connect",
                ],
            }
        )

    async def jwks(self, _r: Request) -> Response:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update(kid=self.kid, use="sig", alg="RS256")
        return JSONResponse({"keys": [jwk]})

    async def authorize(self, request: Request) -> Response:
        q = request.query_params
        problems = []
        if q.get("response_type") != "code":
            problems.append("response_type")
        if q.get("client_id") != self.client_id:
            problems.append("client_id")
        if q.get("launch") not in self.launches:
            problems.append("launch")
        if q.get("aud") != self.iss:
            problems.append("aud")
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            problems.append("pkce")
        if "launch" not in (q.get("scope") or "").split():
            problems.append("scope")
        redirect = q.get("redirect_uri") or ""
        if problems or not redirect.startswith("http://127.0.0.1:"):
            return JSONResponse({"error": "invalid_request", "bad": problems}, status_code=400)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "launch": self.launches[q["launch"]],
            "challenge": q["code_challenge"],
            "redirect_uri": redirect,
            "used": False,
        }
        return RedirectResponse(
            f"{redirect}?{urlencode({'code': code, 'state': q.get('state', '')})}",
            status_code=302,
        )

    async def token(self, request: Request) -> Response:
        self.token_requests += 1
        form = dict(parse_qsl((await request.body()).decode()))
        grant = self.codes.get(form.get("code", ""))
        if (
            form.get("grant_type") != "authorization_code"
            or grant is None
            or (grant["used"] and not self.reuse_codes)
            or form.get("redirect_uri") != grant["redirect_uri"]
            or form.get("client_id") != self.client_id
        ):
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant["challenge"]:
            return JSONResponse({"error": "invalid_grant", "why": "pkce"}, status_code=400)
        grant["used"] = True
        ctx = grant["launch"]
        now = int(time.time())
        id_token = jwt.encode(
            {
                "iss": self.iss,
                "sub": ctx["user"].split("/")[-1],
                "aud": self.client_id,
                "iat": now,
                "exp": now + 300,
                "fhirUser": f"{self.iss}/{ctx['user']}",
            },
            self.key,
            algorithm="RS256",
            headers={"kid": self.kid},
        )
        return JSONResponse(
            {
                "access_token": secrets.token_urlsafe(24),
                "token_type": "Bearer",
                "expires_in": 300,
                "scope": "launch openid fhirUser",
                "patient": ctx["patient"].removeprefix("Patient/"),
                **({"appContext": ctx["appContext"]} if "appContext" in ctx else {}),
                "id_token": id_token,
            }
        )

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/fhir/.well-known/smart-configuration", self.configuration),
                Route("/fhir/jwks.json", self.jwks),
                Route("/fhir/authorize", self.authorize),
                Route("/fhir/token", self.token, methods=["POST"]),
            ]
        )

    # ------------------------------------------------------------------ running

    def _config(self) -> uvicorn.Config:
        return uvicorn.Config(
            self.app(),
            host="127.0.0.1",
            port=self.port,
            log_config=None,
            access_log=False,
            lifespan="off",
        )

    async def serve_here(self) -> asyncio.Task[None]:
        """Run on the current event loop; returns the task (stop with ``stop_here``)."""
        self._server = uvicorn.Server(self._config())
        task = asyncio.ensure_future(self._server.serve())
        while not self._server.started:
            await asyncio.sleep(0.01)
        return task

    async def stop_here(self, task: asyncio.Task[None]) -> None:
        assert self._server is not None
        self._server.should_exit = True
        await task

    def start_thread(self) -> None:
        self._server = uvicorn.Server(self._config())
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the test SMART server did not start")
            time.sleep(0.02)

    def stop_thread(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
