"""An objection that cites no fact of this record (a stock one: "it was started for a reason")
is specific to no one and starts its reasoning from nothing stated: both those strength
dimensions are 0 for it, so it weighs less than the same objection citing a record fact and
cannot hold an action that rests on a finding of this patient at borderline."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from inference.knowledge.criteria.loader import load, point_library
from service.cli import main as canoe
from service.core.model import Parameters

ROOT = Path(__file__).resolve().parents[2]


def test_the_stock_objection_cites_no_fact_wherever_a_criterion_makes_it() -> None:
    assert point_library()["gp-started-for-a-reason"]["cites"] == ()
    made = [pt for c in load() for pt in c.points if "was started for a reason" in pt.text]
    assert made and all(pt.cites == () for pt in made)


def _plan(bundle: Path) -> dict[str, object]:
    out = io.StringIO()
    argv = ["plan", str(bundle), "--format", "json", "--created", "2026-11-30T09:00:00+00:00"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert canoe([*argv, "--no-progress"]) == 0
    doc: dict[str, object] = json.loads(out.getvalue())
    return doc


@pytest.mark.parametrize(
    ("bundle", "option_id"),
    [
        ("examples/vignettes/diabetes_hypo.json", "opt-reduce-insulin-low-hba1c"),
        ("examples/vignettes2/copd_propranolol.json", "opt-switch-propranolol-airways"),
    ],
)
def test_a_safety_option_whose_only_objection_is_stock_stays_included(
    bundle: str, option_id: str
) -> None:
    doc = _plan(ROOT / bundle)
    (o,) = [o for o in doc["options"] if o["id"] == option_id]  # type: ignore[attr-defined]
    attacks = [n for n in o["nodes"] if n["kind"] == "argument" and n["stance"] == "attack"]
    # the only objection is the stock one, citing only the person, not a finding
    assert [a["facts"] for a in attacks] == [[doc["patient_ref"]]]
    supports = [n for n in o["nodes"] if n["kind"] == "argument" and n["stance"] == "support"]
    assert attacks[0]["tau"] < min(n["tau"] for n in supports)
    assert o["priority"] == "safety" and o["decision"] == "include"
    assert abs(o["score"] - 0.5) > Parameters().band and not o["borderline"]
