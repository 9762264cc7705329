"""The commands the READMEs give run as written: every fenced block of README.md and
examples/**/README.md marked ``<!-- runnable -->`` on the line before its fence is run with bash
(``set -euo pipefail``) from a scratch folder that sees the repository's ``examples/``, so what
the commands write lands there and not in the checkout. Blocks left unmarked need something a
test cannot give them (a server on the default ports, Docker, the git history).

Written in the set-up's words (``python3.11 dev.py canoe``, ``.venv/bin/python``), a command is
run with this interpreter's environment instead: making that environment is the quick start's
own test. Also here: the files those commands write are ignored by git."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

MARKER = "<!-- runnable -->"
FENCE = re.compile(r"^```(\w*)\s*$")
# The set-up's spelling of a command, and what it stands for in an installed environment.
SPELLINGS = (
    ("python3.11 dev.py plan ", "canoe plan "),
    ("python3.11 dev.py canoe ", "canoe "),
    (".venv/bin/python ", "python "),
)


def _readmes() -> list[Path]:
    return [
        REPO_ROOT / "README.md",
        *sorted((REPO_ROOT / "docs").glob("*.md")),
        *sorted((REPO_ROOT / "examples").rglob("README.md")),
    ]


def _runnable_blocks(path: Path) -> list[tuple[int, str]]:
    """(line number of the fence, the block's text) for each block marked runnable."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        if FENCE.match(lines[i]) and i > 0 and lines[i - 1].strip() == MARKER:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            blocks.append((i + 1, "\n".join(lines[i + 1 : end])))
            i = end
        i += 1
    return blocks


BLOCKS = [
    pytest.param(text, id=f"{path.relative_to(REPO_ROOT)}:{line}")
    for path in _readmes()
    for line, text in _runnable_blocks(path)
]


def _installed(text: str) -> str:
    for spelled, meant in SPELLINGS:
        text = text.replace(spelled, meant)
    return text


def test_the_readmes_mark_commands_runnable() -> None:
    assert len(BLOCKS) >= 4
    # A marker must sit right before a fence, or it marks nothing.
    for path in _readmes():
        lines = path.read_text(encoding="utf-8").splitlines()
        for k, line in enumerate(lines):
            if line.strip() == MARKER:
                assert k + 1 < len(lines) and FENCE.match(lines[k + 1]), f"{path}:{k + 1}"


@pytest.mark.parametrize("block", BLOCKS)
def test_a_runnable_readme_block_runs(block: str, tmp_path: Path) -> None:
    if shutil.which("canoe", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("the canoe command is not installed in this interpreter's environment")
    (tmp_path / "examples").symlink_to(REPO_ROOT / "examples")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(REPO_ROOT),
    )
    out = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + _installed(block)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, f"{block}\n--- stderr:\n{out.stderr[-3000:]}"


@pytest.mark.parametrize(
    "path",
    [
        "cds-sandbox/client.key.pem",
        "cds-sandbox/trusted-clients.json",
        "out/package/package.json",
        "eval-report.json",
        "plan.json",
        "reply.json",
        "canoe.sqlite3-wal",
        "canoe.sqlite3-shm",
    ],
)
def test_what_the_readme_commands_write_is_ignored(path: str) -> None:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", path], cwd=REPO_ROOT, check=False
    )
    assert out.returncode == 0, f"{path} is not ignored by .gitignore"


def test_the_readmes_python_snippets_use_no_undefined_name(tmp_path: Path) -> None:
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        pytest.skip("ruff is not installed in this interpreter's environment")
    text = "\n".join(path.read_text(encoding="utf-8") for path in _readmes())
    snippets = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert snippets
    for k, code in enumerate(snippets):
        (tmp_path / f"snippet_{k}.py").write_text(code)
    out = subprocess.run(
        [str(ruff), "check", "--isolated", "--select", "F821,F841", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout
