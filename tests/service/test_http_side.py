"""`canoe serve`'s HTTP side as a real process: /healthz and /livez at the root for probes,
Prometheus /metrics on metrics_port with the service's own instruments, and HTTPS with the
service certificate (client certificates optional, so probes without one get through); plus
/healthz following the same readiness gRPC health reports, in process."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import socket
import ssl
from pathlib import Path

import httpx
import pytest

from service.app import CarePlanService
from service.cds_hooks.http import create_app
from service.settings import load_settings
from tests.service.conftest import Faulty, bundle_bytes, pb, real_experts
from tests.service.test_lifecycle import ServerProcess, canoe_serve, client


def _free_port() -> int:
    # metrics_port 0 means "off", so the test picks a free one itself.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _http_port(srv: ServerProcess) -> int:
    for _ in range(200):
        if srv.http_port:
            return srv.http_port
        await asyncio.sleep(0.05)
    raise AssertionError("http.started never logged")


async def _until_ready(http: httpx.AsyncClient, url: str) -> httpx.Response:
    got = None
    for _ in range(300):
        got = await http.get(url)
        if got.status_code == 200:
            return got
        assert got.status_code == 503 and got.json() == {"status": "NOT_SERVING"}
        await asyncio.sleep(0.1)
    raise AssertionError(f"never ready: {got}")


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "canoe-test")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


async def test_probes_and_metrics_over_plain_http(tmp_path: Path) -> None:
    metrics_port = _free_port()
    async with canoe_serve(tmp_path / "canoe.sqlite3", CANOE_METRICS_PORT=str(metrics_port)) as srv:
        port = await srv.started()
        base = f"http://127.0.0.1:{await _http_port(srv)}"
        async with httpx.AsyncClient(timeout=10) as http:
            live = await http.get(f"{base}/livez")
            assert (live.status_code, live.json()) == (200, {"status": "SERVING"})
            ready = await _until_ready(http, f"{base}/healthz")
            assert ready.json() == {"status": "SERVING"}
            # Unauthenticated, unlike every CDS route next to it.
            assert (await http.get(f"{base}/cds-services")).status_code == 401

            metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
            before = await http.get(metrics_url)
            assert before.status_code == 200
            assert before.headers["content-type"].startswith("text/plain")
            assert "canoe_plans_total" not in before.text  # nothing counted yet

            async with client(port) as stub:
                r = await stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
                assert r.version == 1
            after = (await http.get(metrics_url)).text
        samples = {
            line.split("{")[0].split(" ")[0]
            for line in after.splitlines()
            if line and not line.startswith("#")
        }
        assert {"canoe_plans_total", "canoe_rpc_requests_total"} <= samples, sorted(samples)
        assert "canoe_model_calls_total" in samples
        assert "process_resident_memory_bytes" in samples
        # Seconds-sized buckets, not the SDK's millisecond defaults.
        assert any(
            ln.startswith("canoe_rpc_duration_seconds_bucket{") and 'le="0.5"' in ln
            for ln in after.splitlines()
        )
        plans = [ln for ln in after.splitlines() if ln.startswith("canoe_plans_total")]
        assert plans and all(float(ln.rsplit(" ", 1)[1]) >= 1 for ln in plans)
        assert any('"metrics.started"' in line for line in srv.lines)


async def test_metrics_port_zero_turns_it_off(tmp_path: Path) -> None:
    async with canoe_serve(tmp_path / "canoe.sqlite3", CANOE_METRICS_PORT="0") as srv:
        await srv.started()
        await _http_port(srv)
        assert not any('"metrics.started"' in line for line in srv.lines)


async def test_https_with_the_service_certificate(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    env = {
        "CANOE_TLS_CERT_FILE": str(cert),
        "CANOE_TLS_KEY_FILE": str(key),
        # mTLS for gRPC; on HTTP a client certificate is optional, so a probe needs none.
        "CANOE_TLS_CLIENT_CA_FILE": str(cert),
        "CANOE_METRICS_PORT": "0",
    }
    async with canoe_serve(tmp_path / "canoe.sqlite3", **env) as srv:
        await srv.started()
        port = await _http_port(srv)
        trust = ssl.create_default_context(cafile=str(cert))
        async with httpx.AsyncClient(verify=trust, timeout=10) as https:
            ready = await _until_ready(https, f"https://127.0.0.1:{port}/healthz")
            assert ready.json() == {"status": "SERVING"}
            assert (await https.get(f"https://127.0.0.1:{port}/livez")).status_code == 200
        async with httpx.AsyncClient(timeout=10) as plain:
            with pytest.raises(httpx.TransportError):
                await plain.get(f"http://127.0.0.1:{port}/healthz")
        # Without our CA the certificate is not trusted: it really is our certificate served.
        async with httpx.AsyncClient(timeout=10) as untrusting:
            with pytest.raises(httpx.ConnectError):
                await untrusting.get(f"https://127.0.0.1:{port}/healthz")


async def test_healthz_follows_the_readiness_grpc_health_uses(tmp_path: Path) -> None:
    settings = load_settings(
        environ={
            "CANOE_STORE_DSN": f"sqlite:///{tmp_path / 'canoe.sqlite3'}",
            # CDS routes under a path; the probes stay at the root regardless.
            "CANOE_CDS_BASE_URL": "https://ehr.example/canoe",
        }
    )
    experts = Faulty(real_experts(settings), ready=False)
    app = await CarePlanService.create(settings, experts=experts)
    try:
        asgi = create_app(app, settings)
        async with asgi.router.lifespan_context(asgi):
            transport = httpx.ASGITransport(app=asgi)
            async with httpx.AsyncClient(transport=transport, base_url="http://canoe") as http:
                got = await http.get("/healthz")
                assert (got.status_code, got.json()) == (503, {"status": "NOT_SERVING"})
                assert await app.ready() is False
                assert (await http.get("/livez")).status_code == 200  # alive, not ready
                assert (await http.get("/canoe/cds-services")).status_code == 401

                experts.ready = True
                got = await http.get("/healthz")
                assert (got.status_code, got.json()) == (200, {"status": "SERVING"})
                assert await app.ready() is True

                experts.ready_raises = True  # a failing check is NOT_SERVING, not a 500
                assert (await http.get("/healthz")).status_code == 503
    finally:
        await app.aclose()
