"""The production expert backend: LLMs served by NVIDIA Triton, over ``tritonclient.grpc.aio``.

``TritonExperts`` implements ``inference.protocol.Experts``. Each step renders its versioned
prompt (``inference.prompts``), sends it with the step's JSON schema for guided decoding using
the tensor contract of Triton's vLLM backend (``text_input``, ``sampling_parameters``, ``stream``,
``exclude_input_in_output`` -> ``text_output``), validates the answer (``inference.schemas``) and
decodes it; a bad answer gets one bounded repair call, then ``StepFailed``. Around every call:
a concurrency cap shared by a plan's calls, an explicit client deadline (kept apart from Triton's
server-side queue timeout), retries with backoff on UNAVAILABLE / RESOURCE_EXHAUSTED only, a
circuit breaker, and one ``ModelCall`` record per request.

Only ``service.errors`` leave this module. tritonclient is imported lazily, so importing this
module never needs it; the reasoning core never imports this module.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from inference._triton_steps import AnswerError, StepRequest, request_for
from inference.panel_sizes import (
    DEFAULT_PANEL_SIZES,
    PanelSizes,
    panel_sizes,
)
from inference.prompts import (
    CHAT_FAMILIES,
    apply_chat_template,
    block,
    input_block,
    load_template,
    prompt_schema,
    stop_sequences,
)
from inference.protocol import CALL_KINDS, STEP_KINDS, CallContext, CallKind, ModelCall, Step
from service.errors import BackendTimeout, BackendUnavailable, StepFailed, missing_extra

__all__ = ["TRITON_EXTRA", "TritonExperts", "TritonSettings"]

R = TypeVar("R")

TRITON_EXTRA = "triton"  # the project extra that installs tritonclient[grpc] for this backend

# The larger model judges (and, by default, scores plans for the evaluation harness); role
# agents and the attending's drafting run on the agent model.
_ADJUDICATOR_STEPS = frozenset({"adjudicate", "arbitrate", "judge"})
# About twice the longest answer the embedded experts give on the shared fixtures.
_DEFAULT_MAX_TOKENS: tuple[tuple[str, int], ...] = (
    ("assess", 6144),
    ("panel", 1536),
    ("consult", 6144),  # one member's votes and arguments (longest: 3.7k Gemma tokens)
    ("score", 1024),  # five numbers for each argument of one option
    ("relate", 2048),  # every option's relations in one answer
    ("adjudicate", 1536),  # every near-tied pair of one option in one answer
    ("arbitrate", 384),
    ("synthesize", 768),
    ("judge", 1024),  # four scores with a rationale each (at most 1000 characters)
)
_PREVIOUS_ANSWER_CHARS = 2000  # the repair prompt quotes at most this much of the bad answer
_GUARD_S = 1.0  # local watchdog on top of the gRPC deadline, so a stuck stream cannot hang


@dataclass(frozen=True, slots=True)
class TritonSettings:
    """Everything the Triton backend reads from configuration (one options object)."""

    url: str = "localhost:8001"
    protocol: Literal["stream", "infer"] = "stream"  # stream: decoupled (vLLM); infer: plain
    guided_key: Literal["structured_outputs", "guided_decoding", "none"] = "structured_outputs"
    # The same defaults as service.settings.Settings (a test keeps them equal).
    agent_model: str = "medgemma-4b-it"
    adjudicator_model: str = "medgemma-27b-text-it"
    models: tuple[tuple[str, str], ...] = ()  # per-step overrides: (step, model name)
    concurrency: int = 8
    deadline_s: float | None = None  # caps ctx.deadline_s when set
    queue_timeout_us: int | None = None  # Triton's server-side queue timeout, not the deadline
    retries: int = 2  # extra attempts on UNAVAILABLE / RESOURCE_EXHAUSTED
    backoff_s: float = 0.2
    backoff_max_s: float = 2.0
    breaker_threshold: int = 5
    breaker_cooldown_s: float = 30.0
    chat_template: Literal["gemma", "llama3", "chatml", "none"] = "gemma"
    max_tokens: tuple[tuple[str, int], ...] = _DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    panel_sizes: PanelSizes = DEFAULT_PANEL_SIZES  # stated in the panel prompt
    stream_tokens: bool = True  # the "stream" input: token deltas vs one final response
    repair_attempts: int = 1  # 0 or 1: re-ask once after an unusable answer
    ready_timeout_s: float = 2.0
    # tritonclient's defaults (pings off). Turn pings on only together with the server's
    # grpc_http2_min_recv_ping_interval_without_data: Triton answers pings more frequent than
    # that (5 min by default) with GOAWAY "too_many_pings", killing long generations.
    keepalive_time_ms: int = 2**31 - 1
    keepalive_timeout_ms: int = 20_000

    def __post_init__(self) -> None:
        if self.protocol not in ("stream", "infer"):
            raise ValueError(f"protocol must be 'stream' or 'infer', not {self.protocol!r}")
        if self.guided_key not in ("structured_outputs", "guided_decoding", "none"):
            raise ValueError(f"unknown guided_key {self.guided_key!r}")
        if self.chat_template not in CHAT_FAMILIES:
            raise ValueError(f"chat_template must be one of {CHAT_FAMILIES}")
        if self.concurrency < 1 or self.retries < 0 or self.breaker_threshold < 1:
            raise ValueError("concurrency and breaker_threshold must be >= 1, retries >= 0")
        if self.repair_attempts not in (0, 1):
            raise ValueError("repair_attempts is 0 or 1")
        unknown = {s for s, _ in (*self.models, *self.max_tokens)} - set(CALL_KINDS)
        if unknown:
            raise ValueError(f"unknown step kinds {sorted(unknown)}")
        panel_sizes({c: (b, e) for c, b, e in self.panel_sizes})

    def model_for(self, step: str) -> str:
        for s, m in self.models:
            if s == step:
                return m
        return self.adjudicator_model if step in _ADJUDICATOR_STEPS else self.agent_model

    def max_tokens_for(self, step: str) -> int:
        return (dict(_DEFAULT_MAX_TOKENS) | dict(self.max_tokens))[step]

    @property
    def model_names(self) -> tuple[str, ...]:
        return tuple(sorted({self.model_for(s) for s in STEP_KINDS}))


@dataclass(slots=True)
class _Breaker:
    """Consecutive transport failures open the circuit for a cool-down; one trial call
    after it either closes it again or re-opens it."""

    threshold: int
    cooldown_s: float
    clock: Callable[[], float]
    failures: int = 0
    opened_at: float | None = None

    def check(self) -> None:
        if self.opened_at is not None:
            left = self.opened_at + self.cooldown_s - self.clock()
            if left > 0:
                raise BackendUnavailable(
                    f"Triton circuit open after {self.failures} consecutive transport "
                    f"failures; retry in {left:.1f}s"
                )

    def success(self) -> None:
        self.failures, self.opened_at = 0, None

    def failure(self) -> None:
        self.failures += 1
        if self.failures >= self.threshold:
            self.opened_at = self.clock()


@dataclass(frozen=True, slots=True)
class _Generation:
    text: str
    input_tokens: int
    output_tokens: int


class _Retryable(Exception):
    """UNAVAILABLE / RESOURCE_EXHAUSTED: worth another attempt."""


class _Deadline(Exception):
    pass


class _ModelFailure(Exception):
    """The server answered with an error about this request (bad input, model crash)."""


@dataclass(slots=True)
class _ModelInputs:
    """The inputs a served model declares: name -> (datatype, shape)."""

    declared: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)


class TritonExperts:
    """``Experts`` over LLMs on Triton. Create it inside the event loop that will use it, or
    call it only from one loop: the gRPC channel is opened on first use and bound to it."""

    def __init__(
        self,
        settings: TritonSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tc = _import_tritonclient()
        self.settings = settings
        self.name = f"triton:{settings.agent_model}"
        self._clock = clock
        self._sem = asyncio.Semaphore(settings.concurrency)
        self._breaker = _Breaker(settings.breaker_threshold, settings.breaker_cooldown_s, clock)
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inputs: dict[str, _ModelInputs] = {}
        self._ids = itertools.count(1)

    # -- Experts ------------------------------------------------------------------------------

    async def is_ready(self) -> bool:
        t = self.settings.ready_timeout_s
        try:
            client = self._channel()
            if not await client.is_server_ready(client_timeout=t):
                return False
            for model in self.settings.model_names:
                if not await client.is_model_ready(model, client_timeout=t):
                    return False
        except Exception:  # readiness is a yes/no question: any failure is "no"
            return False
        return True

    async def run(self, step: Step[R], ctx: CallContext) -> R:
        """One step: its request (``_triton_steps.request_for``), one call, one repair at most.
        An unusable answer raises ``StepFailed``: a verdict never defaults to either side."""
        try:
            req = request_for(step, self.settings.panel_sizes)
        except KeyError as exc:
            raise StepFailed(f"the Triton backend cannot answer {type(step).__name__}") from exc
        return await self._run(req, ctx)

    async def ask(self, req: StepRequest[R], ctx: CallContext) -> R:
        """A request built outside the pipeline's steps (the evaluation judge,
        ``inference.judge``): the same call, checks and one repair as a step's."""
        return await self._run(req, ctx)

    async def aclose(self) -> None:
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()

    # -- one step: prompt, call, validate, at most one repair ---------------------------------

    def render(self, req: StepRequest[Any]) -> str:
        """The full prompt text of a step request (chat template applied): the plan's shared
        prefix, then the step's own part."""
        return self._prompt(req, self._task(req))

    def prefix(self, req: StepRequest[Any]) -> str:
        """The part of ``render(req)`` every call of the same plan starts with, byte for byte
        (the system text and the patient record, through the end of the record block)."""
        return self._prompt(req, _SPLIT).split(_SPLIT, 1)[0]

    def _prompt(self, req: StepRequest[Any], task: str) -> str:
        system, shared = _shared(req.record)
        return apply_chat_template(
            self.settings.chat_template, req.system or system, f"{shared}\n\n{task}"
        )

    def _task(self, req: StepRequest[Any]) -> str:
        tpl = load_template(req.step)
        fields = dict(req.fields)
        if req.evidence is not None:
            fields["evidence"] = block("evidence", req.evidence)
        if req.member is not None:
            fields["member"] = block("member", req.member)
        return tpl.render(
            inputs=input_block(req.step, req.inputs, tpl.version),
            schema=prompt_schema(req.schema),
            **fields,
        )["task"]

    async def _run(self, req: StepRequest[R], ctx: CallContext) -> R:
        model = self.settings.model_for(req.step)
        text = await self._call(req.step, model, self.render(req), req.schema, ctx)
        try:
            return req.check(text)
        except AnswerError as first:
            if self.settings.repair_attempts == 0:
                raise StepFailed(f"{req.step}: unusable answer from {model}: {first}") from first
            repair = await self._call(
                req.step, model, self._repair_prompt(req, text, first), req.schema, ctx
            )
            try:
                return req.check(repair)
            except AnswerError as second:
                raise StepFailed(
                    f"{req.step}: unusable answer from {model} after one repair: {second}"
                ) from second

    def _repair_prompt(self, req: StepRequest[Any], previous: str, err: AnswerError) -> str:
        # The same shared prefix as the call it repairs: only the task part differs.
        task = load_template("repair").render(
            original=self._task(req),
            previous=previous[:_PREVIOUS_ANSWER_CHARS],
            error=err.detail,
            schema=prompt_schema(req.schema),
        )["task"]
        return self._prompt(req, task)

    # -- one model call: cap, deadline, retries, breaker, accounting --------------------------

    async def _call(
        self, step: CallKind, model: str, prompt: str, schema: dict[str, Any], ctx: CallContext
    ) -> str:
        s = self.settings
        budget = ctx.deadline_s if s.deadline_s is None else min(ctx.deadline_s, s.deadline_s)
        async with self._sem:
            # The deadline starts once the call holds a slot: waiting for the cap is the
            # pipeline's time, not this call's.
            deadline = self._clock() + budget
            for attempt in range(s.retries + 1):
                self._breaker.check()
                remaining = deadline - self._clock()
                if remaining <= 0:
                    self._record(ctx, step, model, None, 0.0, "deadline")
                    raise BackendTimeout(f"{step}: {model} passed its {budget:.1f}s deadline")
                t0 = self._clock()
                try:
                    async with asyncio.timeout(remaining + _GUARD_S):
                        gen = await self._once(model, prompt, schema, step, remaining)
                except _Retryable as exc:
                    self._record(ctx, step, model, None, self._clock() - t0, str(exc))
                    if attempt == s.retries:
                        self._breaker.failure()
                        raise BackendUnavailable(
                            f"{step}: Triton at {s.url} unavailable for {model} after "
                            f"{attempt + 1} attempts: {exc}"
                        ) from exc
                    pause = min(s.backoff_s * 2**attempt, s.backoff_max_s)
                    await asyncio.sleep(max(0.0, min(pause, deadline - self._clock())))
                    continue
                except (_Deadline, TimeoutError) as exc:
                    self._record(ctx, step, model, None, self._clock() - t0, "deadline")
                    raise BackendTimeout(
                        f"{step}: {model} passed its {budget:.1f}s deadline"
                    ) from exc
                except _ModelFailure as exc:
                    self._breaker.success()  # the server answered: transport is fine
                    self._record(ctx, step, model, None, self._clock() - t0, str(exc))
                    raise StepFailed(f"{step}: {model} failed the request: {exc}") from exc
                self._breaker.success()
                self._record(ctx, step, model, gen, self._clock() - t0, "")
                return gen.text
        raise AssertionError("unreachable")  # the loop returns or raises

    def _record(
        self,
        ctx: CallContext,
        step: CallKind,
        model: str,
        gen: _Generation | None,
        seconds: float,
        error: str,
    ) -> None:
        if ctx.recorder is None:
            return
        ctx.recorder.record(
            ModelCall(
                step=step,
                model=model,
                input_tokens=gen.input_tokens if gen else 0,
                output_tokens=gen.output_tokens if gen else 0,
                latency_ms=seconds * 1000.0,
                ok=gen is not None,
                error=error[:200],
            )
        )

    # -- transport ----------------------------------------------------------------------------

    def _channel(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            s = self.settings
            ka = self._tc.KeepAliveOptions(
                keepalive_time_ms=s.keepalive_time_ms,
                keepalive_timeout_ms=s.keepalive_timeout_ms,
            )
            self._client = self._tc.aio.InferenceServerClient(s.url, keepalive_options=ka)
            self._loop = loop
        return self._client

    async def _declared_inputs(self, model: str, timeout: float) -> _ModelInputs:
        known = self._inputs.get(model)
        if known is None:
            md = await self._channel().get_model_metadata(
                model, as_json=True, client_timeout=timeout
            )
            known = _ModelInputs(
                {
                    i["name"]: (i["datatype"], tuple(int(d) for d in i["shape"]))
                    for i in md.get("inputs", [])
                }
            )
            if "text_input" not in known.declared:
                raise _ModelFailure(f"model {model} has no text_input: not an LLM contract")
            self._inputs[model] = known
        return known

    async def _once(
        self, model: str, prompt: str, schema: dict[str, Any], step: str, timeout: float
    ) -> _Generation:
        try:
            declared = await self._declared_inputs(model, timeout)
            inputs = self._tensors(declared, prompt, schema, step)
            rid = f"canoe-{step}-{next(self._ids)}"
            if self.settings.protocol == "stream":
                return await self._stream(model, inputs, rid, timeout, prompt)
            return await self._infer(model, inputs, rid, timeout, prompt)
        except (_Retryable, _Deadline, _ModelFailure):
            raise
        except Exception as exc:
            raise _classify(exc) from exc

    def _tensors(
        self, declared: _ModelInputs, prompt: str, schema: dict[str, Any], step: str
    ) -> list[Any]:
        s = self.settings
        sampling: dict[str, Any] = {
            "temperature": s.temperature,
            "max_tokens": s.max_tokens_for(step),
            "stop": list(stop_sequences(s.chat_template)),
        }
        if s.guided_key != "none":
            sampling[s.guided_key] = {"json": schema}
        values: dict[str, Any] = {
            "text_input": prompt,
            "sampling_parameters": json.dumps(sampling, separators=(",", ":")),
            "stream": s.stream_tokens and s.protocol == "stream",
            "exclude_input_in_output": True,
            "return_num_input_tokens": True,
            "return_num_output_tokens": True,
            # Plain (non-decoupled) LLM ensembles, e.g. TensorRT-LLM's, take these directly.
            "max_tokens": s.max_tokens_for(step),
            "temperature": s.temperature,
            "guided_decoding_guide_type": "json_schema",
            "guided_decoding_guide": json.dumps(schema, separators=(",", ":")),
        }
        tensors = []
        for name, (datatype, shape) in declared.declared.items():
            if name not in values:
                continue
            dims = [1 if d < 0 else d for d in shape] or [1]
            value = values[name]
            np = self._tc.np
            if datatype == "BYTES":
                arr = np.array([str(value).encode("utf-8")], dtype=np.object_)
            else:
                arr = np.array([value], dtype=self._tc.triton_to_np_dtype(datatype))
            t = self._tc.InferInput(name, dims, datatype)
            t.set_data_from_numpy(arr.reshape(dims))
            tensors.append(t)
        return tensors

    async def _stream(
        self, model: str, inputs: list[Any], rid: str, timeout: float, prompt: str
    ) -> _Generation:
        request: dict[str, Any] = {"model_name": model, "inputs": inputs, "request_id": rid}
        if self.settings.queue_timeout_us is not None:
            request["timeout"] = self.settings.queue_timeout_us

        async def requests() -> Any:
            # One request, then half-close: Triton ends the stream after its final response.
            yield request

        chunks: list[str] = []
        n_in = n_out = 0
        counted = False
        responses = self._channel().stream_infer(requests(), stream_timeout=timeout)
        async for result, error in responses:
            if error is not None:
                raise _ModelFailure(_short(str(error)))
            chunks.extend(_texts(result.as_numpy("text_output")))
            i, o = _count(result, "num_input_tokens"), _count(result, "num_output_tokens")
            if i is not None or o is not None:
                counted = True
                n_in = max(n_in, i or 0)
                n_out = n_out + (o or 0) if self.settings.stream_tokens else max(n_out, o or 0)
        text = "".join(chunks)
        if not counted:
            n_in, n_out = _estimate_tokens(prompt), _estimate_tokens(text)
        return _Generation(text, n_in, n_out)

    async def _infer(
        self, model: str, inputs: list[Any], rid: str, timeout: float, prompt: str
    ) -> _Generation:
        result = await self._channel().infer(
            model,
            inputs,
            request_id=rid,
            timeout=self.settings.queue_timeout_us,
            client_timeout=timeout,
        )
        text = "".join(_texts(result.as_numpy("text_output")))
        i, o = _count(result, "num_input_tokens"), _count(result, "num_output_tokens")
        return _Generation(
            text,
            i if i is not None else _estimate_tokens(prompt),
            o if o is not None else _estimate_tokens(text),
        )


# -- helpers ----------------------------------------------------------------------------------

_SPLIT = "\x00canoe-split\x00"  # marks where the shared prefix ends while rendering it


def _shared(record: dict[str, Any]) -> tuple[str, str]:
    """(system text, shared user text): the same for every call of a plan."""
    parts = load_template("shared").render(record=block("record", record))
    return parts["system"], parts["user"]


@dataclass(frozen=True, slots=True)
class _Tritonclient:
    aio: Any
    InferInput: Any
    KeepAliveOptions: Any
    InferenceServerException: Any
    triton_to_np_dtype: Callable[[str], Any]
    np: Any
    grpc: Any


def _import_tritonclient() -> _Tritonclient:
    try:
        import grpc
        import numpy as np
        import tritonclient.grpc.aio as aio
        from tritonclient.grpc import InferInput, KeepAliveOptions
        from tritonclient.utils import InferenceServerException, triton_to_np_dtype
    except ImportError as exc:
        raise missing_extra(TRITON_EXTRA, "the Triton backend") from exc
    return _Tritonclient(
        aio, InferInput, KeepAliveOptions, InferenceServerException, triton_to_np_dtype, np, grpc
    )


def _classify(exc: Exception) -> Exception:
    """Map a foreign exception to retryable / deadline / model failure."""
    code = ""
    if hasattr(exc, "code") and callable(exc.code):  # grpc.aio.AioRpcError
        code = str(exc.code())
    elif hasattr(exc, "status") and callable(exc.status):  # InferenceServerException
        code = str(exc.status() or "")
    msg = _short(f"{code or type(exc).__name__}: {_details(exc)}")
    if "UNAVAILABLE" in code or "RESOURCE_EXHAUSTED" in code:
        return _Retryable(msg)
    if "DEADLINE_EXCEEDED" in code:
        return _Deadline(msg)
    if isinstance(exc, OSError | ConnectionError):
        return _Retryable(msg)
    return _ModelFailure(msg)


def _details(exc: Exception) -> str:
    if hasattr(exc, "details") and callable(exc.details):
        return str(exc.details())
    if hasattr(exc, "message") and callable(exc.message):
        return str(exc.message())
    return str(exc)


def _short(text: str, n: int = 200) -> str:
    # A server-side traceback is long: its last line says what went wrong.
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) > 1 and lines[0].startswith("Traceback"):
        text = lines[-1]
    return text if len(text) <= n else text[: n - 1] + "…"


def _texts(arr: Any) -> list[str]:
    if arr is None:
        return []
    return [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in arr.flat]


def _count(result: Any, name: str) -> int | None:
    arr = result.as_numpy(name)
    if arr is None or arr.size == 0:
        return None
    return int(arr.flat[0])


def _estimate_tokens(text: str) -> int:
    """About four characters a token: used only when the server does not count."""
    return math.ceil(len(text) / 4)
