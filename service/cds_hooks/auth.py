"""Who is calling: CDS Hooks client JWTs checked against the trusted-clients configuration.

Every CDS Hooks call carries ``Authorization: Bearer <JWT>`` signed by the CDS client (the EHR).
``JwtVerifier.verify`` checks, in this order: the header (an asymmetric ``alg``, never ``none``
or HMAC), the ``iss`` against the trusted clients, the signature against that client's JWKS
(chosen by ``kid``), ``aud`` (one of this service's own URLs), ``exp``/``iat`` (with a small
leeway and at most five minutes of lifetime, as the specification asks), ``sub`` when the client
pins one, and last ``jti``: a token id seen before, while it is still valid, is a replay. The
replay check comes after the signature so that nobody can fill the cache with forged ids. In a
deployment the seen ids live in the plan store (``StoreReplayGuard``), shared by all replicas.

The trusted-clients file (``Settings.cds_jwks_file``, JSON) is either

* a plain JWKS ``{"keys": [...]}``: one deployment, one client; any ``iss`` signed by those keys
  is accepted and becomes the tenant; or
* a mapping ``{"<iss>": {"jwks": {...}} | {"jwks_url": "https://..."}, ...}`` with, per
  client, optional ``"tenant"`` (default: the ``iss``), ``"sub"`` (the client id it must carry),
  ``"jku"`` (JWKS URLs the client may name in its header; only those are ever fetched) and its
  FHIR egress allowlists (``egress.EgressPolicy``): ``"fhir_servers"`` (base URLs its
  ``fhirServer`` must sit under; none: its server is never read), ``"fhir_http_hosts"`` (hosts
  it may be read from over plain http) and ``"fhir_private_networks"`` (CIDRs of non-public
  addresses it may be read from). A plain JWKS may carry the same three keys beside ``keys``.

This module must not log tokens or claims other than ``iss``; it knows nothing of hooks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

import httpx
import jwt
from jwt import PyJWK, PyJWKSet
from jwt.exceptions import InvalidKeyError, PyJWKError, PyJWKSetError, PyJWTError

from service.cds_hooks.egress import EgressPolicy
from service.errors import AuthError, InputError
from service.jsonio import load_json_object
from service.outbound import DOCUMENT_MAX_BYTES, read_capped

__all__ = [
    "ALLOWED_ALGORITHMS",
    "MAX_LIFETIME_S",
    "ClientIdentity",
    "JwtVerifier",
    "ReplayCache",
    "ReplayGuard",
    "StoreReplayGuard",
    "TokenIdStore",
    "TrustedClient",
    "load_trusted_clients",
]

# CDS Hooks requires ES384 and RS384; the other asymmetric JWS algorithms are accepted too.
ALLOWED_ALGORITHMS: Final = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
MAX_LIFETIME_S: Final = 300  # the specification: exp no more than five minutes in the future
LEEWAY_S: Final = 30  # tolerated clock skew between the EHR and us
JWKS_TTL_S: Final = 300  # how long a fetched JWKS is trusted before it is fetched again


@dataclass(frozen=True, slots=True)
class TrustedClient:
    """One CDS client. ``iss`` "" is the catch-all of a plain-JWKS configuration."""

    iss: str
    jwks: Mapping[str, Any] | None = None
    jwks_url: str = ""
    tenant: str = ""
    sub: str = ""
    jku: tuple[str, ...] = ()
    egress: EgressPolicy = field(default_factory=EgressPolicy)  # where its FHIR token may go

    def tenant_for(self, iss: str) -> str:
        return self.tenant or iss


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """A verified caller. ``tenant`` scopes every plan it creates or reads."""

    iss: str
    sub: str
    tenant: str
    jti: str
    client: TrustedClient = field(repr=False)


def _client(iss: str, spec: object) -> TrustedClient:
    if not isinstance(spec, Mapping):
        raise InputError(f"trusted client {iss!r}: expected an object with 'jwks' or 'jwks_url'")
    jwks = spec.get("jwks")
    url = spec.get("jwks_url", "")
    if (jwks is None) == (not url):
        raise InputError(f"trusted client {iss!r}: give exactly one of 'jwks' and 'jwks_url'")
    if jwks is not None:
        _keyset(jwks, iss)  # fail at start-up, not at the first call
    jku = spec.get("jku", ())
    if isinstance(jku, str):
        raise InputError(f"trusted client {iss!r}: 'jku' is a list")
    return TrustedClient(
        iss=iss,
        jwks=jwks,
        jwks_url=str(url),
        tenant=str(spec.get("tenant", "")),
        sub=str(spec.get("sub", "")),
        jku=tuple(str(u) for u in jku) + ((str(url),) if url else ()),
        egress=EgressPolicy.from_config(iss, spec),
    )


def load_trusted_clients(source: str | Path | Mapping[str, Any]) -> dict[str, TrustedClient]:
    """Parse the trusted-clients configuration (a path or the decoded JSON). Bad -> InputError."""
    if isinstance(source, Mapping):
        data: object = source
    else:
        try:
            raw = Path(source).read_bytes()
        except OSError as exc:
            raise InputError(
                f"cannot read CDS trusted-clients file {source}: {exc.strerror}"
            ) from exc
        data = load_json_object(raw, what=f"CDS trusted-clients file {source}")
    if not isinstance(data, Mapping):
        raise InputError("CDS trusted-clients configuration must be a JSON object")
    if "keys" in data:
        _keyset({"keys": data["keys"]}, "(plain JWKS)")
        return {
            "": TrustedClient(
                iss="",
                jwks={"keys": data["keys"]},
                egress=EgressPolicy.from_config("(plain JWKS)", data),
            )
        }
    return {str(iss): _client(str(iss), spec) for iss, spec in data.items()}


def _keyset(jwks: object, owner: str) -> PyJWKSet:
    try:
        if not isinstance(jwks, Mapping):
            raise PyJWKSetError("not an object")
        return PyJWKSet.from_dict(dict(jwks))
    except (PyJWKError, PyJWKSetError, InvalidKeyError, ValueError, TypeError) as exc:
        raise InputError(f"trusted client {owner!r}: unusable JWKS: {exc}") from exc


class ReplayGuard(Protocol):
    """Decides a JWT id's first use. ``expires``: the token's ``exp`` (epoch seconds)."""

    async def first_use(self, iss: str, jti: str, expires: float) -> bool: ...


class StoreReplayGuard:
    """The replay check of a deployment: the plan store's ``cds_jtis`` table, shared by every
    replica (insert-or-fail on ``(iss, jti)``), so a token used at one replica is refused at
    all of them. Ids are kept until their token, with the leeway, has expired."""

    def __init__(self, service: TokenIdStore) -> None:
        self._service = service

    async def first_use(self, iss: str, jti: str, expires: float) -> bool:
        return await self._service.claim_token_id(
            issuer=iss, jti=jti, expires_at=expires + LEEWAY_S
        )


class TokenIdStore(Protocol):
    """What ``StoreReplayGuard`` needs of ``service.app.CarePlanService``."""

    async def claim_token_id(self, *, issuer: str, jti: str, expires_at: float) -> bool: ...


class ReplayCache:
    """``(iss, jti)`` pairs seen, kept until their token expires, in this process only: for
    unit tests and a single process. A deployment uses ``StoreReplayGuard`` (every replica)."""

    def __init__(self, *, max_entries: int = 200_000, clock: Callable[[], float] = time.time):
        self._seen: dict[tuple[str, str], float] = {}
        self._max = max_entries
        self._clock = clock

    def check_and_add(self, iss: str, jti: str, expires: float) -> bool:
        """True when first seen (now recorded); False for a replay."""
        now = self._clock()
        key = (iss, jti)
        seen = self._seen.get(key)
        if seen is not None and seen >= now:
            return False
        if len(self._seen) >= self._max:
            self._seen = {k: v for k, v in self._seen.items() if v >= now}
            if len(self._seen) >= self._max:
                # Refusing is safer than forgetting ids that could then be replayed.
                raise AuthError("too many live CDS tokens; try again shortly")
        self._seen[key] = expires + LEEWAY_S
        return True

    async def first_use(self, iss: str, jti: str, expires: float) -> bool:
        return self.check_and_add(iss, jti, expires)


class JwtVerifier:
    """Verifies CDS client JWTs. ``audiences`` is computed per request by the caller (the URLs
    this service answers at); nothing here trusts the Host header."""

    def __init__(
        self,
        clients: Mapping[str, TrustedClient],
        *,
        replay: ReplayGuard | None = None,
        clock: Callable[[], float] = time.time,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self._clients = dict(clients)
        self._clock = clock
        self._replay: ReplayGuard = replay or ReplayCache(clock=clock)
        self._http = http
        self._fetched: dict[str, tuple[float, PyJWKSet]] = {}

    @property
    def configured(self) -> bool:
        return bool(self._clients)

    async def verify(self, authorization: str | None, audiences: Sequence[str]) -> ClientIdentity:
        if not self._clients:
            raise AuthError("no trusted CDS clients are configured (cds_jwks_file)")
        token = _bearer(authorization)
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except PyJWTError as exc:
            raise AuthError(f"malformed JWT: {exc}") from exc
        alg = header.get("alg")
        if alg not in ALLOWED_ALGORITHMS:
            raise AuthError(f"JWT alg {alg!r} is not accepted (use ES384 or RS384)")
        iss = unverified.get("iss")
        if not isinstance(iss, str) or not iss:
            raise AuthError("JWT has no iss")
        client = self._clients.get(iss) or self._clients.get("")
        if client is None:
            raise AuthError("JWT iss is not a trusted CDS client")
        key = await self._key(client, header)
        try:
            claims = jwt.decode(
                token,
                key=key.key,
                algorithms=[alg],
                audience=list(audiences),
                issuer=iss,
                leeway=LEEWAY_S,
                options={"require": ["iss", "aud", "exp", "iat", "jti"]},
            )
        except PyJWTError as exc:
            raise AuthError(f"JWT rejected: {exc}") from exc
        now = self._clock()
        exp, iat = float(claims["exp"]), float(claims["iat"])
        if exp - now > MAX_LIFETIME_S + LEEWAY_S or exp - iat > MAX_LIFETIME_S + LEEWAY_S:
            raise AuthError(f"JWT lifetime exceeds {MAX_LIFETIME_S} s")
        sub = claims.get("sub", "")
        if client.sub and sub != client.sub:
            raise AuthError("JWT sub is not the configured client id")
        jti = claims["jti"]
        if not isinstance(jti, str) or not jti:
            raise AuthError("JWT jti must be a non-empty string")
        if not await self._replay.first_use(iss, jti, exp):
            raise AuthError("JWT jti was already used (replay)")
        return ClientIdentity(
            iss=iss, sub=str(sub), tenant=client.tenant_for(iss), jti=jti, client=client
        )

    async def _key(self, client: TrustedClient, header: Mapping[str, Any]) -> PyJWK:
        jku = header.get("jku")
        if jku is not None and jku not in client.jku:
            # Never fetch a key set the client merely names: that would let anyone sign.
            raise AuthError("JWT jku is not a JWKS URL configured for this client")
        if client.jwks is not None:
            keyset = _keyset(client.jwks, client.iss)
        else:
            keyset = await self._remote(str(jku or client.jwks_url))
        kid = header.get("kid")
        candidates = [k for k in keyset.keys if kid is None or k.key_id == kid]
        if kid is None and len(candidates) != 1:
            raise AuthError("JWT has no kid and the client has several keys")
        if not candidates:
            raise AuthError("JWT kid is not in the client's JWKS")
        return candidates[0]

    async def _remote(self, url: str) -> PyJWKSet:
        now = self._clock()
        cached = self._fetched.get(url)
        if cached is not None and cached[0] > now:
            return cached[1]
        client = self._http or httpx.AsyncClient(timeout=5.0)
        try:
            resp = await read_capped(
                client,
                "GET",
                url,
                max_bytes=DOCUMENT_MAX_BYTES,
                headers={"Accept": "application/json"},
            )
            if resp.status_code != 200:
                raise AuthError(f"cannot fetch the client's JWKS: HTTP {resp.status_code}")
            keyset = _keyset(load_json_object(resp.content, what="JWKS"), url)
        except (httpx.HTTPError, ValueError, InputError) as exc:
            raise AuthError(f"cannot fetch the client's JWKS: {exc}") from exc
        finally:
            if self._http is None:
                await client.aclose()
        self._fetched[url] = (now + JWKS_TTL_S, keyset)
        return keyset


def _bearer(authorization: str | None) -> str:
    if not authorization:
        raise AuthError("missing Authorization header (Bearer JWT)")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("Authorization must be 'Bearer <JWT>'")
    return token.strip()
