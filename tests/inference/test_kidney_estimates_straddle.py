"""A kidney band whose edge falls between the reported or computed eGFR and the Cockcroft-Gault
clearance: the band is read from the lower estimate, as a probable finding, and the line names
both values; estimates on one side of every edge change nothing."""

from __future__ import annotations

from inference.knowledge import drugs
from inference.knowledge.criteria.interpret import Firing, evaluate
from inference.knowledge.facts import Facts, fmt
from inference.knowledge.rules import CRITERIA

from .criteria_factory import Builder


def _renal(name: str, *, age: int, sex: str, creatinine: float, kg: float) -> list[Firing]:
    b = Builder(age=age, sex=sex)
    b.med(name)
    b.lab("creatinine", creatinine)
    b.lab("weight", kg)
    return [
        x
        for x in evaluate(CRITERIA, Facts(b.build()))
        if x.criterion.id == "renal-dose-table" and x.binding.names.get("a") == name
    ]


def _estimates(age: int, sex: str, creatinine: float, kg: float) -> tuple[float, float]:
    b = Builder(age=age, sex=sex)
    b.lab("creatinine", creatinine)
    b.lab("weight", kg)
    k = Facts(b.build()).kidney
    assert k is not None and k.computed is not None and k.crcl is not None
    return k.computed, k.crcl


def test_egfr_below_a_clearance_band_above_it_reads_the_band_as_probable() -> None:
    """Colchicine's band is written in clearance (below 30): an eGFR under 30 with a clearance
    over it applies the band from the eGFR, probable, both values said."""
    egfr, crcl = _estimates(70, "male", 2.3, 100)
    assert egfr < 30 <= crcl
    fired = _renal("colchicine", age=70, sex="male", creatinine=2.3, kg=100)
    assert fired
    band = fired[0].binding
    assert band.straddle and band.probable
    assert band.limit is not None and band.limit.measure == "crcl" and band.limit.below == 30
    text = fired[0].proposal.description
    assert f"{fmt(egfr)} (eGFR from creatinine)" in text
    assert f"{fmt(crcl)} (Cockcroft-Gault clearance)" in text


def test_clearance_below_an_egfr_band_above_it_reads_the_band_as_probable() -> None:
    """Metformin's stop band is written in eGFR (below 30): a clearance under 30 with an eGFR
    over it applies the stop from the clearance, probable."""
    egfr, crcl = _estimates(85, "female", 1.2, 45)
    assert crcl < 30 <= egfr
    fired = _renal("metformin", age=85, sex="female", creatinine=1.2, kg=45)
    assert fired and fired[0].binding.straddle and fired[0].binding.probable
    assert fired[0].binding.limit is not None and fired[0].binding.limit.action == "avoid"
    assert "Cockcroft-Gault clearance), with" in fired[0].proposal.description


def test_both_estimates_inside_the_band_is_no_straddle() -> None:
    egfr, crcl = _estimates(70, "male", 2.3, 60)
    assert egfr < 30 and crcl < 30
    fired = _renal("colchicine", age=70, sex="male", creatinine=2.3, kg=60)
    assert fired and not fired[0].binding.straddle and not fired[0].binding.probable


def test_both_estimates_above_the_band_changes_nothing() -> None:
    egfr, crcl = _estimates(70, "male", 1.7, 100)
    assert egfr >= 30 and crcl >= 30
    assert not _renal("colchicine", age=70, sex="male", creatinine=1.7, kg=100)
    assert not drugs.renal_straddle("colchicine", egfr=egfr, crcl=crcl)


def test_the_straddle_needs_both_estimates() -> None:
    assert not drugs.renal_straddle("colchicine", egfr=28)
    assert drugs.renal_straddle("colchicine", egfr=28, crcl=35)
    assert not drugs.renal_straddle("colchicine", egfr=35, crcl=28)  # read by its own measure
