"""Bearer-token authentication for the gRPC API, mapping each caller to a tenant and scopes.

Modes (``auth_mode``): ``none`` (every caller is tenant ``default`` with every scope: for a
laptop or behind a trusted mesh), ``tokens`` (static tokens from ``auth_tokens_file``) and
``jwt`` (JWTs verified against the keys in ``auth_jwks_file``, with ``auth_issuer`` and
``auth_audience`` when set). Tokens file (YAML or JSON)::

    tokens:
      - token: "s3cret"            # or sha256: "<hex digest of the token>"
        tenant: "clinic-a"
        subject: "ehr-gateway"     # optional, for the logs
        scopes: [canoe.plan, canoe.contest, canoe.read]   # optional: all scopes when absent

A JWT names its tenant in the ``tenant`` claim and its scopes in ``scope`` (space-separated)
or ``scp`` (a list); without either it holds **no** scope (every RPC then answers
PERMISSION_DENIED). It must carry ``exp``, ``iat`` and ``jti``; it may live at most
``auth_jwt_max_lifetime_s`` (default one hour, 30 s of clock skew tolerated), and a ``jti`` seen
before while its token is valid is a replay, refused through the plan store's token-id table
(the one the CDS Hooks side uses, so every replica agrees). Raises ``AuthError`` (no or bad
credentials) and ``ForbiddenError`` (a scope the caller lacks). Token values are never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from service.errors import AuthError, ForbiddenError, InputError
from service.settings import Settings, read_data_file

__all__ = [
    "ALL_SCOPES",
    "SCOPE_CONTEST",
    "SCOPE_PLAN",
    "SCOPE_READ",
    "Authenticator",
    "JwtAuth",
    "NoAuth",
    "Principal",
    "StaticTokens",
    "TokenIdStore",
    "build_authenticator",
    "require",
]

SCOPE_PLAN: Final = "canoe.plan"
SCOPE_CONTEST: Final = "canoe.contest"
SCOPE_READ: Final = "canoe.read"
ALL_SCOPES: Final = frozenset({SCOPE_PLAN, SCOPE_CONTEST, SCOPE_READ})
_JWT_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")
_LEEWAY_S: Final = 30  # tolerated clock skew between the identity provider and us
# gRPC token ids share the store's table with CDS Hooks client ids; the prefix keeps the two
# issuers' namespaces apart.
_REPLAY_NAMESPACE: Final = "grpc "


@dataclass(frozen=True, slots=True)
class Principal:
    tenant: str
    subject: str
    scopes: frozenset[str]


class Authenticator(Protocol):
    async def authenticate(self, authorization: str | None) -> Principal: ...


class TokenIdStore(Protocol):
    """The replay check: True on a token id's first use (store-wide), False for a replay.
    ``service.app.CarePlanService.claim_token_id`` is one."""

    async def claim_token_id(self, *, issuer: str, jti: str, expires_at: float) -> bool: ...


def require(principal: Principal, scope: str) -> None:
    if scope not in principal.scopes:
        raise ForbiddenError(f"the caller's credentials do not grant {scope}")


def _bearer(authorization: str | None) -> str:
    if not authorization:
        raise AuthError("no credentials: send 'authorization: Bearer <token>'")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("credentials must be a bearer token")
    return token.strip()


def _scopes(raw: object, *, absent: frozenset[str] = ALL_SCOPES) -> frozenset[str]:
    if raw is None:
        return absent
    items = raw.split() if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple) or not all(isinstance(s, str) for s in items):
        raise InputError("scopes must be a list of strings or a space-separated string")
    return frozenset(items) & ALL_SCOPES


class NoAuth:
    def __init__(self, tenant: str = "default") -> None:
        self._p = Principal(tenant, "anonymous", ALL_SCOPES)

    async def authenticate(self, authorization: str | None) -> Principal:
        return self._p


class StaticTokens:
    """Static bearer tokens, compared in constant time by their SHA-256 digests."""

    def __init__(self, entries: Mapping[str, Principal]) -> None:
        self._by_digest = dict(entries)  # sha256 hex -> principal

    @classmethod
    def from_file(cls, path: str) -> StaticTokens:
        data = read_data_file(path, "tokens file")
        rows = data.get("tokens") if isinstance(data, Mapping) else None
        if not isinstance(rows, list) or not rows:
            raise InputError(f"tokens file {path} needs a non-empty 'tokens' list")
        out: dict[str, Principal] = {}
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping) or not isinstance(row.get("tenant"), str):
                raise InputError(f"tokens[{i}] in {path} needs a tenant")
            if isinstance(row.get("token"), str) and row["token"]:
                digest = hashlib.sha256(row["token"].encode()).hexdigest()
            elif isinstance(row.get("sha256"), str) and len(row["sha256"]) == 64:
                digest = row["sha256"].lower()
            else:
                raise InputError(f"tokens[{i}] in {path} needs token or sha256")
            subject = str(row.get("subject") or f"token-{i}")
            out[digest] = Principal(row["tenant"], subject, _scopes(row.get("scopes")))
        return cls(out)

    async def authenticate(self, authorization: str | None) -> Principal:
        digest = hashlib.sha256(_bearer(authorization).encode()).hexdigest()
        found = None
        for known, principal in self._by_digest.items():
            if hmac.compare_digest(known, digest):
                found = principal
        if found is None:
            raise AuthError("unknown bearer token")
        return found


class JwtAuth:
    """JWTs signed by a key of a configured JWKS (asymmetric algorithms only), each usable once
    (``replay``) and for at most ``max_lifetime_s``."""

    def __init__(
        self,
        jwks: Mapping[str, Any],
        *,
        issuer: str = "",
        audience: str = "",
        max_lifetime_s: float = 3600.0,
        replay: TokenIdStore | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        import jwt

        try:
            self._keys = jwt.PyJWKSet.from_dict(dict(jwks))
        except jwt.PyJWTError as exc:
            raise InputError(f"unusable JWKS: {exc}") from exc
        self._issuer = issuer or None
        self._audience = audience or None
        self._max_lifetime = max_lifetime_s
        self._replay = replay
        self._clock = clock

    @classmethod
    def from_settings(cls, settings: Settings, *, replay: TokenIdStore | None = None) -> JwtAuth:
        jwks = read_data_file(settings.auth.jwks_file, "JWKS file")
        if not isinstance(jwks, Mapping):
            raise InputError(f"JWKS file {settings.auth.jwks_file} is not a JSON or YAML object")
        return cls(
            jwks,
            issuer=settings.auth.issuer,
            audience=settings.auth.audience,
            max_lifetime_s=settings.auth.jwt_max_lifetime_s,
            replay=replay,
        )

    async def authenticate(self, authorization: str | None) -> Principal:
        claims = self._verify(_bearer(authorization))
        tenant = claims.get("tenant")
        if not isinstance(tenant, str) or not tenant:
            raise AuthError("the token names no tenant")
        raw = claims.get("scope", claims.get("scp"))
        try:
            scopes = _scopes(raw, absent=frozenset())
        except InputError as exc:
            raise AuthError("the token's scopes are malformed") from exc
        # Last, after the signature: nobody can fill the table with forged ids.
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > 256:
            raise AuthError("the token's jti must be a non-empty string (at most 256 characters)")
        if self._replay is not None and not await self._replay.claim_token_id(
            issuer=_REPLAY_NAMESPACE + str(claims.get("iss", "")),
            jti=jti,
            expires_at=float(claims["exp"]) + _LEEWAY_S,
        ):
            raise AuthError("the token was already used (jti replay)")
        return Principal(tenant, str(claims.get("sub", "")), scopes)

    def _verify(self, token: str) -> dict[str, Any]:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
            kid = header.get("kid")
            keys = [k for k in self._keys.keys if kid is None or k.key_id == kid]
            if not keys:
                raise AuthError("the token's signing key is not trusted")
            claims: dict[str, Any] = jwt.decode(
                token,
                keys[0].key,
                algorithms=list(_JWT_ALGORITHMS),
                issuer=self._issuer,
                audience=self._audience,
                leeway=_LEEWAY_S,
                options={
                    "require": ["exp", "iat", "jti", "tenant"],
                    "verify_aud": self._audience is not None,
                },
            )
        except jwt.PyJWTError as exc:
            # The library's message names the failed check (expired, audience...), not the token.
            raise AuthError(f"invalid token: {exc}") from exc
        exp, iat = float(claims["exp"]), float(claims["iat"])
        longest = self._max_lifetime + _LEEWAY_S
        if exp - iat > longest or exp - self._clock() > longest:
            raise AuthError(
                f"the token lives longer than {self._max_lifetime:g} s "
                "(CANOE_AUTH_JWT_MAX_LIFETIME_S)"
            )
        return claims


def build_authenticator(settings: Settings, *, replay: TokenIdStore | None = None) -> Authenticator:
    """The authenticator ``auth_mode`` names; ``replay`` (the plan store's token-id table) is
    where JWT ids are claimed, so a token is used once across every replica."""
    if settings.auth.mode == "tokens":
        return StaticTokens.from_file(settings.auth.tokens_file)
    if settings.auth.mode == "jwt":
        return JwtAuth.from_settings(settings, replay=replay)
    return NoAuth()
