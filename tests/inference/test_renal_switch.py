"""A drug whose indication outlives it at low kidney function is switched, not merely stopped
: dabigatran below a creatinine clearance of 30 is contraindicated, but stopping it
leaves the stroke risk of atrial fibrillation untreated, so the action names what replaces it
(an anticoagulant this kidney function allows: ESC 2020 AF guideline; product labels). Drugs
without a replacement rule keep their plain stop.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from inference.knowledge import analyse, drugs
from inference.knowledge.analysis import Proposal
from inference.knowledge.drugs import RenalLimitDef

from .criteria_factory import Builder


def _plan(drug: str, creatinine: float) -> dict[str, Proposal]:
    b = Builder(age=83, sex="female")
    b.med(drug)
    b.lab("creatinine", creatinine)
    b.lab("weight", 55)
    return {p.id: p for p in analyse(b.build()).proposals}


def test_dabigatran_below_clearance_30_is_switched_to_a_suitable_anticoagulant() -> None:
    got = _plan("dabigatran", 1.4)  # Cockcroft-Gault about 26 mL/min
    act = got["opt-stop-dabigatran"]
    assert act.title == "Switch dabigatran to an anticoagulant this kidney function allows"
    assert act.category == "immediate-safety"
    assert "apixaban, rivaroxaban or edoxaban" in act.description
    assert not act.title.lower().startswith("stop")


def test_dabigatran_at_clearance_40_is_a_dose_review_not_a_switch() -> None:
    got = _plan("dabigatran", 1.0)  # about 37 mL/min
    assert "opt-stop-dabigatran" not in got
    # a review band asks for a review with the band's advice, not a dose change it cannot name
    assert got["opt-review-dabigatran-kidney"].title == "Review dabigatran at this kidney function"


def test_alendronate_below_its_limit_keeps_a_plain_stop() -> None:
    got = _plan("alendronate", 1.4)
    assert got["opt-stop-alendronate"].title == "Stop alendronate (kidney function)"


def test_switch_band_needs_what_replaces_the_drug() -> None:
    band = {
        "spec": "drug:dabigatran",
        "measure": "crcl",
        "below": 30,
        "below_op": "<",
        "advice": "a",
        "source": "smpc",
        "ref": "r",
    }
    with pytest.raises(ValidationError, match="instead"):
        RenalLimitDef(**band, action="switch")
    with pytest.raises(ValidationError, match="instead"):
        RenalLimitDef(**band, action="avoid", instead="warfarin")
    assert [r.action for r in drugs.renal_limit("dabigatran", crcl=20)] == ["switch"]
