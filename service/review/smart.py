"""SMART App Launch 2.x, EHR launch, as the client: discovery, PKCE, code exchange, id token.

The flow: the EHR opens ``/review?iss=<FHIR base>&launch=<opaque>``; ``discover`` reads
``<iss>/.well-known/smart-configuration``; ``authorize_url`` sends the browser to the
authorization endpoint with the ``launch`` value, a random ``state`` and an S256 PKCE challenge;
the EHR comes back to ``/review/callback?code&state``; ``exchange`` trades the code (with the
PKCE verifier) for the token response, whose launch context names the plan or only the patient,
and whose ``id_token`` (verified against the server's JWKS) names the user (``fhirUser``).

The plan comes, in this order, from the CDS Hooks card's ``appContext`` (``{"planId",
"version"}``), from a SMART v2 ``fhirContext`` entry naming one of our CarePlans
(``CarePlan/<plan id>-v<version>``), or not at all: a plain EHR launch (such as the SMART App
Launcher's) sends only ``patient``, and the app then picks among that patient's plans.

Only issuers configured for a tenant may launch (``review_smart_issuers``): an unknown ``iss``
is refused before any request leaves, so a forged launch cannot make the service call out.
Every outbound call has a deadline and a size cap (``service.outbound``). Nothing here logs
tokens or context.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlencode

import httpx
import jwt

from service.errors import AuthError, BackendUnavailable
from service.outbound import DOCUMENT_MAX_BYTES, Answer, AnswerTooLarge, read_capped
from service.settings import parse_issuers

__all__ = [
    "LaunchContext",
    "SmartConfiguration",
    "authorize_url",
    "discover",
    "exchange",
    "parse_issuers",
    "pkce_pair",
    "plan_context",
]

SCOPES: Final = "launch openid fhirUser"
TIMEOUT_S: Final = 10.0


@dataclass(frozen=True, slots=True)
class SmartConfiguration:
    issuer: str  # the FHIR base URL the EHR launched us with
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    id_token_issuer: str  # the OpenID issuer of id tokens ("issuer" in the document)


@dataclass(frozen=True, slots=True)
class LaunchContext:
    """What a completed launch grants: whose review, of which plan."""

    user: str  # "Practitioner/<id>" or "PractitionerRole/<id>"
    patient: str  # "Patient/<id>"; "" when the EHR gave no patient context
    plan_id: str  # "" when the EHR named only the patient
    version: int | None


def pkce_pair() -> tuple[str, str]:
    """(verifier, S256 challenge), RFC 7636."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _get_url(doc: Mapping[str, Any], key: str) -> str:
    value = doc.get(key)
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        raise AuthError(f"the EHR's smart-configuration has no usable {key}")
    return value


async def _read(http: httpx.AsyncClient, method: str, url: str, **kw: Any) -> Answer:
    """One answer from the EHR, its body cut at ``DOCUMENT_MAX_BYTES`` as it streams."""
    return await read_capped(
        http, method, url, max_bytes=DOCUMENT_MAX_BYTES, timeout=TIMEOUT_S, **kw
    )


async def discover(http: httpx.AsyncClient, iss: str) -> SmartConfiguration:
    url = f"{iss.rstrip('/')}/.well-known/smart-configuration"
    try:
        resp = await _read(http, "GET", url, headers={"Accept": "application/json"})
    except AnswerTooLarge as exc:
        raise AuthError("the EHR's smart-configuration is over the size limit") from exc
    except httpx.HTTPError as exc:
        raise BackendUnavailable("the EHR's SMART configuration could not be fetched") from exc
    if resp.status_code != 200:
        raise BackendUnavailable(f"the EHR's SMART configuration answered HTTP {resp.status_code}")
    try:
        doc = json.loads(resp.content)
    except ValueError as exc:
        raise AuthError("the EHR's smart-configuration is not JSON") from exc
    if not isinstance(doc, Mapping):
        raise AuthError("the EHR's smart-configuration is not a JSON object")
    methods = doc.get("code_challenge_methods_supported") or []
    if "S256" not in methods:
        raise AuthError("the EHR does not support PKCE S256 (SMART App Launch 2.x requires it)")
    return SmartConfiguration(
        issuer=iss.rstrip("/"),
        authorization_endpoint=_get_url(doc, "authorization_endpoint"),
        token_endpoint=_get_url(doc, "token_endpoint"),
        jwks_uri=_get_url(doc, "jwks_uri"),
        id_token_issuer=str(doc.get("issuer") or iss.rstrip("/")),
    )


def authorize_url(
    cfg: SmartConfiguration,
    *,
    client_id: str,
    redirect_uri: str,
    launch: str,
    state: str,
    challenge: str,
) -> str:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "launch": launch,
        "scope": SCOPES,
        "state": state,
        "aud": cfg.issuer,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    sep = "&" if "?" in cfg.authorization_endpoint else "?"
    return f"{cfg.authorization_endpoint}{sep}{urlencode(query)}"


async def exchange(
    http: httpx.AsyncClient,
    cfg: SmartConfiguration,
    *,
    client_id: str,
    redirect_uri: str,
    code: str,
    verifier: str,
) -> LaunchContext:
    """Trade the code for the token response and read the launch context out of it."""
    try:
        resp = await _read(
            http,
            "POST",
            cfg.token_endpoint,
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "client_id": client_id,
                "code_verifier": verifier,
            },
            headers={"Accept": "application/json"},
        )
    except AnswerTooLarge as exc:
        raise AuthError("the EHR's token response is over the size limit") from exc
    except httpx.HTTPError as exc:
        raise BackendUnavailable("the EHR's token endpoint could not be reached") from exc
    if resp.status_code != 200:
        raise AuthError(f"the EHR refused the authorization code (HTTP {resp.status_code})")
    try:
        body = json.loads(resp.content)
    except ValueError as exc:
        raise AuthError("the EHR's token response is not JSON") from exc
    if not isinstance(body, Mapping) or not body.get("access_token"):
        raise AuthError("the EHR's token response has no access_token")
    user = await _user(http, cfg, client_id, body.get("id_token"))
    plan_id, version = plan_context(body)
    patient = body.get("patient")
    if not plan_id and not (isinstance(patient, str) and patient):
        raise AuthError("the launch context names no plan (appContext, fhirContext) and no patient")
    return LaunchContext(
        user=user,
        patient=f"Patient/{patient}" if isinstance(patient, str) and patient else "",
        plan_id=plan_id,
        version=version,
    )


def plan_context(body: Mapping[str, Any]) -> tuple[str, int | None]:
    """(plan id, version) named by a token response: its ``appContext`` where present, else a
    CarePlan of ours in ``fhirContext``; ("", None) when it names no plan."""
    if body.get("appContext") not in (None, ""):
        return _app_context(body["appContext"])
    found = _careplan_context(body.get("fhirContext"))
    return found if found is not None else ("", None)


async def _user(
    http: httpx.AsyncClient, cfg: SmartConfiguration, client_id: str, id_token: object
) -> str:
    if not isinstance(id_token, str) or not id_token:
        raise AuthError("the token response has no id_token: the review needs to know the user")
    try:
        resp = await _read(http, "GET", cfg.jwks_uri)
        keys = jwt.PyJWKSet.from_dict(json.loads(resp.content))
    except (httpx.HTTPError, ValueError, jwt.PyJWTError) as exc:
        raise AuthError("the EHR's signing keys (jwks_uri) could not be read") from exc
    try:
        kid = jwt.get_unverified_header(id_token).get("kid")
        key = next((k for k in keys.keys if kid is None or k.key_id == kid), None)
        if key is None:
            raise AuthError("the id_token is signed by a key the EHR does not publish")
        claims = jwt.decode(
            id_token,
            key=key,
            algorithms=["RS256", "ES256", "RS384", "ES384"],
            audience=client_id,
            issuer=cfg.id_token_issuer,
            options={"require": ["exp", "iat", "aud", "iss", "sub"]},
        )
    except jwt.PyJWTError as exc:
        raise AuthError("the id_token is not valid for this app") from exc
    who = str(claims.get("fhirUser") or "")
    parts = who.rstrip("/").split("/")
    if len(parts) < 2 or parts[-2] not in ("Practitioner", "PractitionerRole") or not parts[-1]:
        raise ForbiddenUser()
    return f"{parts[-2]}/{parts[-1]}"


class ForbiddenUser(AuthError):
    def __init__(self) -> None:
        super().__init__("only a Practitioner or PractitionerRole may review and contest a plan")


_CAREPLAN: Final = re.compile(r"^(?:.*/)?CarePlan/([0-9a-f]{32})(?:-v([1-9][0-9]{0,8}))?$")


def _careplan_context(raw: object) -> tuple[str, int | None] | None:
    """The first ``fhirContext`` entry (SMART App Launch 2.x) that references a CarePlan of
    ours; other entries (an Encounter, a CarePlan of another system) are not for us."""
    if not isinstance(raw, list):
        return None
    for entry in raw:
        ref = entry.get("reference") if isinstance(entry, Mapping) else None
        m = _CAREPLAN.match(ref) if isinstance(ref, str) else None
        if m is not None:
            return m.group(1), int(m.group(2)) if m.group(2) else None
    return None


def _app_context(raw: object) -> tuple[str, int | None]:
    ctx = raw
    if isinstance(raw, str):
        try:
            ctx = json.loads(raw)
        except ValueError as exc:
            raise AuthError("the launch's appContext is not JSON") from exc
    if not isinstance(ctx, Mapping) or not isinstance(ctx.get("planId"), str):
        raise AuthError("the launch context names no plan (appContext.planId)")
    version = ctx.get("version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise AuthError("appContext.version must be a whole number")
    return str(ctx["planId"]), version
