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
or ``scp`` (a list); without either it holds every scope. Raises ``AuthError`` (no or bad
credentials) and ``ForbiddenError`` (a scope the caller lacks). Token values are never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import yaml

from service.errors import AuthError, ForbiddenError, InputError
from service.settings import Settings

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
    "build_authenticator",
    "require",
]

SCOPE_PLAN: Final = "canoe.plan"
SCOPE_CONTEST: Final = "canoe.contest"
SCOPE_READ: Final = "canoe.read"
ALL_SCOPES: Final = frozenset({SCOPE_PLAN, SCOPE_CONTEST, SCOPE_READ})
_JWT_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")


@dataclass(frozen=True, slots=True)
class Principal:
    tenant: str
    subject: str
    scopes: frozenset[str]


class Authenticator(Protocol):
    def authenticate(self, authorization: str | None) -> Principal: ...


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


def _scopes(raw: object) -> frozenset[str]:
    if raw is None:
        return ALL_SCOPES
    items = raw.split() if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple) or not all(isinstance(s, str) for s in items):
        raise InputError("scopes must be a list of strings or a space-separated string")
    return frozenset(items) & ALL_SCOPES


def _read(path: str, what: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
        return json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read {what} {path}: {exc}") from exc


class NoAuth:
    def __init__(self, tenant: str = "default") -> None:
        self._p = Principal(tenant, "anonymous", ALL_SCOPES)

    def authenticate(self, authorization: str | None) -> Principal:
        return self._p


class StaticTokens:
    """Static bearer tokens, compared in constant time by their SHA-256 digests."""

    def __init__(self, entries: Mapping[str, Principal]) -> None:
        self._by_digest = dict(entries)  # sha256 hex -> principal

    @classmethod
    def from_file(cls, path: str) -> StaticTokens:
        data = _read(path, "tokens file")
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

    def authenticate(self, authorization: str | None) -> Principal:
        digest = hashlib.sha256(_bearer(authorization).encode()).hexdigest()
        found = None
        for known, principal in self._by_digest.items():
            if hmac.compare_digest(known, digest):
                found = principal
        if found is None:
            raise AuthError("unknown bearer token")
        return found


class JwtAuth:
    """JWTs signed by a key of a configured JWKS (asymmetric algorithms only)."""

    def __init__(self, jwks: Mapping[str, Any], *, issuer: str = "", audience: str = "") -> None:
        import jwt

        try:
            self._keys = jwt.PyJWKSet.from_dict(dict(jwks))
        except jwt.PyJWTError as exc:
            raise InputError(f"unusable JWKS: {exc}") from exc
        self._issuer = issuer or None
        self._audience = audience or None

    @classmethod
    def from_settings(cls, settings: Settings) -> JwtAuth:
        return cls(
            _read(settings.auth_jwks_file, "JWKS file"),
            issuer=settings.auth_issuer,
            audience=settings.auth_audience,
        )

    def authenticate(self, authorization: str | None) -> Principal:
        import jwt

        token = _bearer(authorization)
        try:
            header = jwt.get_unverified_header(token)
            kid = header.get("kid")
            keys = [k for k in self._keys.keys if kid is None or k.key_id == kid]
            if not keys:
                raise AuthError("the token's signing key is not trusted")
            claims = jwt.decode(
                token,
                keys[0].key,
                algorithms=list(_JWT_ALGORITHMS),
                issuer=self._issuer,
                audience=self._audience,
                options={
                    "require": ["exp", "tenant"],
                    "verify_aud": self._audience is not None,
                },
            )
        except jwt.PyJWTError as exc:
            # The library's message names the failed check (expired, audience...), not the token.
            raise AuthError(f"invalid token: {exc}") from exc
        tenant = claims.get("tenant")
        if not isinstance(tenant, str) or not tenant:
            raise AuthError("the token names no tenant")
        raw = claims.get("scope", claims.get("scp"))
        try:
            scopes = _scopes(raw)
        except InputError as exc:
            raise AuthError("the token's scopes are malformed") from exc
        return Principal(tenant, str(claims.get("sub", "")), scopes)


def build_authenticator(settings: Settings) -> Authenticator:
    if settings.auth_mode == "tokens":
        return StaticTokens.from_file(settings.auth_tokens_file)
    if settings.auth_mode == "jwt":
        return JwtAuth.from_settings(settings)
    return NoAuth()
