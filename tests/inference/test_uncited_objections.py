"""An objection that cites no fact of this record (a stock one: "it was started for a reason")
weighs at most ``strength.uncited_max``, so it cannot hold an action that rests on a finding of
this patient at borderline; an objection that cites a record fact keeps its strength."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from inference.embedded import _argue
from inference.knowledge.analysis import Analysis, Point, Proposal
from inference.knowledge.criteria.loader import load, point_library
from inference.knowledge.parameters import param
from inference.protocol import CandidateOption, PanelMember
from service.cli import main as canoe
from service.core.model import Parameters

ROOT = Path(__file__).resolve().parents[2]
MED = "MedicationRequest/m1"
PATIENT = "Patient/p"


def _gp_argument(attack: Point) -> float:
    support = Point("pharmacist", "support", "A finding.", (MED,), (), 0.8)
    prop = Proposal("opt-x", "t", "medication", "d", (MED,), (), (support, attack))
    a = Analysis(80, "moderate", 4, (), (), (), (prop,), (), ())
    option = CandidateOption("opt-x", "t", "medication", "d", (MED,))
    (draft,) = _argue(a, PanelMember("gp", ""), (option,), (), PATIENT)
    return draft.tau


def test_an_objection_citing_no_fact_weighs_at_most_the_stated_ceiling() -> None:
    ceiling = param("strength.uncited_max")
    stock = Point("gp", "attack", "It was started for a reason.", (), (), 0.6)
    assert _gp_argument(stock) <= ceiling
    # the same objection citing a fact of the record keeps its strength (less the usual 0.1
    # for no retrieved evidence, which both get)
    cited = Point("gp", "attack", "It was started for a reason.", (MED,), (), 0.6)
    assert _gp_argument(cited) == pytest.approx(0.5)
    assert _gp_argument(cited) > ceiling


def test_a_weaker_fact_free_objection_keeps_its_own_strength() -> None:
    weak = Point("gp", "attack", "A remark.", (), (), 0.16)
    assert _gp_argument(weak) == pytest.approx(0.05)  # 0.16 - 0.1 - 0.05, floored at 0.05


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
    assert attacks[0]["tau"] <= param("strength.uncited_max")
    assert o["priority"] == "safety" and o["decision"] == "include"
    assert abs(o["score"] - 0.5) > Parameters().band and not o["borderline"]
