"""The review app's HTTP side: SMART launch, review links, the pages, and contestation by form.

Mounted at ``<cds base path>/review`` on the same Starlette app, process, settings and store as
the CDS Hooks bridge and gRPC. A session is a signed cookie (``tokens.Signer``) naming the
tenant, the user and the one plan it may read and contest; it comes from a SMART EHR launch
(``GET /review?iss&launch`` -> ``/review/callback``) or from a short-lived review link
(``GET /review/open?token``). A launch's ``state`` and the EHR's authorization code are each
accepted once, across every worker and replica (the store remembers them). Every POST carries
the session's CSRF token and, when the browser sends one, a same-origin ``Origin``. Every
answer carries a strict Content-Security-Policy (no inline script or style, nothing from
elsewhere). Log lines carry route, status and timings: never tokens, query strings or patient
data.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol
from urllib.parse import parse_qsl, urlsplit

import httpx
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from inference.evidence import EvidenceBase
from service.core import Evaluation, evaluate, from_document
from service.core.contest import (
    ContestAction,
    DecideOption,
    DecideProblem,
    RejectArgument,
    apply_all,
)
from service.core.model import Deliberation, Judgement, OptionDecision
from service.errors import (
    AuthError,
    CanoeError,
    ForbiddenError,
    InputError,
    LimitError,
    NotFoundError,
    StaleVersionError,
    TaskError,
)
from service.logs import get_logger, new_request_id, request_context
from service.readability import MAX_PATIENT_GRADE, fkgl, warm_up
from service.review import smart, views
from service.review.tasks import task_from_form
from service.review.tokens import Signer
from service.settings import Settings
from service.store import VersionInfo, VersionRecord
from service.stored_summary import summary_from_record
from service.text.patient import patient_version
from service.text.summary import coverage_detail, coverage_lines, summarise
from service.text.words import ranking_label
from service.versions import WrittenVersion

__all__ = ["ReviewConfig", "ReviewService", "build_review"]

log = get_logger("canoe.review")

SESSION_COOKIE: Final = "canoe_review"
LAUNCH_COOKIE: Final = "canoe_review_launch"
CHOOSE_COOKIE: Final = "canoe_review_choose"
LAUNCH_TTL_S: Final = 600
# How long a used authorization code is remembered: the client cannot know the code's own
# lifetime, and RFC 6749 (4.1.2) asks EHRs to keep it under ten minutes.
CODE_MEMORY_S: Final = 3600
MAX_FORM_BYTES: Final = 64 * 1024
_HERE: Final = Path(__file__).parent
_CACHE: Final = 128


class _Contested(Protocol):
    @property
    def version(self) -> int: ...

    @property
    def replayed(self) -> bool: ...

    @property
    def written(self) -> WrittenVersion | None: ...


class ReviewService(Protocol):
    """What the review app needs of ``service.app.CarePlanService``."""

    async def plan_version(
        self, *, tenant: str, plan_id: str, version: int | None = None
    ) -> VersionRecord: ...

    async def versions(
        self, *, tenant: str, plan_id: str | None = None, patient_ref: str | None = None
    ) -> list[VersionInfo]: ...

    async def contest(
        self, tasks: Mapping[str, Any], *, tenant: str, plan_id: str, version: int
    ) -> _Contested: ...

    async def claim_token_id(self, *, issuer: str, jti: str, expires_at: float) -> bool: ...


class ReviewConfig:
    """The review settings, checked once at start-up."""

    def __init__(self, settings: Settings) -> None:
        base = settings.cds_url  # the configured public URL, else this host on the HTTP port
        self.public_base = f"{base}/review"  # absolute, for redirect_uri and review links
        self.prefix = urlsplit(base).path.rstrip("/") + "/review"  # the mount path
        self.secure_cookies = base.startswith("https://")
        self.client_id = settings.review.smart_client_id
        self.issuers = smart.parse_issuers(settings.review.smart_issuers)
        self.session_ttl_s = settings.review.session_ttl_s
        self.signer = Signer(settings.review.signing_key)
        origins = {f"{urlsplit(i).scheme}://{urlsplit(i).netloc}" for i in self.issuers}
        frame = " ".join(["'self'", *sorted(origins)])
        self.csp = (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            "connect-src 'self'; form-action 'self'; base-uri 'none'; "
            f"frame-ancestors {frame}"
        )


class _Session:
    def __init__(self, claims: Mapping[str, Any]) -> None:
        self.tenant = str(claims["ten"])
        self.user = str(claims["sub"])
        self.plan_id = str(claims["plan"])
        self.csrf = str(claims["csrf"])

    def check_plan(self, plan_id: str) -> None:
        if not hmac.compare_digest(plan_id, self.plan_id):
            raise ForbiddenError("this review session was opened for another plan")


class _Refusal(Exception):
    """A page-level refusal that is not an error of the service (bad CSRF token)."""

    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


class _Review:
    def __init__(self, service: ReviewService, config: ReviewConfig) -> None:
        self.service = service
        self.config = config
        self.env = Environment(
            loader=FileSystemLoader(_HERE / "templates"),
            autoescape=select_autoescape(["jinja", "html"], default=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        # Ids of activities and arguments name medicines: URLs carry ref(id) instead.
        self.env.globals.update(
            base=config.prefix,
            words=views.strength_words,
            ref=config.signer.opaque,
            ranking_label=ranking_label,
        )
        self.env.filters["num"] = lambda x: "—" if x is None else f"{x:.2f}"
        self.env.filters["signed"] = lambda x: f"{x:+.2f}"
        self.env.filters["when"] = views.human_time
        self.evidence = EvidenceBase.load()
        self._versions: OrderedDict[
            tuple[str, str, int], tuple[VersionRecord, Deliberation, Evaluation]
        ] = OrderedDict()
        # Versions this app just wrote (a contestation), typed as their writing step made
        # them: the page after the change renders from them rather than parse the document.
        self._written: OrderedDict[tuple[str, str, int], tuple[Deliberation, Evaluation]] = (
            OrderedDict()
        )

    # ------------------------------------------------------------------ plumbing

    def _page(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status)

    def _unref(self, token: str, d: Deliberation) -> str:
        """The activity, argument or problem id of ``d`` a URL token stands for; a plain id
        (a link made before URLs were opaque) stands for itself."""
        ids = [x for o in d.options for x in (o.id, *(a.id for a in o.arguments))]
        ids += [p.id for p in d.problems]
        return next((i for i in ids if self.config.signer.opaque(i) == token), token)

    def _headers(self, response: Response) -> Response:
        response.headers["Content-Security-Policy"] = self.config.csp
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"  # "no-referrer" makes Origin "null"
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    def _cookie(self, response: Response, name: str, value: str, max_age: int) -> None:
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            path=self.config.prefix,
            httponly=True,
            secure=self.config.secure_cookies,
            samesite="lax",
        )

    def _session(self, request: Request) -> _Session:
        claims = self.config.signer.verify("session", request.cookies.get(SESSION_COOKIE))
        return _Session(claims)

    def _start_session(self, tenant: str, user: str, plan_id: str, target: str) -> RedirectResponse:
        token = self.config.signer.sign(
            "session",
            {"ten": tenant, "sub": user, "plan": plan_id, "csrf": secrets.token_urlsafe(24)},
            self.config.session_ttl_s,
        )
        response = RedirectResponse(target, status_code=303)
        self._cookie(response, SESSION_COOKIE, token, self.config.session_ttl_s)
        response.delete_cookie(LAUNCH_COOKIE, path=self.config.prefix)
        return response

    async def _guard(
        self, request: Request, endpoint: str, handler: Callable[[], Awaitable[Response]]
    ) -> Response:
        rid = new_request_id(request.headers.get("x-request-id"))
        t0 = time.perf_counter()
        with request_context(rid, transport="review", endpoint=endpoint):
            try:
                response = await handler()
            except _Refusal as exc:
                response = self._page(
                    "error.jinja", exc.status, title=exc.title, message=exc.message, reload=None
                )
            except StaleVersionError as exc:
                response = self._stale(request, exc)
            except CanoeError as exc:
                status, title = _status(exc)
                response = self._page(
                    "error.jinja", status, title=title, message=exc.message, reload=None
                )
                if isinstance(exc, LimitError) and exc.retry_after_s is not None:
                    response.headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
            except Exception:
                log.exception("review.failed", ms=_ms(t0))
                response = self._page(
                    "error.jinja",
                    500,
                    title="Something went wrong",
                    message="The review app failed on this request. Nothing was changed.",
                    reload=None,
                )
            log.info("review.answered", status=response.status_code, ms=_ms(t0))
            response.headers["x-request-id"] = rid
            return self._headers(response)

    def _stale(
        self, request: Request, exc: StaleVersionError, reload: str | None = None
    ) -> Response:
        plan_id = request.path_params.get("plan_id", "")
        return self._page(
            "error.jinja",
            409,
            title="This page is out of date",
            message=(
                f"Someone changed this plan while you were reading it: it is now at version "
                f"{exc.current_version}. Your action was not applied. Reload the current "
                "version, check the change, and act again if you still want to."
            ),
            reload=reload or f"{self.config.prefix}/plans/{plan_id}",
        )

    async def _load(
        self, session: _Session, plan_id: str, version: int | None
    ) -> tuple[VersionRecord, Deliberation, Evaluation]:
        session.check_plan(plan_id)
        if version is not None:
            key = (session.tenant, plan_id, version)
            hit = self._versions.get(key)
            if hit is not None:
                self._versions.move_to_end(key)
                return hit
        rec = await self.service.plan_version(
            tenant=session.tenant, plan_id=plan_id, version=version
        )
        key = (session.tenant, plan_id, rec.version)
        hit = self._versions.get(key)
        if hit is None:
            typed = self._written.pop(key, None)
            if typed is None:
                d = from_document(rec.deliberation)
                typed = (d, evaluate(d))
            hit = (rec, typed[0], typed[1])
            self._versions[key] = hit
            while len(self._versions) > _CACHE:
                self._versions.popitem(last=False)
        return hit

    async def _facts(self, session: _Session, plan_id: str) -> Mapping[str, Mapping[str, str]]:
        first, _, _ = await self._load(session, plan_id, 1)
        facts = first.summary.get("facts")
        return facts if isinstance(facts, Mapping) else {}

    async def _banner(self, session: _Session, plan_id: str) -> views.PatientBanner:
        first, _, _ = await self._load(session, plan_id, 1)
        return _banner_of(first)

    async def _patient_header(self, tenant: str, plan_id: str) -> views.PatientBanner:
        return _banner_of(
            await self.service.plan_version(tenant=tenant, plan_id=plan_id, version=1)
        )

    async def _current(self, session: _Session, plan_id: str) -> int:
        infos = await self.service.versions(tenant=session.tenant, plan_id=plan_id)
        return max((i.version for i in infos if i.current), default=0)

    # ------------------------------------------------------------------ launch

    async def entry(self, request: Request) -> Response:
        async def run() -> Response:
            q = request.query_params
            iss, launch = q.get("iss"), q.get("launch")
            if not iss and not launch:
                return self._page("landing.jinja")
            if not iss or not launch:
                raise InputError("a SMART EHR launch needs both iss and launch")
            tenant = self.config.issuers.get(iss.rstrip("/"))
            if tenant is None:
                raise ForbiddenError("this EHR (iss) is not registered for the review app")
            async with httpx.AsyncClient(follow_redirects=False) as http:
                cfg = await smart.discover(http, iss)
            verifier, challenge = smart.pkce_pair()
            state = secrets.token_urlsafe(24)
            launch_token = self.config.signer.sign(
                "launch",
                {
                    "state": state,
                    "verifier": verifier,
                    "iss": cfg.issuer,
                    "ten": tenant,
                    "cfg": [
                        cfg.authorization_endpoint,
                        cfg.token_endpoint,
                        cfg.jwks_uri,
                        cfg.id_token_issuer,
                    ],
                },
                LAUNCH_TTL_S,
            )
            url = smart.authorize_url(
                cfg,
                client_id=self.config.client_id,
                redirect_uri=f"{self.config.public_base}/callback",
                launch=launch,
                state=state,
                challenge=challenge,
            )
            response = RedirectResponse(url, status_code=303)
            self._cookie(response, LAUNCH_COOKIE, launch_token, LAUNCH_TTL_S)
            return response

        return await self._guard(request, "launch", run)

    async def callback(self, request: Request) -> Response:
        async def run() -> Response:
            q = request.query_params
            if q.get("error"):
                raise AuthError("the EHR did not authorize the review app")
            claims = self.config.signer.verify("launch", request.cookies.get(LAUNCH_COOKIE))
            state, code = q.get("state", ""), q.get("code", "")
            if not state or not hmac.compare_digest(state, str(claims["state"])):
                raise AuthError("the launch state does not match: start again from the EHR")
            if not code:
                raise AuthError("the EHR sent no authorization code")
            await self._first_use(claims, state, code)
            auth, token, jwks, id_iss = claims["cfg"]
            cfg = smart.SmartConfiguration(str(claims["iss"]), auth, token, jwks, id_iss)
            async with httpx.AsyncClient(follow_redirects=False) as http:
                ctx = await smart.exchange(
                    http,
                    cfg,
                    client_id=self.config.client_id,
                    redirect_uri=f"{self.config.public_base}/callback",
                    code=code,
                    verifier=str(claims["verifier"]),
                )
            tenant = str(claims["ten"])
            if not ctx.plan_id:
                return await self._patient_launch(tenant, ctx.user, ctx.patient)
            rec = await self.service.plan_version(tenant=tenant, plan_id=ctx.plan_id)
            if ctx.patient and ctx.patient != rec.patient_ref:
                raise ForbiddenError("the launch's patient is not the patient of this plan")
            target = f"{self.config.prefix}/plans/{ctx.plan_id}"
            if ctx.version is not None and ctx.version != rec.version:
                target += f"?since={ctx.version}"  # the card's version: show what changed
            log.info("review.launched", tenant=tenant, plan_id=ctx.plan_id)
            return self._start_session(tenant, ctx.user, ctx.plan_id, target)

        return await self._guard(request, "callback", run)

    async def _patient_plans(self, tenant: str, patient: str) -> list[VersionInfo]:
        """The current version of each of the patient's plans in this tenant, latest first."""
        infos = await self.service.versions(tenant=tenant, patient_ref=patient)
        current = [i for i in infos if i.current]
        return sorted(current, key=lambda i: (i.created, i.plan_id), reverse=True)

    async def _patient_launch(self, tenant: str, user: str, patient: str) -> Response:
        """A launch with patient context only: the patient's one plan opens at once; with
        several, the user picks one (the list is bound to this patient by a signed cookie)."""
        plans = await self._patient_plans(tenant, patient)
        if not plans:
            raise NotFoundError(
                "this service holds no care plan for the patient you launched from: plan one "
                "first (CDS Hooks patient-view, gRPC GeneratePlan or canoe plan)"
            )
        log.info("review.launched", tenant=tenant, plans=len(plans))
        if len(plans) == 1:
            plan_id = plans[0].plan_id
            return self._start_session(
                tenant, user, plan_id, f"{self.config.prefix}/plans/{plan_id}"
            )
        token = self.config.signer.sign(
            "choose", {"ten": tenant, "sub": user, "pat": patient}, self.config.session_ttl_s
        )
        response = RedirectResponse(f"{self.config.prefix}/choose", status_code=303)
        self._cookie(response, CHOOSE_COOKIE, token, self.config.session_ttl_s)
        response.delete_cookie(LAUNCH_COOKIE, path=self.config.prefix)
        return response

    async def choose(self, request: Request) -> Response:
        async def run() -> Response:
            claims = self.config.signer.verify("choose", request.cookies.get(CHOOSE_COOKIE))
            tenant, user, patient = str(claims["ten"]), str(claims["sub"]), str(claims["pat"])
            plans = await self._patient_plans(tenant, patient)
            picked = request.query_params.get("plan")
            if not plans:
                raise NotFoundError("this service holds no care plan for this patient")
            if picked is None:
                banner = await self._patient_header(tenant, plans[0].plan_id)
                return self._page("choose.jinja", plans=plans, user=user, patient=banner)
            if not any(hmac.compare_digest(picked, i.plan_id) for i in plans):
                raise ForbiddenError("this plan is not one of the launched patient's plans")
            return self._start_session(tenant, user, picked, f"{self.config.prefix}/plans/{picked}")

        return await self._guard(request, "choose", run)

    async def _first_use(self, launch: Mapping[str, Any], state: str, code: str) -> None:
        """Claim the launch's ``state`` and the EHR's code in the store, which every worker and
        replica shares, before the code leaves: a replayed callback, or a code reused under
        another launch (an EHR may accept a code twice), is refused here. Only digests are
        kept, until the state's launch expires and for ``CODE_MEMORY_S``."""
        iss = str(launch["iss"])
        if not await self.service.claim_token_id(
            issuer=f"review-state {iss}", jti=_digest(state), expires_at=float(launch["exp"])
        ):
            raise AuthError("this launch was already completed: open the review again from the EHR")
        if not await self.service.claim_token_id(
            issuer=f"review-code {iss}", jti=_digest(code), expires_at=time.time() + CODE_MEMORY_S
        ):
            raise AuthError(
                "the EHR's authorization code was already used: open the review again from the EHR"
            )

    async def open_link(self, request: Request) -> Response:
        async def run() -> Response:
            claims = self.config.signer.verify("link", request.query_params.get("token"))
            plan_id = str(claims.get("plan", ""))
            tenant, user = str(claims.get("ten", "")), str(claims.get("sub", ""))
            if not plan_id or not tenant or not user:
                raise AuthError("the review link is incomplete")
            # A link opens one session: its id is claimed in the store every worker and replica
            # shares, so a link copied from a chat or a browser history cannot open another.
            if not await self.service.claim_token_id(
                issuer="review-link",
                jti=str(claims.get("jti", "")),
                expires_at=float(claims["exp"]),
            ):
                raise AuthError("this review link was already used: ask for a new one")
            return self._start_session(
                tenant, user, plan_id, f"{self.config.prefix}/plans/{plan_id}"
            )

        return await self._guard(request, "open", run)

    # ------------------------------------------------------------------ pages

    async def plan(self, request: Request) -> Response:
        async def run() -> Response:
            s = self._session(request)
            plan_id = request.path_params["plan_id"]
            rec, d, ev = await self._load(s, plan_id, _int(request, "v"))
            current = await self._current(s, plan_id)
            rows = views.option_rows(d, ev)
            groups = {
                k: [r for r in rows if r.state == k] for k in ("included", "borderline", "excluded")
            }
            problems = [(p, ev.problem(p.id)) for p in d.problems]
            changes = await self._since(s, plan_id, _int(request, "since"), (d, ev))
            return self._page(
                "plan.jinja",
                rec=rec,
                d=d,
                ev=ev,
                # the summary stored with the version (as the EHR received it); computed
                # here only for versions written before summaries were kept
                summary=summary_from_record(rec.summary) or summarise(d, ev),
                coverage_lines=coverage_lines,
                coverage_detail=coverage_detail,
                groups=groups,
                problems=problems,
                current=current,
                changes=changes,
                csrf=s.csrf,
                user=s.user,
                patient=await self._banner(s, plan_id),
                new_task=_task_id,
            )

        return await self._guard(request, "plan", run)

    async def option(self, request: Request) -> Response:
        async def run() -> Response:
            s = self._session(request)
            plan_id = request.path_params["plan_id"]
            rec, d, ev = await self._load(s, plan_id, _int(request, "v"))
            option_id = self._unref(request.path_params["option_id"], d)
            o = next((x for x in d.options if x.id == option_id), None)
            if o is None:
                raise NotFoundError(f"version {rec.version} of this plan has no such activity")
            r = ev.option(option_id)
            facts = await self._facts(s, plan_id)
            reasons = _clash_reasons(rec.deliberation, option_id)
            rows = views.argument_rows(o, r, facts, self.evidence, reasons)
            current = await self._current(s, plan_id)
            changes = await self._since(s, plan_id, _int(request, "since"), (d, ev))
            roles = sorted({role for role, _ in d.meta.panel})
            return self._page(
                "option.jinja",
                rec=rec,
                d=d,
                o=o,
                r=r,
                rows=rows,
                graph=views.graph(o, r),
                current=current,
                changes=changes,
                csrf=s.csrf,
                user=s.user,
                roles=roles,
                patient=await self._banner(s, plan_id),
                threshold=d.parameters.threshold,
                new_task=_task_id,
            )

        return await self._guard(request, "option", run)

    async def patient(self, request: Request) -> Response:
        async def run() -> Response:
            s = self._session(request)
            plan_id = request.path_params["plan_id"]
            rec, d, ev = await self._load(s, plan_id, _int(request, "v"))
            pv = patient_version(d, ev)
            return self._page(
                "patient.jinja",
                rec=rec,
                pv=pv,
                grade=fkgl(pv.text()),
                max_grade=MAX_PATIENT_GRADE,
                current=await self._current(s, plan_id),
                user=s.user,
            )

        return await self._guard(request, "patient", run)

    async def history(self, request: Request) -> Response:
        async def run() -> Response:
            s = self._session(request)
            plan_id = request.path_params["plan_id"]
            s.check_plan(plan_id)
            infos = await self.service.versions(tenant=s.tenant, plan_id=plan_id)
            if not infos:
                raise NotFoundError("no such plan")
            _, latest, _ = await self._load(s, plan_id, None)
            by_task = {c.id: c for c in latest.contestations}
            entries = []
            for info in sorted(infos, key=lambda i: i.version):
                acts = [by_task[t] for t in info.task_ids if t in by_task]
                entries.append(
                    {
                        "info": info,
                        "acts": [
                            {
                                "actor": c.actor,
                                "at": c.at,
                                "what": views.describe(c, latest),
                                "reason": c.reason,
                            }
                            for c in acts
                        ],
                    }
                )
            return self._page(
                "history.jinja",
                plan_id=plan_id,
                entries=entries,
                user=s.user,
                patient=await self._banner(s, plan_id),
            )

        return await self._guard(request, "history", run)

    async def compare(self, request: Request) -> Response:
        async def run() -> Response:
            s = self._session(request)
            plan_id = request.path_params["plan_id"]
            a, b = _int(request, "a"), _int(request, "b")
            if a is None or b is None:
                raise InputError("compare needs two versions, a and b")
            _, da, ea = await self._load(s, plan_id, a)
            _, db, eb = await self._load(s, plan_id, b)
            older, newer = ((da, ea), (db, eb)) if a <= b else ((db, eb), (da, ea))
            changes = views.diff(older, newer)
            return self._page(
                "compare.jinja",
                plan_id=plan_id,
                changes=changes,
                user=s.user,
                patient=await self._banner(s, plan_id),
            )

        return await self._guard(request, "compare", run)

    async def _since(
        self,
        s: _Session,
        plan_id: str,
        since: int | None,
        now: tuple[Deliberation, Evaluation],
    ) -> views.Diff | None:
        if since is None or since == now[0].version:
            return None
        _, d0, e0 = await self._load(s, plan_id, since)
        return views.diff((d0, e0), now)

    # ------------------------------------------------------------------ contestation

    async def confirm(self, request: Request) -> Response:
        """The step between a Reject or Decide click and the change: what it does, what it
        would change (the plan recomputed, nothing stored), and the reason it needs."""

        async def run() -> Response:
            s = self._session(request)
            plan_id = request.path_params["plan_id"]
            q = request.query_params
            version = _int(request, "version")
            if version is None:
                raise InputError("the confirmation names no version; reload the page")
            rec, d, ev = await self._load(s, plan_id, version)
            back = q.get("back", "") if _safe_id(q.get("back", "")) else ""
            current = await self._current(s, plan_id)
            if version != current:  # the page the click came from is out of date
                where = f"{self.config.prefix}/plans/{plan_id}" + (
                    f"/options/{back}" if back else ""
                )
                stale = StaleVersionError("stale", current_version=current)
                return self._stale(request, stale, f"{where}?since={version}#changes")
            action, decision = q.get("action", ""), q.get("decision")
            target = self._unref(q.get("target", ""), d)
            step = _confirm_action(action, target, decision)
            after = apply_all(d, [(step, "preview", s.user, _now(), "")])
            return self._page(
                "confirm.jinja",
                rec=rec,
                action=action,
                target=target,
                decision=decision or "",
                what=views.describe_target(target, d),
                preview=views.diff((d, ev), (after, evaluate(after))),
                back=back,
                csrf=s.csrf,
                user=s.user,
                patient=await self._banner(s, plan_id),
                new_task=_task_id,
            )

        return await self._guard(request, "confirm", run)

    async def contest(self, request: Request) -> Response:
        async def run() -> Response:
            s = self._session(request)
            plan_id = request.path_params["plan_id"]
            s.check_plan(plan_id)
            self._same_origin(request)
            form = await _form(request)
            if not hmac.compare_digest(form.get("csrf", ""), s.csrf):
                raise _Refusal(
                    403,
                    "The form could not be verified",
                    "The form's security token did not match your session, so nothing was "
                    "changed. Reload the page and try again.",
                )
            version = _form_int(form, "version")
            rec, _, _ = await self._load(s, plan_id, version)
            task = task_from_form(
                form,
                plan_id=plan_id,
                version=version,
                patient_ref=rec.patient_ref,
                user=s.user,
                now=_now(),
            )
            back = form.get("back_option", "")
            if back and _safe_id(back):
                target = f"{self.config.prefix}/plans/{plan_id}/options/{back}"
            else:
                target = f"{self.config.prefix}/plans/{plan_id}"
            try:
                done = await self.service.contest(
                    task, tenant=s.tenant, plan_id=plan_id, version=version
                )
            except StaleVersionError as exc:
                # Back to where the reader was, on the current version, showing what changed.
                return self._stale(request, exc, f"{target}?since={version}#changes")
            except TaskError as exc:
                return self._page(
                    "error.jinja",
                    422,
                    title="The change was refused",
                    message=exc.message,
                    issues=[i.diagnostics for i in exc.issues],
                    reload=f"{self.config.prefix}/plans/{plan_id}?v={version}",
                )
            if done.written is not None:
                w = done.written
                self._written[(s.tenant, plan_id, w.version)] = (w.deliberation, w.evaluation)
                while len(self._written) > _CACHE:
                    self._written.popitem(last=False)
            log.info(
                "review.contested",
                plan_id=plan_id,
                version=done.version,
                action=form.get("action"),
                replayed=done.replayed,
            )
            return RedirectResponse(f"{target}?since={version}#changes", status_code=303)

        return await self._guard(request, "contest", run)

    def _same_origin(self, request: Request) -> None:
        origin = request.headers.get("origin")
        if origin is None:  # older browsers send none on same-origin form posts
            return
        host = request.headers.get("host", "")
        if urlsplit(origin).netloc != host:
            raise _Refusal(
                403,
                "The form could not be verified",
                "The form was sent from another site, so nothing was changed.",
            )


def _status(exc: CanoeError) -> tuple[int, str]:
    """The HTTP status and page title the error's class states."""
    return exc.http_status, exc.title


def _banner_of(first: VersionRecord) -> views.PatientBanner:
    """The banner with the age on the day the plan was made, as every other view states it."""
    from datetime import date

    stored = first.summary.get("patient")
    try:
        made = date.fromisoformat(first.created[:10])
    except ValueError:
        made = date.today()
    return views.patient_banner(
        first.patient_ref, stored if isinstance(stored, Mapping) else None, made
    )


def _safe_id(value: str) -> bool:
    return bool(value) and len(value) <= 64 and value.replace("-", "").replace(".", "").isalnum()


def _confirm_action(action: str, target: str, decision: str | None) -> ContestAction:
    """The core action a Reject or Decide click asks for, to preview it."""
    if action == "reject":
        return RejectArgument(target)
    if action != "decide":
        raise InputError("only a rejection or a decision is confirmed first")
    on_option: dict[str | None, OptionDecision] = {"include": "include", "exclude": "exclude"}
    on_problem: dict[str | None, Judgement] = {"accept": "accept", "reject": "reject"}
    if decision in on_option:
        return DecideOption(target, on_option[decision])
    if decision in on_problem:
        return DecideProblem(target, on_problem[decision])
    raise InputError("a decision is include or exclude (an activity), accept or reject (a problem)")


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)


def _now() -> str:
    from service.app import utc_now

    return utc_now()


def _task_id() -> str:
    return str(uuid.uuid4())


def _int(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or len(raw) > 9 or int(raw) < 1:
        raise InputError(f"{name} must be a version number")
    return int(raw)


def _form_int(form: Mapping[str, str], name: str) -> int:
    raw = form.get(name, "")
    if not raw.isdigit() or len(raw) > 9 or int(raw) < 1:
        raise InputError(f"the form's {name} is not a version number; reload the page")
    return int(raw)


async def _form(request: Request) -> dict[str, str]:
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        raise InputError("the review app takes forms (application/x-www-form-urlencoded)")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise LimitError(f"the form is over {MAX_FORM_BYTES} bytes")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=64)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError("the form could not be read") from exc
    return dict(pairs)


def _clash_reasons(document: Mapping[str, Any], option_id: str) -> list[str]:
    """Each clash's ``reason`` where the stored document has one (newer plans do)."""
    for o in document.get("options") or ():
        if isinstance(o, Mapping) and o.get("id") == option_id:
            return [
                str(c.get("reason") or "") if isinstance(c, Mapping) else ""
                for c in o.get("clashes") or ()
            ]
    return []


def build_review(service: ReviewService, settings: Settings) -> list[BaseRoute]:
    """The review app's routes for the HTTP side's Starlette app: the launch URL itself
    (``<prefix>/review``, exactly as the CDS cards link it) and a Mount for the rest."""
    config = ReviewConfig(settings)
    review = _Review(service, config)
    warm_up()  # the patient version page's reading grade
    app = Starlette(
        routes=[
            Route("/", review.entry, methods=["GET"]),
            Route("/callback", review.callback, methods=["GET"]),
            Route("/open", review.open_link, methods=["GET"]),
            Route("/choose", review.choose, methods=["GET"]),
            Route("/plans/{plan_id}", review.plan, methods=["GET"]),
            Route("/plans/{plan_id}/options/{option_id}", review.option, methods=["GET"]),
            Route("/plans/{plan_id}/history", review.history, methods=["GET"]),
            Route("/plans/{plan_id}/patient", review.patient, methods=["GET"]),
            Route("/plans/{plan_id}/compare", review.compare, methods=["GET"]),
            Route("/plans/{plan_id}/confirm", review.confirm, methods=["GET"]),
            Route("/plans/{plan_id}/contest", review.contest, methods=["POST"]),
            Mount("/static", StaticFiles(directory=_HERE / "static"), name="static"),
        ],
    )
    return [
        Route(config.prefix, review.entry, methods=["GET"]),
        Mount(config.prefix, app=_SecurityHeaders(app, config.csp)),
    ]


class _SecurityHeaders:
    """Adds the security headers where a page did not set them: static files, 404s."""

    def __init__(self, app: Any, csp: str) -> None:
        self.app, self.csp = app, csp.encode("latin-1")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", self.csp))
                    headers.append((b"x-content-type-options", b"nosniff"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)
