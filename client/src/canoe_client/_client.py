"""A Python client for ``canoe.v1.CarePlanService``: FHIR JSON in, decoded dicts out.

``CarePlanClient`` (blocking) and ``AsyncCarePlanClient`` (``grpc.aio``) do the base64-free
work an integrator would otherwise repeat: they send Bundles and Tasks as FHIR JSON bytes, decode
every answer (the CarePlan Bundle, the deliberation, the Tasks) into dicts, attach the bearer
token, and give every call a deadline (``timeout_s``, per client and per call). A refused call
raises the project's own error (``canoe_client.errors``: ``InputError``, ``NotFoundError``,
``StaleVersionError``, ``AuthError``/``ForbiddenError``, ``LimitError``, ``BackendTimeout``,
``BackendUnavailable``; ``CanoeError`` for anything else) carrying the server's FHIR
OperationOutcome as ``outcome`` and its issues as ``issues``, with the ``grpc.RpcError`` as the
cause. Transport settings (TLS roots, client certificate for mutual TLS, server-name override,
message size, deadline) live in one ``ClientOptions``.

This module needs grpcio and protobuf only; it imports nothing of the server.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from canoe_client import _status
from canoe_client.errors import (
    WIRE_ERRORS,
    BusyError,
    CanoeError,
    InputError,
    Issue,
    LimitError,
    StaleVersionError,
)
from canoe_client.v1 import careplan_pb2 as pb
from canoe_client.v1 import careplan_pb2_grpc as pb_grpc

__all__ = [
    "AsyncCarePlanClient",
    "CarePlanClient",
    "ClientOptions",
    "RetryPolicy",
    "error_from_rpc",
]

Json = dict[str, Any]
FhirInput = bytes | str | Path | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retrying a call the service refused for having too much work at once (RESOURCE_EXHAUSTED
    with a retry pushback: nothing was done or stored, so sending it again is safe, GeneratePlan
    included). Up to ``attempts`` tries in all (1: never retry); before each retry it waits the
    longer of the server's hint and an exponential backoff from ``initial_backoff_s`` (times
    ``multiplier`` per retry), at most ``max_backoff_s``, scaled by a random factor in
    [0.5, 1.5) so refused clients do not all come back together; never past the call's
    deadline. No other error is retried."""

    attempts: int = 1
    initial_backoff_s: float = 0.05
    max_backoff_s: float = 2.0
    multiplier: float = 2.0

    def delay_s(self, retry: int, hint_s: float | None, jitter: float | None = None) -> float:
        """The wait before retry number ``retry`` (0 first); ``jitter`` in [0, 1), else random.

        >>> RetryPolicy().delay_s(0, None, 0.5), RetryPolicy().delay_s(3, 0.1, 0.5)
        (0.05, 0.4)
        >>> RetryPolicy(max_backoff_s=1.0).delay_s(0, 30.0, 0.0)  # the hint, capped, jittered
        0.5
        """
        backoff = self.initial_backoff_s * self.multiplier**retry
        base = min(self.max_backoff_s, max(backoff, hint_s or 0.0))
        return base * (0.5 + (random.random() if jitter is None else jitter))

    def wait_s(self, err: CanoeError, retry: int, deadline: float) -> float | None:
        """How long to wait before retrying after ``err`` (``time.monotonic()`` ``deadline``),
        or None: do not retry."""
        hint = err.retry_after_s if isinstance(err, LimitError) else None
        if hint is None or retry + 1 >= self.attempts:
            return None
        wait = self.delay_s(retry, hint)
        return wait if time.monotonic() + wait < deadline else None


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """How to reach the service. ``tls``: use TLS (implied by any of the PEM settings);
    ``root_certificates``: the CA to trust (PEM bytes or a file; default: the system's);
    ``client_certificate``/``client_key``: for mutual TLS; ``server_name``: the name the
    server certificate must carry when it is not the host dialled; ``timeout_s``: the deadline
    of every call unless the call gives its own (retries included); ``retry``: whether and how
    a call refused for too much work at once is retried."""

    token: str = ""
    tls: bool = False
    root_certificates: bytes | Path | None = None
    client_certificate: bytes | Path | None = None
    client_key: bytes | Path | None = None
    server_name: str = ""
    timeout_s: float = 120.0
    max_message_bytes: int = 64 * 1024 * 1024
    retry: RetryPolicy = RetryPolicy()  # unary calls refused as busy (default: no retry)

    def credentials(self) -> grpc.ChannelCredentials | None:
        pems = (self.root_certificates, self.client_certificate, self.client_key)
        if not self.tls and all(p is None for p in pems):
            return None
        root, cert, key = (_pem(p) for p in pems)
        return grpc.ssl_channel_credentials(
            root_certificates=root, private_key=key, certificate_chain=cert
        )

    def channel_options(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = [
            ("grpc.max_receive_message_length", self.max_message_bytes),
            ("grpc.max_send_message_length", self.max_message_bytes),
        ]
        if self.server_name:
            out.append(("grpc.ssl_target_name_override", self.server_name))
        return out

    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()


def _pem(value: bytes | Path | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    try:
        return Path(value).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {value}: {exc.strerror}") from exc


def _fhir_bytes(value: FhirInput) -> bytes:
    """FHIR JSON as bytes: a file path, JSON text or bytes, or an already decoded resource."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, Path):
        try:
            return value.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {value}: {exc.strerror}") from exc
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _load(raw: bytes) -> Json:
    loaded: Json = json.loads(raw) if raw else {}
    return loaded


def error_from_rpc(err: grpc.RpcError) -> CanoeError:
    """The project's error for a refused call, with the server's OperationOutcome (from the
    rich status details) as ``outcome`` and its issues as ``issues``."""
    code: grpc.StatusCode = err.code()
    message = str(err.details() or code.name)
    outcome = _outcome(err)
    issues = tuple(
        Issue(
            str(i.get("severity", "error")),
            str(i.get("code", "exception")),
            str(i.get("diagnostics", message)),
            tuple(str(x) for x in i.get("expression", ())),
        )
        for i in (outcome or {}).get("issue", ())
        if isinstance(i, Mapping)
    )
    trailing = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    kind = WIRE_ERRORS.get(code.name, CanoeError)
    exc: CanoeError
    if kind is StaleVersionError:
        current = _status.error_info(trailing).get("current_version", "")
        exc = StaleVersionError(
            message, current_version=int(current) if current.isdigit() else 0, issues=issues or None
        )
    elif kind is LimitError and (hint := _status.retry_after_s(trailing)) is not None:
        exc = BusyError(message, retry_after_s=hint, issues=issues or None)
    else:
        exc = kind(message, issues=issues or None)
    exc.outcome = outcome
    exc.status_code = code.name
    return exc


def _outcome(err: grpc.RpcError) -> Json | None:
    # Both the blocking call's error and grpc.aio's AioRpcError carry the trailing metadata.
    trailing = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    raw = _status.details(trailing, pb.OperationOutcomeDetail.DESCRIPTOR.full_name)
    if raw is None:
        return None
    try:
        return _load(pb.OperationOutcomeDetail.FromString(raw).fhir_json)
    except (DecodeError, ValueError):  # not the message, or not JSON: no outcome
        return None


def _plan(r: pb.GeneratePlanResponse) -> Json:
    s = r.summary
    return {
        "plan_id": r.plan_id,
        "version": r.version,
        "bundle": _load(r.careplan_bundle_json),
        "summary": {
            "counts": dict(s.counts),
            "borderline": list(s.borderline_option_ids),
            "tokens": {"input": s.input_tokens, "output": s.output_tokens},
            "timings_ms": dict(s.timings_ms),
            "missing": list(s.missing),
            "backend": s.backend,
        },
    }


def _event(e: pb.PlanEvent) -> Json:
    if e.WhichOneof("event") == "plan":
        return {"plan": _plan(e.plan)}
    p = e.progress
    state = {pb.ProgressEvent.STATE_STARTED: "started", pb.ProgressEvent.STATE_FINISHED: "finished"}
    return {
        "progress": {
            "stage": p.stage,
            "state": state.get(p.state, "unspecified"),
            "calls_done": p.model_calls_done,
            "calls_total": p.model_calls_total,
        }
    }


def _contested(r: pb.ContestResponse) -> Json:
    return {
        "plan_id": r.plan_id,
        "version": r.version,
        "bundle": _load(r.careplan_bundle_json),
        "tasks": _load(r.tasks_bundle_json),
        "results": [{"task_id": t.task_id, "status": t.status} for t in r.tasks],
        "replayed": r.replayed,
    }


def _version(v: pb.PlanVersion) -> Json:
    return {
        "plan_id": v.plan_id,
        "version": v.version,
        "patient_ref": v.patient_ref,
        "careplan_id": v.careplan_id,
        "kind": v.kind,
        "created": v.created,
        "task_ids": list(v.task_ids),
        "current": v.current,
    }


def _versions_request(plan_id: str | None, patient_ref: str | None) -> pb.ListPlanVersionsRequest:
    if bool(plan_id) == bool(patient_ref):
        raise InputError("name exactly one of plan_id and patient_ref")
    if plan_id:
        return pb.ListPlanVersionsRequest(plan_id=plan_id)
    return pb.ListPlanVersionsRequest(patient_ref=patient_ref)


def _deliberation_request(plan_id: str, version: int | None) -> pb.GetDeliberationRequest:
    if version is None:
        return pb.GetDeliberationRequest(plan_id=plan_id)
    return pb.GetDeliberationRequest(plan_id=plan_id, version=version)


class CarePlanClient:
    """Blocking client. ``target`` is ``host:port``; use as a context manager or ``close()``."""

    def __init__(self, target: str, options: ClientOptions | None = None, **kw: Any) -> None:
        self.options = options or ClientOptions(**kw)
        creds = self.options.credentials()
        opts = self.options.channel_options()
        self._channel = (
            grpc.secure_channel(target, creds, options=opts)
            if creds is not None
            else grpc.insecure_channel(target, options=opts)
        )
        self._stub = pb_grpc.CarePlanServiceStub(self._channel)

    def __enter__(self) -> CarePlanClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def _kw(self, timeout_s: float | None) -> dict[str, Any]:
        t = self.options.timeout_s if timeout_s is None else timeout_s
        return {"timeout": t, "metadata": self.options.metadata()}

    def _call(self, method: Any, request: Any, timeout_s: float | None) -> Any:
        deadline = time.monotonic() + self._kw(timeout_s)["timeout"]
        retry = 0
        while True:
            left = max(0.0, deadline - time.monotonic())
            try:
                return method(request, timeout=left, metadata=self.options.metadata())
            except grpc.RpcError as err:
                exc = error_from_rpc(err)
                wait = self.options.retry.wait_s(exc, retry, deadline)
                if wait is None:
                    raise exc from err
            time.sleep(wait)
            retry += 1

    def plan(
        self, bundle: FhirInput, *, timeout_s: float | None = None, source_base: str = ""
    ) -> Json:
        """Plan a FHIR R4 Bundle: ``{"plan_id", "version", "bundle", "summary"}``;
        ``source_base``: the FHIR base of the system holding the record, where known."""
        req = pb.GeneratePlanRequest(bundle_json=_fhir_bytes(bundle), source_base=source_base)
        return _plan(self._call(self._stub.GeneratePlan, req, timeout_s))

    def stream_plan(self, bundle: FhirInput, *, timeout_s: float | None = None) -> Iterator[Json]:
        """Progress events ``{"progress": {...}}`` as the plan is made, then ``{"plan": {...}}``
        (as ``plan`` returns it). Closing the iterator early cancels the plan."""
        req = pb.GeneratePlanRequest(bundle_json=_fhir_bytes(bundle))
        stream = self._stub.StreamPlan(req, **self._kw(timeout_s))
        try:
            for event in stream:
                yield _event(event)
        except grpc.RpcError as err:
            raise error_from_rpc(err) from err
        finally:
            stream.cancel()

    def contest(
        self,
        plan_id: str,
        version: int,
        tasks: FhirInput | Sequence[Mapping[str, Any]],
        *,
        timeout_s: float | None = None,
    ) -> Json:
        """Apply a Task, a Bundle of Tasks or a list of Tasks to plan version ``version``:
        ``{"plan_id", "version", "bundle", "tasks", "results", "replayed"}``."""
        req = pb.ContestRequest(plan_id=plan_id, version=version, tasks_json=_tasks(tasks))
        return _contested(self._call(self._stub.Contest, req, timeout_s))

    def deliberation(
        self, plan_id: str, version: int | None = None, *, timeout_s: float | None = None
    ) -> Json:
        """The ``canoe.deliberation/1`` document of a version (default: the current one)."""
        req = _deliberation_request(plan_id, version)
        return _load(self._call(self._stub.GetDeliberation, req, timeout_s).deliberation_json)

    def versions(
        self,
        plan_id: str | None = None,
        *,
        patient_ref: str | None = None,
        timeout_s: float | None = None,
    ) -> list[Json]:
        """The history of a plan, or of every plan of a patient (``patient_ref``)."""
        req = _versions_request(plan_id, patient_ref)
        return [
            _version(v) for v in self._call(self._stub.ListPlanVersions, req, timeout_s).versions
        ]


class AsyncCarePlanClient:
    """The same calls on ``grpc.aio``; use as an async context manager or ``await close()``."""

    def __init__(self, target: str, options: ClientOptions | None = None, **kw: Any) -> None:
        self.options = options or ClientOptions(**kw)
        creds = self.options.credentials()
        opts = self.options.channel_options()
        self._channel = (
            grpc.aio.secure_channel(target, creds, options=opts)
            if creds is not None
            else grpc.aio.insecure_channel(target, options=opts)
        )
        self._stub = pb_grpc.CarePlanServiceStub(self._channel)

    async def __aenter__(self) -> AsyncCarePlanClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    def _kw(self, timeout_s: float | None) -> dict[str, Any]:
        t = self.options.timeout_s if timeout_s is None else timeout_s
        return {"timeout": t, "metadata": self.options.metadata()}

    async def _call(self, method: Any, request: Any, timeout_s: float | None) -> Any:
        deadline = time.monotonic() + self._kw(timeout_s)["timeout"]
        retry = 0
        while True:
            left = max(0.0, deadline - time.monotonic())
            try:
                return await method(request, timeout=left, metadata=self.options.metadata())
            except grpc.RpcError as err:
                exc = error_from_rpc(err)
                wait = self.options.retry.wait_s(exc, retry, deadline)
                if wait is None:
                    raise exc from err
            await asyncio.sleep(wait)
            retry += 1

    async def plan(
        self, bundle: FhirInput, *, timeout_s: float | None = None, source_base: str = ""
    ) -> Json:
        req = pb.GeneratePlanRequest(bundle_json=_fhir_bytes(bundle), source_base=source_base)
        return _plan(await self._call(self._stub.GeneratePlan, req, timeout_s))

    async def stream_plan(
        self, bundle: FhirInput, *, timeout_s: float | None = None
    ) -> AsyncIterator[Json]:
        req = pb.GeneratePlanRequest(bundle_json=_fhir_bytes(bundle))
        call = self._stub.StreamPlan(req, **self._kw(timeout_s))
        try:
            async for event in call:
                yield _event(event)
        except grpc.RpcError as err:
            raise error_from_rpc(err) from err
        finally:
            call.cancel()

    async def contest(
        self,
        plan_id: str,
        version: int,
        tasks: FhirInput | Sequence[Mapping[str, Any]],
        *,
        timeout_s: float | None = None,
    ) -> Json:
        req = pb.ContestRequest(plan_id=plan_id, version=version, tasks_json=_tasks(tasks))
        return _contested(await self._call(self._stub.Contest, req, timeout_s))

    async def deliberation(
        self, plan_id: str, version: int | None = None, *, timeout_s: float | None = None
    ) -> Json:
        req = _deliberation_request(plan_id, version)
        r = await self._call(self._stub.GetDeliberation, req, timeout_s)
        return _load(r.deliberation_json)

    async def versions(
        self,
        plan_id: str | None = None,
        *,
        patient_ref: str | None = None,
        timeout_s: float | None = None,
    ) -> list[Json]:
        req = _versions_request(plan_id, patient_ref)
        r = await self._call(self._stub.ListPlanVersions, req, timeout_s)
        return [_version(v) for v in r.versions]


def _tasks(tasks: FhirInput | Sequence[Mapping[str, Any]]) -> bytes:
    """A list of Tasks travels as a ``transaction`` Bundle (applied in order, all or none)."""
    if isinstance(tasks, Sequence) and not isinstance(tasks, str | bytes):
        return _fhir_bytes(
            {
                "resourceType": "Bundle",
                "type": "transaction",
                "entry": [
                    {
                        "resource": dict(t),
                        "request": {"method": "POST", "url": "Task"},
                    }
                    for t in tasks
                ],
            }
        )
    return _fhir_bytes(tasks)
