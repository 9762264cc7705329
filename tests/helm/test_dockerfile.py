"""Static checks of the Dockerfile and .dockerignore, since no container engine here can build them.

They read the instructions stage by stage and hold the image to what the chart assumes: a
multi-stage build whose final stage is python:3.11-slim, runs as uid 10001, carries no compiler,
and whose builder generates the protobuf code from the repository rather than copying it in.
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


def test_multi_stage_with_slim_python_311_runtime() -> None:
    parsed = stages()
    assert len(parsed) >= 2
    assert parsed[-1].base.startswith("python:3.11-slim")
    assert parsed[0].base.startswith("python:3.11")  # same interpreter path as the runtime


def test_runtime_runs_as_uid_10001_and_serves() -> None:
    final = stages()[-1]
    (user,) = final.args("USER")
    assert user.split(":")[0] == "10001"
    assert any("--uid 10001" in r for r in final.args("RUN"))
    assert final.args("ENTRYPOINT") == ['["canoe"]']
    assert final.args("CMD") == ['["serve"]']
    exposed = {p for e in final.args("EXPOSE") for p in e.split()}
    assert exposed == {"50051", "8080", "9464"}


def test_runtime_has_no_build_tools() -> None:
    final = stages()[-1]
    for run in final.args("RUN"):
        assert "apt-get install" not in run and "pip install" not in run, run
        assert not BUILD_TOOLS.search(run), run
    copies = final.args("COPY")
    assert copies and all(c.startswith("--from=") for c in copies), copies  # no source tree
    assert any("pip uninstall -y pip" in r for r in final.args("RUN"))


def test_builder_generates_the_proto_code() -> None:
    builder = stages()[0]
    runs = " ".join(builder.args("RUN"))
    assert "pip wheel" in runs and "--prefix /install" in runs
    assert "_pb2_grpc.py" in runs  # the build fails when code generation did not happen
    copied = " ".join(builder.args("COPY"))
    for needed in (
        "pyproject.toml",
        "setup.py",
        "proto/",
        "service/",
        "inference/",
        "fhir_mapping/",
    ):
        assert needed in copied


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
        "setup.py",
        "README.md",
        "proto",
        "service",
        "fhir_mapping",
        "inference",
    }
    assert "**/*_pb2.py" in patterns and "**/*.sqlite3" in patterns
