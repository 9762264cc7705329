"""What the browser tests need beyond pytest: Debian's chromium + chromium-driver, axe-core
from npm (into the git-ignored .tools/axe), and a real ``canoe serve`` process on loopback.

``browser_or_skip`` says why a browser test cannot run here (no chromium, no driver, no
selenium) so that the test skips with that reason; ``dev.py test`` installs the Debian packages
when it runs as root and they are missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT

AXE_DIR = REPO_ROOT / ".tools" / "axe"
AXE_JS = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
ARTEFACTS = REPO_ROOT / "tmp" / "artefacts" / "review"


def browser_or_skip() -> tuple[str, str] | str:
    """(chromium, chromedriver) paths, or the reason they cannot be used."""
    if os.environ.get("CANOETEST_NO_BROWSER") == "1":
        return "CANOETEST_NO_BROWSER=1: the browser tests were turned off"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e .[dev])"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        return (
            "Debian's chromium and chromium-driver are not installed "
            "(apt-get install chromium chromium-driver)"
        )
    return chromium, driver


def axe_source() -> str | None:
    """axe.min.js, fetched with npm into .tools/axe the first time; None without npm."""
    if not AXE_JS.exists():
        npm = shutil.which("npm")
        if npm is None:
            return None
        AXE_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--prefix", str(AXE_DIR), "--no-audit", "--no-fund", "--silent",
             "axe-core@4"],
            check=False, capture_output=True, timeout=300,
        )  # fmt: skip
    return AXE_JS.read_text(encoding="utf-8") if AXE_JS.exists() else None


def driver(chromium: str, chromedriver: str) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
        "--disable-extensions",
        "--no-first-run",
    ):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(chromedriver), options=opts)


class CanoeServe:
    """``python -m service.cli serve`` as a child process, stopped with SIGTERM."""

    def __init__(self, env: dict[str, str]) -> None:
        environ = {
            k: v for k, v in os.environ.items() if not k.startswith(("CANOE_", "CANOETEST_"))
        }
        environ.update(PYTHONPATH=str(REPO_ROOT), CANOE_LOG_LEVEL="info", **env)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve"],
            cwd=REPO_ROOT, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.lines: list[str] = []
        self.grpc_port: int | None = None
        self.http_started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.lines.append(line)
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "server.started":
                self.grpc_port = int(event["port"])
            if event.get("event") == "http.started":
                self.http_started.set()

    def wait_started(self, timeout: float = 90) -> int:
        deadline = time.monotonic() + timeout
        while not (self.http_started.is_set() and self.grpc_port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("canoe serve did not start:\n" + "\n".join(self.lines[-20:]))
            time.sleep(0.05)
        assert self.grpc_port is not None
        return self.grpc_port

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def save_artefact(drv: Any, name: str) -> Path:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTEFACTS / f"{name}.png"
    # The whole page, not just the window: size the window to the document first.
    height = drv.execute_script("return document.documentElement.scrollHeight")
    drv.set_window_size(1400, min(max(int(height) + 120, 700), 6000))
    drv.save_screenshot(str(path))
    drv.set_window_size(1400, 1000)
    print(f"screenshot: {path}")
    return path
