"""The generated gRPC code lives under the client's own package, ``canoe_client.v1``.

A top-level ``proto`` package would shadow proto-plus (pulled in by every Google Cloud client),
and generic ``canoe``/``service`` packages would collide in an integrator's environment, so the
build installs neither; the build hook (``client/protogen.py``) is the one place that generates
the code, and the service imports it from the client so the protocol is registered once.
"""

from __future__ import annotations

import re
import tomllib

from canoe_client.v1 import careplan_pb2, careplan_pb2_grpc
from service import grpc_api
from service.pipeline import STAGES
from tests.conftest import REPO_ROOT


def test_generated_modules_live_under_the_client_package() -> None:
    assert careplan_pb2.__name__ == "canoe_client.v1.careplan_pb2"
    # the gRPC module imports its messages from the same package
    assert careplan_pb2_grpc.canoe_dot_v1_dot_careplan__pb2 is careplan_pb2
    # and the server answers with the very same message classes
    assert grpc_api.pb is careplan_pb2


def test_descriptor_keeps_the_wire_names() -> None:
    # file and package names are what reflection and grpcurl show: unchanged by the move
    assert careplan_pb2.DESCRIPTOR.name == "canoe/v1/careplan.proto"
    assert careplan_pb2.DESCRIPTOR.package == "canoe.v1"
    assert "CarePlanService" in careplan_pb2.DESCRIPTOR.services_by_name


def test_no_top_level_proto_or_canoe_package_is_installed() -> None:
    packaged = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    # canoe_client ships in canoe-client alone: the service's distribution depends on it
    assert packaged["packages"]["find"]["include"] == ["service*", "fhir_mapping*", "inference*"]
    client = tomllib.loads((REPO_ROOT / "client" / "pyproject.toml").read_text())["tool"]
    assert client["setuptools"]["packages"]["find"]["include"] == ["canoe_client*"]
    # proto/ holds only .proto sources: no Python module a checkout could shadow proto-plus with
    assert [p.name for p in (REPO_ROOT / "proto").rglob("*.py")] == []


def test_generated_code_is_written_only_by_the_build_hook() -> None:
    # tests never generate code: nothing under tests/ runs protoc
    offenders = [
        p.relative_to(REPO_ROOT)
        for p in (REPO_ROOT / "tests").rglob("*.py")
        if re.search(r"\bimport protoc\b|protoc\.main\(", p.read_text())
        and p.name != "test_generated_api.py"
    ]
    assert offenders == []


def test_the_protos_stage_list_is_the_pipelines() -> None:
    # ProgressEvent.stage documents its values in a comment; it must name the pipeline's stages,
    # in the pipeline's order, so that a client reading the proto knows what it will receive.
    proto = (REPO_ROOT / "proto" / "canoe" / "v1" / "careplan.proto").read_text()
    listed = re.search(r"//[^\n]*\n  // ([a-z, ]+)\.\n  string stage = 1;", proto)
    assert listed is not None, "the comment above ProgressEvent.stage lists the stages"
    assert tuple(s.strip() for s in listed.group(1).split(",")) == STAGES
