"""No new numeric literal in the knowledge code: clinical constants belong in the data.

Scans inference/knowledge/*.py and criteria/interpret.py for int and float literals other than
0, 1 and -1, list indices and cache sizes. Those left today (thresholds, windows, weights, and
unit factors such as 365.25 days a year) are listed per file in knowledge_literals.json; a new
one fails, and one moved into the data must be struck from the list, so the list only shrinks.

One module is skipped by name: ``units.py``, the unit and calendar factors (1000 mg in a gram,
7 days in a week). They are facts of measurement, the same for every site, not clinical
judgements a site could set, so they are named constants there rather than parameters.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KNOWLEDGE = ROOT / "inference" / "knowledge"
LEFT = Path(__file__).with_name("knowledge_literals.json")
ALLOWED = {0, 1, -1}
UNITS = KNOWLEDGE / "units.py"


def _scanned() -> list[Path]:
    modules = [p for p in sorted(KNOWLEDGE.glob("*.py")) if p != UNITS]
    return [*modules, KNOWLEDGE / "criteria" / "interpret.py"]


def literals(source: str) -> Counter[float]:
    """The numeric literals of ``source`` outside the allow-list, indices and cache sizes."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            skip.update(id(n) for n in ast.walk(node.slice))
        elif isinstance(node, ast.keyword) and node.arg == "maxsize":
            skip.add(id(node.value))
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


def _left() -> dict[str, Counter[float]]:
    return {name: Counter(values) for name, values in json.loads(LEFT.read_text()).items()}


@pytest.mark.parametrize("path", _scanned(), ids=lambda p: str(p.relative_to(KNOWLEDGE)))
def test_no_new_numeric_literal(path: Path) -> None:
    name = str(path.relative_to(KNOWLEDGE))
    got = literals(path.read_text())
    known = _left().get(name, Counter())
    assert not got - known, f"{name}: new numeric literals (put them in the data): {got - known}"
    assert not known - got, f"{name}: literals gone from the code, strike them from {LEFT.name}"


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
