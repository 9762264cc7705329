"""Optional parts sit behind extras: without one, the error names the extra."""

from __future__ import annotations

import sys
import tomllib

import pytest

from service.errors import BackendUnavailable
from service.settings import Settings
from service.store._drivers import PostgresDriver
from service.telemetry import Telemetry
from tests.conftest import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]


def test_postgres_store_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(BackendUnavailable, match=r"canoe-careplan\[postgres\]"):
        PostgresDriver("postgresql://127.0.0.1:5432/test")


def test_otlp_export_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc.trace_exporter", None)
    settings = Settings(otlp_endpoint="http://127.0.0.1:4317")
    with pytest.raises(BackendUnavailable, match=r"canoe-careplan\[otlp\]"):
        Telemetry.from_settings(settings)


@pytest.mark.parametrize(
    ("extra", "package"),
    [
        ("triton", "tritonclient"),
        ("postgres", "psycopg"),
        ("otlp", "opentelemetry-exporter-otlp"),
        ("eval", "rouge-score"),
    ],
)
def test_heavy_parts_are_extras_not_core_dependencies(extra: str, package: str) -> None:
    core = " ".join(PYPROJECT["dependencies"])
    assert package not in core
    assert any(package in d for d in PYPROJECT["optional-dependencies"][extra])
