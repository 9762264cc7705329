"""The official SMART App Launcher (smart-on-fhir/smart-launcher-v2) for the review app's
tests: fetched at a pinned commit and built with npm into the git-ignored
.tools/smart-launcher-v2 the first time, then run with node on loopback.

``launcher_or_skip`` gives the built launcher's folder, or the reason it cannot be had here (no
node or npm, no git, no network, a failed build), so that the test skips saying why. A launcher
built elsewhere can be named with ``CANOE_SMART_LAUNCHER_DIR``. Without an upstream FHIR server
the launcher still looks up the patient's latest Encounter during the launch; ``TinyFhir``
answers that one search (and nothing else) from loopback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT

REPOSITORY = "https://github.com/smart-on-fhir/smart-launcher-v2"
COMMIT = "64374254347fdfa9625f9112c77813aa75fa9f3e"  # 2025-05-19, version 2.0.1
LAUNCHER_DIR = REPO_ROOT / ".tools" / "smart-launcher-v2"


def _built(folder: Path) -> bool:
    return (folder / "build" / "index.html").exists() and (
        folder / "node_modules" / ".bin" / "ts-node"
    ).exists()


def _run(step: str, args: list[str], cwd: Path, timeout: int) -> str | None:
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{step} failed: {exc}"
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        return f"{step} failed (exit {done.returncode}): {' '.join(tail)}"
    return None


def launcher_or_skip() -> Path | str:
    """The built launcher's folder, or the reason there is none."""
    given = os.environ.get("CANOE_SMART_LAUNCHER_DIR")
    folder = Path(given) if given else LAUNCHER_DIR
    if shutil.which("node") is None:
        return "node is not installed (the SMART App Launcher runs on node >= 16)"
    if _built(folder):
        return folder
    if given:
        return (
            f"CANOE_SMART_LAUNCHER_DIR={given} holds no built launcher (build/ and node_modules/)"
        )
    npm, git = shutil.which("npm"), shutil.which("git")
    if npm is None or git is None:
        return "npm and git are needed to fetch and build the SMART App Launcher"
    folder.mkdir(parents=True, exist_ok=True)
    steps = [
        ("git init", [git, "init", "-q"], 60),
        ("git fetch", [git, "fetch", "-q", "--depth", "1", REPOSITORY, COMMIT], 300),
        ("git checkout", [git, "checkout", "-q", "FETCH_HEAD"], 60),
        ("npm ci", [npm, "ci", "--no-audit", "--no-fund", "--silent"], 900),
        ("npm run build", [npm, "run", "build", "--silent"], 900),
    ]
    if (folder / "package.json").exists():
        steps = steps[3:]
    for step, args, timeout in steps:
        why = _run(step, args, folder, timeout)
        if why is not None:
            return f"the SMART App Launcher could not be built in {folder}: {why}"
    return folder if _built(folder) else f"the SMART App Launcher build in {folder} is incomplete"


class Launcher:
    """The launcher's own server (``backend/index.ts`` under ts-node), stopped with SIGTERM."""

    def __init__(self, folder: Path, port: int, fhir_base: str) -> None:
        env = {
            **os.environ,
            "NODE_ENV": "production",
            "HOST": "127.0.0.1",
            "PORT": str(port),
            "FHIR_SERVER_R4": fhir_base,
            "SOURCE_VERSION": COMMIT,
        }
        ts_node = folder / "node_modules" / ".bin" / "ts-node"
        self.base = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [str(ts_node), "--skipProject", "--transpile-only", "backend/index.ts"],
            cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.lines: list[str] = []
        self.started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def iss(self) -> str:
        return f"{self.base}/v/r4/fhir"

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip()
            self.lines.append(line)
            if "SMART launcher available at" in line:
                self.started.set()

    def wait_started(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not self.started.is_set():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the SMART launcher did not start:\n" + "\n".join(self.lines))
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class TinyFhir:
    """The one FHIR search the launcher makes on its own during an EHR launch: the patient's
    latest Encounter. Answered with one Encounter; anything else is a 404."""

    def __init__(self, port: int) -> None:
        import uvicorn
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        self.searches: list[str] = []

        async def any_path(request: Request) -> Response:
            if request.url.path.rstrip("/").endswith("Encounter"):
                patient = request.query_params.get("patient", "")
                self.searches.append(patient)
                enc: dict[str, Any] = {
                    "resourceType": "Encounter",
                    "id": "launch-encounter",
                    "status": "finished",
                    "class": {"code": "AMB"},
                    "subject": {"reference": f"Patient/{patient}"},
                }
                return JSONResponse(
                    {"resourceType": "Bundle", "type": "searchset", "entry": [{"resource": enc}]},
                    media_type="application/fhir+json",
                )
            return JSONResponse({"resourceType": "OperationOutcome"}, status_code=404)

        app = Starlette(routes=[Route("/{path:path}", any_path)])
        self.base = f"http://127.0.0.1:{port}/fhir"
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="off")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the tiny FHIR endpoint did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
