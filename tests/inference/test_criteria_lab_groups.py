"""One action per laboratory problem, not one per drug (``LabGroup`` in the
criteria schema): a low sodium or a high potassium with several drugs that can cause it is one
activity naming every drug, carrying each drug's own points; a single drug keeps its per-drug
review; a drug-drug interaction whose harm is the very result found joins the group, while a
stop action for one drug stays its own activity (STOPP/START v3 2023 B8 and section D; KDIGO
CKD 2024 practice point 3.6.5).
"""

from __future__ import annotations

from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal
from service.record.profile import PatientProfile

from .criteria_factory import Builder


def _proposals(profile: PatientProfile) -> dict[str, Proposal]:
    return {p.id: p for p in analyse(profile).proposals}


def _low_sodium(*drugs: str) -> dict[str, Proposal]:
    b = Builder(age=88, sex="female")
    for d in drugs:
        b.med(d)
    b.lab("sodium", 128)
    return _proposals(b.build())


def test_low_sodium_with_several_drugs_is_one_action_naming_each() -> None:
    got = _low_sodium("hydrochlorothiazide", "sertraline", "mirtazapine")
    group = got["opt-lab-sodium-low"]
    assert group.title.startswith("Low sodium (128")
    assert "recheck sodium" in group.title
    for name in ("hydrochlorothiazide", "sertraline", "mirtazapine"):
        assert name in group.title
        # no per-drug sodium review is left beside the group
        for other in (got.get(f"opt-review-{name}"), got.get(f"opt-hold-{name}")):
            assert other is None or not {
                "lab-siadh-hyponatraemia",
                "lab-thiazide-hyponatraemia",
            } & set(other.criteria)
        # each drug's own contribution stays an argument of the one action
        assert any(name in p.text for p in group.points)
    assert {"lab-siadh-hyponatraemia", "lab-thiazide-hyponatraemia"} <= set(group.criteria)
    assert "a thiazide: STOPP/START v3 advises stopping it" in group.description
    assert group.priority == "safety" and group.medication_ref is None
    assert "hydrochlorothiazide" not in group.query


def test_low_sodium_with_one_drug_keeps_the_per_drug_action() -> None:
    """One drug and a sodium below 130: STOPP/START v3 names the action, hold it."""
    got = _low_sodium("sertraline")
    assert "opt-lab-sodium-low" not in got
    hold = got["opt-hold-sertraline"]
    assert hold.title.startswith("Hold sertraline: latest sodium")
    assert hold.urgency_class == "urgent"


def test_normal_sodium_makes_no_group() -> None:
    b = Builder(age=88, sex="female")
    b.med("hydrochlorothiazide")
    b.med("sertraline")
    b.lab("sodium", 138)
    got = _proposals(b.build())
    assert "opt-lab-sodium-low" not in got


def _high_potassium(*drugs: str, potassium: float = 5.9) -> dict[str, Proposal]:
    b = Builder(age=75)
    for d in drugs:
        b.med(d)
    b.lab("potassium", potassium)
    return _proposals(b.build())


def test_high_potassium_joins_the_interaction_reviews_but_keeps_the_stop() -> None:
    got = _high_potassium("enalapril", "spironolactone", "potassium chloride")
    group = got["opt-lab-potassium-high"]
    assert "recheck potassium" in group.title
    assert "creatinine within days" in group.description
    # ACE inhibitor with spironolactone or with potassium: the harm is the result found
    assert "ddi-acei-potassium-sparing" in group.criteria
    assert "opt-review-spironolactone" not in got and "opt-review-potassium-chloride" not in got
    # spironolactone with a potassium supplement: stopping the supplement stays its own action
    assert "opt-stop-potassium-chloride" in got


def test_interaction_stays_apart_when_potassium_is_normal() -> None:
    got = _high_potassium("enalapril", "spironolactone", potassium=4.6)
    assert "opt-lab-potassium-high" not in got
    assert "ddi-acei-potassium-sparing" in got["opt-review-spironolactone"].criteria
