"""One action per drug and per blood test.

A burden that one medicine makes up alone is that medicine's own action; every drug that is
strongly anticholinergic on its own has such an action (the invariant the burden rule rests on).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.drugs import DRUGS, matches
from inference.knowledge.facts import Facts
from inference.knowledge.panels import load_panels
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import PatientProfile

from .criteria_factory import Builder


def _fired(profile: PatientProfile) -> set[str]:
    return {f.criterion.id for f in evaluate(CRITERIA, Facts(profile))}


def _ids(profile: PatientProfile) -> set[str]:
    return {p.id for p in analyse(profile).proposals}


# -- anticholinergic burden: two or more contributing medicines ----------------------------------


def test_one_strong_anticholinergic_is_its_own_action_not_a_burden_action() -> None:
    b = Builder(age=68)
    b.med("chlorpheniramine")
    fired = _fired(b.build())
    assert "age-strong-anticholinergic" in fired
    assert "burden-anticholinergic-score" not in fired
    assert "opt-reduce-anticholinergic-burden" not in _ids(b.build())


def test_two_contributing_medicines_make_a_burden_action() -> None:
    b = Builder(age=68)
    b.med("chlorpheniramine")
    b.med("diazepam")  # ACB 1: 3 + 1 from two medicines
    assert "burden-anticholinergic-score" in _fired(b.build())
    assert "opt-reduce-anticholinergic-burden" in _ids(b.build())


def test_every_acb_three_drug_has_its_own_strong_anticholinergic_action() -> None:
    """One medicine reaches a burden of three only with an ACB score of three; each such drug
    is strongly anticholinergic, so AGS Beers 2023 table 2 (or table 3 with dementia) proposes
    its own action and the burden rule may ask for two medicines."""
    lone = [
        d.name for d in DRUGS if d.acb >= 3 and not matches(d.name, "class:strong-anticholinergic")
    ]
    assert not lone


# -- one action per medicine: a switch settles the dose ceiling --------------------------------


def _by_id(profile: PatientProfile) -> dict[str, object]:
    return {p.id: p for p in analyse(profile).proposals}


def _statin_case(age: int, statin: str = "simvastatin", dose: float = 20) -> PatientProfile:
    b = Builder(age=age)
    b.med(statin, dose_mg=dose)
    b.med("verapamil", dose_mg=120)
    b.condition("chd")
    return b.build()


def test_simvastatin_over_the_verapamil_ceiling_and_below_intensity_is_one_switch() -> None:
    got = _by_id(_statin_case(66))
    assert "opt-reduce-simvastatin" not in got
    switch = got["opt-intensify-statin-simvastatin"]
    assert switch.title.startswith("Switch simvastatin to high-intensity atorvastatin")  # type: ignore[attr-defined]
    # Both reasons stay: the intensity criterion and the dose ceiling, with their points.
    assert {"statin-intensity-secondary-prevention", "ceiling-simvastatin-ratelimiting-ccb"} <= set(
        switch.criteria  # type: ignore[attr-defined]
    )
    assert "verapamil" in switch.description.lower()  # type: ignore[attr-defined]
    assert any("muscle damage" in pt.text for pt in switch.points)  # type: ignore[attr-defined]
    assert switch.priority == "safety"  # type: ignore[attr-defined]


def test_without_an_intensity_change_the_dose_ceiling_keeps_its_own_action() -> None:
    """At 80 the secondary-prevention intensity criterion does not apply (up to 75): the
    ceiling's own 'reduce or switch' action stands, titled as before."""
    got = _by_id(_statin_case(80))
    assert "opt-reduce-simvastatin" in got
    assert "opt-intensify-statin-simvastatin" not in got


def test_an_action_on_another_medicine_is_not_absorbed() -> None:
    """Only an action on the same medicine is folded in: on pravastatin the intensity action
    absorbs nothing, and no simvastatin action exists to absorb."""
    got = _by_id(_statin_case(66, "pravastatin", 40))
    switch = got["opt-intensify-statin-pravastatin"]
    assert switch.title.startswith("Offer a high-intensity statin")  # type: ignore[attr-defined]
    assert switch.criteria == ("statin-intensity-secondary-prevention",)  # type: ignore[attr-defined]


def test_verifying_the_dose_of_a_statin_being_switched_is_folded_in_silently() -> None:
    """Simvastatin (dose not stated, strength at the amlodipine ceiling) after CHD at 66: the
    switch settles the question, so no separate 'verify the dose' request and no renaming."""
    b = Builder(age=66)
    b.med("Simvastatin 20 MG Oral Tablet")
    b.med("amlodipine", dose_mg=5)
    b.condition("chd")
    got = _by_id(b.build())
    assert not any(pid.startswith("opt-verify-") for pid in got)
    switch = got["opt-intensify-statin-simvastatin"]
    assert switch.title.startswith("Offer a high-intensity statin")  # type: ignore[attr-defined]
    assert "ceiling-simvastatin-amlodipine" in switch.criteria  # type: ignore[attr-defined]


# -- one blood panel, one activity ---------------------------------------------------------------


def _ace_thiazide(*recent: str) -> PatientProfile:
    b = Builder(age=58)
    b.med("lisinopril", dose_mg=10)
    b.med("hydrochlorothiazide", dose_mg=25)
    for quantity in recent:  # measured on the record date: not due
        b.lab(quantity, {"egfr": 80, "potassium": 4.2, "sodium": 139}[quantity])
    return b.build()


def test_renal_tests_due_together_are_one_renal_profile_activity() -> None:
    got = _by_id(_ace_thiazide())
    assert not {"opt-monitor-egfr", "opt-monitor-potassium", "opt-monitor-sodium"} & set(got)
    panel = got["opt-monitor-renal-profile"]
    assert panel.title == (  # type: ignore[attr-defined]
        "Check eGFR (creatinine), potassium and sodium (one renal profile blood test)"
    )
    text = panel.description  # type: ignore[attr-defined]
    assert text.startswith("One renal profile blood sample")
    for reason in ("eGFR (creatinine) for", "Potassium for", "Sodium for"):
        assert reason in text
    assert text.count("(no result in the record)") == 3
    assert {"monitor-egfr", "monitor-potassium", "monitor-sodium"} <= set(panel.criteria)  # type: ignore[attr-defined]
    assert panel.category == "monitoring"  # type: ignore[attr-defined]


def test_one_renal_test_due_keeps_its_own_activity() -> None:
    got = _by_id(_ace_thiazide("egfr", "sodium"))
    assert "opt-monitor-potassium" in got and "opt-monitor-renal-profile" not in got
    two = _by_id(_ace_thiazide("egfr"))
    assert two["opt-monitor-renal-profile"].title.startswith("Check potassium and sodium")  # type: ignore[attr-defined]


def test_a_panel_naming_an_unknown_quantity_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "panels.yaml"
    bad.write_text(
        "version: x\npanels:\n  - id: p\n    title: 'Check {tests}'\n    intro: i\n"
        "    quantities: {potassium: potassium, urea_nitrogen: urea}\n    source: s\n"
    )
    with pytest.raises(KnowledgeFileError, match="unknown quantities"):
        load_panels(bad)
