"""Security over a real server: static bearer tokens and JWTs (JWKS) mapping callers to
tenants and scopes, tenant isolation of plans, and TLS / mutual TLS by configuration."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from canoe_client.v1 import careplan_pb2_grpc
from tests.service.conftest import (
    bundle_bytes,
    first_argument,
    outcome_of,
    pb,
    reject_task,
    serving,
)

CODE = grpc.StatusCode


def bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


async def refused(aw: Any, code: grpc.StatusCode) -> dict[str, Any]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await aw
    assert err.value.code() == code, err.value.details()
    return outcome_of(err.value)


async def _refusal(call: Any, code: grpc.StatusCode) -> tuple[dict[str, Any], str]:
    """(OperationOutcome, status message) of a refused call."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    assert err.value.code() == code, err.value.details()
    return outcome_of(err.value), str(err.value.details())


@pytest.fixture
def tokens_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.yaml"
    path.write_text(
        "tokens:\n"
        "  - {token: token-a, tenant: clinic-a}\n"
        "  - {token: token-b, tenant: clinic-b}\n"
        "  - {token: token-a-read, tenant: clinic-a, scopes: [canoe.read]}\n"
    )
    return path


async def test_static_tokens_and_tenant_isolation(tmp_path: Path, tokens_file: Path) -> None:
    async with serving(tmp_path, auth_mode="tokens", auth_tokens_file=str(tokens_file)) as h:
        req = pb.GeneratePlanRequest(bundle_json=bundle_bytes())
        oo = await refused(h.stub.GeneratePlan(req), CODE.UNAUTHENTICATED)
        assert oo["issue"][0]["code"] == "security"
        await refused(h.stub.GeneratePlan(req, metadata=bearer("nope")), CODE.UNAUTHENTICATED)
        await refused(
            h.stub.GeneratePlan(req, metadata=(("authorization", "Basic dXNlcg=="),)),
            CODE.UNAUTHENTICATED,
        )
        # A read-only token cannot plan.
        oo = await refused(
            h.stub.GeneratePlan(req, metadata=bearer("token-a-read")), CODE.PERMISSION_DENIED
        )
        assert oo["issue"][0]["code"] == "forbidden"

        r = await h.stub.GeneratePlan(req, metadata=bearer("token-a"))
        get = pb.GetDeliberationRequest(plan_id=r.plan_id)
        doc = json.loads(
            (await h.stub.GetDeliberation(get, metadata=bearer("token-a-read"))).deliberation_json
        )

        # Another tenant can neither read nor contest it, nor see it in a patient's history;
        # and it cannot tell the plan exists: the answer is an unknown plan's, word for word.
        theirs_oo, theirs_msg = await _refusal(
            h.stub.GetDeliberation(get, metadata=bearer("token-b")), CODE.NOT_FOUND
        )
        unknown = uuid.uuid4().hex
        unknown_oo, unknown_msg = await _refusal(
            h.stub.GetDeliberation(
                pb.GetDeliberationRequest(plan_id=unknown), metadata=bearer("token-b")
            ),
            CODE.NOT_FOUND,
        )
        assert theirs_msg.replace(r.plan_id, "ID") == unknown_msg.replace(unknown, "ID")
        assert json.dumps(theirs_oo).replace(r.plan_id, "ID") == json.dumps(unknown_oo).replace(
            unknown, "ID"
        )
        task = reject_task(r.plan_id, 1, first_argument(doc), tid="x", patient=doc["patient_ref"])
        contest = pb.ContestRequest(
            plan_id=r.plan_id, version=1, tasks_json=json.dumps(task).encode()
        )
        await refused(h.stub.Contest(contest, metadata=bearer("token-b")), CODE.NOT_FOUND)
        listing = pb.ListPlanVersionsRequest(plan_id=r.plan_id)
        await refused(h.stub.ListPlanVersions(listing, metadata=bearer("token-b")), CODE.NOT_FOUND)
        await refused(
            h.stub.Contest(contest, metadata=bearer("token-a-read")), CODE.PERMISSION_DENIED
        )
        by_patient = pb.ListPlanVersionsRequest(patient_ref=doc["patient_ref"])
        theirs = await h.stub.ListPlanVersions(by_patient, metadata=bearer("token-b"))
        assert theirs.versions == []
        mine = await h.stub.ListPlanVersions(by_patient, metadata=bearer("token-a"))
        assert [v.plan_id for v in mine.versions] == [r.plan_id]
        # Its owner can.
        c = await h.stub.Contest(contest, metadata=bearer("token-a"))
        assert c.version == 2

        # Health stays open to probes without credentials.
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        got = await health_pb2_grpc.HealthStub(h.channel).Check(health_pb2.HealthCheckRequest())
        assert got.status == health_pb2.HealthCheckResponse.SERVING


# --------------------------------------------------------------------------- JWT


def _rsa() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _jwk(key: rsa.RSAPrivateKey, kid: str) -> dict[str, Any]:
    jwk: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return {**jwk, "kid": kid, "use": "sig", "alg": "RS256"}


async def test_jwt_bearer_tokens_are_verified_against_the_jwks(
    tmp_path: Path, store_dsn: str
) -> None:
    key, stranger = _rsa(), _rsa()
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [_jwk(key, "k1")]}))
    every_scope = "canoe.plan canoe.contest canoe.read"

    def token(signer: rsa.RSAPrivateKey = key, kid: str = "k1", **claims: Any) -> str:
        now = int(time.time())
        body = {
            "iss": "https://idp.example.org",
            "aud": "canoe",
            "sub": "ehr-1",
            "tenant": "clinic-a",
            "iat": now,
            "exp": now + 300,
            "jti": uuid.uuid4().hex,
            "scope": every_scope,
            **claims,
        }
        return jwt.encode(
            {k: v for k, v in body.items() if v is not None},
            signer,
            algorithm="RS256",
            headers={"kid": kid},
        )

    async with serving(
        tmp_path,
        dsn=store_dsn,
        auth_mode="jwt",
        auth_jwks_file=str(jwks),
        auth_issuer="https://idp.example.org",
        auth_audience="canoe",
    ) as h:
        req = pb.ListPlanVersionsRequest(patient_ref="Patient/none")
        ok = await h.stub.ListPlanVersions(req, metadata=bearer(token()))
        assert ok.versions == []
        now = int(time.time())
        for bad in (
            token(exp=now - 120),  # past the 30 s of tolerated clock skew
            token(aud="someone-else"),
            token(iss="https://evil.example.org"),
            token(signer=stranger),
            token(signer=stranger, kid="k2"),
            token(tenant=None),
            token(jti=None),
            token(iat=None),
            # Longer than the one-hour default: by exp - iat, and by exp alone (iat forged).
            token(iat=now, exp=now + 10 * 365 * 86400),
            token(iat=now + 10 * 365 * 86400 - 600, exp=now + 10 * 365 * 86400),
            "not.a.jwt",
        ):
            await refused(h.stub.ListPlanVersions(req, metadata=bearer(bad)), CODE.UNAUTHENTICATED)
        # One hour exactly is fine.
        await h.stub.ListPlanVersions(req, metadata=bearer(token(exp=now + 3600)))

        # A token is used once: the same jti again (the very same token, or a new one) is a
        # replay, refused through the store's token-id table.
        once = token(jti="jti-once")
        await h.stub.ListPlanVersions(req, metadata=bearer(once))
        oo = await refused(
            h.stub.ListPlanVersions(req, metadata=bearer(once)), CODE.UNAUTHENTICATED
        )
        assert "replay" in oo["issue"][0]["diagnostics"]
        await refused(
            h.stub.ListPlanVersions(req, metadata=bearer(token(jti="jti-once"))),
            CODE.UNAUTHENTICATED,
        )

        # Scopes are required: no scope claim grants nothing.
        for unscoped in (token(scope=None), token(scope="")):
            await refused(
                h.stub.ListPlanVersions(req, metadata=bearer(unscoped)), CODE.PERMISSION_DENIED
            )
        await refused(
            h.stub.GeneratePlan(
                pb.GeneratePlanRequest(bundle_json=bundle_bytes()),
                metadata=bearer(token(scope="canoe.read")),
            ),
            CODE.PERMISSION_DENIED,
        )


async def test_jwt_replay_is_refused_by_every_replica(tmp_path: Path, store_dsn: str) -> None:
    """Two servers over one store: a token used at one is refused at the other."""
    key = _rsa()
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [_jwk(key, "k1")]}))
    now = int(time.time())
    claims = {"tenant": "t", "iat": now, "exp": now + 60, "jti": "j-1", "scope": "canoe.read"}
    once = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
    settings = {"dsn": store_dsn, "auth_mode": "jwt", "auth_jwks_file": str(jwks)}
    req = pb.ListPlanVersionsRequest(patient_ref="Patient/none")
    async with serving(tmp_path, **settings) as a, serving(tmp_path, **settings) as b:
        await a.stub.ListPlanVersions(req, metadata=bearer(once))
        await refused(b.stub.ListPlanVersions(req, metadata=bearer(once)), CODE.UNAUTHENTICATED)


# --------------------------------------------------------------------------- TLS


def _cert(
    subject: str,
    key: rsa.RSAPrivateKey,
    issuer: tuple[x509.Certificate, rsa.RSAPrivateKey] | None,
    *,
    ca: bool = False,
    sans: tuple[str, ...] = (),
) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = dt.datetime.now(dt.UTC)
    b = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer[0].subject if issuer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        import ipaddress

        alt: list[x509.GeneralName] = []
        for s in sans:
            try:
                alt.append(x509.IPAddress(ipaddress.ip_address(s)))
            except ValueError:
                alt.append(x509.DNSName(s))
        b = b.add_extension(x509.SubjectAlternativeName(alt), critical=False)
    return b.sign(issuer[1] if issuer else key, hashes.SHA256())


def _pem(obj: x509.Certificate | rsa.RSAPrivateKey) -> bytes:
    if isinstance(obj, x509.Certificate):
        return obj.public_bytes(serialization.Encoding.PEM)
    return obj.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("pki")
    ca_key = _rsa()
    ca = _cert("canoe test CA", ca_key, None, ca=True)
    srv_key = _rsa()
    srv = _cert("localhost", srv_key, (ca, ca_key), sans=("localhost", "127.0.0.1"))
    cli_key = _rsa()
    cli = _cert("ehr-client", cli_key, (ca, ca_key))
    files = {
        "ca": ca,
        "server_cert": srv,
        "server_key": srv_key,
        "client_cert": cli,
        "client_key": cli_key,
    }
    out: dict[str, Any] = {}
    for name, obj in files.items():
        (d / f"{name}.pem").write_bytes(_pem(obj))
        out[name] = d / f"{name}.pem"
        out[f"{name}_pem"] = _pem(obj)
    return out


def _tls_channel(pki: dict[str, Any], *, client_cert: bool) -> Any:
    creds = grpc.ssl_channel_credentials(
        root_certificates=pki["ca_pem"],
        private_key=pki["client_key_pem"] if client_cert else None,
        certificate_chain=pki["client_cert_pem"] if client_cert else None,
    )
    return lambda port: grpc.aio.secure_channel(f"localhost:{port}", creds)


async def _probe(channel: grpc.aio.Channel) -> grpc.StatusCode:
    s = careplan_pb2_grpc.CarePlanServiceStub(channel)
    try:
        await s.ListPlanVersions(pb.ListPlanVersionsRequest(patient_ref="Patient/x"), timeout=5)
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


async def test_tls(tmp_path: Path, pki: dict[str, Any]) -> None:
    tls = {"tls_cert_file": str(pki["server_cert"]), "tls_key_file": str(pki["server_key"])}
    async with serving(
        tmp_path, channel=_tls_channel(pki, client_cert=False), wait=False, **tls
    ) as h:
        await h.wait_serving()
        assert await _probe(h.channel) == CODE.OK
        plain = grpc.aio.insecure_channel(f"127.0.0.1:{h.port}")
        try:
            assert await _probe(plain) == CODE.UNAVAILABLE  # no plaintext on a TLS port
        finally:
            await plain.close()


async def test_mutual_tls(tmp_path: Path, pki: dict[str, Any]) -> None:
    mtls = {
        "tls_cert_file": str(pki["server_cert"]),
        "tls_key_file": str(pki["server_key"]),
        "tls_client_ca_file": str(pki["ca"]),
    }
    async with serving(tmp_path, channel=_tls_channel(pki, client_cert=True), **mtls) as h:
        assert await _probe(h.channel) == CODE.OK
        anonymous = _tls_channel(pki, client_cert=False)(h.port)
        try:
            assert await _probe(anonymous) == CODE.UNAVAILABLE  # no client certificate
        finally:
            await anonymous.close()
