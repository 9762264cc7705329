"""Drug levels against their range and overtreatment: the levels table is read and refused as
data, units convert, a level in range raises nothing, the likely cause is named, a target that
depends on the patient is not guessed, and the de-intensification criteria act on a low and not
on a normal record. Each case where a criterion acts has one where it must not."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.coverage import SCOPE
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.levels import LEVELS_FILE, level_entry, load_levels, reading
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import Observation

from .criteria_factory import AS_OF, Builder

DAY = timedelta(days=1)


def _fired(b: Builder) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for x in evaluate(CRITERIA, Facts(b.build())):
        out.setdefault(x.criterion.id, []).append(x.proposal.title)
    return out


def _level(b: Builder, drug: str, value: float, days_ago: int, unit: str = "") -> None:
    e = level_entry(drug)
    assert e is not None
    b.obs.append(
        Observation(
            f"Observation/{drug}-{days_ago}",
            e.loinc[0],
            f"{drug} level",
            value,
            unit or e.unit,
            AS_OF - days_ago * DAY,
        )
    )


# -- the table ------------------------------------------------------------------------------


def test_a_digoxin_level_in_nmol_per_litre_is_converted() -> None:
    e = level_entry("digoxin")
    assert e is not None
    r = reading(e, Observation("Observation/d", "10535-3", "", 2.56, "nmol/L", AS_OF))
    assert r is not None and r.value == pytest.approx(2.0, abs=0.01)


def test_a_level_in_an_unknown_unit_is_not_judged() -> None:
    b = Builder(age=50)
    b.med("digoxin")
    _level(b, "digoxin", 9.0, 3, unit="mg/dL")
    assert not {k for k in _fired(b) if k.startswith("level-above")}


def test_the_table_refuses_a_range_upside_down(tmp_path: Path) -> None:
    bad = tmp_path / "drug_levels.yaml"
    bad.write_text(
        LEVELS_FILE.read_text(encoding="utf-8").replace(
            "low: 0.4, high: 1.0", "low: 1.0, high: 0.4"
        )
    )
    with pytest.raises(KnowledgeFileError, match=r"levels\[lithium\].*not below"):
        load_levels(bad)


def test_the_table_refuses_an_unknown_interacting_drug(tmp_path: Path) -> None:
    bad = tmp_path / "drug_levels.yaml"
    bad.write_text(
        LEVELS_FILE.read_text(encoding="utf-8").replace('"drug:fluoxetine"', '"drug:fluoxetin"')
    )
    with pytest.raises(KnowledgeFileError, match="unknown drug spec 'drug:fluoxetin'"):
        load_levels(bad)


# -- fixed ranges ---------------------------------------------------------------------------


def test_a_lithium_level_in_range_raises_nothing() -> None:
    b = Builder(age=50)
    b.med("lithium")
    _level(b, "lithium", 0.7, 10)
    assert not {k for k in _fired(b) if k.startswith("level-")}


def test_a_high_phenytoin_level_names_the_fluoxetine_added_before_it() -> None:
    b = Builder(age=50)
    b.med("phenytoin", AS_OF - 3000 * DAY)
    b.med("fluoxetine", AS_OF - 50 * DAY)
    _level(b, "phenytoin", 14.0, 200)
    _level(b, "phenytoin", 31.0, 3)
    fired = _fired(b)
    assert "level-above-range" not in fired  # the cause-naming criterion speaks instead
    (title,) = fired["level-above-range-with-cause"]
    assert "Hold or reduce phenytoin and review fluoxetine" in title
    assert "31" in title and "10-20" in title


def test_a_high_level_with_no_cause_on_record_still_acts() -> None:
    b = Builder(age=50)
    b.med("digoxin")
    _level(b, "digoxin", 3.2, 2)
    fired = _fired(b)
    assert "level-above-range-with-cause" not in fired
    (title,) = fired["level-above-range"]
    assert title.startswith("Hold or reduce digoxin: level 3.2")


def test_a_low_level_is_a_review_not_a_safety_action() -> None:
    b = Builder(age=50)
    b.med("phenytoin")
    _level(b, "phenytoin", 4.0, 2)
    firings = [
        x for x in evaluate(CRITERIA, Facts(b.build())) if x.criterion.id == "level-below-range"
    ]
    assert len(firings) == 1 and firings[0].proposal.priority == "review"


def test_a_valproate_range_is_not_applied_without_epilepsy() -> None:
    """50-100 is the epilepsy range; mania is treated to another, so without epilepsy on record
    a level of 110 is not called high."""
    b = Builder(age=50)
    b.med("valproate")
    _level(b, "valproate", 110.0, 2)
    assert not {k for k in _fired(b) if k.startswith("level-above")}
    b.condition("epilepsy")
    assert "level-above-range" in _fired(b)


# -- targets that are the patient's own -----------------------------------------------------


def _tacrolimus(b: Builder) -> None:
    b.med("tacrolimus", AS_OF - 2000 * DAY)


def test_a_tacrolimus_level_that_rose_after_clarithromycin_asks_to_reduce_it() -> None:
    b = Builder(age=50)
    _tacrolimus(b)
    b.med("clarithromycin", AS_OF - 8 * DAY)
    _level(b, "tacrolimus", 7.4, 70)
    _level(b, "tacrolimus", 18.6, 3)
    firings = [
        x
        for x in evaluate(CRITERIA, Facts(b.build()))
        if x.criterion.id == "level-risen-after-inhibitor"
    ]
    assert len(firings) == 1
    p = firings[0].proposal
    assert p.priority == "safety"
    assert "rose from 7.4" in p.title and "clarithromycin" in p.title
    # no range is guessed: the texts ask for the patient's own target
    assert any("patient's own target" in pt.text for pt in p.points)


def test_a_stable_tacrolimus_level_raises_nothing() -> None:
    b = Builder(age=50)
    _tacrolimus(b)
    _level(b, "tacrolimus", 6.9, 100)
    _level(b, "tacrolimus", 6.4, 10)
    assert not {k for k in _fired(b) if k.startswith("level-")}


def test_a_level_that_rose_with_no_inhibitor_added_is_not_blamed_on_one() -> None:
    b = Builder(age=50)
    _tacrolimus(b)
    b.med("clarithromycin", AS_OF - 400 * DAY)  # taken long before both levels
    _level(b, "tacrolimus", 6.0, 100)
    _level(b, "tacrolimus", 9.0, 10)
    assert "level-risen-after-inhibitor" not in _fired(b)


def test_a_tacrolimus_level_that_fell_after_rifampicin_asks_for_a_check() -> None:
    b = Builder(age=50)
    _tacrolimus(b)
    b.med("rifampin", AS_OF - 30 * DAY)  # the US name is recognised
    _level(b, "tacrolimus", 6.8, 40)
    _level(b, "tacrolimus", 2.1, 5)
    (title,) = _fired(b)["level-fallen-after-inducer"]
    assert "rifampicin" in title and "2.1" in title


def test_voriconazole_added_since_the_last_level_asks_for_a_level_now() -> None:
    b = Builder(age=50)
    _tacrolimus(b)
    _level(b, "tacrolimus", 6.9, 40)
    b.med("voriconazole", AS_OF - 5 * DAY)
    (title,) = _fired(b)["level-unchecked-after-interacting-start"]
    assert title.startswith("Measure the tacrolimus level now")
    _level(b, "tacrolimus", 9.0, 1)  # measured since: nothing left to ask
    assert "level-unchecked-after-interacting-start" not in _fired(b)


def test_a_lithium_never_measured_is_left_to_its_own_monitoring_criterion() -> None:
    b = Builder(age=50)
    b.med("lithium")
    fired = _fired(b)
    assert "level-never-measured" not in fired and "monitor-lithium-level" in fired


# -- overtreatment --------------------------------------------------------------------------


def _hypo(b: Builder, days_ago: int = 40) -> None:
    b.encounter("hypoglycaemia", "EMER", AS_OF - days_ago * DAY)


def test_hypoglycaemia_on_gliclazide_and_insulin_cuts_the_sulfonylurea_first() -> None:
    b = Builder(age=60)
    b.condition("diabetes-type-2")
    b.med("gliclazide")
    b.med("insulin glargine")
    _hypo(b)
    fired = _fired(b)
    assert fired["deintensify-sulfonylurea-after-hypoglycaemia"][0].startswith(
        "Reduce or stop gliclazide"
    )
    assert "deintensify-insulin-after-hypoglycaemia" not in fired  # the sulfonylurea goes first
    assert "glucagon-after-hypoglycaemia-on-insulin" in fired
    assert "glucose-monitoring-after-hypoglycaemia" in fired


def test_no_de_intensification_without_a_low_or_a_drug_that_causes_one() -> None:
    b = Builder(age=60)
    b.condition("diabetes-type-2")
    b.med("metformin")
    _hypo(b)  # a low on metformin alone: not these criteria's drugs
    b.lab("hba1c", 7.1)
    fired = _fired(b)
    assert not {k for k in fired if "hypoglycaemia" in k or k.startswith("deintensify")}
    c = Builder(age=60)
    c.condition("diabetes-type-2")
    c.med("gliclazide")
    c.lab("hba1c", 7.1)  # normal HbA1c and no low on record
    assert not {k for k in _fired(c) if "hypoglycaemia" in k or k.startswith("deintensify")}


def test_glucagon_already_prescribed_is_not_asked_for() -> None:
    b = Builder(age=40)
    b.med("insulin lispro")
    b.med("glucagon")
    _hypo(b)
    assert "glucagon-after-hypoglycaemia-on-insulin" not in _fired(b)


def test_doxazosin_goes_first_with_postural_hypotension_on_four_drugs() -> None:
    b = Builder(age=64)
    for name in ("amlodipine", "ramipril", "hydrochlorothiazide", "doxazosin"):
        b.med(name)
    b.condition("orthostatic-hypotension")
    (title,) = _fired(b)["frail-hypotension-alpha-blocker"]
    assert title.startswith("Stop or reduce doxazosin first")
    b.meds = [m for m in b.meds if m.text not in ("ramipril", "hydrochlorothiazide")]
    assert "frail-hypotension-alpha-blocker" not in _fired(b)  # two drugs: not several


def test_an_anticoagulant_years_after_a_resolved_dvt_is_reviewed_but_not_with_af() -> None:
    b = Builder(age=54)
    b.med("rivaroxaban", AS_OF - 1270 * DAY)
    b.resolved("venous-thromboembolism")
    (title,) = _fired(b)["anticoagulant-after-vte-no-indication"]
    assert title.startswith("Review whether to stop rivaroxaban")
    b.condition("af")
    assert "anticoagulant-after-vte-no-indication" not in _fired(b)


def test_the_whole_plan_keeps_the_level_action_first() -> None:
    """End to end through the embedded analysis: the held dose ranks with the safety items and
    carries the interaction's own reduce action instead of a second activity."""
    b = Builder(age=70)
    b.med("digoxin", AS_OF - 2000 * DAY)
    b.med("amiodarone", AS_OF - 60 * DAY)
    _level(b, "digoxin", 1.0, 100)
    _level(b, "digoxin", 3.2, 3)
    a = analyse(b.build())
    digoxin = [p for p in a.proposals if "digoxin" in p.title.lower()]
    held = [p for p in digoxin if p.title.startswith("Hold or reduce digoxin")]
    assert len(held) == 1 and held[0].priority == "safety"
    assert not [p for p in digoxin if p.title.startswith("Reduce digoxin and check")]


def test_clozapine_is_not_asked_for_a_routine_level_but_is_after_ciprofloxacin() -> None:
    b = Builder(age=40)
    b.med("clozapine", AS_OF - 3000 * DAY)
    assert not {k for k in _fired(b) if k.startswith("level-")}
    b.med("ciprofloxacin", AS_OF - 5 * DAY)
    (title,) = _fired(b)["level-unchecked-after-interacting-start"]
    assert "clozapine" in title and "ciprofloxacin" in title


def test_a_pregnancy_keeps_the_anticoagulant_from_being_reviewed_for_stopping() -> None:
    """Pregnant after a clot, the anticoagulant is changed (warfarin to heparin), not stopped:
    a gestational age on record is enough to stand back."""
    b = Builder(age=33)
    b.med("warfarin", AS_OF - 700 * DAY)
    b.resolved("venous-thromboembolism")
    assert "anticoagulant-after-vte-no-indication" in _fired(b)
    b.obs.append(Observation("Observation/ga", "49051-6", "Gestational age", 7.0, "wk", AS_OF))
    assert "anticoagulant-after-vte-no-indication" not in _fired(b)


def test_every_population_a_criterion_stands_back_for_is_a_scope_marker() -> None:
    markers = {m.id for m in SCOPE.markers}
    used = {m for c in CRITERIA for t in (c.trigger, *c.exceptions) for m in t.outside}
    assert used and used <= markers


def test_the_insulin_action_after_a_low_absorbs_the_older_adult_review() -> None:
    b = Builder(age=78)
    b.med("insulin glargine")
    b.lab("hba1c", 6.2)
    _hypo(b, 10)
    titles = [p.title for p in analyse(b.build()).proposals if "insulin" in p.title.lower()]
    assert titles == [
        next(t for t in titles if t.startswith("Reduce the insulin dose after hypoglycaemia"))
    ]


def _tacrolimus_with_clarithromycin(level_display: str | None, unit: str = "ug/L") -> str:
    """The titles of the lines on tacrolimus, with clarithromycin started four days ago and a
    level named only by its text (no LOINC code) two days ago, or none."""
    b = Builder(age=60)
    b.med("tacrolimus", AS_OF - timedelta(days=400), dose_mg=4)
    b.med("clarithromycin", AS_OF - timedelta(days=4), dose_mg=1000)
    if level_display is not None:
        when = AS_OF - timedelta(days=2)
        b.obs.append(
            Observation("Observation/t", "", level_display, 12.5, unit, when, recognised=False)
        )
    return " / ".join(x.title for x in analyse(b.build()).proposals if "tacrolimus" in x.title)


def test_an_interaction_line_asking_for_a_level_states_the_one_on_record() -> None:
    got = _tacrolimus_with_clarithromycin("Tacrolimus trough level")
    assert f"(latest tacrolimus level 12.5 ug/L on {AS_OF - timedelta(days=2)})" in got
    assert "latest tacrolimus level" in _tacrolimus_with_clarithromycin("tacrolimus", "ng/mL")


def test_with_no_level_on_record_no_line_states_one() -> None:
    for other in (None, "Potassium"):
        got = _tacrolimus_with_clarithromycin(other)
        assert "latest tacrolimus level" not in got and "no level in the record" in got


def test_a_theophylline_level_in_micromol_per_litre_is_converted() -> None:
    e = level_entry("theophylline")
    assert e is not None
    # 111 umol/L x 180.16 g/mol = 20.0 mg/L
    r = reading(e, Observation("Observation/t", "4049-3", "", 111.0, "umol/L", AS_OF))
    assert r is not None and r.value == pytest.approx(20.0, abs=0.01)


def test_a_high_theophylline_level_on_ciprofloxacin_names_the_inhibitor() -> None:
    b = Builder(age=70)
    b.med("theophylline", AS_OF - 1000 * DAY)
    b.med("ciprofloxacin", AS_OF - 5 * DAY)
    _level(b, "theophylline", 27.0, 1)
    (title,) = _fired(b)["level-above-range-with-cause"]
    assert "Hold or reduce theophylline and review ciprofloxacin" in title
    assert "27" in title and "10-20" in title


def test_a_theophylline_level_in_range_on_ciprofloxacin_raises_no_level_action() -> None:
    b = Builder(age=70)
    b.med("theophylline", AS_OF - 1000 * DAY)
    b.med("ciprofloxacin", AS_OF - 5 * DAY)
    _level(b, "theophylline", 14.0, 1)
    assert not {k for k in _fired(b) if k.startswith("level-above")}


def test_an_aminophylline_order_is_read_as_theophylline_with_its_level() -> None:
    b = Builder(age=70)
    b.med("aminophylline", AS_OF - 1000 * DAY)
    b.med("fluvoxamine", AS_OF - 30 * DAY)
    _level(b, "theophylline", 24.0, 1)
    (title,) = _fired(b)["level-above-range-with-cause"]
    assert "fluvoxamine" in title and "24" in title
