"""Getting the patient's record for a hook call: prefetch first, FHIR REST for what is missing.

For each prefetch key of the service: a resource the client sent is used as is (a searchset
with a ``next`` link is completed over REST when we may); a key that is missing, null or an
OperationOutcome (the client's failed prefetch) is fetched from ``fhirServer``: with the
client's bearer token when it lends one (``fhirAuthorization``), else without any, as from the
open server the specification allows. When it cannot be fetched, a *required* key
makes the call fail with ``PrefetchUnavailable`` (HTTP 412, as the specification says); a null
optional key means the client has no such data, a missing optional one is skipped and reported.
The result is assembled into one FHIR ``collection`` Bundle for ``fhir_mapping.ingest``.

Every read, with a token or without, goes only to URLs under ``fhirServer`` that the CDS
client's egress policy allows (``egress``), within one deadline per hook call; the token is
only ever sent there. Nothing here logs resources,
URLs, ids or tokens: only why a read failed, in general terms.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Final
from urllib.parse import quote

import httpx

from service.cds_hooks.egress import EgressPolicy, EgressRefused, same_origin, under
from service.cds_hooks.request import HookRequest
from service.cds_hooks.services import ServiceDefinition
from service.errors import InputError, Issue, PrefetchUnavailable
from service.jsonio import load_json_object
from service.logs import get_logger
from service.outbound import Answer, AnswerTooLarge, read_capped

log = get_logger("canoe.cds_hooks.prefetch")

__all__ = [
    "FhirClient",
    "Resolved",
    "assemble_bundle",
    "render_template",
    "resolve_prefetch",
]

MAX_PAGES: Final = 20  # per searchset, by default (CANOE_CDS_PREFETCH_MAX_PAGES)
MAX_REDIRECTS: Final = 3
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_TOKEN: Final = re.compile(r"\{\{\s*([^}]+?)\s*\}\}")


def _user_token(context: Mapping[str, Any], rtype: str) -> str | None:
    user = context.get("userId")
    if isinstance(user, str) and user.startswith(f"{rtype}/"):
        return user.partition("/")[2]
    return None


def render_template(template: str, context: Mapping[str, Any], today: date) -> str | None:
    """Fill a prefetch template's tokens; None when a token has no value in this context.

    Tokens: ``{{context.<field>}}`` (string or number fields), ``{{userPractitionerId}}``,
    ``{{userPractitionerRoleId}}``, ``{{userPatientId}}``, ``{{userRelatedPersonId}}`` and
    ``{{today()}}``. Values are URL-encoded.
    """
    missing = False

    def fill(match: re.Match[str]) -> str:
        nonlocal missing
        token = match.group(1)
        value: object = None
        if token.startswith("context."):
            value = context.get(token[len("context.") :])
        elif token.startswith("user") and token.endswith("Id"):
            value = _user_token(context, token[len("user") : -len("Id")])
        elif token == "today()":
            value = today.isoformat()
        if not isinstance(value, str | int) or isinstance(value, bool) or value == "":
            missing = True
            return ""
        return quote(str(value), safe="")

    rendered = _TOKEN.sub(fill, template)
    return None if missing else rendered


class FhirClient:
    """Reads from the client's FHIR server, with its bearer token (``None``: an open server,
    no ``Authorization`` sent), under one deadline for the whole hook call and a page cap per
    search.

    Every URL it requests (built from a template, a ``next`` link, a redirect) is normalised
    and checked against the client's ``EgressPolicy`` and sent as the very URL object that was
    checked, which must also lie under ``fhirServer`` (the transport checks the address it
    connects to); redirects are followed only within the same origin. Failures raise
    ``PrefetchUnavailable`` saying "could not read the FHIR server"; what went wrong (transport
    error type, HTTP status) is logged without URL or ids.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        base: str,
        token: str | None,
        *,
        timeout_s: float,
        policy: EgressPolicy,
        deadline_s: float | None = None,
        max_pages: int = MAX_PAGES,
        max_bytes: int = 8 * 1024 * 1024,
    ):
        self._http = http
        self._base = base.rstrip("/")
        self._token = token
        self._timeout = timeout_s
        self._policy = policy
        self._root: httpx.URL | None = None
        self._deadline = None if deadline_s is None else time.monotonic() + deadline_s
        self._deadline_s = deadline_s
        self.max_pages = max_pages
        self._max_bytes = max_bytes

    def check(self) -> httpx.URL:
        """``fhirServer`` as it will be sent; EgressRefused at once when the policy forbids it
        (no connection made)."""
        if self._root is None:
            root = self._policy.check_url(self._base)
            if root.query or root.fragment:
                raise EgressRefused("fhirServer is a base URL, without query", public=True)
            self._root = root
        return self._root

    async def get(self, path_or_url: str) -> Mapping[str, Any] | None:
        """The resource at a relative path or an absolute URL under the base; None on 404/410.
        Failures raise PrefetchUnavailable (the caller decides whether they matter)."""
        base = str(self.check()).rstrip("/")
        url: str | httpx.URL = (
            path_or_url if "://" in path_or_url else f"{base}/{path_or_url.lstrip('/')}"
        )
        for _ in range(MAX_REDIRECTS + 1):
            sent, resp = await self._send(url)
            if resp.status_code in _REDIRECTS and "location" in resp.headers:
                try:
                    target = sent.join(resp.headers["location"])
                except httpx.InvalidURL as exc:
                    raise _unreadable("redirect to an unusable URL, not followed") from exc
                if not same_origin(sent, target):
                    raise _unreadable("redirect to another origin, not followed")
                url = target
                continue
            break
        else:
            raise _unreadable("too many redirects")
        if resp.status_code in (404, 410):
            return None
        if resp.status_code != 200:
            raise _unreadable(f"HTTP {resp.status_code}")
        try:
            data = load_json_object(resp.content, what="FHIR server answer")
        except InputError as exc:
            raise _unreadable("answer not a JSON object") from exc
        if not isinstance(data.get("resourceType"), str):
            raise _unreadable("answer not a FHIR resource")
        return data

    async def _send(self, url: str | httpx.URL) -> tuple[httpx.URL, Answer]:
        """The URL as sent and its answer: ``url`` normalised, checked, then sent as checked;
        the body read as it streams, up to the size cap (then the connection is closed)."""
        try:
            target = self._policy.check_url(url)
        except EgressRefused as exc:
            log.info("cds.fhir_refused", reason=exc.reason)
            raise
        if not under(target, self.check()):
            raise _unreadable("link outside fhirServer, not followed")
        left = self._timeout
        if self._deadline is not None:
            left = min(left, self._deadline - time.monotonic())
            if left <= 0:
                raise self._late()
        try:
            # The per-request timeout bounds each socket operation; this bounds the whole
            # request, so a server trickling bytes cannot outlast the deadline.
            async with asyncio.timeout(left):
                return target, await read_capped(
                    self._http,
                    "GET",
                    target,
                    max_bytes=self._max_bytes,
                    headers=self._headers(),
                    timeout=left,
                )
        except EgressRefused as exc:
            log.info("cds.fhir_refused", reason=exc.reason)
            raise
        except TimeoutError as exc:
            if self._deadline is not None and time.monotonic() >= self._deadline:
                raise self._late() from exc
            raise _unreadable("timeout") from exc
        except AnswerTooLarge as exc:
            raise _unreadable("answer over the size limit") from exc
        except httpx.HTTPError as exc:
            raise _unreadable(type(exc).__name__) from exc

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/fhir+json"}
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def _late(self) -> PrefetchUnavailable:
        log.info("cds.fhir_unreadable", reason="prefetch deadline passed")
        return PrefetchUnavailable(
            f"could not read the FHIR server within {self._deadline_s:g} s "
            "(CANOE_CDS_PREFETCH_DEADLINE_S)"
        )

    async def complete(self, bundle: Mapping[str, Any]) -> Mapping[str, Any]:
        """A searchset with every page: follows ``next`` links (bounded) under the base."""
        entries = list(bundle.get("entry") or [])
        page = bundle
        for _ in range(self.max_pages):
            nxt = _next_link(page)
            if nxt is None:
                break
            got = await self.get(nxt)
            if got is None or got.get("resourceType") != "Bundle":
                break
            entries.extend(got.get("entry") or [])
            page = got
        else:
            if _next_link(page) is not None:
                raise PrefetchUnavailable(
                    f"search result has more than {self.max_pages} pages "
                    "(CANOE_CDS_PREFETCH_MAX_PAGES)"
                )
        out = {k: v for k, v in bundle.items() if k not in ("link", "entry")}
        out["entry"] = entries
        return out


def _unreadable(detail: str) -> PrefetchUnavailable:
    """The caller hears only that the server could not be read: the detail (refused, reset,
    not HTTP...) would make the service a port scanner. The detail goes to the log."""
    log.info("cds.fhir_unreadable", reason=detail)
    return PrefetchUnavailable("could not read the FHIR server")


def _next_link(bundle: Mapping[str, Any]) -> str | None:
    for link in bundle.get("link") or []:
        if isinstance(link, Mapping) and link.get("relation") == "next":
            url = link.get("url")
            if isinstance(url, str) and url:
                return url
    return None


@dataclass(frozen=True, slots=True)
class Resolved:
    """The data for one call: per key the resource (None: none exists), and notes in words
    about what the plan was made without (never patient data)."""

    data: Mapping[str, Mapping[str, Any] | None]
    notes: tuple[str, ...] = ()
    fetched: tuple[str, ...] = field(default=())


def _is_outcome(value: object) -> bool:
    return isinstance(value, Mapping) and value.get("resourceType") == "OperationOutcome"


def _find_patient(prefetch: Mapping[str, Any], patient_id: str) -> Mapping[str, Any] | None:
    # The specification's own example prefetches the Patient under another key
    # ("patientToGreet"); a Patient with the context's id answers "patient" whatever its key.
    for value in prefetch.values():
        if (
            isinstance(value, Mapping)
            and value.get("resourceType") == "Patient"
            and value.get("id") == patient_id
        ):
            return value
    return None


async def resolve_prefetch(
    request: HookRequest,
    service: ServiceDefinition,
    fhir: FhirClient | None,
    *,
    today: date,
    no_fetch: str = "not prefetched, and no fhirServer to read it from",
) -> Resolved:
    """Every prefetch key of ``service`` resolved, or PrefetchUnavailable naming what is not.
    ``no_fetch``: why a missing key cannot be read when ``fhir`` is None."""
    given: Mapping[str, Any] = request.prefetch or {}
    data: dict[str, Mapping[str, Any] | None] = {}
    notes: list[str] = []
    fetched: list[str] = []
    unavailable: list[Issue] = []
    for key, template in service.prefetch.items():
        required = key in service.required
        value = given.get(key, ...)
        if key == "patient" and (value is ... or value is None or _is_outcome(value)):
            found = _find_patient(given, request.patient_id)
            value = found if found is not None else value
        if isinstance(value, Mapping) and not _is_outcome(value):
            if value.get("resourceType") == "Bundle" and _next_link(value) is not None:
                if fhir is not None:
                    value = await fhir.complete(value)
                    fetched.append(key)
                else:
                    notes.append(f"'{key}' was prefetched incompletely (more pages not readable)")
            data[key] = value
            continue
        if fhir is not None:
            query = render_template(template, request.context, today)
            if query is None:
                why = "its template has a token this context does not fill"
            else:
                try:
                    got = await fhir.get(query)
                except PrefetchUnavailable as exc:
                    why = exc.message
                else:
                    if got is not None and got.get("resourceType") == "Bundle":
                        got = await fhir.complete(got)
                    data[key] = got
                    fetched.append(key)
                    continue
        else:
            why = no_fetch
        if value is None:
            # null: the client has no such data (the specification's meaning of null).
            data[key] = None
            if required and key == "patient":
                unavailable.append(_missing(key, "is null: no Patient to plan for"))
            continue
        if required:
            unavailable.append(_missing(key, why))
        else:
            notes.append(f"'{key}' was not available, so the plan was made without it")
    if unavailable:
        raise PrefetchUnavailable(
            "required prefetch data is missing: " + "; ".join(i.diagnostics for i in unavailable),
            issues=tuple(unavailable),
        )
    return Resolved(data=data, notes=tuple(notes), fetched=tuple(fetched))


def _missing(key: str, why: str) -> Issue:
    return Issue("error", "incomplete", f"prefetch '{key}': {why}", (f"prefetch.{key}",))


def assemble_bundle(
    request: HookRequest,
    resolved: Resolved,
    *,
    timestamp: str,
    extra: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """One R4 ``collection`` Bundle: the Patient, every resource of the resolved searches
    (search outcomes dropped, duplicates by Type/id once) and the draft orders (a draft wins
    over a stored resource with the same id). ``timestamp`` (when the record was gathered) is
    what dates a record that holds no dated fact of its own."""
    by_ref: dict[str, Mapping[str, Any]] = {}
    unnamed: list[Mapping[str, Any]] = []

    def put(res: Mapping[str, Any]) -> None:
        rtype = res.get("resourceType")
        if rtype in ("OperationOutcome", "Bundle") or not isinstance(rtype, str):
            return
        rid = res.get("id")
        if isinstance(rid, str) and rid:
            by_ref[f"{rtype}/{rid}"] = res
        else:
            unnamed.append(res)

    for value in resolved.data.values():
        if not isinstance(value, Mapping):
            continue
        if value.get("resourceType") == "Bundle":
            for found in value.get("entry") or []:
                if not isinstance(found, Mapping):
                    continue
                search = found.get("search")
                if isinstance(search, Mapping) and search.get("mode") == "outcome":
                    continue
                res = found.get("resource")
                if isinstance(res, Mapping):
                    put(res)
        else:
            put(value)
    for res in (*request.drafts, *extra):
        put(res)
    base = request.fhir_server
    entries: list[dict[str, Any]] = []
    for ref, res in by_ref.items():
        entry: dict[str, Any] = {"resource": dict(res)}
        if base:
            entry["fullUrl"] = f"{base}/{ref}"
        entries.append(entry)
    entries.extend({"resource": dict(r)} for r in unnamed)
    return {
        "resourceType": "Bundle",
        "type": "collection",
        "timestamp": timestamp,
        "entry": entries,
    }
