"""``dev.py test`` installs the browser the review app's tests need only as it says: each system
command is printed before it runs, and ``CANOETEST_NO_BROWSER=1`` installs nothing and makes the
browser tests skip with that reason."""

from __future__ import annotations

import importlib.util
import os
import stat
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT
from tests.review.browser import browser_or_skip


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev_under_test", REPO_ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_apt(bin_dir: Path, calls: Path) -> None:
    """An ``apt-get`` that records its arguments and the time order of its calls."""
    bin_dir.mkdir()
    apt = bin_dir / "apt-get"
    apt.write_text(f'#!/bin/sh\necho "apt-get $*" >> {calls}\n')
    apt.chmod(apt.stat().st_mode | stat.S_IXUSR)


def test_each_system_command_is_printed_before_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dev = _dev()
    calls = tmp_path / "calls"
    _fake_apt(tmp_path / "bin", calls)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no chromium here
    monkeypatch.delenv("CANOETEST_NO_BROWSER", raising=False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(dev, "VENV", tmp_path)
    dev.ensure_browser()
    err = capsys.readouterr().err
    printed = [line.strip() for line in err.splitlines() if "apt-get" in line and "=" in line]
    assert printed == [
        "DEBIAN_FRONTEND=noninteractive apt-get update -q",
        "DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver",
    ]
    assert calls.read_text().splitlines() == [p.split(" ", 1)[1] for p in printed]
    assert "CANOETEST_NO_BROWSER=1 skips" in err


def test_the_opt_out_installs_nothing_and_the_browser_tests_say_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dev = _dev()
    calls = tmp_path / "calls"
    _fake_apt(tmp_path / "bin", calls)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("CANOETEST_NO_BROWSER", "1")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(dev, "VENV", tmp_path)
    dev.ensure_browser()
    assert not calls.exists()
    assert "the browser tests skip" in capsys.readouterr().err
    reason = browser_or_skip()
    assert isinstance(reason, str) and "CANOETEST_NO_BROWSER=1" in reason
