"""A fresh clone stands alone: no tracked file names a fixture outside the repository, and every
bundle the eval cases name is in the tree. (The suite itself runs on the committed fixtures; CI
runs it from a clean clone.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import FHIR_FIXTURES, FIXTURES, REPO_ROOT

OUTSIDE = "shared" + "/fixtures"  # spelled in two parts, so this file does not name it
EXAMPLE_DIRS = sorted(p.parent for p in (REPO_ROOT / "examples").glob("*/expectations.json"))


def _tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=False)
    if out.returncode:
        pytest.skip("not a git checkout: cannot list the tracked files")
    return [REPO_ROOT / name for name in out.stdout.decode().split("\0") if name]


def test_no_tracked_file_points_at_fixtures_outside_the_repository() -> None:
    offenders = []
    for path in _tracked_files():
        if path.suffix not in {".py", ".md", ".json", ".sh", ".yaml", ".toml", ""}:
            continue
        if FIXTURES in path.parents or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if OUTSIDE in text:
            offenders.append(str(path.relative_to(REPO_ROOT)))
    assert offenders == []


def test_the_committed_fixtures_hold_what_the_tests_need() -> None:
    realistic = [p for p in FHIR_FIXTURES.glob("*.json") if not p.name.startswith("bad_")]
    assert len(realistic) == 13
    assert (FIXTURES / "schema" / "fhir.schema.json").is_file()
    for licence in ("Apache-2.0.txt", "CC0-1.0.txt"):
        assert (FIXTURES / "LICENSES" / licence).stat().st_size > 1000
    assert "Apache-2.0" in (FIXTURES / "SOURCES.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("folder", EXAMPLE_DIRS, ids=lambda p: p.name)
def test_every_eval_bundle_is_inside_the_repository(folder: Path) -> None:
    for name in ("expectations.json", "known_gaps.json"):
        path = folder / name
        if not path.exists():
            continue
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            bundle = (folder / case["bundle"]).resolve()
            assert REPO_ROOT in bundle.parents, f"{folder.name}/{name}: {case['bundle']}"
            assert bundle.is_file(), f"{folder.name}/{name}: {case['bundle']}"


def _collects_with_no_shared_folder(tmp_path: Path, *paths: str) -> None:
    """Collect (the whole suite, or the paths given) with the shared folder pointed at a path
    that does not exist: no collection error."""
    import os
    import sys

    env = {**os.environ, "CANOE_SHARED_DIR": str(tmp_path / "no-shared-here")}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *paths],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert " error" not in out.stdout.splitlines()[-1], out.stdout.splitlines()[-1]


# Corpus-wide (a collection of every test, about 20 s): the slow tier. The fast tier keeps the
# representative below, the test files that reach the shared folder.
@pytest.mark.slow
def test_the_suite_collects_with_no_shared_folder(tmp_path: Path) -> None:
    """What the issue saw in a bare clone (14 collection errors) cannot come back: the whole
    suite is collected with the shared folder pointed at a path that does not exist."""
    _collects_with_no_shared_folder(tmp_path)


def test_the_files_that_reach_the_shared_folder_collect_without_it(tmp_path: Path) -> None:
    """The representative in the fast tier: the test files that name the shared folder."""
    reaching = sorted(
        p.relative_to(REPO_ROOT).as_posix()
        for p in (REPO_ROOT / "tests").rglob("test_*.py")
        if "shared_tool(" in (text := p.read_text(encoding="utf-8")) or "SHARED" in text
    )
    assert len(reaching) >= 3, reaching
    _collects_with_no_shared_folder(tmp_path, *reaching)
