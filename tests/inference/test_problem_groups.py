"""The table of activities that treat one problem: what it names exists, and a bad edit stops."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.problem_groups import (
    PROBLEM_GROUPS_FILE,
    load_problem_groups,
    treats,
)

KNOWLEDGE = Path(__file__).resolve().parents[2] / "inference" / "knowledge"


def _proposable_ids() -> set[str]:
    """Every fixed activity id the criteria files and the rule functions' options state."""
    texts = [p.read_text() for p in (KNOWLEDGE / "criteria").glob("*.json")]
    found = {m for t in texts for m in re.findall(r'"(opt-[a-z0-9-]+)"', t)}
    rule_options = (KNOWLEDGE / "data" / "rule_points.yaml").read_text()
    return found | set(re.findall(r"^\s+id: (opt-[a-z0-9-]+)$", rule_options, re.M))


def test_every_grouped_activity_is_one_the_knowledge_proposes() -> None:
    missing = sorted(set(load_problem_groups()) - _proposable_ids())
    assert not missing


def test_blood_pressure_actions_treat_one_problem() -> None:
    assert treats("opt-review-bp") == treats("opt-start-acei-arb-diabetes-hypertension")
    assert treats("opt-review-bp") == "hypertension"
    assert treats("opt-start-statin") is None  # a statin is its own line


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("groups:\n  no-such-group: [opt-review-bp]\n", "not condition groups"),
        ("groups:\n  hypertension: [opt-review-bp]\n  fall: [opt-review-bp]\n", "in both"),
        ("groups:\n  hypertension: [review-bp]\n", "not an activity id"),
    ],
)
def test_a_bad_table_is_refused_by_name(tmp_path: Path, body: str, problem: str) -> None:
    bad = tmp_path / PROBLEM_GROUPS_FILE.name
    bad.write_text('version: "1"\n' + body)
    with pytest.raises(KnowledgeFileError, match=problem):
        load_problem_groups(bad)
