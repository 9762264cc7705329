"""requirements.lock, the image's dependencies: it must cover pyproject.toml's runtime ones.

The lock is generated from pyproject.toml (the command is in its header) for every platform and
Python the project supports, with hashes, and the Dockerfile installs it with --require-hashes.
These checks fail when pyproject.toml gains or tightens a dependency and the lock was not
regenerated, and when a build or test tool slipped into it.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.conftest import REPO_ROOT

LOCK = REPO_ROOT / "requirements.lock"
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# The image is the production service: the core dependencies plus the extras it deploys with
# (the Triton client, the PostgreSQL driver, the OTLP exporter).
IMAGE_EXTRAS = ("triton", "postgres", "otlp")
# The project's own distributions that the service depends on: built from the checkout (a path
# dependency), never pinned in the lock. Only canoe-client (client/) ships canoe_client.
OWN = {"canoe-client": REPO_ROOT / "client"}
DECLARED = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]] + [
    Requirement(r) for e in IMAGE_EXTRAS for r in PYPROJECT["project"]["optional-dependencies"][e]
]
RUNTIME = [r for r in DECLARED if canonicalize_name(r.name) not in OWN]
# What the image's interpreter evaluates markers with.
IMAGE_ENV = {
    "python_version": "3.11",
    "python_full_version": "3.11.2",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def _pins() -> dict[str, Version]:
    """name -> version pinned for the image (entries whose marker holds for it)."""
    pins: dict[str, Version] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if not match:
            continue
        name, version, marker = match.groups()
        if marker and not Marker(marker).evaluate(IMAGE_ENV):
            continue
        assert canonicalize_name(name) not in pins, f"{name} pinned twice for the image"
        pins[canonicalize_name(name)] = Version(version)
    return pins


def test_the_lock_says_how_to_regenerate_it() -> None:
    header = LOCK.read_text(encoding="utf-8").splitlines()[:2]
    assert "uv pip compile pyproject.toml" in header[1]
    assert "--generate-hashes" in header[1] and "--universal" in header[1]
    for extra in IMAGE_EXTRAS:
        assert f"--extra {extra}" in header[1]


@pytest.mark.parametrize("name", sorted(OWN))
def test_the_projects_own_distribution_is_a_path_dependency_left_out_of_the_lock(
    name: str,
) -> None:
    (declared,) = [r for r in DECLARED if canonicalize_name(r.name) == name]
    own = tomllib.loads((OWN[name] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert canonicalize_name(own["name"]) == name
    assert declared.specifier.contains(own["version"]), f"{declared} misses {OWN[name]}"
    source = PYPROJECT["tool"]["uv"]["sources"][name]
    assert (REPO_ROOT / source["path"]).resolve() == OWN[name].resolve()
    header = LOCK.read_text(encoding="utf-8").splitlines()[1]
    assert f"--no-emit-package {name}" in header  # no hash can pin a directory
    assert name not in _pins()


def test_every_pin_has_hashes() -> None:
    text = LOCK.read_text(encoding="utf-8")
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    assert len(entries) > 30
    for entry in entries:
        assert "--hash=sha256:" in entry, entry.splitlines()[0]


@pytest.mark.parametrize("requirement", RUNTIME, ids=str)
def test_each_runtime_dependency_is_pinned_within_its_range(requirement: Requirement) -> None:
    pins = _pins()
    name = canonicalize_name(requirement.name)
    assert name in pins, f"{requirement} is not in requirements.lock: regenerate it"
    assert requirement.specifier.contains(pins[name], prereleases=True), (
        f"requirements.lock pins {name}=={pins[name]}, outside {requirement.specifier}"
    )


@pytest.mark.parametrize("requirement", [r for r in RUNTIME if r.extras], ids=str)
def test_the_extras_dependencies_are_pinned_too(requirement: Requirement) -> None:
    """e.g. psycopg[binary] -> psycopg-binary, from the installed distribution's metadata."""
    pins = _pins()
    declared = [Requirement(r) for r in metadata.requires(requirement.name) or []]
    for extra in requirement.extras:
        needed = [
            dep
            for dep in declared
            if dep.marker is not None
            and dep.marker.evaluate({**IMAGE_ENV, "extra": extra})
            and not dep.marker.evaluate({**IMAGE_ENV, "extra": ""})
        ]
        assert needed, f"{requirement.name}[{extra}] names no dependencies"
        for dep in needed:
            assert canonicalize_name(dep.name) in pins, f"{dep.name} (for {requirement}) not locked"


def test_no_build_or_test_tool_in_the_lock() -> None:
    pins = _pins()
    for tool in ("grpcio-tools", "setuptools", "pip", "pytest", "mypy", "ruff", "fhirpathpy"):
        assert tool not in pins, f"{tool} would end up in the image"


CHECK_TOOLS = ("ruff", "mypy", "import-linter")


@pytest.mark.parametrize("tool", CHECK_TOOLS)
def test_the_check_tools_are_pinned_exactly_and_installed_as_pinned(tool: str) -> None:
    """`dev.py check` gives the same verdict on every machine: one version of each tool."""
    dev = [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["dev"]]
    (pinned,) = [r for r in dev if canonicalize_name(r.name) == tool]
    (spec,) = pinned.specifier
    assert spec.operator == "==", f"{pinned} is a range: pin it exactly"
    assert Version(metadata.version(tool)) == Version(spec.version), (
        f"{tool} {metadata.version(tool)} is installed, {pinned} is pinned: rerun dev.py"
    )


def test_dev_py_holds_the_environment_to_the_lock(tmp_path: Path) -> None:
    """dev.py installs with the lock's pins as constraints, hashes left out (pip would demand a
    hash of the editable project too)."""
    spec = importlib.util.spec_from_file_location("dev", REPO_ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    lines = dev.write_constraints(tmp_path / "c.txt").read_text(encoding="utf-8").splitlines()
    constraints = [Requirement(line) for line in lines]  # no hash or continuation: parses
    assert all(str(c.specifier).startswith("==") for c in constraints)
    # numpy is left to the test tools (dev.UNPINNED_IN_DEV: the CPU Triton server needs < 2)
    pins = {k: v for k, v in _pins().items() if k not in dev.UNPINNED_IN_DEV}
    for_image = {
        canonicalize_name(c.name): Version(next(iter(c.specifier)).version)
        for c in constraints
        if c.marker is None or c.marker.evaluate(IMAGE_ENV)
    }
    assert for_image == pins
