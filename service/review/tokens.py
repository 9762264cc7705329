"""Signed, short-lived tokens of the review app: standalone review links, sessions, launch state.

Each token is an HS256 JWT under the review signing key with a ``pur`` (purpose) claim, so a
token minted for one use (a launch's state cookie) can never pass as another (a session). What a
token may carry: the tenant, the plan id, the user's FHIR reference, a CSRF secret, the PKCE
verifier. Never patient data: a review link travels in URLs and chat messages.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping
from typing import Any, Final, Literal

import jwt

from service.errors import AuthError

__all__ = ["Purpose", "Signer"]

Purpose = Literal["link", "session", "launch", "choose"]
_ALGORITHM: Final = "HS256"
_ISSUER: Final = "canoe-review"


class Signer:
    """Mints and checks the review app's tokens. ``key``: the shared secret; empty makes a
    random one, so tokens then live and die with this process (fine for one replica)."""

    def __init__(self, key: str, *, clock: Any = time.time) -> None:
        self._key = key.encode("utf-8") if key else secrets.token_bytes(32)
        self._clock = clock

    def opaque(self, value: str) -> str:
        """A URL token for an id that can name a medicine (``opt-taper-diazepam``): keyed, so
        the id cannot be guessed back from it, and the same for the same id, so a page's links
        stay put across versions. The page that receives it finds the id among its own."""
        mac = hmac.new(self._key, b"url-ref\x00" + value.encode("utf-8"), hashlib.sha256)
        return "r" + mac.hexdigest()[:20]

    def sign(self, purpose: Purpose, claims: Mapping[str, Any], ttl_s: float) -> str:
        now = int(self._clock())
        body = {
            **claims,
            "pur": purpose,
            "iss": _ISSUER,
            "iat": now,
            "exp": now + max(1, int(ttl_s)),
            "jti": secrets.token_urlsafe(12),
        }
        return jwt.encode(body, self._key, algorithm=_ALGORITHM)

    def verify(self, purpose: Purpose, token: str | None) -> dict[str, Any]:
        """The claims of a valid, unexpired token of ``purpose``; AuthError otherwise (the
        message says which check failed, never the token)."""
        if not token:
            raise AuthError(f"no review {purpose} token")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._key,
                algorithms=[_ALGORITHM],
                issuer=_ISSUER,
                options={"require": ["exp", "iat", "pur", "iss"]},
                leeway=0,
            )
        except jwt.ExpiredSignatureError as exc:
            raise AuthError(f"the review {purpose} has expired") from exc
        except jwt.InvalidTokenError as exc:
            raise AuthError(f"the review {purpose} is not valid (bad signature or form)") from exc
        if claims.get("pur") != purpose:
            raise AuthError(f"the token is not a review {purpose}")
        if claims["iat"] > self._clock() + 60:
            raise AuthError(f"the review {purpose} was issued in the future")
        return claims
