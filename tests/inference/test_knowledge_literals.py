"""No new numeric literal in the knowledge code: clinical constants belong in the data.

Scans inference/knowledge/*.py and criteria/interpret.py for int and float literals other than
0, 1 and -1, list indices, cache sizes and ``round`` digits, and finds none: thresholds, windows,
weights and strengths are named, cited parameters (``data/parameters.yaml``) or knowledge data
(``data/rule_points.yaml``, the criteria), so a hospital can read and set them.

The loader's two reading limits (file size, nesting depth) are skipped by name, and one
module by name: ``units.py``, the unit and calendar factors (1000 mg in a gram,
7 days in a week). They are facts of measurement, the same for every site, not clinical
judgements a site could set, so they are named constants there rather than parameters.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KNOWLEDGE = ROOT / "inference" / "knowledge"
ALLOWED = {0, 1, -1}
UNITS = KNOWLEDGE / "units.py"


# Reading limits, not clinical values: the largest knowledge file and its deepest nesting, in
# the loader that is imported before the package (it can import nothing of it).
_READING_LIMITS = {"MAX_FILE_BYTES", "MAX_DEPTH"}


def _scanned() -> list[Path]:
    modules = [p for p in sorted(KNOWLEDGE.glob("*.py")) if p != UNITS]
    return [*modules, KNOWLEDGE / "criteria" / "interpret.py"]


def _is_round(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "round"
    )


def literals(source: str) -> Counter[float]:
    """The numeric literals of ``source`` outside the allow-list, indices, cache sizes and the
    digits of ``round(x, n)`` (a display precision, not a clinical value)."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in tree.body:  # the loader's two reading limits, by name
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in _READING_LIMITS
        ):
            skip.update(id(n) for n in ast.walk(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            skip.update(id(n) for n in ast.walk(node.slice))
        elif isinstance(node, ast.keyword) and node.arg == "maxsize":
            skip.add(id(node.value))
        elif _is_round(node) and len(node.args) == 2:  # type: ignore[attr-defined]
            skip.add(id(node.args[1]))  # type: ignore[attr-defined]  # display precision
    found: Counter[float] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            continue  # the operand is seen on its own
        value = node.value if isinstance(node, ast.Constant) else None
        if isinstance(value, bool) or not isinstance(value, int | float) or id(node) in skip:
            continue
        if value not in ALLOWED:
            found[value] += 1
    return found


@pytest.mark.parametrize("path", _scanned(), ids=lambda p: str(p.relative_to(KNOWLEDGE)))
def test_no_numeric_literal(path: Path) -> None:
    got = literals(path.read_text())
    assert not got, f"{path.name}: numeric literals (name them in data/parameters.yaml): {got}"


def test_units_holds_only_named_constants() -> None:
    """The skipped module stays what the skip assumes: assignments of numbers, no logic."""
    tree = ast.parse(UNITS.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            name = node.targets[0]
            assert isinstance(name, ast.Name) and name.id.isupper(), ast.unparse(node)
            assert isinstance(node.value.value, int | float), ast.unparse(node)
        elif isinstance(node, ast.Assign):
            assert ast.unparse(node.targets[0]) == "__all__", ast.unparse(node)
        else:
            assert isinstance(node, ast.Expr | ast.ImportFrom), ast.unparse(node)


def test_scan_sees_a_threshold() -> None:
    assert literals("if egfr < 60 and x[2] > 0:\n    y = -1\n") == Counter({60: 1})
    assert literals("w = round(v, 4) if v > 0.5 else round(v)\n") == Counter({0.5: 1})
