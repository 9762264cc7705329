"""The gRPC face of the service: ``canoe.v1.CarePlanService`` over ``service.app``.

Each RPC authenticates the caller (tenant and scope), runs one use case, and answers in the
proto's terms. Errors are translated in exactly one place, ``rich_status``: the project's error
tree -> a gRPC status code, with the FHIR OperationOutcome packed in the google.rpc.Status
details. Each call gets a request id (the caller's ``x-request-id`` or a new one, echoed in the
initial metadata), a server span, request/latency/error metrics and one log line, none of which
carries patient data.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, NoReturn, TypeVar

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from opentelemetry import propagate
from opentelemetry.trace import SpanKind, Status, StatusCode

from canoe_client._status import RETRY_PUSHBACK_KEY
from canoe_client.v1 import careplan_pb2 as pb
from canoe_client.v1 import careplan_pb2_grpc as pb_grpc
from fhir_mapping.definitions import check_base
from fhir_mapping.outcome import operation_outcome
from service.app import CarePlanService, PlanOutcome
from service.auth import SCOPE_CONTEST, SCOPE_PLAN, SCOPE_READ, Authenticator, Principal, require
from service.errors import (
    CanoeError,
    InputError,
    Issue,
    LimitError,
    StaleVersionError,
)
from service.jsonio import dump_json
from service.logs import get_logger, new_request_id, request_context
from service.pipeline import Progress
from service.telemetry import Telemetry

__all__ = ["SERVICE_NAME", "CarePlanServicer", "RpcInterceptor", "rich_status", "status_code"]

SERVICE_NAME: Final = pb.DESCRIPTOR.services_by_name["CarePlanService"].full_name
T = TypeVar("T")
_log = get_logger("canoe.grpc")
_REQUEST_ID_KEY: Final = "x-request-id"  # the caller's, or a new one; echoed back

# The domain of the ErrorInfo details this service writes (google.rpc.ErrorInfo).
ERROR_DOMAIN: Final = "canoe.v1"


def status_code(exc: BaseException) -> grpc.StatusCode:
    """The status the error's class states (``grpc_status``); INTERNAL for anything else."""
    if isinstance(exc, CanoeError):
        return grpc.StatusCode[exc.grpc_status]
    return grpc.StatusCode.INTERNAL


def _details(exc: BaseException) -> list[any_pb2.Any]:
    """The rich details: the OperationOutcome, and where the error carries a value a client acts
    on, that value as a standard google.rpc message, never only as prose: the current version
    of a stale contest (ErrorInfo, and PreconditionFailure for generic tooling) and the retry
    hint of a refusal for too much work at once (RetryInfo)."""
    messages: list[Any] = [
        pb.OperationOutcomeDetail(fhir_json=json.dumps(operation_outcome(exc)).encode("utf-8"))
    ]
    if isinstance(exc, StaleVersionError):
        current = str(exc.current_version)
        messages.append(
            error_details_pb2.ErrorInfo(
                reason="STALE_VERSION", domain=ERROR_DOMAIN, metadata={"current_version": current}
            )
        )
        messages.append(
            error_details_pb2.PreconditionFailure(
                violations=[
                    error_details_pb2.PreconditionFailure.Violation(
                        type="STALE_VERSION",
                        subject="version",
                        description=f"the current version is {current}",
                    )
                ]
            )
        )
    if isinstance(exc, LimitError) and exc.retry_after_s is not None:
        delay = duration_pb2.Duration()
        delay.FromMilliseconds(math.ceil(exc.retry_after_s * 1000.0))
        messages.append(error_details_pb2.RetryInfo(retry_delay=delay))
    packed = []
    for message in messages:
        detail = any_pb2.Any()
        detail.Pack(message)
        packed.append(detail)
    return packed


def rich_status(exc: BaseException) -> grpc.Status:
    """The gRPC status for ``exc``, with its OperationOutcome and structured values in the
    rich details."""
    code = status_code(exc)
    message = exc.message if isinstance(exc, CanoeError) else "internal error"
    if isinstance(exc, StaleVersionError) and str(exc.current_version) not in message:
        # For a person reading it; a program reads the ErrorInfo detail.
        message = f"{message} (current version: {exc.current_version})"
    status = rpc_status.to_status(
        status_pb2.Status(code=code.value[0], message=message, details=_details(exc))
    )
    if not isinstance(exc, LimitError) or exc.retry_after_s is None:
        return status
    # gRPC's own retry pushback (a client retry policy honours it), in whole milliseconds.
    pushback = (RETRY_PUSHBACK_KEY, str(math.ceil(exc.retry_after_s * 1000.0)))
    return _Status(status.code, status.details, (*status.trailing_metadata, pushback))


@dataclass(frozen=True, slots=True)
class _Status(grpc.Status):
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]


def _plan_response(p: PlanOutcome) -> pb.GeneratePlanResponse:
    s = p.summary
    return pb.GeneratePlanResponse(
        plan_id=p.plan_id,
        version=p.version,
        careplan_bundle_json=p.bundle_json or _json(p.bundle),
        summary=pb.PlanSummary(
            counts={k: int(v) for k, v in s.get("counts", {}).items()},
            borderline_option_ids=list(s.get("borderline", [])),
            input_tokens=int(s.get("tokens", {}).get("input", 0)),
            output_tokens=int(s.get("tokens", {}).get("output", 0)),
            timings_ms={k: float(v) for k, v in s.get("timings_ms", {}).items()},
            missing=list(s.get("missing", [])),
            backend=str(s.get("backend", "")),
        ),
    )


def _progress_event(p: Progress) -> pb.PlanEvent:
    state = (
        pb.ProgressEvent.STATE_STARTED if p.state == "started" else pb.ProgressEvent.STATE_FINISHED
    )
    return pb.PlanEvent(
        progress=pb.ProgressEvent(
            stage=p.stage,
            state=state,
            model_calls_done=p.calls_done,
            model_calls_total=p.calls_total,
        )
    )


def _json(value: object) -> bytes:
    return dump_json(value)


def _need(value: object, what: str) -> None:
    if not value:
        raise InputError(f"{what} is required")


def _source_base(value: str) -> str:
    """The caller's ``source_base`` as a FHIR base ("" when not given)."""
    if not value:
        return ""
    try:
        return check_base(value)
    except ValueError as exc:
        msg = f"source_base: {exc}"
        raise InputError(msg, issues=(Issue("error", "value", msg, ("source_base",)),)) from exc


def _metadata(context: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}


class _Call:
    """Per-RPC bookkeeping the interceptor opens and the servicer's methods read: request id,
    the caller's metadata, principal, deadline and the fields of the ``rpc.finished`` line."""

    def __init__(self, auth: Authenticator, context: Any) -> None:
        self.auth, self.context = auth, context
        self.metadata = md = _metadata(context)
        self.request_id = new_request_id(md.get(_REQUEST_ID_KEY))
        self.attrs: dict[str, Any] = {}

    async def principal(self, scope: str) -> Principal:
        p = await self.auth.authenticate(self.metadata.get("authorization"))
        require(p, scope)
        self.attrs["tenant"] = p.tenant
        return p

    def deadline_s(self) -> float | None:
        left = self.context.time_remaining()
        return None if left is None else max(0.0, float(left))


_CALL: contextvars.ContextVar[_Call] = contextvars.ContextVar("canoe_rpc_call")
# The methods that plan or contest: each needs one of the worker's places.
_NEEDS_PLACE: Final = frozenset({"GeneratePlan", "StreamPlan", "Contest"})


def _call() -> _Call:
    """The current RPC's bookkeeping (set by ``RpcInterceptor`` around every method)."""
    return _CALL.get()


class RpcInterceptor(grpc.aio.ServerInterceptor):
    """What every method of the CarePlan service shares, around it: admission (a plan or a
    contestation that finds every place taken is refused first, before even the span and the
    caller's credentials: under overload most requests are such refusals, and what each costs
    comes out of the plans being served; it reveals nothing but the load), the request id
    (echoed in the initial metadata), the server span continuing the caller's trace, the error
    mapping to a rich status, the latency, request and error metrics, and the
    ``rpc.finished`` log line. Health and reflection pass through untouched."""

    def __init__(self, app: CarePlanService, auth: Authenticator, telemetry: Telemetry) -> None:
        self.app, self.auth, self.tel = app, auth, telemetry

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(handler_call_details)
        service, _, method = str(handler_call_details.method).lstrip("/").partition("/")
        if handler is None or service != SERVICE_NAME:
            return handler
        if handler.unary_unary is None and handler.unary_stream is None:
            raise TypeError(f"{method}: only unary requests are intercepted")  # a programming error
        if handler.unary_unary is not None:
            unary: Callable[[Any, Any], Awaitable[Any]] = handler.unary_unary

            async def unary_unary(request: Any, context: Any) -> Any:
                return await self._around(context, method, lambda: unary(request, context))

            return grpc.unary_unary_rpc_method_handler(
                unary_unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        streaming: Callable[[Any, Any], Awaitable[None]] = handler.unary_stream

        async def unary_stream(request: Any, context: Any) -> None:
            await self._around(context, method, lambda: streaming(request, context))

        return grpc.unary_stream_rpc_method_handler(
            unary_stream,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    async def _around(self, context: Any, method: str, run: Callable[[], Awaitable[T]]) -> T:
        if method in _NEEDS_PLACE and (busy := self.app.refusal()) is not None:
            await self._refuse(context, method, busy)
        call = _Call(self.auth, context)
        token = _CALL.set(call)
        t0 = time.perf_counter()
        code = grpc.StatusCode.OK
        parent = propagate.extract(call.metadata)
        try:
            with (
                request_context(call.request_id, rpc=method),
                self.tel.tracer.start_as_current_span(
                    f"{SERVICE_NAME}/{method}",
                    context=parent,
                    kind=SpanKind.SERVER,
                    attributes={
                        "rpc.system": "grpc",
                        "rpc.service": SERVICE_NAME,
                        "rpc.method": method,
                    },
                    record_exception=False,
                    set_status_on_exception=False,
                ) as span,
            ):
                await context.send_initial_metadata(((_REQUEST_ID_KEY, call.request_id),))
                try:
                    return await run()
                except asyncio.CancelledError:
                    code = grpc.StatusCode.CANCELLED
                    raise
                except Exception as exc:
                    code = status_code(exc)
                    if code is grpc.StatusCode.INTERNAL:
                        # Type only: an internal message may quote the record.
                        _log.error("rpc.internal_error", error=type(exc).__name__)
                    await context.abort_with_status(rich_status(exc))
                    raise AssertionError("unreachable") from exc  # abort always raises
                finally:
                    seconds = time.perf_counter() - t0
                    span.set_attributes(
                        {"rpc.grpc.status_code": code.value[0], **_span_attrs(call.attrs)}
                    )
                    if code is not grpc.StatusCode.OK:
                        span.set_status(Status(StatusCode.ERROR, code.name))
                    self.tel.latency.record(seconds, {"rpc.method": method})
                    self._finished(method, code, seconds, **call.attrs)
        finally:
            _CALL.reset(token)

    def _finished(self, method: str, code: grpc.StatusCode, seconds: float, **fields: Any) -> None:
        """An RPC's outcome in the request and error counters and its ``rpc.finished`` line."""
        labels = {"rpc.method": method, "rpc.grpc.status_code": code.name}
        if code is not grpc.StatusCode.OK:
            self.tel.errors.add(1, labels)
        self.tel.requests.add(1, labels)
        _log.info("rpc.finished", code=code.name, duration_ms=round(seconds * 1000.0, 3), **fields)

    async def _refuse(self, context: Any, method: str, busy: LimitError) -> NoReturn:
        """RESOURCE_EXHAUSTED with the retry hint, the request id in the trailers, counted in the
        metrics and logged like any other outcome."""
        request_id = new_request_id(_metadata(context).get(_REQUEST_ID_KEY))
        code = grpc.StatusCode.RESOURCE_EXHAUSTED
        self._finished(method, code, 0.0, request_id=request_id, rpc=method)
        status = rich_status(busy)
        await context.abort_with_status(
            _Status(
                status.code,
                status.details,
                (*status.trailing_metadata, (_REQUEST_ID_KEY, request_id)),
            )
        )
        raise AssertionError("unreachable")  # abort always raises


class CarePlanServicer(pb_grpc.CarePlanServiceServicer):
    """The CarePlan service's methods: each authenticates, reads its request and calls the
    application; ``RpcInterceptor`` (which must be installed on the server) does the rest."""

    def __init__(self, app: CarePlanService) -> None:
        self.app = app

    # ------------------------------------------------------------------ RPCs

    async def GeneratePlan(
        self, request: pb.GeneratePlanRequest, context: Any
    ) -> pb.GeneratePlanResponse:
        async def body(call: _Call) -> pb.GeneratePlanResponse:
            p = await call.principal(SCOPE_PLAN)
            _need(request.bundle_json, "bundle_json")
            out = await self.app.generate(
                request.bundle_json,
                tenant=p.tenant,
                deadline_s=call.deadline_s(),
                source_base=_source_base(request.source_base),
            )
            call.attrs.update(plan_id=out.plan_id, version=out.version)
            return _plan_response(out)

        return await body(_call())

    async def StreamPlan(self, request: pb.GeneratePlanRequest, context: Any) -> None:
        """Writes the events with ``context.write`` (grpc.aio's alternative to a generator)."""
        queue: asyncio.Queue[pb.PlanEvent | None] = asyncio.Queue()

        async def body(call: _Call) -> None:
            p = await call.principal(SCOPE_PLAN)
            _need(request.bundle_json, "bundle_json")
            work = asyncio.ensure_future(
                self.app.generate(
                    request.bundle_json,
                    tenant=p.tenant,
                    progress=lambda ev: queue.put_nowait(_progress_event(ev)),
                    deadline_s=call.deadline_s(),
                    source_base=_source_base(request.source_base),
                )
            )
            getter: asyncio.Future[pb.PlanEvent | None] | None = None
            try:
                while True:
                    getter = asyncio.ensure_future(queue.get())
                    await asyncio.wait({getter, work}, return_when=asyncio.FIRST_COMPLETED)
                    if getter.done():
                        await context.write(getter.result())
                        continue
                    getter.cancel()
                    while not queue.empty():
                        event = queue.get_nowait()
                        if event is not None:
                            await context.write(event)
                    out = work.result()  # raises the plan's error, if any
                    call.attrs.update(plan_id=out.plan_id, version=out.version)
                    await context.write(pb.PlanEvent(plan=_plan_response(out)))
                    return
            finally:
                if getter is not None and not getter.done():
                    getter.cancel()
                if not work.done():
                    # The client went away (or the deadline passed): stop the model work.
                    work.cancel()
                    await asyncio.gather(work, return_exceptions=True)

        await body(_call())

    async def Contest(self, request: pb.ContestRequest, context: Any) -> pb.ContestResponse:
        async def body(call: _Call) -> pb.ContestResponse:
            p = await call.principal(SCOPE_CONTEST)
            _need(request.plan_id, "plan_id")
            _need(request.tasks_json, "tasks_json")
            if request.version < 1:
                raise InputError("version must be 1 or more")
            call.attrs.update(plan_id=request.plan_id, contested=request.version)
            out = await self.app.contest(
                request.tasks_json,
                tenant=p.tenant,
                plan_id=request.plan_id,
                version=request.version,
                deadline_s=call.deadline_s(),
            )
            call.attrs.update(version=out.version, tasks=len(out.tasks), replayed=out.replayed)
            tasks_bundle = {
                "resourceType": "Bundle",
                "type": "collection",
                "entry": [{"resource": t} for t in out.tasks],
            }
            return pb.ContestResponse(
                plan_id=out.plan_id,
                version=out.version,
                careplan_bundle_json=out.bundle_json or _json(out.bundle),
                tasks_bundle_json=_json(tasks_bundle),
                tasks=[
                    pb.TaskResult(task_id=str(t.get("id", "")), status=str(t.get("status", "")))
                    for t in out.tasks
                ],
                replayed=out.replayed,
            )

        return await body(_call())

    async def GetDeliberation(
        self, request: pb.GetDeliberationRequest, context: Any
    ) -> pb.GetDeliberationResponse:
        async def body(call: _Call) -> pb.GetDeliberationResponse:
            p = await call.principal(SCOPE_READ)
            _need(request.plan_id, "plan_id")
            version = request.version if request.HasField("version") else None
            call.attrs.update(plan_id=request.plan_id)
            rec = await self.app.plan_version(
                tenant=p.tenant, plan_id=request.plan_id, version=version
            )
            call.attrs.update(version=rec.version)
            return pb.GetDeliberationResponse(
                plan_id=rec.plan_id,
                version=rec.version,
                deliberation_json=rec.deliberation_json or _json(rec.deliberation),
            )

        return await body(_call())

    async def ListPlanVersions(
        self, request: pb.ListPlanVersionsRequest, context: Any
    ) -> pb.ListPlanVersionsResponse:
        async def body(call: _Call) -> pb.ListPlanVersionsResponse:
            p = await call.principal(SCOPE_READ)
            which = request.WhichOneof("selector")
            if which is None or not getattr(request, which):
                raise InputError("name a plan_id or a patient_ref")
            infos = await self.app.versions(
                tenant=p.tenant,
                plan_id=request.plan_id if which == "plan_id" else None,
                patient_ref=request.patient_ref if which == "patient_ref" else None,
            )
            call.attrs.update(versions=len(infos))
            return pb.ListPlanVersionsResponse(
                versions=[
                    pb.PlanVersion(
                        plan_id=i.plan_id,
                        version=i.version,
                        patient_ref=i.patient_ref,
                        careplan_id=i.careplan_id,
                        kind=i.kind,
                        created=i.created,
                        task_ids=list(i.task_ids),
                        current=i.current,
                    )
                    for i in infos
                ]
            )

        return await body(_call())


def _span_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {f"canoe.{k}": v for k, v in attrs.items() if isinstance(v, str | int | bool | float)}
