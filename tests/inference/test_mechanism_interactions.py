"""Interactions by mechanism: the pharmacokinetic table and the criteria that read it."""

from __future__ import annotations

from inference.knowledge.criteria import load
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.pk import interactions
from tests.inference.criteria_factory import Builder

CRITERIA = load()


def _fired(*meds: str) -> dict[str, str]:
    b = Builder()
    for m in meds:
        b.med(m)
    return {x.criterion.id: x.proposal.title for x in evaluate(CRITERIA, Facts(b.build()))}


def test_a_strong_inhibitor_with_a_narrow_index_substrate_no_pair_criterion_names() -> None:
    fired = _fired("clarithromycin", "tacrolimus")
    assert "tacrolimus" in fired["ddi-mechanism-inhibition"]
    assert "clarithromycin" in fired["ddi-mechanism-inhibition"]


def test_a_drug_that_spares_the_pathway_gives_no_mechanism_claim() -> None:
    assert "ddi-mechanism-inhibition" not in _fired("azithromycin", "tacrolimus")


def test_a_moderate_inhibitor_moves_a_narrow_index_drug_but_not_a_sensitive_one() -> None:
    assert interactions("fluconazole", "tacrolimus")
    assert not any(e.direction == "inhibition" for e in interactions("diltiazem", "sildenafil"))


def test_an_inducer_lowers_a_narrow_index_drug() -> None:
    fired = _fired("rifampicin", "tacrolimus")
    assert "raise the tacrolimus dose" in fired["ddi-mechanism-induction"]


def test_a_pair_criterion_wins_over_the_mechanism_for_the_same_two_drugs() -> None:
    fired = _fired("simvastatin", "ritonavir")
    assert "ddi-booster-simvastatin" in fired
    assert "ddi-mechanism-inhibition" not in fired
    assert "Reduce" not in fired["ddi-booster-simvastatin"]


def test_the_simvastatin_dose_ceiling_gives_way_to_the_contraindication() -> None:
    fired = _fired("simvastatin", "amlodipine", "ritonavir")
    assert "ceiling-simvastatin-amlodipine" not in fired
    assert "ceiling-simvastatin-amlodipine" in _fired("simvastatin", "amlodipine")


def test_prodrug_inhibition_names_the_loss_of_effect() -> None:
    (effect,) = interactions("paroxetine", "tamoxifen")
    assert effect.route == "activates" and "endoxifen" in effect.effect
