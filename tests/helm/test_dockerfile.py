"""Static checks of the Dockerfile and .dockerignore, on any machine, engine or not.

They read the instructions stage by stage and hold the image to what the chart assumes: two
stages on one base (python:3.11-slim by default), a builder that installs the lock file into the
virtual environment /opt/canoe and generates the protobuf code from the repository, and a runtime
that gets only that environment, runs as uid 10001 and carries no compiler or pip. tests/image/
builds and runs the image for real where buildah is installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.conftest import REPO_ROOT

DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"
BUILD_TOOLS = re.compile(r"\b(gcc|g\+\+|clang|make|build-essential|cmake|grpcio-tools)\b")


@dataclass(frozen=True, slots=True)
class Stage:
    base: str
    name: str
    instructions: tuple[tuple[str, str], ...]

    def args(self, op: str) -> list[str]:
        return [a for o, a in self.instructions if o == op]


def parse(text: str) -> tuple[dict[str, str], list[Stage]]:
    """ARG defaults before the first FROM, and the stages with their (op, args) instructions."""
    logical: list[str] = []
    buf = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # comment inside a continued instruction
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        logical.append(buf + line)
        buf = ""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    current: list[tuple[str, str]] | None = None
    base = name = ""
    for line in logical:
        op, _, rest = line.partition(" ")
        op = op.upper()
        if op == "FROM":
            if current is not None:
                stages.append(Stage(base, name, tuple(current)))
            parts = rest.split()
            base = re.sub(
                r"\$\{(\w+)\}", lambda m: global_args.get(m.group(1), m.group(0)), parts[0]
            )
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else ""
            current = []
        elif current is None:
            if op == "ARG" and "=" in rest:
                key, _, default = rest.partition("=")
                global_args[key.strip()] = default.strip()
        else:
            current.append((op, rest.strip()))
    if current is not None:
        stages.append(Stage(base, name, tuple(current)))
    return global_args, stages


def stages() -> list[Stage]:
    return parse(DOCKERFILE.read_text(encoding="utf-8"))[1]


def test_parser_reads_continuations_and_stages() -> None:
    args, parsed = parse(
        "ARG B=python:3.11-slim\nFROM ${B} AS one\nRUN a \\\n  # note\n  && b\nFROM ${B}\nUSER 1\n"
    )
    assert args == {"B": "python:3.11-slim"}
    assert [(s.base, s.name) for s in parsed] == [
        ("python:3.11-slim", "one"),
        ("python:3.11-slim", ""),
    ]
    assert parsed[0].args("RUN") == ["a  && b"]


def test_multi_stage_on_one_base_defaulting_to_slim_python_311() -> None:
    args, parsed = parse(DOCKERFILE.read_text(encoding="utf-8"))
    assert len(parsed) == 2
    assert args["BASE_IMAGE"].startswith("python:3.11-slim")
    # The same base for both: the copied virtual environment points at the base's interpreter.
    assert parsed[0].base == parsed[-1].base == args["BASE_IMAGE"]


def test_runtime_runs_as_uid_10001_and_serves() -> None:
    final = stages()[-1]
    (user,) = final.args("USER")
    assert user.split(":")[0] == "10001"
    assert any("--uid 10001" in r for r in final.args("RUN"))
    assert final.args("ENTRYPOINT") == ['["canoe"]']
    assert final.args("CMD") == ['["serve"]']
    exposed = {p for e in final.args("EXPOSE") for p in e.split()}
    assert exposed == {"50051", "8080", "9464"}
    (env,) = final.args("ENV")
    assert env.startswith("PATH=/opt/canoe/bin:")


def test_runtime_gets_only_the_virtual_environment() -> None:
    final = stages()[-1]
    for run in final.args("RUN"):
        assert "apt-get install" not in run and "pip install" not in run, run
        assert not BUILD_TOOLS.search(run), run
    # No source tree, only the environment the builder made.
    assert final.args("COPY") == ["--from=builder /opt/canoe /opt/canoe"]


def test_runtime_removes_the_bases_pip_however_it_was_installed() -> None:
    (first, *_) = stages()[-1].args("RUN")
    assert "apt-get purge" in first and "python3-pip" in first  # a Debian base: dpkg owns pip
    assert "pip uninstall -y" in first  # the official image: pip installed itself
    assert "! python3.11 -c 'import pip'" in first  # and the build checks it is gone


def test_builder_installs_the_lock_into_a_venv_and_generates_the_proto_code() -> None:
    builder = stages()[0]
    runs = builder.args("RUN")
    assert not any("apt-get install" in r for r in runs)  # wheels only: no compiler anywhere
    deps = next(r for r in runs if "requirements.lock" in r)
    assert "python3.11 -m venv /opt/canoe" in deps
    for flag in ("--require-hashes", "--only-binary=:all:", "-r /src/requirements.lock"):
        assert flag in deps
    project = next(r for r in runs if "pip wheel" in r)
    assert "--no-deps" in project and "pip check" in project
    # canoe_client comes from its own distribution's wheel, built beside the service's
    assert "/src/client /src" in project and "canoe_client-*.whl" in project
    assert "pip uninstall -y pip setuptools" in project
    assert "_pb2_grpc.py" in project  # the build fails when code generation did not happen
    assert "! /opt/canoe/bin/python -c 'import grpc_tools'" in project
    copied = " ".join(builder.args("COPY"))
    for needed in (
        "requirements.lock",
        "pyproject.toml",
        "proto/",
        "service/",
        "inference/",
        "fhir_mapping/",
        "client/",
    ):
        assert needed in copied
    # The lock is copied, and installed, before the code: a code change keeps that layer.
    assert builder.instructions.index(("COPY", "requirements.lock /src/requirements.lock")) == 1


def test_every_download_may_use_the_optional_ca_secret() -> None:
    # pip reaches the index when it installs the lock and when it fetches the build requirements
    # (grpcio-tools among them) for the project's wheel.
    downloads = [
        r for r in stages()[0].args("RUN") if "-r /src/requirements.lock" in r or "pip wheel" in r
    ]
    assert len(downloads) == 2
    for run in downloads:
        assert run.startswith("--mount=type=secret,id=ca "), run
        assert "if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi" in run
    for run in stages()[-1].args("RUN"):
        assert "secret" not in run  # the runtime downloads nothing


def test_dockerignore_keeps_local_state_out() -> None:
    patterns = [
        ln.strip()
        for ln in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert patterns[0] == "**"  # deny by default, then allow what the build copies
    allowed = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    assert allowed == {
        "pyproject.toml",
        "requirements.lock",
        "README.md",
        "proto",
        "service",
        "fhir_mapping",
        "inference",
        "client",
        # compose.yaml's CPU Triton (compose/triton.Dockerfile) serves the scripted test models
        "tests/__init__.py",
        "tests/support",
    }
    assert "**/*_pb2.py" in patterns and "**/*.sqlite3" in patterns
