#!/usr/bin/env python3
"""One entry point for a fresh checkout: makes the virtualenv, installs, then runs.

    python3.11 dev.py plan BUNDLE.json [canoe plan options]   # the main job, embedded backend
    python3.11 dev.py test [pytest options]                   # the whole test suite
                                 # (as root, installs chromium with apt-get, printing the
                                 # commands first; CANOETEST_NO_BROWSER=1 skips that and the
                                 # browser tests)
    python3.11 dev.py test --fast [pytest options]            # the fast tier only (no
                                 # browser, image, chart, servers, PostgreSQL, and each
                                 # bundle sweep on its representatives only: see
                                 # tests/conftest.py), printing its wall time
    python3.11 dev.py check                                   # ruff, format, import layers, mypy
    python3.11 dev.py canoe ARGS...                           # any other CLI command

It needs only Python 3.11 and the package registry. The virtualenv lives in .venv and is
(re)installed when either distribution's metadata (pyproject.toml, client/), the protos or
requirements.lock change. Both are installed editable, the client (canoe-client, which alone
ships canoe_client) from client/ beside the service, and its build generates the proto code. The
runtime dependencies are held at the versions requirements.lock pins for the image, so a checkout
tests what ships; the static checks' tools are pinned exactly in pyproject.toml's dev extra.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
LOCK = ROOT / "requirements.lock"
# The canoe-client distribution, a path dependency of the service: what its build reads.
CLIENT = ROOT / "client"
CLIENT_BUILD = ("client/pyproject.toml", "client/setup.py", "client/protogen.py")


def _stamp(extra: str) -> str:
    h = hashlib.sha256(extra.encode())
    for name in ("pyproject.toml", "requirements.lock", *CLIENT_BUILD):
        h.update((ROOT / name).read_bytes())
    for proto in sorted((ROOT / "proto").rglob("*.proto")):
        h.update(proto.read_bytes())
    return h.hexdigest()


# Held by the test tools rather than the lock: the CPU Triton server the integration tests run
# (nvidia-pytriton 0.7) needs numpy below 2, and with numpy 2 the older pytriton that would
# install instead sends its byte tensors garbled (the server's Python backend aborts). The image
# ships the lock's numpy; the service code runs on both.
UNPINNED_IN_DEV = frozenset({"numpy"})


def write_constraints(path: Path) -> Path:
    """requirements.lock's pins without their hashes, as a pip constraints file: a hash in a
    constraint turns on hash checking for every requirement, which an editable install of the
    project itself cannot pass."""
    pins = [
        line.rstrip(" \\")
        for line in LOCK.read_text(encoding="utf-8").splitlines()
        if line
        and not line[0].isspace()
        and not line.startswith("#")
        and line.split("==")[0] not in UNPINNED_IN_DEV
    ]
    path.write_text("\n".join(pins) + "\n", encoding="utf-8")
    return path


def ensure_env(extra: str) -> None:
    """Install the project (editable) with the given extras unless already up to date."""
    if not PY.exists():
        print("creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp_file = VENV / f".canoe-installed-{extra or 'base'}"
    want = _stamp(extra)
    if stamp_file.exists() and stamp_file.read_text() == want:
        return
    print(f"installing the project ({extra or 'base'}) into .venv", file=sys.stderr)
    pip = [str(PY), "-m", "pip", "--disable-pip-version-check"]
    target = f".[{extra}]" if extra else "."
    constraints = write_constraints(VENV / "constraints.txt")
    log = VENV / "install.log"
    with log.open("w") as out:
        for step in (
            [*pip, "install", "-q", "--upgrade", "pip", "setuptools", "wheel"],
            [*pip, "install", "-q", "-c", str(constraints), "-e", str(CLIENT), "-e", target],
        ):
            if subprocess.run(step, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode:
                sys.stderr.write(log.read_text())
                sys.exit(f"install failed: {' '.join(step)} (log above, also in {log})")
    stamp_file.write_text(want)


CHECKS = (
    ("ruff check", [str(PY), "-m", "ruff", "check", "."]),
    ("ruff format --check", [str(PY), "-m", "ruff", "format", "--check", "."]),
    ("import layers (lint-imports)", [str(BIN / "lint-imports"), "--no-cache"]),
    ("mypy --strict", [str(PY), "-m", "mypy", "--strict"]),
)


def _check() -> int:
    """Every static check CI runs, each named, all run even when one fails."""
    failed = []
    for name, cmd in CHECKS:
        print(f"== {name}", file=sys.stderr, flush=True)
        if subprocess.call(cmd, cwd=ROOT):
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


# The fast tier leaves out the two tiers tests/conftest.py marks: `slow` (external servers,
# browser, image, chart, PostgreSQL) and `sweep` (a bundle sweep beyond its representatives).
FAST_TIER = "not slow and not sweep"
# It runs on two pytest-xdist workers, each test file whole on one worker (its module fixtures
# made once); `-n N` (`-n 0`: in this one process) or `--dist` chooses otherwise.
FAST_WORKERS = ("-n", "2", "--dist", "loadfile")

# The one opt-out of the browser: no system package installed, and the browser tests skip
# saying so (tests/review/browser.py reads the same name).
NO_BROWSER = "CANOETEST_NO_BROWSER"
APT_STEPS = (
    ["apt-get", "update", "-q"],
    ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"],
)


def ensure_browser() -> None:
    """The review app's browser tests drive Debian's chromium through chromium-driver: install
    both when missing and this is root on a Debian-like system, printing each system command
    before it runs. Otherwise (or if apt fails, or with CANOETEST_NO_BROWSER=1) the browser tests
    skip and say why; the rest of the suite runs either way."""
    if os.environ.get(NO_BROWSER) == "1":
        print(f"{NO_BROWSER}=1: chromium is not installed and the browser tests skip",
              file=sys.stderr)  # fmt: skip
        return
    if shutil.which("chromium") and shutil.which("chromedriver"):
        return
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return
    print(
        "installing chromium and chromium-driver system-wide for the browser tests "
        f"({NO_BROWSER}=1 skips them instead):",
        file=sys.stderr,
    )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    log = VENV / "apt.log"
    with log.open("w") as out:
        for step in APT_STEPS:
            print("  DEBIAN_FRONTEND=noninteractive " + " ".join(step), file=sys.stderr, flush=True)
            if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT, env=env).returncode:
                print(f"apt-get failed ({log}); the browser tests will skip", file=sys.stderr)
                return


def _names_workers(arg: str) -> bool:
    """Whether a pytest argument chooses the number of xdist workers itself."""
    return arg.startswith(("-n", "--numprocesses", "--dist"))


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("plan", "test", "check", "canoe"):
        print(__doc__, file=sys.stderr)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "test":
        ensure_env("dev")
        fast = "--fast" in rest
        if fast:  # no browser, image, chart, servers or PostgreSQL; sweeps on representatives
            rest = [a for a in rest if a != "--fast"]
            workers = () if any(_names_workers(a) for a in rest) else FAST_WORKERS
            rest = ["-m", FAST_TIER, *workers, *rest]
        else:
            ensure_browser()
        started = time.monotonic()
        code = subprocess.call([str(PY), "-m", "pytest", *rest], cwd=ROOT)
        tier = "the fast tier" if fast else "the tests"
        print(f"{tier} took {time.monotonic() - started:.0f} s (wall)", file=sys.stderr)
        return code
    if cmd == "check":
        ensure_env("dev")
        return _check()
    ensure_env("")
    args = ["plan", *rest] if cmd == "plan" else rest
    return subprocess.call([str(BIN / "canoe"), *args])  # paths stay relative to the caller


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
