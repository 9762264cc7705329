"""``canoe eval`` over the hand-written vignettes, the generalisation check: five sets
(examples/vignettes, examples/vignettes2 and examples/vignettes3 of older adults;
examples/vignettes4 in pregnancy, women who could become pregnant and childhood;
examples/vignettes5, adults of 18-64 outside the older-adult population) of patients the
knowledge was not tuned on, whose expectations were written before their plans were first
read. The bundles are the output of each folder's ``make.py``, which must reproduce them
exactly."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.e2e import evalcases

FOLDERS = [
    REPO_ROOT / "examples" / "vignettes",
    REPO_ROOT / "examples" / "vignettes2",
    REPO_ROOT / "examples" / "vignettes3",
    REPO_ROOT / "examples" / "vignettes4",
    REPO_ROOT / "examples" / "vignettes5",
    REPO_ROOT / "examples" / "vignettes6",
]
folders = pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)


@folders
def test_make_py_reproduces_the_committed_bundles(folder: Path) -> None:
    module = runpy.run_path(str(folder / "make.py"))
    for build in module["VIGNETTES"]:
        record = build()
        committed = json.loads((folder / f"{record.slug}.json").read_text())
        assert record.bundle() == committed, record.slug


@folders
@pytest.mark.parametrize("name", ["expectations.json", "known_gaps.json"])
def test_every_vignette_expectation_states_its_clinical_reason_and_source(
    folder: Path, name: str
) -> None:
    for case in evalcases.load(folder, name)["cases"]:
        assert (folder / case["bundle"]).is_file(), case["bundle"]
    evalcases.assert_reasons_and_sources(folder, name)


@folders
def test_every_vignette_has_kept_expectations(folder: Path) -> None:
    named = {c["bundle"] for c in evalcases.load(folder, "expectations.json")["cases"]}
    made = {p.name for p in folder.glob("*.json")} - {
        "expectations.json",
        "known_gaps.json",
        "blind_expectations.json",  # the file written before any plan was read
    }
    assert named == made


@folders
def test_todays_plans_meet_every_kept_vignette_expectation(folder: Path) -> None:
    evalcases.assert_every_kept_expectation_met(folder)


@folders
def test_every_vignette_known_gap_is_still_open(folder: Path) -> None:
    evalcases.assert_every_known_gap_still_open(folder)
