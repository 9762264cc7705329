"""A QT-prolonging drug with potassium below the range (qt_electrolytes.json): the
potassium is corrected and magnesium checked, and a long QTc on the latest ECG (LOINC 8636-3) is
named (AHA 2020 drug-induced arrhythmias; ESC 2022 ventricular arrhythmias)."""

from __future__ import annotations

from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal

from .criteria_factory import Builder


def _plan(
    potassium: float, qtc: float | None = None, drug: str = "citalopram"
) -> dict[str, Proposal]:
    b = Builder(age=80, sex="female")
    b.med(drug)
    b.lab("potassium", potassium)
    if qtc is not None:
        b.lab("qtc", qtc)
    return {p.id: p for p in analyse(b.build()).proposals}


def test_low_potassium_with_a_qt_drug_and_long_qtc_names_both() -> None:
    act = _plan(3.4, qtc=490)["opt-correct-potassium-citalopram"]
    assert act.priority == "safety"
    assert "magnesium" in act.title and "3.4" in act.title
    assert "QTc 490" in act.description
    assert any("QTc is 490" in p.text and p.role == "cardiologist" for p in act.points)


def test_without_an_ecg_the_qtc_point_is_not_made() -> None:
    act = _plan(3.4)["opt-correct-potassium-citalopram"]
    assert "QTc not recorded" in act.description
    assert not any(p.role == "cardiologist" for p in act.points)


def test_normal_potassium_or_no_qt_drug_fires_nothing() -> None:
    assert "opt-correct-potassium-citalopram" not in _plan(4.1, qtc=490)
    assert not any(k.startswith("opt-correct-potassium") for k in _plan(3.4, drug="sertraline"))
