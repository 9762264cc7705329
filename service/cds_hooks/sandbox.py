"""A local CDS Hooks client for trying the bridge without an EHR (``canoe cds keys|call``).

``write_keys`` makes what an EHR would have: an ES384 key pair, the client description that
``call_service`` signs with (``client.json``: iss, kid, key file) and the trusted-clients file
the service reads (``trusted-clients.json``, set as ``CANOE_CDS_JWKS_FILE``), which names the
FHIR servers the client may send as ``fhirServer``. ``call_service`` signs a fresh JWT per call
(new ``jti``, ``aud`` = the exact service URL, 60 s lifetime, as the specification asks) and
sends the request. It is a tool for a developer's machine: the private key is written with
mode 0600 and never leaves the directory it was written to.
"""

from __future__ import annotations

import json
import os
import ssl
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from service.cds_hooks.services import SERVICES
from service.errors import BackendUnavailable, InputError

__all__ = ["SandboxClient", "call_service", "load_client", "sign_token", "write_keys"]

ALG: Final = "ES384"
LIFETIME_S: Final = 60
KEY_FILE, CLIENT_FILE, TRUSTED_FILE = "client.key.pem", "client.json", "trusted-clients.json"


@dataclass(frozen=True, slots=True)
class SandboxClient:
    iss: str
    kid: str
    private_key_pem: bytes


def write_keys(
    folder: Path,
    *,
    iss: str,
    tenant: str = "",
    fhir_servers: tuple[str, ...] = (),
    force: bool = False,
) -> list[Path]:
    """Write the key pair, ``client.json`` and ``trusted-clients.json`` (last) into ``folder``."""
    paths = [folder / KEY_FILE, folder / CLIENT_FILE, folder / TRUSTED_FILE]
    existing = [p for p in paths if p.exists()]
    if existing and not force:
        raise InputError(f"{existing[0]} exists; pass --force to replace the sandbox keys")
    key = ec.generate_private_key(ec.SECP384R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    kid = uuid.uuid4().hex[:16]
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    public.update(kid=kid, alg=ALG, use="sig")
    entry: dict[str, Any] = {"jwks": {"keys": [public]}, "sub": iss}
    if tenant:
        entry["tenant"] = tenant
    # Named explicitly: a client may only send the FHIR servers listed here (none: none).
    entry["fhir_servers"] = list(fhir_servers)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(paths[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        client = {"iss": iss, "kid": kid, "alg": ALG, "key_file": KEY_FILE}
        paths[1].write_text(json.dumps(client, indent=2) + "\n", encoding="utf-8")
        paths[2].write_text(json.dumps({iss: entry}, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the sandbox keys to {folder}: {exc.strerror}") from exc
    return paths


def load_client(path: Path) -> SandboxClient:
    """The client ``write_keys`` described in ``path`` (``client.json``)."""
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
        key_path = path.parent / str(spec["key_file"])
        return SandboxClient(str(spec["iss"]), str(spec["kid"]), key_path.read_bytes())
    except OSError as exc:
        raise InputError(
            f"cannot read the sandbox client {path}: {exc.strerror} (run 'canoe cds keys' first)"
        ) from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path} is not a sandbox client description: {exc}") from exc


def sign_token(client: SandboxClient, audience: str, *, now: float | None = None) -> str:
    """A CDS Hooks client JWT for one call: fresh ``jti``, ``aud`` the URL called."""
    t = int(time.time() if now is None else now)
    claims = {
        "iss": client.iss,
        "sub": client.iss,
        "aud": audience,
        "iat": t,
        "exp": t + LIFETIME_S,
        "jti": uuid.uuid4().hex,
    }
    return jwt.encode(
        claims, client.private_key_pem, algorithm=ALG, headers={"kid": client.kid, "typ": "JWT"}
    )


def _service_id(hook: str) -> str:
    if hook in SERVICES:
        return hook
    found = [s.id for s in SERVICES.values() if s.hook == hook]
    if len(found) != 1:
        names = ", ".join(sorted({*SERVICES, *(s.hook for s in SERVICES.values())}))
        raise InputError(f"unknown hook or service {hook!r}; one of: discovery, {names}")
    return found[0]


def call_service(
    client: SandboxClient,
    base_url: str,
    hook: str,
    body: bytes | None,
    *,
    ca_file: Path | None = None,
    timeout_s: float = 120.0,
) -> tuple[int, Any]:
    """(HTTP status, decoded JSON answer) of one signed call. ``hook`` ``discovery`` GETs the
    discovery document; ``HOOK/feedback`` POSTs ``body`` (a feedback document) to the service's
    feedback endpoint; otherwise ``body`` (the request JSON) is POSTed to the hook's service,
    with its ``hook`` field filled in when the request leaves it out."""
    base = base_url.rstrip("/")
    content: bytes | None = None
    if hook == "discovery":
        url, method = f"{base}/cds-services", "GET"
    else:
        if body is None:
            raise InputError(f"{hook!r} needs a request file")
        name, _, feedback = hook.partition("/")
        if feedback not in ("", "feedback"):
            raise InputError(f"{hook!r}: only HOOK or HOOK/feedback")
        service = SERVICES[_service_id(name)]
        try:
            request = json.loads(body)
        except ValueError as exc:
            raise InputError(f"the request is not JSON: {exc}") from exc
        if isinstance(request, dict) and not feedback:
            request.setdefault("hook", service.hook)
        url, method = f"{base}/cds-services/{service.id}", "POST"
        if feedback:
            url += "/feedback"
        content = json.dumps(request).encode("utf-8")
    verify: ssl.SSLContext | bool = True
    if ca_file is not None:
        verify = ssl.create_default_context(cafile=str(ca_file))
    headers = {
        "Authorization": f"Bearer {sign_token(client, url)}",
        "Accept": "application/json",
    }
    if content is not None:
        headers["Content-Type"] = "application/json"
    try:
        with httpx.Client(verify=verify, timeout=timeout_s) as http:
            resp = http.request(method, url, content=content, headers=headers)
    except httpx.HTTPError as exc:
        raise BackendUnavailable(f"cannot reach {url}: {exc}") from exc
    try:
        answer = resp.json()
    except ValueError:
        answer = {"status": resp.status_code, "body": resp.text[:2000]}
    return resp.status_code, answer
