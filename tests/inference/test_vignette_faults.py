"""Faults the unseen-patient vignettes exposed, fixed generally: kidney
estimates are compared like with like; a plan does not monitor a drug it stops; a narrow
therapeutic index drug with no recent level is a safety item; levodopa carries no
anticholinergic score. Each fix has a case where it acts and one where it must not."""

from __future__ import annotations

from datetime import timedelta

from inference.knowledge.analysis import Output, Proposal
from inference.knowledge.criteria.interpret import apply_criteria, evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA

from .criteria_factory import AS_OF, Builder


def _fired(b: Builder) -> set[str]:
    return {x.criterion.id for x in evaluate(CRITERIA, Facts(b.build()))}


# -- 1. kidney: a Cockcroft-Gault clearance below the eGFR is not a disagreement -------------


def _old_light_woman(creatinine: float, egfr: float) -> Builder:
    b = Builder(age=86, sex="female")
    b.lab("weight", 46.0)
    b.lab("egfr", egfr)
    b.lab("creatinine", creatinine)
    return b


def test_lower_clearance_in_an_old_light_woman_is_not_a_discordance() -> None:
    b = _old_light_woman(0.85, 64.0)  # CKD-EPI 2021 from 0.85 at 86: about 64
    b.med("dabigatran")
    f = Facts(b.build())
    k = f.kidney
    assert k is not None and k.crcl is not None and k.computed is not None
    assert k.crcl < 0.75 * k.computed  # (140-86) x 46 / (72 x 0.85) x 0.85: about 34 mL/min
    assert not k.discordant and k.settled
    fired = {x.criterion.id: x for x in evaluate(CRITERIA, f)}
    assert "kidney-estimates-disagree" not in fired
    assert "kidney-function-unsteady" not in fired
    # The clearance still doses the drug whose label is written in it (dabigatran 30-50).
    renal = fired["renal-dose-table"].binding
    assert renal.limit is not None and renal.limit.measure == "crcl"
    assert not renal.probable  # settled kidney function: a firm, not a provisional, dose change


def test_a_same_day_creatinine_that_contradicts_the_reported_egfr_is_still_discordant() -> None:
    b = _old_light_woman(2.6, 64.0)  # CKD-EPI from 2.6 at 86: about 17, reported 64
    f = Facts(b.build())
    assert f.kidney is not None and f.kidney.discordant and not f.kidney.settled
    assert "kidney-estimates-disagree" in _fired(b)


def test_estimates_of_different_days_are_a_change_not_a_discordance() -> None:
    # A creatinine a year after the eGFR implies a lower eGFR: that is a trend (the routine
    # checks and lab-defined CKD read it), not two estimates of one day that disagree.
    b = Builder(age=80, sex="male")
    b.lab("egfr", 70.0, AS_OF - timedelta(days=365))
    b.lab("creatinine", 1.4)
    f = Facts(b.build())
    assert f.kidney is not None and not f.kidney.discordant


# -- 2. monitoring that ends with the drug is not proposed when the plan stops it -------------


def test_no_glucose_monitoring_of_an_antipsychotic_the_plan_stops() -> None:
    b = Builder(age=78, sex="male")
    b.condition("parkinsonism")
    b.med("haloperidol")
    fired = _fired(b)
    assert "dd-typical-antipsychotic-parkinson-stop" in fired
    assert "monitor-glucose-on-antipsychotic" not in fired


def test_glucose_monitoring_stays_on_an_antipsychotic_that_continues() -> None:
    b = Builder(age=78, sex="male")
    b.condition("psychosis")
    b.med("haloperidol")
    assert "monitor-glucose-on-antipsychotic" in _fired(b)


def test_no_b12_monitoring_of_metformin_stopped_for_kidney_function() -> None:
    b = Builder(age=82, sex="female")
    b.condition("diabetes")
    b.med("metformin")
    b.lab("egfr", 22.0)  # below 30: the kidney band stops metformin
    fired = {x.criterion.id: x for x in evaluate(CRITERIA, Facts(b.build()))}
    assert fired["renal-dose-table"].proposal.id == "opt-stop-metformin"
    assert "monitor-b12-on-metformin" not in fired


def test_b12_monitoring_stays_on_metformin_that_continues() -> None:
    b = Builder(age=82, sex="female")
    b.condition("diabetes")
    b.med("metformin")
    b.lab("egfr", 70.0)
    assert "monitor-b12-on-metformin" in _fired(b)


def test_safety_monitoring_stays_while_a_stop_is_only_proposed() -> None:
    # Spironolactone below a clearance of 30 is to stop (Beers 2023 table 6), but until it is
    # out (or if the clinician declines) the potassium check still protects.
    b = Builder(age=82, sex="female")
    b.med("spironolactone")
    b.lab("egfr", 22.0)
    fired = {x.criterion.id: x for x in evaluate(CRITERIA, Facts(b.build()))}
    assert fired["renal-dose-table"].proposal.id == "opt-stop-spironolactone"
    assert "monitor-potassium" in fired


def test_a_rule_functions_stop_also_ends_the_drugs_harm_monitoring() -> None:
    b = Builder(age=60, sex="male")
    m = b.med("haloperidol")
    f = Facts(b.build())
    out = Output()
    out.proposals.append(
        Proposal(
            "opt-stop-haloperidol",
            "Stop haloperidol",
            "medication",
            "",
            (m.ref,),
            (),
            (),
            medication_ref=m.ref,
        )
    )
    apply_criteria(CRITERIA, f, out)
    assert "opt-monitor-hba1c" not in {p.id for p in out.proposals}
    kept = Output()
    apply_criteria(CRITERIA, f, kept)
    assert "opt-monitor-hba1c" in {p.id for p in kept.proposals}


# -- 3. an overdue lithium level is a safety check ------------------------------------------


def _lithium(level_days_ago: int) -> Builder:
    b = Builder(age=68, sex="female")
    b.condition("bipolar")
    b.med("lithium")
    b.med("lisinopril")
    b.lab("lithium_level", 0.7, AS_OF - timedelta(days=level_days_ago))
    return b


def test_an_overdue_lithium_level_ranks_as_safety() -> None:
    out = {x.criterion.id: x.proposal for x in evaluate(CRITERIA, Facts(_lithium(150).build()))}
    assert out["monitor-lithium-level"].priority == "safety"


def test_a_recent_lithium_level_is_not_asked_for() -> None:
    assert "monitor-lithium-level" not in _fired(_lithium(30))


# -- 4. levodopa carries no anticholinergic score ----------------------------------------------


def test_levodopa_adds_nothing_to_the_anticholinergic_burden() -> None:
    b = Builder(age=78, sex="male")
    b.med("levodopa")
    assert Facts(b.build()).meds[0].acb == 0


def test_a_truly_anticholinergic_drug_still_scores() -> None:
    b = Builder(age=78, sex="male")
    b.med("oxybutynin")
    assert Facts(b.build()).meds[0].acb == 3


def test_metoclopramide_in_parkinsons_is_one_safety_stop() -> None:
    b = Builder(age=78, sex="male")
    b.condition("parkinsonism")
    b.med("metoclopramide")
    out = Output()
    apply_criteria(CRITERIA, Facts(b.build()), out)
    ids = {p.id: p for p in out.proposals}
    assert ids["opt-stop-metoclopramide"].priority == "safety"
    assert "opt-review-metoclopramide" not in ids  # the stop settles the age-based review


def test_metoclopramide_without_parkinsons_is_only_reviewed() -> None:
    b = Builder(age=78, sex="male")
    b.med("metoclopramide")
    out = Output()
    apply_criteria(CRITERIA, Facts(b.build()), out)
    ids = {p.id for p in out.proposals}
    assert "opt-review-metoclopramide" in ids and "opt-stop-metoclopramide" not in ids


# -- the MRA omission the kidney fix uncovered ---------------------------------------------------


def _hfref(potassium: float) -> Builder:
    b = Builder(age=75, sex="male")
    b.condition("heart-failure")
    b.lab("lvef", 30.0)
    b.lab("potassium", potassium)
    b.lab("egfr", 58.0)
    return b


def test_hfref_without_an_mra_is_offered_one() -> None:
    assert "start-mra-hfref" in _fired(_hfref(4.4))


def test_no_mra_is_offered_with_high_potassium_or_one_already_taken() -> None:
    assert "start-mra-hfref" not in _fired(_hfref(5.4))
    b = _hfref(4.4)
    b.med("spironolactone")
    assert "start-mra-hfref" not in _fired(b)


def test_b12_stays_with_neuropathy_even_when_metformin_stops() -> None:
    # A deficiency from years of metformin outlasts the drug; with neuropathy or anaemia the
    # test still decides something (ADA Standards of Care 2024, section 9).
    b = Builder(age=70, sex="male")
    b.condition("diabetic-neuropathy")
    b.med("metformin")
    b.lab("egfr", 22.0)
    fired = {x.criterion.id: x for x in evaluate(CRITERIA, Facts(b.build()))}
    assert fired["renal-dose-table"].proposal.id == "opt-stop-metformin"
    assert "monitor-b12-on-metformin-neuropathy-anaemia" in fired
    assert "monitor-b12-on-metformin" not in fired  # one B12 action, not two


def test_b12_with_neuropathy_is_not_asked_on_b12_replacement() -> None:
    b = Builder(age=70, sex="male")
    b.condition("diabetic-neuropathy")
    b.med("metformin")
    b.med("cyanocobalamin")
    fired = _fired(b)
    assert "monitor-b12-on-metformin-neuropathy-anaemia" not in fired
    assert "monitor-b12-on-metformin" not in fired
