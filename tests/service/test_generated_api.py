"""The generated gRPC code lives under the project-owned ``service.api`` package (issue 12).

A top-level ``proto`` package would shadow proto-plus (pulled in by every Google Cloud client),
so the install must not provide one; the build hook is the one place that generates the code.
"""

from __future__ import annotations

import re
import tomllib

from service.api.canoe.v1 import careplan_pb2, careplan_pb2_grpc
from tests.conftest import REPO_ROOT


def test_generated_modules_live_under_service_api() -> None:
    assert careplan_pb2.__name__ == "service.api.canoe.v1.careplan_pb2"
    # the gRPC module imports its messages from the same project-owned package
    assert careplan_pb2_grpc.canoe_dot_v1_dot_careplan__pb2 is careplan_pb2


def test_descriptor_keeps_the_wire_names() -> None:
    # file and package names are what reflection and grpcurl show: unchanged by the move
    assert careplan_pb2.DESCRIPTOR.name == "canoe/v1/careplan.proto"
    assert careplan_pb2.DESCRIPTOR.package == "canoe.v1"
    assert "CarePlanService" in careplan_pb2.DESCRIPTOR.services_by_name


def test_no_top_level_proto_or_canoe_package_is_installed() -> None:
    packaged = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert packaged["packages"]["find"]["include"] == ["service*", "fhir_mapping*", "inference*"]
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
