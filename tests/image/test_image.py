"""The service image, built for real with buildah on a Debian bookworm base, and run.

One module so that the expensive steps happen once: the base (debootstrap, cached outside the
repository) and the build (buildah, cached layers) are module fixtures, and one working container
of the image serves every test. Commands run in it with `buildah run` (chroot isolation, the
host's network), so `canoe serve` inside the image is called over loopback from here: its gRPC
health service and /healthz. Skipped, with the reason, where buildah or debootstrap is missing
or the run is not root.

Not `podman run`: podman's runtime (crun) sets the container's resource limits, and this sandbox
withholds CAP_SYS_RESOURCE, so every start fails with "setrlimit RLIMIT_NPROC: Operation not
permitted". buildah's chroot isolation needs no runtime and runs the image's user (10001), working
directory and environment all the same.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.conftest import fixture_bundle
from tests.image.build import Buildah, BuildResult, build_image, ensure_base, missing_tools

# A cold run makes the base (debootstrap) and builds every layer: minutes, not the suite's 300 s.
pytestmark = [pytest.mark.image, pytest.mark.timeout(1800)]

CREATED = "2026-01-05T09:00:00+00:00"


@pytest.fixture(scope="module")
def buildah() -> Buildah:
    reason = missing_tools()
    if reason:
        pytest.skip(f"cannot build the image here: {reason}")
    return Buildah.here()


@pytest.fixture(scope="module")
def built(buildah: Buildah) -> BuildResult:
    ensure_base(buildah)
    return build_image(buildah)


class Container:
    """One working container of the image; `buildah run` runs commands in it as the image would."""

    def __init__(self, buildah: Buildah, name: str) -> None:
        self.buildah = buildah
        self.name = name

    def argv(
        self,
        *cmd: str,
        env: dict[str, str] | None = None,
        mounts: Sequence[tuple[Path, str]] = (),
    ) -> list[str]:
        argv = ["buildah", *self.buildah.storage_args(), "run", "--isolation", "chroot"]
        argv += ["--network", "host"]
        for key, value in (env or {}).items():
            argv += ["--env", f"{key}={value}"]
        for src, dst in mounts:
            argv += ["--volume", f"{src}:{dst}:ro"]
        return [*argv, self.name, "--", *cmd]

    def run(
        self,
        *cmd: str,
        env: dict[str, str] | None = None,
        mounts: Sequence[tuple[Path, str]] = (),
        timeout: float = 300,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*cmd, env=env, mounts=mounts),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


@pytest.fixture(scope="module")
def container(buildah: Buildah, built: BuildResult) -> Iterator[Container]:
    name = f"canoe-image-test-{os.getpid()}"
    buildah.run("from", "--name", name, built.image)
    try:
        yield Container(buildah, name)
    finally:
        buildah.run("rm", name, check=False)


def test_the_image_is_a_slim_runtime(buildah: Buildah, built: BuildResult) -> None:
    config = json.loads(buildah.run("inspect", "--type", "image", built.image).stdout)
    docker = config["Docker"]["config"]
    assert docker["User"] == "10001:10001"
    assert docker["Entrypoint"] == ["canoe"] and docker["Cmd"] == ["serve"]
    assert set(docker["ExposedPorts"]) == {"50051/tcp", "8080/tcp", "9464/tcp"}
    assert docker["Healthcheck"]["Test"][0] == "CMD"
    # A few hundred MB: the Debian base plus the locked dependencies, never a toolchain.
    assert built.size_bytes < 1_000_000_000, built.size_bytes


def test_canoe_help_runs_as_uid_10001_without_build_tools(container: Container) -> None:
    proc = container.run("canoe", "--help")
    assert proc.returncode == 0, proc.stderr
    for command in ("plan", "recompute", "contest", "serve"):
        assert command in proc.stdout
    probe = (
        "import importlib.util as u, os, shutil, sys;"
        "print(os.getuid(), sys.prefix, os.getcwd(), '|',"
        " [m for m in ('pip', 'setuptools', 'grpc_tools') if u.find_spec(m)],"
        " [t for t in ('gcc', 'cc', 'pip', 'pip3', 'protoc') if shutil.which(t)])"
    )
    proc = container.run("python", "-c", probe)
    assert proc.returncode == 0, proc.stderr
    who, _, missing = proc.stdout.partition("|")
    assert who.split() == ["10001", "/opt/canoe", "/data"]
    assert missing.strip() == "[] []", proc.stdout  # no pip, setuptools, protoc or compiler
    # The CA bundle was a build secret: mounted while pip ran, never part of a layer.
    assert container.run("test", "-e", "/run/secrets/ca").returncode == 1
    # Nor can the base's own interpreter install anything.
    proc = container.run("python3.11", "-m", "pip", "--version")
    assert proc.returncode != 0 and "No module named pip" in proc.stderr, proc.stderr


def _plan(argv: Sequence[str]) -> dict[str, object]:
    proc = subprocess.run(
        [*argv, "--format", "json", "--created", CREATED, "--no-progress"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    document: dict[str, object] = json.loads(proc.stdout)
    return document


def test_canoe_plan_in_the_image_matches_the_source_tree(container: Container) -> None:
    bundle = fixture_bundle("adalberto")
    in_image = _plan(
        container.argv("canoe", "plan", "/in/bundle.json", mounts=[(bundle, "/in/bundle.json")])
    )
    here = _plan(
        [
            sys.executable,
            "-c",
            "import sys; from service.cli import main; sys.exit(main())",
            "plan",
            str(bundle),
        ]
    )
    assert in_image["format"] == "canoe.deliberation/1" and in_image["options"], in_image.keys()
    assert in_image == here


def test_canoe_plan_refuses_a_bad_bundle_with_exit_2(container: Container) -> None:
    bundle = fixture_bundle("bad_wrong_resourcetype")
    proc = container.run(
        "canoe", "plan", "/in/bundle.json", "--format", "fhir", mounts=[(bundle, "/in/bundle.json")]
    )
    assert proc.returncode == 2, proc.stderr
    assert json.loads(proc.stdout)["resourceType"] == "OperationOutcome"
    assert "Traceback" not in proc.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _descendants(pid: int) -> list[int]:
    """Processes below ``pid`` (buildah run -> buildah-chroot-exec -> canoe), by /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _canoe_process(pid: int) -> int:
    for child in _descendants(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # The interpreter running the console script, not buildah-chroot-exec above it.
        if cmdline[0].startswith(b"/opt/canoe/bin/python") and cmdline[1:3] == [
            b"/opt/canoe/bin/canoe",
            b"serve",
        ]:
            return child
    raise LookupError("canoe serve is not running under the buildah run process")


@dataclass
class Served:
    proc: subprocess.Popen[str]
    grpc_port: int
    http_port: int
    started: float

    _output: str | None = None

    def output(self) -> str:
        """Everything the server printed, once it has exited."""
        if self.proc.poll() is None:
            return "(still running)"
        if self._output is None:
            self._output = self.proc.stdout.read() if self.proc.stdout else ""
        return self._output


@pytest.fixture()
def served(container: Container) -> Iterator[Served]:
    grpc_port, http_port, metrics_port = _free_port(), _free_port(), _free_port()
    argv = container.argv(
        "canoe",
        "serve",
        env={
            "CANOE_GRPC_PORT": str(grpc_port),
            "CANOE_HTTP_PORT": str(http_port),
            "CANOE_METRICS_PORT": str(metrics_port),
            # The image listens on 0.0.0.0; with no gRPC auth configured that needs saying.
            "CANOE_ALLOW_UNAUTHENTICATED": "1",
        },
    )
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        yield Served(proc, grpc_port, http_port, started)
    finally:
        if proc.poll() is None:
            # buildah run answers SIGTERM by killing its child outright; the graceful stop is
            # canoe's own, so the signal goes to canoe.
            with contextlib.suppress(LookupError, ProcessLookupError):
                os.kill(_canoe_process(proc.pid), signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()


def test_canoe_serve_in_the_image_answers_health_over_loopback(served: Served) -> None:
    status = None
    with grpc.insecure_channel(f"127.0.0.1:{served.grpc_port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        deadline = served.started + 120
        while time.monotonic() < deadline:
            assert served.proc.poll() is None, served.output()
            try:
                status = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2).status
            except grpc.RpcError:
                status = None
            if status == health_pb2.HealthCheckResponse.SERVING:
                break
            time.sleep(0.1)
        assert status == health_pb2.HealthCheckResponse.SERVING, status
        # Reported (pytest -rP / -s) for the note: start to SERVING inside the image.
        took = time.monotonic() - served.started
        print(f"canoe serve in the image: SERVING {took:.2f} s after start")
        named = stub.Check(health_pb2.HealthCheckRequest(service="canoe.v1.CarePlanService"))
        assert named.status == health_pb2.HealthCheckResponse.SERVING
    response = httpx.get(f"http://127.0.0.1:{served.http_port}/healthz", timeout=10)
    assert response.status_code == 200, response.text
    # SIGTERM: health goes NOT_SERVING, in-flight work finishes, the process exits 0.
    os.kill(_canoe_process(served.proc.pid), signal.SIGTERM)
    assert served.proc.wait(timeout=60) == 0, served.output()
    assert '"event": "server.stopped"' in served.output()
