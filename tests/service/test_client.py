"""``service.client`` against a real loopback server: the happy path (blocking and asyncio),
each error class carrying the server's OperationOutcome, deadlines, bearer tokens, TLS and
mutual TLS. The blocking client runs in a worker thread: the server shares the test's loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from canoe_client import AsyncCarePlanClient, CarePlanClient, ClientOptions
from service.errors import (
    AuthError,
    BackendTimeout,
    BackendUnavailable,
    CanoeError,
    ForbiddenError,
    InputError,
    LimitError,
    NotFoundError,
    StaleVersionError,
)
from tests.conftest import FHIR_FIXTURES
from tests.service.conftest import (
    Faulty,
    bundle_bytes,
    first_argument,
    real_experts,
    reject_task,
    serving,
)
from tests.service.test_security import pki  # noqa: F401  (module fixture: a CA and certs)

PATIENT = "Patient/ba18818d-faef-44cd-9744-b12d8973d402"


def _target(port: int) -> str:
    return f"127.0.0.1:{port}"


async def test_blocking_client_plans_streams_contests_and_reads(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        with CarePlanClient(_target(h.port), timeout_s=60) as client:
            plan = await asyncio.to_thread(client.plan, bundle_bytes())
            assert plan["version"] == 1 and len(plan["plan_id"]) == 32
            assert plan["bundle"]["resourceType"] == "Bundle"
            assert plan["summary"]["counts"]["options"] > 0
            assert plan["summary"]["backend"].startswith("embedded")

            events = await asyncio.to_thread(
                lambda: list(client.stream_plan(FHIR_FIXTURES.glob("adalberto*").__next__()))
            )
            assert events[0]["progress"] == {
                "stage": "ingest",
                "state": "started",
                "calls_done": 0,
                "calls_total": 0,
            }
            assert "plan" in events[-1] and all("progress" in e for e in events[:-1])
            assert events[-1]["plan"]["plan_id"] != plan["plan_id"]

            doc = await asyncio.to_thread(client.deliberation, plan["plan_id"])
            assert doc["format"] == "canoe.deliberation/1" and doc["version"] == 1
            task = reject_task(
                plan["plan_id"], 1, first_argument(doc), tid="client-t1", patient=PATIENT
            )
            out = await asyncio.to_thread(client.contest, plan["plan_id"], 1, [task])
            assert out["version"] == 2 and not out["replayed"]
            assert out["results"] == [{"task_id": "client-t1", "status": "completed"}]
            assert out["tasks"]["entry"][0]["resource"]["status"] == "completed"
            again = await asyncio.to_thread(client.contest, plan["plan_id"], 1, task)
            assert again["replayed"] and again["version"] == 2

            versions = await asyncio.to_thread(client.versions, plan["plan_id"])
            assert [(v["version"], v["kind"], v["current"]) for v in versions] == [
                (1, "generated", False),
                (2, "contested", True),
            ]
            mine = await asyncio.to_thread(lambda: client.versions(patient_ref=PATIENT))
            assert {v["plan_id"] for v in mine} == {plan["plan_id"], events[-1]["plan"]["plan_id"]}
            v1 = await asyncio.to_thread(client.deliberation, plan["plan_id"], 1)
            assert v1 == doc


async def test_async_client_does_the_same(tmp_path: Path) -> None:
    async with serving(tmp_path) as h, AsyncCarePlanClient(_target(h.port)) as client:
        events = [e async for e in client.stream_plan(json.loads(bundle_bytes()))]
        plan = events[-1]["plan"]
        stages = {e["progress"]["stage"] for e in events[:-1]}
        assert {"ingest", "votes", "synthesis"} <= stages
        doc = await client.deliberation(plan["plan_id"])
        task = reject_task(plan["plan_id"], 1, first_argument(doc), tid="a-t1", patient=PATIENT)
        out = await client.contest(plan["plan_id"], 1, task)
        assert out["version"] == 2
        assert [v["version"] for v in await client.versions(plan["plan_id"])] == [1, 2]
        direct = await client.plan(bundle_bytes())
        assert direct["version"] == 1


def _assert_outcome(exc: CanoeError, code: str) -> None:
    assert exc.outcome is not None and exc.outcome["resourceType"] == "OperationOutcome"
    assert exc.outcome["issue"][0]["code"] == code
    assert exc.issues and exc.issues[0].code == code


async def test_each_error_class_carries_the_operation_outcome(tmp_path: Path) -> None:
    async with (
        serving(tmp_path, max_bundle_resources=10_000) as h,
        AsyncCarePlanClient(_target(h.port)) as client,
    ):
        with pytest.raises(InputError) as bad:
            await client.plan(FHIR_FIXTURES / "bad_wrong_resourcetype.json")
        _assert_outcome(bad.value, "not-supported")
        assert bad.value.status_code == "INVALID_ARGUMENT"
        assert any("Bundle.entry[" in x for i in bad.value.issues for x in i.expression)

        with pytest.raises(NotFoundError) as missing:
            await client.deliberation("0" * 32)
        _assert_outcome(missing.value, "not-found")

        plan = await client.plan(bundle_bytes())
        doc = await client.deliberation(plan["plan_id"])
        arg = first_argument(doc)
        t1 = reject_task(plan["plan_id"], 1, arg, tid="e-t1", patient=PATIENT)
        await client.contest(plan["plan_id"], 1, t1)
        t2 = reject_task(plan["plan_id"], 1, arg, tid="e-t2", patient=PATIENT)
        with pytest.raises(StaleVersionError) as stale:
            await client.contest(plan["plan_id"], 1, t2)
        _assert_outcome(stale.value, "conflict")
        assert stale.value.current_version == 2

        with pytest.raises(InputError):
            await client.versions()  # neither a plan nor a patient: refused locally

    async with (
        serving(tmp_path, max_bundle_resources=3) as h,
        AsyncCarePlanClient(_target(h.port)) as client,
    ):
        with pytest.raises(LimitError) as limit:
            await client.plan(bundle_bytes())
        _assert_outcome(limit.value, "too-costly")


async def test_backend_errors_and_deadlines(tmp_path: Path) -> None:
    down = Faulty(real_experts(), down=True)
    async with serving(tmp_path, experts=down) as h, AsyncCarePlanClient(_target(h.port)) as client:
        with pytest.raises(BackendUnavailable) as unavailable:
            await client.plan(bundle_bytes())
        assert unavailable.value.status_code == "UNAVAILABLE"
        assert unavailable.value.outcome is not None

    slow = Faulty(real_experts(), delay_s=2.0)
    async with serving(tmp_path, experts=slow) as h:
        async with AsyncCarePlanClient(_target(h.port), timeout_s=0.5) as client:
            with pytest.raises(BackendTimeout) as late:
                await client.plan(bundle_bytes())
            assert late.value.status_code == "DEADLINE_EXCEEDED"
        # The blocking client's per-call deadline overrides the client's.
        with (
            CarePlanClient(_target(h.port), timeout_s=300) as blocking,
            pytest.raises(BackendTimeout),
        ):
            await asyncio.to_thread(lambda: blocking.plan(bundle_bytes(), timeout_s=0.5))


async def test_bearer_tokens_and_scopes(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(
        "tokens:\n"
        "  - {token: token-a, tenant: clinic-a}\n"
        "  - {token: token-r, tenant: clinic-a, scopes: [canoe.read]}\n"
    )
    async with serving(tmp_path, auth_mode="tokens", auth_tokens_file=str(tokens)) as h:
        async with AsyncCarePlanClient(_target(h.port)) as anonymous:
            with pytest.raises(AuthError) as unauth:
                await anonymous.plan(bundle_bytes())
            assert not isinstance(unauth.value, ForbiddenError)
            _assert_outcome(unauth.value, "security")
        async with AsyncCarePlanClient(_target(h.port), token="token-r") as reader:
            with pytest.raises(ForbiddenError) as forbidden:
                await reader.plan(bundle_bytes())
            _assert_outcome(forbidden.value, "forbidden")
        with CarePlanClient(_target(h.port), token="token-a") as client:
            plan = await asyncio.to_thread(client.plan, bundle_bytes())
        assert plan["version"] == 1


async def test_tls_and_mutual_tls(tmp_path: Path, pki: dict[str, Any]) -> None:  # noqa: F811
    tls = {"tls_cert_file": str(pki["server_cert"]), "tls_key_file": str(pki["server_key"])}
    async with serving(tmp_path, wait=False, channel=_tls(pki), **tls) as h:
        await h.wait_serving()
        options = ClientOptions(root_certificates=pki["ca"], timeout_s=60)
        async with AsyncCarePlanClient(f"localhost:{h.port}", options) as client:
            assert (await client.plan(bundle_bytes()))["version"] == 1
        # The certificate names localhost and 127.0.0.1; any other name must be refused.
        wrong = ClientOptions(root_certificates=pki["ca"], server_name="ehr.test", timeout_s=5)
        async with AsyncCarePlanClient(f"localhost:{h.port}", wrong) as client:
            with pytest.raises(BackendUnavailable):
                await client.versions(patient_ref=PATIENT)
        async with AsyncCarePlanClient(_target(h.port), timeout_s=5) as plaintext:
            with pytest.raises(BackendUnavailable):
                await plaintext.versions(patient_ref=PATIENT)

    mtls = {**tls, "tls_client_ca_file": str(pki["ca"])}
    dsn = f"sqlite:///{tmp_path}/mtls.sqlite3"
    async with serving(tmp_path, dsn=dsn, wait=False, channel=_tls(pki), **mtls) as h:
        await h.wait_serving()
        with_cert = ClientOptions(
            root_certificates=pki["ca_pem"],
            client_certificate=pki["client_cert"],
            client_key=pki["client_key_pem"],
            timeout_s=30,
        )
        with CarePlanClient(f"localhost:{h.port}", with_cert) as client:
            assert await asyncio.to_thread(lambda: client.versions(patient_ref=PATIENT)) == []
        without = ClientOptions(root_certificates=pki["ca"], timeout_s=5)
        async with AsyncCarePlanClient(f"localhost:{h.port}", without) as client:
            with pytest.raises(BackendUnavailable):
                await client.versions(patient_ref=PATIENT)


def _tls(certs: dict[str, Any]) -> Any:
    import grpc

    creds = grpc.ssl_channel_credentials(
        root_certificates=certs["ca_pem"],
        private_key=certs["client_key_pem"],
        certificate_chain=certs["client_cert_pem"],
    )
    return lambda port: grpc.aio.secure_channel(f"localhost:{port}", creds)


def test_a_missing_certificate_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        CarePlanClient("127.0.0.1:1", root_certificates=tmp_path / "missing.pem")


async def test_served_outputs_carry_the_configured_base(tmp_path: Path) -> None:
    from fhir_mapping.definitions import DEFAULT_BASE

    base = "https://fhir.hospital.test/canoe"
    async with (
        serving(tmp_path, fhir_base=base) as h,
        AsyncCarePlanClient(_target(h.port)) as client,
    ):
        plan = await client.plan(bundle_bytes())
        text = json.dumps(plan["bundle"])
        assert DEFAULT_BASE not in text and f"{base}/StructureDefinition/argument" in text
        assert all(e["fullUrl"].startswith(f"{base}/") for e in plan["bundle"]["entry"])
        doc = await client.deliberation(plan["plan_id"])
        task = reject_task(plan["plan_id"], 1, first_argument(doc), tid="b-t1", patient=PATIENT)
        # A Task naming our CodeSystems under the deployment's base is understood ...
        under_base = json.loads(json.dumps(task).replace(DEFAULT_BASE, base))
        out = await client.contest(plan["plan_id"], 1, under_base)
        assert out["version"] == 2
        for answer in (out["bundle"], out["tasks"]):
            assert DEFAULT_BASE not in json.dumps(answer)
        (applied,) = out["tasks"]["entry"]
        assert applied["resource"]["code"]["coding"][0]["system"].startswith(base)
        # ... and so is one under the built-in default (what canoe's own tools write).
        doc2 = await client.deliberation(plan["plan_id"])
        task2 = reject_task(plan["plan_id"], 2, first_argument(doc2), tid="b-t2", patient=PATIENT)
        again = await client.contest(plan["plan_id"], 2, task2)
        assert again["version"] == 3 and DEFAULT_BASE not in json.dumps(again["bundle"])
        # A replay answers with what was stored: still under the base.
        replay = await client.contest(plan["plan_id"], 1, under_base)
        assert replay["replayed"] and DEFAULT_BASE not in json.dumps(replay["tasks"])
