"""The CDS Hooks 2.0 HTTP side: a Starlette ASGI app over the same ``CarePlanService``.

Routes under ``Settings.cds_base_url``'s path: ``GET /cds-services`` (discovery),
``POST /cds-services/{id}`` (a hook call) and ``POST /cds-services/{id}/feedback``. Every call
is authenticated with the CDS client's JWT (``auth``); the verified ``iss`` picks the tenant.
CORS answers browsers (preflight included) before authentication, so a browser-based CDS
client sees proper 401s. Errors leave as FHIR OperationOutcome JSON with the status the error
tree maps to, in one place (``_status``). Log lines carry method, service id, status, timings
and counts only: never patient data, prefetch content or tokens.

Outside that path, always at the root and without authentication: ``GET /healthz`` (200
``{"status":"SERVING"}`` when ``ready()``, the readiness gRPC health reports, else 503
``NOT_SERVING``) and ``GET /livez`` (200 while the process answers), for probes that cannot speak
gRPC over TLS. They say nothing about any patient.

``build_app`` assembles the app from its parts (tests hand in a clock, ledger, HTTP client);
``create_app`` builds everything from ``Settings``; ``serve`` runs it with uvicorn, over HTTPS
when TLS is configured (``uvicorn_tls``). The card
ledger and the seen JWT ids live in the plan store, so any replica can answer any call.
"""

from __future__ import annotations

import asyncio
import math
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from fhir_mapping.definitions import DEFAULT_BASE, check_base, rebase
from fhir_mapping.outcome import operation_outcome
from service.cds_hooks.auth import (
    ClientIdentity,
    JwtVerifier,
    StoreReplayGuard,
    load_trusted_clients,
)
from service.cds_hooks.cards import (
    CardPlan,
    CardRecord,
    card_id_for,
    card_plan,
    card_plan_of_document,
    order_card,
    order_findings,
    summary_card,
)
from service.cds_hooks.egress import EgressPolicy, EgressRefused, GuardedTransport
from service.cds_hooks.feedback import (
    CardLedger,
    CardStore,
    Feedback,
    StoreCardLedger,
    at_feedback,
    override_tasks,
    parse_feedback,
)
from service.cds_hooks.prefetch import FhirClient, Resolved, assemble_bundle, resolve_prefetch
from service.cds_hooks.request import HookRequest, parse_hook_request
from service.cds_hooks.services import SERVICES, ServiceDefinition, discovery_document
from service.core.evaluation import Evaluation
from service.core.model import Deliberation
from service.errors import (
    CanoeError,
    InputError,
    Issue,
    LimitError,
    NotFoundError,
    StaleVersionError,
)
from service.logs import get_logger, new_request_id, request_context
from service.settings import Settings
from service.text.summary import Summary

__all__ = [
    "CdsConfig",
    "PlanService",
    "build_app",
    "create_app",
    "guarded_client_factory",
    "serve",
    "uvicorn_limits",
    "uvicorn_tls",
]

log = get_logger("canoe.cds_hooks")

FHIR_FETCH_TIMEOUT_S: Final = 10.0
# Below the usual probe timeout: a hanging backend check answers NOT_SERVING, not a timeout.
READY_TIMEOUT_S: Final = 4.0
_JSON_TYPES: Final = ("application/json", "application/fhir+json")


class _Outcome(Protocol):
    # Read-only properties: the service's outcomes are frozen dataclasses, whose fields a
    # Protocol with plain (settable) attributes would not match.
    @property
    def plan_id(self) -> str: ...

    @property
    def version(self) -> int: ...

    @property
    def deliberation(self) -> dict[str, Any]: ...


class _PlanOutcome(_Outcome, Protocol):
    @property
    def plan(self) -> Deliberation | None: ...

    @property
    def evaluation(self) -> Evaluation | None: ...

    @property
    def clinician(self) -> Summary | None: ...


class PlanService(CardStore, Protocol):
    """What the bridge needs of ``service.app.CarePlanService`` (its card ledger included)."""

    async def ready(self) -> bool: ...

    async def generate(
        self, bundle: Mapping[str, Any], *, tenant: str, source_base: str = ""
    ) -> _PlanOutcome: ...

    async def contest(
        self, tasks: Mapping[str, Any], *, tenant: str, plan_id: str, version: int
    ) -> _Outcome: ...

    async def record_feedback(
        self, *, tenant: str, plan_id: str, card_id: str, outcome: str, payload: dict[str, Any]
    ) -> None: ...

    async def claim_token_id(self, *, issuer: str, jti: str, expires_at: float) -> bool: ...


@dataclass(frozen=True, slots=True)
class CdsConfig:
    base_url: str  # this service's public URL (JWT aud is checked against it), no trailing /
    review_url: str  # SMART launch URL of the review app
    max_body_bytes: int = 8 * 1024 * 1024
    fhir_timeout_s: float = FHIR_FETCH_TIMEOUT_S
    fhir_base: str = DEFAULT_BASE  # canonical base of our CodeSystems in the cards
    prefetch_deadline_s: float = 10.0  # all FHIR reads of one hook call together
    prefetch_max_pages: int = 20  # per search
    max_feedback_items: int = 100  # per feedback request
    max_tasks: int = 200  # contestation Tasks one feedback request may make

    @classmethod
    def from_settings(cls, settings: Settings) -> CdsConfig:
        base = settings.cds_url
        return cls(
            base_url=base,
            review_url=settings.cds.review_url or f"{base}/review",
            max_body_bytes=settings.limits.max_message_bytes,
            fhir_base=settings.fhir.base,
            prefetch_deadline_s=settings.cds.prefetch_deadline_s,
            prefetch_max_pages=settings.cds.prefetch_max_pages,
            max_feedback_items=settings.limits.max_feedback_items,
            max_tasks=settings.limits.max_tasks_per_request,
        )

    @property
    def prefix(self) -> str:
        return urlsplit(self.base_url).path.rstrip("/")


# ------------------------------------------------------------------------------ errors


def _error(exc: CanoeError) -> JSONResponse:
    """The error as HTTP: the status its class states, its OperationOutcome (the one writer,
    ``fhir_mapping.outcome``) with the message as narrative, and the header it calls for."""
    body = operation_outcome(exc)
    body["text"] = {"status": "generated", "div": _div(exc.message)}
    headers = None
    if exc.http_status == HTTPStatus.UNAUTHORIZED:
        headers = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
    if isinstance(exc, LimitError) and exc.retry_after_s is not None:
        headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after_s)))}  # whole seconds
    return JSONResponse(body, status_code=exc.http_status, headers=headers)


def _div(text: str) -> str:
    safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f'<div xmlns="http://www.w3.org/1999/xhtml">{safe}</div>'


# ------------------------------------------------------------------------------ probes


def _fhir_base(fhir_server: str) -> str:
    """The client's ``fhirServer`` as the base its record lives under ("" when none or unusable:
    the plan's references then stay as the record named them, marked as the source's)."""
    try:
        return check_base(fhir_server) if fhir_server else ""
    except ValueError:
        return ""


def _probes(service: PlanService) -> list[Route]:
    async def healthz(_request: Request) -> Response:
        try:
            ready = await asyncio.wait_for(service.ready(), READY_TIMEOUT_S)
        except Exception:
            ready = False
        return JSONResponse(
            {"status": "SERVING" if ready else "NOT_SERVING"},
            status_code=200 if ready else 503,
            headers={"Cache-Control": "no-store"},
        )

    async def livez(_request: Request) -> Response:
        # Alive means the event loop answers; a backend or store outage must not get the pod
        # restarted (that is readiness, above).
        return JSONResponse({"status": "SERVING"}, headers={"Cache-Control": "no-store"})

    return [Route("/healthz", healthz, methods=["GET"]), Route("/livez", livez, methods=["GET"])]


# ------------------------------------------------------------------------------ the app


class _Bridge:
    def __init__(
        self,
        service: PlanService,
        config: CdsConfig,
        verifier: JwtVerifier,
        ledger: CardLedger,
        egress_client: EgressClientFactory,
        now: Callable[[], datetime],
    ) -> None:
        self.service = service
        self.config = config
        self.verifier = verifier
        self.ledger = ledger
        self.egress_client = egress_client
        self.now = now

    # -- plumbing

    def _audiences(self, service_id: str | None) -> list[str]:
        base = self.config.base_url
        out = [base, f"{base}/", f"{base}/cds-services"]
        if service_id is not None:
            endpoint = f"{base}/cds-services/{service_id}"
            out += [endpoint, f"{endpoint}/feedback"]
        return out

    async def _identity(self, request: Request, service_id: str | None) -> ClientIdentity:
        return await self.verifier.verify(
            request.headers.get("authorization"), self._audiences(service_id)
        )

    async def _body(self, request: Request) -> bytes:
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype and ctype not in _JSON_TYPES:
            raise InputError(f"Content-Type must be application/json, not {ctype!r}")
        limit = self.config.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise LimitError(f"request body over {limit} bytes (CANOE_MAX_MESSAGE_BYTES)")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise LimitError(f"request body over {limit} bytes (CANOE_MAX_MESSAGE_BYTES)")
            chunks.append(chunk)
        return b"".join(chunks)

    def _service(self, request: Request) -> ServiceDefinition:
        sid = request.path_params["service_id"]
        found = SERVICES.get(sid)
        if found is None:
            raise NotFoundError(f"no CDS service {sid!r} here; see GET {{base}}/cds-services")
        return found

    async def _guard(
        self, request: Request, handler: Callable[[], Awaitable[Response]], **fields: Any
    ) -> Response:
        rid = new_request_id(request.headers.get("x-request-id"))
        t0 = time.perf_counter()
        with request_context(rid, transport="cds-hooks", **fields):
            try:
                response = await handler()
            except CanoeError as exc:
                response = _error(exc)
                log.info(
                    "cds.refused",
                    status=response.status_code,
                    error=type(exc).__name__,
                    ms=round((time.perf_counter() - t0) * 1000, 1),
                )
            except Exception:
                log.exception("cds.failed", ms=round((time.perf_counter() - t0) * 1000, 1))
                response = _error(CanoeError("internal error"))
            else:
                log.info(
                    "cds.answered",
                    status=response.status_code,
                    ms=round((time.perf_counter() - t0) * 1000, 1),
                )
            response.headers["x-request-id"] = rid
            return response

    # -- endpoints

    async def discovery(self, request: Request) -> Response:
        async def run() -> Response:
            await self._identity(request, None)
            return JSONResponse(discovery_document())

        return await self._guard(request, run, endpoint="discovery")

    async def hook(self, request: Request) -> Response:
        async def run() -> Response:
            service = self._service(request)
            who = await self._identity(request, service.id)
            body = await self._body(request)
            # JSON and R4 validation of the drafts: CPU work proportional to the body, done
            # off the event loop so probes and other calls keep being answered.
            call = await asyncio.to_thread(parse_hook_request, body, service)
            answer = await self._answer(service, who, call)
            return JSONResponse(rebase(answer, self.config.fhir_base))

        return await self._guard(
            request, run, endpoint="hook", service=request.path_params["service_id"]
        )

    async def feedback(self, request: Request) -> Response:
        async def run() -> Response:
            service = self._service(request)
            who = await self._identity(request, service.id)
            items = await asyncio.to_thread(
                parse_feedback,
                await self._body(request),
                max_items=self.config.max_feedback_items,
            )
            applied = await self._feedback(service, who, items)
            return JSONResponse({"recorded": len(items), "contested": applied})

        return await self._guard(
            request, run, endpoint="feedback", service=request.path_params["service_id"]
        )

    # -- the work

    async def _answer(
        self, service: ServiceDefinition, who: ClientIdentity, call: HookRequest
    ) -> dict[str, Any]:
        if service.hook != "patient-view" and not call.focus:
            # No draft MedicationRequest to argue about (only other order types, orders not
            # written yet, or none selected): nothing for the panel to say, so no card and no
            # plan.
            log.info("cds.no_medication_drafts", other_drafts=len(call.other_drafts))
            return {"cards": []}
        now = self.now()
        resolved = await self._resolve(service, who, call, now)
        stamp = now.isoformat(timespec="milliseconds")
        bundle = await asyncio.to_thread(assemble_bundle, call, resolved, timestamp=stamp)
        log.info(
            "cds.prefetch",
            resources=len(bundle["entry"]),
            fetched=list(resolved.fetched),
            notes=len(resolved.notes),
        )
        # The assembled Bundle goes to the planner as it is: no trip through bytes and back.
        outcome = await self.service.generate(
            bundle,
            tenant=who.tenant,
            source_base=_fhir_base(call.fhir_server),
        )
        document = outcome.deliberation
        patient_ref = str(document.get("patient_ref") or f"Patient/{call.patient_id}")

        def record(kind: str, options: tuple[str, ...] = (), draft: str = "") -> CardRecord:
            return CardRecord(
                card_id=card_id_for(outcome.plan_id, outcome.version, kind, draft),
                tenant=who.tenant,
                service_id=service.id,
                plan_id=outcome.plan_id,
                version=outcome.version,
                patient_ref=patient_ref,
                user_ref=call.user_id,
                kind="summary" if kind == "summary" else "order",
                option_ids=options,
                draft_ref=draft,
            )

        notes = (*call.notes, *resolved.notes)
        view = _card_plan(outcome)
        cards: list[dict[str, Any]] = []
        issued: list[CardRecord] = []
        if service.hook == "patient-view":
            rec = record("summary")
            cards.append(
                summary_card(view, review_url=self.config.review_url, record=rec, notes=notes)
            )
            issued.append(rec)
        else:
            drafts = {f"MedicationRequest/{d.get('id')}": d for d in call.drafts}
            findings = order_findings(view, call.focus)
            for ref in call.focus:
                mine = [f for f in findings if f.draft_ref == ref]
                if not mine:
                    continue
                rec = record("order", tuple(dict.fromkeys(f.option_id for f in mine)), ref)
                cards.append(
                    order_card(
                        mine,
                        plan=view,
                        draft=drafts.get(ref),
                        review_url=self.config.review_url,
                        record=rec,
                        notes=notes,
                    )
                )
                issued.append(rec)
        # Stored before the cards leave: feedback may come back at once, to another replica.
        await self.ledger.remember(issued)
        log.info("cds.cards", plan_id=outcome.plan_id, cards=len(cards))
        return {"cards": cards}

    async def _resolve(
        self, service: ServiceDefinition, who: ClientIdentity, call: HookRequest, now: datetime
    ) -> Resolved:
        """The record's data: prefetch, then the client's FHIR server where its egress policy
        allows, through a client of its own (its allowlists bound to its connections)."""
        if not call.can_fetch:
            return await resolve_prefetch(call, service, None, today=now.date())
        # No fhirAuthorization: an open server (the specification allows one), read without
        # a token, under the same egress policy as one that lends a token.
        token = call.fhir_authorization.access_token if call.fhir_authorization else None
        policy = who.client.egress
        async with self.egress_client(policy) as http:
            fhir = FhirClient(
                http,
                call.fhir_server,
                token,
                timeout_s=self.config.fhir_timeout_s,
                policy=policy,
                deadline_s=self.config.prefetch_deadline_s,
                max_pages=self.config.prefetch_max_pages,
                max_bytes=self.config.max_body_bytes,
            )
            try:
                fhir.check()
            except EgressRefused as exc:
                log.info("cds.fhir_refused", reason=exc.reason)
                return await resolve_prefetch(
                    call, service, None, today=now.date(), no_fetch=exc.message
                )
            return await resolve_prefetch(call, service, fhir, today=now.date())

    async def _feedback(
        self, service: ServiceDefinition, who: ClientIdentity, items: tuple[Feedback, ...]
    ) -> int:
        """Record every item; the overrides on one plan's cards become ONE contestation (one
        new version for the whole request, not one per item). Returns the items contested."""
        records: list[CardRecord] = []
        for fb in items:
            rec = await self.ledger.lookup(who.tenant, fb.card)
            # Another tenant's card is reported exactly like an unknown one: no probing.
            if rec is None or rec.tenant != who.tenant or rec.service_id != service.id:
                msg = f"card {fb.card} is not one this service returned to you"
                where = (f"{fb.path}.card",)
                raise NotFoundError(msg, issues=(Issue("error", "not-found", msg, where),))
            records.append(rec)
        by_plan: dict[str, list[int]] = {}
        for i, (fb, rec) in enumerate(zip(items, records, strict=True)):
            if override_tasks(fb, rec, version=rec.version):
                by_plan.setdefault(rec.plan_id, []).append(i)
        contested: dict[int, dict[str, Any]] = {}
        for indexes in by_plan.values():
            version, task_ids = await self._contest([(items[i], records[i]) for i in indexes], who)
            for i, ids in zip(indexes, task_ids, strict=True):
                contested[i] = {"version": version, "tasks": ids}
        for i, (fb, rec) in enumerate(zip(items, records, strict=True)):
            payload = fb.payload()
            if i in contested:
                payload["contested"] = contested[i]
            await self.service.record_feedback(
                tenant=who.tenant,
                plan_id=rec.plan_id,
                card_id=fb.card,
                outcome=fb.outcome,
                payload=payload,
            )
            log.info(
                "cds.feedback",
                outcome=fb.outcome,
                plan_id=rec.plan_id,
                tasks=len(contested.get(i, {}).get("tasks", ())),
            )
        return len(contested)

    async def _contest(
        self, overrides: Sequence[tuple[Feedback, CardRecord]], who: ClientIdentity
    ) -> tuple[int, list[list[str]]]:
        """Apply the Tasks of one plan's overrides as one Bundle, against the newest version a
        card came from; on a stale version (another feedback or a planner moved the plan on)
        once more against the current one: option ids are stable across versions. Returns the
        version made and each override's Task ids. A refusal names the feedback items' own
        elements, never the Bundle of Tasks made from them."""
        plan_id = overrides[0][1].plan_id
        version = max(rec.version for _fb, rec in overrides)
        for attempt in range(2):
            per_item = [override_tasks(fb, rec, version=version) for fb, rec in overrides]
            made: dict[str, tuple[dict[str, Any], Feedback]] = {}
            for ts, (fb, _rec) in zip(per_item, overrides, strict=True):
                for t in ts:
                    made.setdefault(str(t["id"]), (t, fb))
            tasks = [t for t, _fb in made.values()]
            if len(tasks) > self.config.max_tasks:
                msg = (
                    f"the overrides make {len(tasks)} contestation Tasks; at most "
                    f"{self.config.max_tasks} are applied per request (CANOE_MAX_TASKS_PER_REQUEST)"
                )
                raise LimitError(msg, issues=(Issue("error", "too-costly", msg, ("feedback",)),))
            bundle = {
                "resourceType": "Bundle",
                "type": "collection",
                "entry": [{"fullUrl": f"urn:uuid:{t['id']}", "resource": t} for t in tasks],
            }
            try:
                done = await self.service.contest(
                    bundle, tenant=who.tenant, plan_id=plan_id, version=version
                )
            except StaleVersionError as exc:
                if attempt:
                    at_feedback(exc, [fb for _t, fb in made.values()])
                    raise
                version = exc.current_version
                continue
            except CanoeError as exc:
                at_feedback(exc, [fb for _t, fb in made.values()])
                raise
            return done.version, [[str(t["id"]) for t in ts] for ts in per_item]
        raise AssertionError("unreachable")


EgressClientFactory = Callable[[EgressPolicy], AbstractAsyncContextManager[httpx.AsyncClient]]


def guarded_client_factory() -> EgressClientFactory:
    """One HTTP client per hook call, its connections bound to the calling CDS client's
    egress policy (so no pooled connection crosses from one client's allowlists to another's);
    the TLS context, the costly part, is built once."""
    context = ssl.create_default_context()

    @asynccontextmanager
    async def client(policy: EgressPolicy) -> AsyncIterator[httpx.AsyncClient]:
        async with httpx.AsyncClient(
            transport=GuardedTransport(policy, ssl_context=context),
            follow_redirects=False,  # FhirClient follows same-origin redirects itself
            trust_env=False,
        ) as http:
            yield http

    return client


def build_app(
    service: PlanService,
    config: CdsConfig,
    verifier: JwtVerifier,
    *,
    ledger: CardLedger | None = None,
    egress_client: EgressClientFactory | None = None,
    now: Callable[[], datetime] | None = None,
    cors_origins: tuple[str, ...] = ("*",),
) -> Starlette:
    """The ASGI app. ``egress_client`` makes the HTTP client for one hook call's FHIR reads
    (default: ``guarded_client_factory``)."""
    bridge = _Bridge(
        service,
        config,
        verifier,
        ledger or StoreCardLedger(service),
        egress_client or guarded_client_factory(),
        now or (lambda: datetime.now(UTC)),
    )

    base = f"{config.prefix}/cds-services"
    return Starlette(
        routes=[
            *_probes(service),
            Route(base, bridge.discovery, methods=["GET"]),
            Route(f"{base}/{{service_id}}", bridge.hook, methods=["POST"]),
            Route(f"{base}/{{service_id}}/feedback", bridge.feedback, methods=["POST"]),
        ],
        middleware=[
            # Bearer tokens, not cookies: a wildcard origin is safe and what EHR-embedded
            # browser clients need; preflights are answered here, before authentication.
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors_origins),
                allow_methods=["GET", "POST", "OPTIONS"],
                allow_headers=["Authorization", "Content-Type", "X-Request-Id"],
                expose_headers=["X-Request-Id", "WWW-Authenticate"],
                max_age=600,
            )
        ],
    )


def create_app(service: PlanService, settings: Settings) -> Starlette:
    """The app as the settings configure it (trusted clients from ``cds_jwks_file``). Cards and
    seen JWT ids are kept in the service's store, so replicas share them."""
    clients = load_trusted_clients(settings.cds.jwks_file) if settings.cds.jwks_file else {}
    verifier = JwtVerifier(clients, replay=StoreReplayGuard(service))
    return build_app(service, CdsConfig.from_settings(settings), verifier)


def uvicorn_tls(settings: Settings) -> dict[str, Any]:
    """``uvicorn.Config`` keyword arguments for HTTPS with the service's certificate (the one
    gRPC uses); empty without TLS."""
    if not settings.tls.cert_file:
        return {}
    options: dict[str, Any] = {
        "ssl_certfile": settings.tls.cert_file,
        "ssl_keyfile": settings.tls.key_file,
    }
    if settings.tls.client_ca_file:
        # Client certificates are verified when presented but not required (unlike gRPC's mTLS):
        # the kubelet's HTTPS probes carry none and must still reach /healthz, and CDS clients
        # authenticate every call with their signed JWT anyway.
        options["ssl_ca_certs"] = settings.tls.client_ca_file
        options["ssl_cert_reqs"] = ssl.CERT_OPTIONAL
    return options


def uvicorn_limits(settings: Settings) -> dict[str, Any]:
    """``uvicorn.Config`` keyword arguments that bound slow and idle clients: the header-read
    deadline and connection cap of ``GuardedH11Protocol``, and the keep-alive timeout."""
    from service.cds_hooks._connections import guarded_protocol

    return {
        "http": guarded_protocol(
            header_timeout_s=settings.server.http_header_timeout_s,
            max_connections=settings.server.http_max_connections,
        ),
        "timeout_keep_alive": settings.server.http_keep_alive_s,
    }


async def serve(service: PlanService, settings: Settings, *, host: str = "0.0.0.0") -> None:
    """Run the CDS Hooks app on ``settings.server.http_port`` until cancelled (uvicorn, no reload),
    over HTTPS when ``tls_cert_file``/``tls_key_file`` are set."""
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(
            create_app(service, settings),
            host=host,
            port=settings.server.http_port,
            log_config=None,  # the project's logging set-up owns the handlers
            access_log=False,  # the app logs each call itself, without query or body
            lifespan="on",
            **uvicorn_limits(settings),
            **uvicorn_tls(settings),
        )
    )
    await server.serve()


def _card_plan(outcome: _PlanOutcome) -> CardPlan:
    """What the cards read of the plan: the typed deliberation, evaluation and clinician summary
    its writing step made (``service.versions``); the document only when they are absent."""
    if outcome.plan is None or outcome.evaluation is None:
        return card_plan_of_document(outcome.deliberation)
    return card_plan(outcome.plan, outcome.evaluation, outcome.clinician)
