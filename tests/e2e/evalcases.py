"""Shared checks for the ``canoe eval`` case folders (examples/eval, examples/vignettes,
examples/vignettes2, examples/vignettes3, examples/vignettes4, examples/vignettes5): each holds
``expectations.json`` (what today's plans meet and must keep) and ``known_gaps.json`` (what is
clinically right but not met yet: each entry must still fail, so closing a gap fails the test
until the entry moves into ``expectations.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_plan_end_to_end import CREATED, _canoe


def load(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / name).read_text())
    return data


def run(folder: Path, name: str) -> tuple[int, dict[str, Any]]:
    out = _canoe(
        "eval", str(folder), "--expectations", name, "--created", CREATED, "--format", "json"
    )
    assert out.returncode in (0, 1), out.stderr.decode()
    report: dict[str, Any] = json.loads(out.stdout)
    return out.returncode, report


def assert_reasons_and_sources(folder: Path, name: str) -> None:
    for case in load(folder, name)["cases"]:
        for kind in ("must_include", "must_not_include"):
            for e in case.get(kind, []):
                assert isinstance(e, dict), (case["name"], e)
                assert e.get("reason", "").strip() and e.get("source", "").strip(), (
                    case["name"],
                    e,
                )


def assert_every_kept_expectation_met(folder: Path) -> None:
    rc, report = run(folder, "expectations.json")
    failed = [
        (case["name"], c["terms"], c["status"])
        for case in report["cases"]
        for c in case["checks"]
        if c["status"] in ("missed", "unsafe")
    ]
    assert rc == 0 and not failed, failed
    # a set measured blind may keep no finding yet (none was met), only what must stay absent
    kept = sum(len(c.get("must_include", [])) for c in load(folder, "expectations.json")["cases"])
    assert report["totals"]["found"] == kept and report["totals"]["absent"] > 0


def assert_every_known_gap_still_open(folder: Path) -> None:
    if not load(folder, "known_gaps.json")["cases"]:
        pytest.skip(f"{folder.name}/known_gaps.json lists no open gap")
    rc, report = run(folder, "known_gaps.json")
    closed = [
        (case["name"], c["kind"], c["terms"], c["status"])
        for case in report["cases"]
        for c in case["checks"]
        if c["status"] in ("found", "absent")
    ]
    # a closed gap: move that expectation from known_gaps.json into expectations.json
    assert not closed, closed
    assert rc == 1 and report["totals"]["missed"] + report["totals"]["unsafe"] > 0
