"""Telemetry and logs over a real server: a trace per request with spans per stage and per
model call, the service's metrics, JSON logs carrying request and trace ids, and none of the
patient's data (names, identifiers, birth date, address, condition and medication texts) in
anything logged or exported."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import structlog
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from service.logs import configure_logging
from service.pipeline import STAGES
from service.settings import load_settings
from service.telemetry import Telemetry
from tests.service.conftest import bundle_bytes, first_argument, pb, reject_task, serving

METHOD = "canoe.v1.CarePlanService"


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    buf = io.StringIO()
    configure_logging("debug", stream=buf)
    try:
        yield buf
    finally:
        structlog.reset_defaults()
        root = logging.getLogger()
        for h in [h for h in root.handlers if getattr(h, "_canoe", False)]:
            root.removeHandler(h)


def _patient_data(raw: bytes) -> set[str]:
    """Every identifying or free-text value of the fixture a leak would show."""
    bundle = json.loads(raw)
    out: set[str] = set()
    for e in bundle["entry"]:
        r = e["resource"]
        if r["resourceType"] == "Patient":
            out.add(r["id"])
            out.add(r["birthDate"])
            for n in r.get("name", []):
                out.update(n.get("given", []))
                out.add(n["family"])
            out.update(i["value"] for i in r.get("identifier", []))
            out.update(t["value"] for t in r.get("telecom", []))
            for a in r.get("address", []):
                out.update(a.get("line", []))
                out.update(a[k] for k in ("city", "postalCode") if k in a)
        if r["resourceType"] in ("Condition", "MedicationRequest"):
            concept = r.get("code") or r.get("medicationCodeableConcept") or {}
            out.update(c["display"] for c in concept.get("coding", []) if c.get("display"))
            if concept.get("text"):
                out.add(concept["text"])
    return {v for v in out if isinstance(v, str) and len(v) >= 4}


def _metrics_text(reader: InMemoryMetricReader) -> tuple[set[str], str]:
    data = reader.get_metrics_data()
    names: set[str] = set()
    dump = []
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                names.add(m.name)
                for p in m.data.data_points:
                    dump.append(json.dumps(dict(p.attributes or {}), default=str))
    return names, "\n".join(dump)


async def test_traces_metrics_and_logs_carry_no_patient_data(
    tmp_path: Path, logs: io.StringIO
) -> None:
    spans = InMemorySpanExporter()
    reader = InMemoryMetricReader()
    telemetry = Telemetry.from_settings(
        load_settings(environ={}), span_exporters=[spans], metric_readers=[reader]
    )
    raw = bundle_bytes("adalberto")
    async with serving(tmp_path, telemetry=telemetry) as h:
        call = h.stub.GeneratePlan(
            pb.GeneratePlanRequest(bundle_json=raw), metadata=(("x-request-id", "req-42"),)
        )
        r = await call
        assert dict(await call.initial_metadata())["x-request-id"] == "req-42"
        doc = json.loads(
            (
                await h.stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id))
            ).deliberation_json
        )
        task = reject_task(r.plan_id, 1, first_argument(doc), tid="t1", patient=doc["patient_ref"])
        await h.stub.Contest(
            pb.ContestRequest(plan_id=r.plan_id, version=1, tasks_json=json.dumps(task).encode())
        )
        # A refusal that quotes the record back to the caller must not quote it in the logs.
        broken = json.loads(raw)
        broken["entry"][0]["resource"]["birthDate"] = "not-a-date " + broken["entry"][0][
            "resource"
        ].get("birthDate", "")
        with pytest.raises(grpc.aio.AioRpcError):
            await h.stub.GeneratePlan(
                pb.GeneratePlanRequest(bundle_json=json.dumps(broken).encode())
            )
        streamed = [e async for e in h.stub.StreamPlan(pb.GeneratePlanRequest(bundle_json=raw))]
        assert streamed[-1].HasField("plan")
    telemetry.shutdown()

    finished = spans.get_finished_spans()
    # One trace per request, with the stages and the model calls inside it.
    (root,) = [
        s
        for s in finished
        if s.name == f"{METHOD}/GeneratePlan" and s.attributes.get("canoe.plan_id") == r.plan_id
    ]
    trace_id = root.context.trace_id
    in_trace = [s for s in finished if s.context.trace_id == trace_id]
    assert {f"stage.{st}" for st in STAGES} <= {s.name for s in in_trace}
    model_spans = [s for s in in_trace if s.name.startswith("model.")]
    assert len(model_spans) == r.summary.counts["model_calls"]
    assert {"model.assess", "model.consult", "model.relate"} <= {s.name for s in model_spans}
    assert all(s.parent is not None for s in in_trace if s is not root)
    assert {s.name for s in finished} >= {
        f"{METHOD}/{m}" for m in ("Contest", "GetDeliberation", "StreamPlan")
    }

    names, metric_dump = _metrics_text(reader)
    assert {
        "canoe.rpc.requests",
        "canoe.rpc.duration",
        "canoe.rpc.errors",
        "canoe.model.calls",
        "canoe.model.duration",
        "canoe.contestations",
        "canoe.plans",
    } <= names

    lines = [json.loads(x) for x in logs.getvalue().splitlines() if x.strip()]
    done = [x for x in lines if x.get("event") == "rpc.finished"]
    gen = next(x for x in done if x.get("plan_id") == r.plan_id and x["rpc"] == "GeneratePlan")
    assert gen["request_id"] == "req-42" and gen["trace_id"] == format(trace_id, "032x")
    assert all(x.get("request_id") and x.get("trace_id") for x in done)
    assert {x["code"] for x in done} >= {"OK", "INVALID_ARGUMENT"}

    exported = "\n".join(
        [logs.getvalue(), metric_dump]
        + [
            json.dumps(
                {
                    "name": s.name,
                    "attributes": dict(s.attributes or {}),
                    "events": [(e.name, dict(e.attributes or {})) for e in s.events],
                    "status": s.status.description,
                    "resource": dict(s.resource.attributes),
                },
                default=str,
            )
            for s in finished
        ]
    )
    secrets = _patient_data(raw)
    assert {"Adalberto", "Hartmann", "1949-11-29", "999-30-7608"} <= secrets  # a real scan
    leaked = sorted(v for v in secrets if v in exported)
    assert leaked == [], f"patient data in logs/telemetry: {leaked}"


async def test_otlp_export_by_configuration(tmp_path: Path) -> None:
    """With ``otlp_endpoint`` set, spans and metrics reach an OTLP/gRPC collector (a real gRPC
    server implementing the collector services, on loopback)."""
    from concurrent import futures

    from opentelemetry.proto.collector.metrics.v1 import (
        metrics_service_pb2,
        metrics_service_pb2_grpc,
    )
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    got: dict[str, list[object]] = {"spans": [], "metrics": []}

    class Traces(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request, context):  # type: ignore[no-untyped-def]
            for rs in request.resource_spans:
                for ss in rs.scope_spans:
                    got["spans"].extend(ss.spans)
            return trace_service_pb2.ExportTraceServiceResponse()

    class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
        def Export(self, request, context):  # type: ignore[no-untyped-def]
            for rm in request.resource_metrics:
                for sm in rm.scope_metrics:
                    got["metrics"].extend(m.name for m in sm.metrics)
            return metrics_service_pb2.ExportMetricsServiceResponse()

    # A thread-pool server: the exporters' shutdown blocks this event loop while it flushes.
    collector = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), collector)
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), collector)
    port = collector.add_insecure_port("127.0.0.1:0")
    collector.start()
    try:
        settings = load_settings(environ={}, otlp_endpoint=f"http://127.0.0.1:{port}")
        telemetry = Telemetry.from_settings(settings)
        async with serving(tmp_path, telemetry=telemetry) as h:
            await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
        telemetry.shutdown()  # flushes both exporters
    finally:
        collector.stop(None)
    names = {s.name for s in got["spans"]}  # type: ignore[attr-defined]
    assert f"{METHOD}/GeneratePlan" in names and "stage.arena" in names and "model.consult" in names
    assert {"canoe.rpc.requests", "canoe.model.calls"} <= set(got["metrics"])  # type: ignore[arg-type]
