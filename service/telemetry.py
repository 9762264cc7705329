"""OpenTelemetry for the service: one ``Telemetry`` object built at start-up and passed down.

It owns the tracer and meter (OTLP export when ``otlp_endpoint`` is set; in-memory readers and
exporters can be handed in by tests) and the service's instruments. With ``prometheus=True``
(``canoe serve``) a Prometheus reader collects into a registry of its own, which
``MetricsEndpoint.start`` serves as ``/metrics`` on ``metrics_port``. ``TracedExperts`` wraps any
``Experts`` backend so that every model call gets a span and is counted. Span attributes and
metric labels carry only operational values (method, stage, step, role, model, counts, status
codes, plan ids): never patient data, never free text from the bundle or the model.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from threading import Thread
from typing import Any, TypeVar

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Span, Status, StatusCode

from inference.protocol import CallContext, Experts, ModelCall, Step, UsageRecorder
from service.errors import InputError, missing_extra
from service.settings import Settings

__all__ = ["SERVICE_NAME", "MetricsEndpoint", "Telemetry", "TracedExperts"]

R = TypeVar("R")

SERVICE_NAME = "canoe-careplan"
# The SDK's default buckets (0..10000) are meant for milliseconds; ours are seconds, from a
# cached call (milliseconds) to a whole plan over a slow model (minutes).
_SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class Telemetry:
    """Tracer, meter and instruments. ``Telemetry()`` alone is a no-op (CLI, unit tests)."""

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        *,
        prometheus_registry: Any = None,
    ) -> None:
        # A prometheus_client CollectorRegistry when a Prometheus reader feeds the meter.
        self.prometheus_registry = prometheus_registry
        self.tracer_provider = tracer_provider or trace.NoOpTracerProvider()
        self.meter_provider = meter_provider or metrics.NoOpMeterProvider()
        self.tracer = self.tracer_provider.get_tracer("canoe.service")
        m = self.meter = self.meter_provider.get_meter("canoe.service")
        self.requests = m.create_counter("canoe.rpc.requests", unit="{request}")
        self.errors = m.create_counter("canoe.rpc.errors", unit="{request}")
        self.latency = m.create_histogram("canoe.rpc.duration", unit="s")
        self.plans = m.create_counter("canoe.plans", unit="{plan}")
        self.plan_duration = m.create_histogram("canoe.plan.duration", unit="s")
        self.model_calls = m.create_counter("canoe.model.calls", unit="{call}")
        self.model_latency = m.create_histogram("canoe.model.duration", unit="s")
        self.tokens = m.create_counter("canoe.model.tokens", unit="{token}")
        self.contestations = m.create_counter("canoe.contestations", unit="{task}")
        self.in_flight = m.create_up_down_counter("canoe.plans.in_flight", unit="{plan}")

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        span_exporters: Sequence[SpanExporter] = (),
        metric_readers: Sequence[MetricReader] = (),
        prometheus: bool = False,
    ) -> Telemetry:
        """SDK providers with the OTLP exporters when configured, plus any given in-process, plus
        a Prometheus reader when ``prometheus`` and ``metrics_port`` > 0."""
        resource = Resource.create({"service.name": SERVICE_NAME})
        tp = TracerProvider(resource=resource)
        readers = list(metric_readers)
        registry: Any = None
        if prometheus and settings.server.metrics_port > 0:
            registry, reader = _prometheus_reader()
            readers.append(reader)
        for exp in span_exporters:
            tp.add_span_processor(SimpleSpanProcessor(exp))
        if settings.telemetry.otlp_endpoint:
            try:
                from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                    OTLPMetricExporter,
                )
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
            except ImportError as exc:
                raise missing_extra("otlp", "exporting to an OTLP collector") from exc

            insecure = settings.telemetry.otlp_endpoint.startswith("http://")
            tp.add_span_processor(
                BatchSpanProcessor(
                    OTLPSpanExporter(endpoint=settings.telemetry.otlp_endpoint, insecure=insecure)
                )
            )
            readers.append(
                PeriodicExportingMetricReader(
                    OTLPMetricExporter(endpoint=settings.telemetry.otlp_endpoint, insecure=insecure)
                )
            )
        seconds = View(
            instrument_name="canoe.*duration",
            aggregation=ExplicitBucketHistogramAggregation(_SECONDS_BUCKETS),
        )
        mp = MeterProvider(resource=resource, metric_readers=readers, views=[seconds])
        return cls(tp, mp, prometheus_registry=registry)

    def shutdown(self) -> None:
        for provider in (self.tracer_provider, self.meter_provider):
            stop = getattr(provider, "shutdown", None)
            if stop is not None:
                stop()

    def record_call(self, call: ModelCall, backend: str) -> None:
        labels: dict[str, str | bool] = {"step": call.step, "backend": backend, "ok": call.ok}
        self.model_calls.add(1, labels)
        self.model_latency.record(call.latency_ms / 1000.0, labels)
        if call.input_tokens:
            self.tokens.add(call.input_tokens, {**labels, "direction": "input"})
        if call.output_tokens:
            self.tokens.add(call.output_tokens, {**labels, "direction": "output"})


def _prometheus_reader() -> tuple[Any, MetricReader]:
    try:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from prometheus_client import CollectorRegistry, GCCollector, ProcessCollector
    except ImportError as exc:
        raise InputError(
            "metrics_port is set but opentelemetry-exporter-prometheus is not installed; "
            "install it or set CANOE_METRICS_PORT=0"
        ) from exc
    # A registry of our own, not prometheus_client's global one: a second Telemetry in one
    # process (tests) must not collide, and nothing imported by chance gets exported.
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)
    GCCollector(registry=registry)
    return registry, PrometheusMetricReader(registry=registry)


@dataclass(frozen=True, slots=True)
class MetricsEndpoint:
    """``/metrics`` in Prometheus text format on a daemon thread of its own, so a scrape is
    answered even while the event loop is busy with a plan. Plain HTTP: it carries counts and
    timings only, and the ServiceMonitor scrapes it without TLS."""

    server: Any  # wsgiref WSGIServer
    thread: Thread

    @property
    def port(self) -> int:
        return int(self.server.server_port)

    @classmethod
    def start(cls, registry: Any, host: str, port: int) -> MetricsEndpoint:
        from prometheus_client import start_http_server

        try:
            server, thread = start_http_server(port, addr=host, registry=registry)
        except OSError as exc:
            raise InputError(f"cannot bind metrics on {host}:{port}: {exc.strerror}") from exc
        return cls(server, thread)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


class _SpanRecorder:
    """Passes usage on to the plan's recorder and writes its numbers onto the call's span."""

    def __init__(self, inner: UsageRecorder | None, span: Span, tel: Telemetry, backend: str):
        self._inner, self._span, self._tel, self._backend = inner, span, tel, backend

    def record(self, call: ModelCall) -> None:
        self._span.set_attributes(
            {
                "canoe.model": call.model,
                "canoe.tokens.input": call.input_tokens,
                "canoe.tokens.output": call.output_tokens,
                "canoe.call.ok": call.ok,
            }
        )
        self._tel.record_call(call, self._backend)
        if self._inner is not None:
            self._inner.record(call)


class TracedExperts:
    """An ``Experts`` that wraps another with one span per model call."""

    def __init__(self, inner: Experts, telemetry: Telemetry) -> None:
        self.inner = inner
        self.telemetry = telemetry
        self.name = inner.name

    async def is_ready(self) -> bool:
        return await self.inner.is_ready()

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def run(self, step: Step[R], ctx: CallContext) -> R:
        attrs: dict[str, Any] = {"canoe.step": step.kind, "canoe.backend": self.name}
        if step.role:
            attrs["canoe.role"] = step.role
        with self.telemetry.tracer.start_as_current_span(
            f"model.{step.kind}",
            attributes=attrs,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            traced = CallContext(
                recorder=_SpanRecorder(ctx.recorder, span, self.telemetry, self.name),
                deadline_s=ctx.deadline_s,
                labels=ctx.labels,
            )
            t0 = time.perf_counter()
            try:
                return await self.inner.run(step, traced)
            except BaseException as exc:
                # The exception type only: messages may quote the record.
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                raise
            finally:
                span.set_attribute("canoe.call.seconds", time.perf_counter() - t0)
