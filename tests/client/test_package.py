"""canoe_client inside the service's environment: one error tree for both, the grpc parts loaded
only when used, and the rich status read without grpcio-status exactly as the server writes it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2

import canoe_client
from canoe_client import _client, _status, errors
from canoe_client.v1 import careplan_pb2 as pb
from service import errors as service_errors
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize("name", errors.__all__)
def test_the_service_raises_the_clients_error_classes(name: str) -> None:
    assert getattr(service_errors, name) is getattr(errors, name)


def test_the_server_only_errors_sit_under_the_clients_tree() -> None:
    assert issubclass(service_errors.BundleError, errors.InputError)
    assert issubclass(service_errors.StepFailed, errors.BackendError)


def test_the_error_tree_and_the_core_load_no_grpc() -> None:
    probe = (
        "import json, sys; import service.core, service.errors, canoe_client; "
        "print(json.dumps(sorted(m for m in ('grpc', 'google.protobuf') if m in sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == []


def test_the_client_classes_load_on_first_use() -> None:
    assert canoe_client.CarePlanClient is _client.CarePlanClient
    assert canoe_client.error_from_rpc is _client.error_from_rpc
    with pytest.raises(AttributeError, match="no attribute 'Missing'"):
        _ = canoe_client.Missing


def test_the_status_the_server_writes_is_read_back() -> None:
    outcome = {"resourceType": "OperationOutcome", "issue": [{"severity": "error"}]}
    detail = any_pb2.Any()
    detail.Pack(pb.OperationOutcomeDetail(fhir_json=json.dumps(outcome).encode()))
    noise = any_pb2.Any()
    noise.Pack(status_pb2.Status(code=1))
    status = status_pb2.Status(
        code=code_pb2.INVALID_ARGUMENT, message="bad bundle", details=[noise, detail]
    )
    trailing = [("other-bin", b"x"), (_status.STATUS_DETAILS_KEY, status.SerializeToString())]
    raw = _status.details(trailing, "canoe.v1.OperationOutcomeDetail")
    assert raw is not None
    assert json.loads(pb.OperationOutcomeDetail.FromString(raw).fhir_json) == outcome


def test_a_missing_or_malformed_status_carries_no_detail() -> None:
    name = "canoe.v1.OperationOutcomeDetail"
    assert _status.details(None, name) is None
    assert _status.details([(_status.STATUS_DETAILS_KEY, b"\xff\xff")], name) is None
    assert _status.details([(_status.STATUS_DETAILS_KEY, "text")], name) is None


def test_aim_tasks_points_example_tasks_at_a_plan_version() -> None:
    from tests.examples.make_tasks import TASKS_DIR

    bundle = json.loads((TASKS_DIR / "transaction-bundle.json").read_text())
    before = json.dumps(bundle, sort_keys=True)
    plan_id = "0123456789abcdef" * 2
    aimed = canoe_client.aim_tasks(bundle, plan_id, 3)
    assert json.dumps(bundle, sort_keys=True) == before, "the input is left as it was"
    tasks = [e["resource"] for e in aimed["entry"]]
    assert {t["focus"]["reference"] for t in tasks} == {f"CarePlan/{plan_id}-v3"}
    old_ids = {e["resource"]["id"] for e in bundle["entry"]}
    assert not old_ids & {t["id"] for t in tasks}
    one = json.loads((TASKS_DIR / "reject.json").read_text())
    assert canoe_client.aim_tasks(one, plan_id, 1)["focus"] == {
        "reference": f"CarePlan/{plan_id}-v1"
    }
