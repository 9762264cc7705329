"""``canoe eval`` over the second set of hand-written vignettes (examples/vignettes2): a second
held-out generalisation check (issue 13x).

The vignettes are patients the knowledge was not tuned on: their expectations were written before
their plans were read. ``expectations.json`` holds what today's plans get right and must keep;
``known_gaps.json`` what they do not meet yet, each of which must still fail (a change that closes
a gap fails this test until the expectation moves into ``expectations.json``). The bundles are
the output of ``make.py``, which must reproduce them exactly."""

from __future__ import annotations

import json
import runpy
from typing import Any

import pytest

from tests.conftest import REPO_ROOT
from tests.e2e.test_plan_end_to_end import CREATED, _canoe

CASES = REPO_ROOT / "examples" / "vignettes2"


def _file(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CASES / name).read_text())
    return data


def _run(name: str) -> tuple[int, dict[str, Any]]:
    out = _canoe(
        "eval", str(CASES), "--expectations", name, "--created", CREATED, "--format", "json"
    )
    assert out.returncode in (0, 1), out.stderr.decode()
    report: dict[str, Any] = json.loads(out.stdout)
    return out.returncode, report


def test_make_py_reproduces_the_committed_bundles() -> None:
    module = runpy.run_path(str(CASES / "make.py"))
    for build in module["VIGNETTES"]:
        record = build()
        committed = json.loads((CASES / f"{record.slug}.json").read_text())
        assert record.bundle() == committed, record.slug


@pytest.mark.parametrize("name", ["expectations.json", "known_gaps.json"])
def test_every_vignette_expectation_states_its_clinical_reason_and_source(name: str) -> None:
    for case in _file(name)["cases"]:
        assert (CASES / case["bundle"]).is_file(), case["bundle"]
        for kind in ("must_include", "must_not_include"):
            for e in case.get(kind, []):
                assert e.get("reason", "").strip() and e.get("source", "").strip(), (
                    case["name"],
                    e,
                )


def test_every_vignette_has_kept_expectations() -> None:
    named = {c["bundle"] for c in _file("expectations.json")["cases"]}
    made = {p.name for p in CASES.glob("*.json")} - {"expectations.json", "known_gaps.json"}
    assert named == made


def test_todays_plans_meet_every_kept_vignette_expectation() -> None:
    rc, report = _run("expectations.json")
    failed = [
        (case["name"], c["terms"], c["status"])
        for case in report["cases"]
        for c in case["checks"]
        if c["status"] in ("missed", "unsafe")
    ]
    assert rc == 0 and not failed, failed
    assert report["totals"]["found"] > 0 and report["totals"]["absent"] > 0


def test_every_vignette_known_gap_is_still_open() -> None:
    if not _file("known_gaps.json")["cases"]:
        pytest.skip("known_gaps.json lists no open gap")
    rc, report = _run("known_gaps.json")
    closed = [
        (case["name"], c["kind"], c["terms"], c["status"])
        for case in report["cases"]
        for c in case["checks"]
        if c["status"] in ("found", "absent")
    ]
    # a closed gap: move that expectation from known_gaps.json into expectations.json
    assert not closed, closed
    assert rc == 1 and report["totals"]["missed"] + report["totals"]["unsafe"] > 0
