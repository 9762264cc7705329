"""The typing standard (STYLE 12): ``mypy --strict`` passes on service, fhir_mapping and inference.

Runs mypy as a subprocess with the project's ``[tool.mypy]`` configuration, which names the
packages, the strictness and the narrow overrides for generated and untyped third-party code.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("service", "fhir_mapping", "inference")


@pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (it comes with the 'dev' extra)",
)
def test_packages_pass_mypy_strict() -> None:
    # --strict on the command line too, so a config edit cannot quietly relax the standard.
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--strict"]
    for package in PACKAGES:
        cmd += ["-p", package]
    # The checkout's .mypy_cache (git-ignored) is kept: mypy's incremental mode is sound, and
    # with it a warm run takes about a second instead of twenty.
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240)
    report = done.stdout + done.stderr
    assert done.returncode == 0, f"mypy --strict failed:\n{report}"
    assert "Success" in done.stdout, report
