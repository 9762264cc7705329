"""The test tiers tests/conftest.py marks: a bundle sweep keeps its first cases (the
representatives) in the fast tier and marks the rest `sweep`; a test that sweeps nothing is left
alone, and `dev.py test --fast` leaves out both the slow and the sweep tier."""

from __future__ import annotations

import importlib.util
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import EXAMPLES, FHIR_FIXTURES, REPO_ROOT, SWEEP_KEPT, _mark_sweeps

BUNDLES = sorted(FHIR_FIXTURES.glob("*.json"))[:5]
VIGNETTE_FOLDERS = sorted(EXAMPLES.glob("vignettes*"))[:3]


@dataclass
class _CallSpec:
    params: dict[str, Any]
    id: str


@dataclass
class _Case:
    """The little of a collected ``pytest.Item`` the tier marking reads and writes."""

    originalname: str
    callspec: _CallSpec
    declared: bool = False
    path: Path = REPO_ROOT / "tests" / "test_example_sweep.py"
    added: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.originalname}[{self.callspec.id}]"

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == "bundle_sweep" and self.declared else None

    def add_marker(self, marker: Any) -> None:
        self.added.append(marker.name)


def _cases(test: str, values: list[Any], *, declared: bool = False) -> list[_Case]:
    return [
        _Case(test, _CallSpec({"value": v}, f"id{k}"), declared=declared)
        for k, v in enumerate(values)
    ]


def _swept(cases: list[_Case]) -> list[bool]:
    return ["sweep" in c.added for c in cases]


def test_a_sweep_over_bundle_files_keeps_its_first_cases_fast() -> None:
    cases = _cases("test_every_bundle", BUNDLES)
    _mark_sweeps(cases)
    assert SWEEP_KEPT == 2
    assert _swept(cases) == [False, False, True, True, True]


def test_a_sweep_over_vignette_folders_is_a_sweep_too() -> None:
    cases = _cases("test_every_folder", VIGNETTE_FOLDERS)
    _mark_sweeps(cases)
    assert _swept(cases) == [False, False, True]


def test_every_case_of_a_representative_bundle_stays_fast() -> None:
    """A sweep crossed with another parameter: the representatives are bundles, not cases."""
    cases = [
        _Case("test_crossed", _CallSpec({"path": b, "mode": m}, f"{b.stem}-{m}"))
        for b in BUNDLES[:3]
        for m in ("text", "fhir")
    ]
    _mark_sweeps(cases)
    assert _swept(cases) == [False, False, False, False, True, True]


def test_each_sweep_keeps_its_own_representatives() -> None:
    first, second = _cases("test_one", BUNDLES), _cases("test_two", BUNDLES[2:])
    _mark_sweeps(first + second)
    assert _swept(second) == [False, False, True]


def test_paths_outside_the_examples_sweep_nothing() -> None:
    knowledge = sorted((REPO_ROOT / "inference" / "knowledge").glob("*.py"))[:4]
    cases = _cases("test_every_module", knowledge)
    _mark_sweeps(cases)
    assert len(cases) == 4 and _swept(cases) == [False] * 4


def test_cases_naming_bundles_sweep_only_when_declared() -> None:
    names = [p.name.split("_")[0] for p in BUNDLES]
    declared = _cases("test_declared", names, declared=True)
    plain = _cases("test_plain", names)
    _mark_sweeps(declared + plain)
    assert _swept(declared) == [False, False, True, True, True]
    assert _swept(plain) == [False] * 5


def _dev() -> Any:
    spec = importlib.util.spec_from_file_location("dev", REPO_ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    return dev


def test_the_fast_tier_leaves_out_the_slow_and_the_sweep_tiers() -> None:
    dev = _dev()
    assert dev.FAST_TIER == "not slow and not sweep"
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = {m.split(":")[0] for m in pyproject["tool"]["pytest"]["ini_options"]["markers"]}
    assert {"slow", "sweep", "bundle_sweep"} <= markers


def test_the_fast_tier_runs_on_workers_a_file_to_each_unless_told_otherwise() -> None:
    """Two xdist workers, each test file whole on one, unless the command line says how many
    workers (`-n 0`: none) or how to share the tests out; the plugin is a dev dependency."""
    dev = _dev()
    assert dev.FAST_WORKERS == ("-n", "2", "--dist", "loadfile")
    for chooses in ("-n", "-n0", "-n=4", "--numprocesses=3", "--dist=load"):
        assert dev._names_workers(chooses), chooses
    for other in ("-x", "--durations=30", "--no-header", "-k", "tests/test_tiers.py"):
        assert not dev._names_workers(other), other
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev_extra = pyproject["project"]["optional-dependencies"]["dev"]
    assert any(r.startswith("pytest-xdist") for r in dev_extra)
