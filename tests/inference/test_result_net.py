"""The safety net for results: reference intervals, critical values, and the lines they make.

Edges come from the data (every bound of every interval and every critical value, in every unit
the file lists for the test), so a new test or unit is tested without a new case. The net's
lines are tested on records built here: a result that fires, the neighbour where a line of a
criterion already cites the result, in range, outside the window, a child, an unknown unit, and
the trend and critical wording in both unit systems.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

import inference
from inference.embedded import known_options
from inference.knowledge import analyse
from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.analysis import Output, Point, Proposal
from inference.knowledge.conditions import GROUPS_BY_KEY
from inference.knowledge.facts import Facts
from inference.knowledge.result_net import (
    RESULT_CONVERSIONS,
    RESULTS,
    RESULTS_FILE,
    LabTest,
    abnormal_results,
    critical_result,
    in_interval_unit,
    load_results,
    result_net,
)
from service.record.profile import (
    Code,
    Condition,
    Encounter,
    Medication,
    Observation,
    PatientProfile,
)
from service.record.vocabulary import RXNORM, SNOMED

AS_OF = date(2026, 11, 20)
NET = "opt-review-result-"
BY_ID = {t.id: t for t in RESULTS.tests}


def obs(i: str, loinc: str, value: float, unit: str, when: date = AS_OF) -> Observation:
    return Observation(f"Observation/{i}", loinc, loinc, value, unit, when)


def profile(
    *observations: Observation,
    sex: str = "male",
    born: date = date(1960, 1, 1),
    meds: tuple[Medication, ...] = (),
) -> PatientProfile:
    ordered = tuple(sorted(observations, key=lambda o: o.effective or date.min))
    return PatientProfile(
        "Patient/p1",
        sex,
        born,
        AS_OF,
        medications=meds,
        observations=ordered,
        readings=ordered,
    )


def net_lines(p: PatientProfile) -> dict[str, str]:
    return {x.id: x.title for x in analyse(p).proposals if x.id.startswith(NET)}


def _code(t: LabTest) -> str:
    return t.codes[0]


def _step(t: LabTest) -> float:
    """One unit of the precision the test is reported at in its own unit."""
    return float(Decimal(1).scaleb(-t.decimals))


def _in_unit(t: LabTest, value: float, unit: str) -> float:
    factor, offset = RESULT_CONVERSIONS[t.units[unit]]
    return (value - offset) / factor


def _sex(sex: str) -> str:
    return "male" if sex == "any" else sex


def _interval_edges() -> Iterator[tuple[str, str, float, bool]]:
    """(test id, unit|sex|condition group, value in the test's unit, outside?) at and either
    side of each bound of each adult interval, in each unit; an interval for a condition is put
    on a record with the condition's first code (the first interval for it applies)."""
    for t in RESULTS.tests:
        for i in t.intervals:
            if i.taking or not i.judged:
                continue
            group = i.conditions[0] if i.conditions else ""
            for unit in t.units:
                for bound in (i.low, i.high):
                    if bound is None:
                        continue
                    step = _step(t)
                    for v in (round(bound + d, t.decimals) for d in (-step, 0.0, step)):
                        low = i.low is not None and v < i.low
                        high = i.high is not None and v > i.high
                        yield t.id, f"{unit}|{i.sex}|{group}", v, low or high


@pytest.mark.parametrize(("test", "unit_sex", "value", "outside"), list(_interval_edges()))
def test_an_interval_judges_exactly_at_its_edges_in_every_unit(
    test: str, unit_sex: str, value: float, outside: bool
) -> None:
    t = BY_ID[test]
    unit, sex, group = unit_sex.split("|")
    result = _in_unit(t, value, unit)
    # a test known only by name (a questionnaire with no LOINC code) is sent by its name
    sent = obs("x", _code(t), result, unit) if t.codes else named_obs("x", t.name, result, unit)
    p = profile(sent, sex=_sex(sex))
    if group:
        code = GROUPS_BY_KEY[group].snomed[0]
        p = replace(
            p,
            problems=(
                Condition(
                    "Condition/g", group, (Code(SNOMED, code, group),), "active", "confirmed", AS_OF
                ),
            ),
        )
    found = [a.test.id for a in abnormal_results(Facts(p))]
    assert (test in found) == outside


def _critical_edges() -> Iterator[tuple[str, str, int, float, bool]]:
    for t in RESULTS.tests:
        for n, c in enumerate(t.critical):
            step = _step(t)
            for unit in t.units:
                for v in (round(c.value + d, t.decimals) for d in (-step, 0.0, step)):
                    hit = {">=": v >= c.value, ">": v > c.value, "<=": v <= c.value}
                    yield t.id, unit, n, v, hit.get(c.op, v < c.value)


@pytest.mark.parametrize(("test", "unit", "n", "value", "hit"), list(_critical_edges()))
def test_a_critical_value_is_reached_exactly_as_its_operator_says(
    test: str, unit: str, n: int, value: float, hit: bool
) -> None:
    t = BY_ID[test]
    o = obs("x", _code(t), _in_unit(t, value, unit), unit)
    got = critical_result(profile(o), o)
    expected = t.critical[n]
    if hit:
        assert got is not None
        # an earlier critical value of the same test may be the one reached first
        assert got[1] in {c.first_step for c in t.critical}
        assert got[1] == expected.first_step or t.critical.index(expected) > 0
    else:
        assert got is None or got[1] != expected.first_step


def test_every_test_of_the_file_has_both_units_where_both_are_used() -> None:
    """The SI and conventional units of the tests that have both are listed (the edges above
    then test each in both)."""
    both = {
        "creatinine": ("umol/l", "mg/dl"),
        "urea": ("mmol/l", "mg/dl"),
        "glucose": ("mmol/l", "mg/dl"),
        "hba1c": ("mmol/mol", "%"),
        "bilirubin": ("umol/l", "mg/dl"),
        "albumin": ("g/l", "g/dl"),
        "calcium": ("mmol/l", "mg/dl"),
        "magnesium": ("mmol/l", "mg/dl"),
        "phosphate": ("mmol/l", "mg/dl"),
        "free-t4": ("pmol/l", "ng/dl"),
        "haemoglobin": ("g/l", "g/dl"),
        "crp": ("mg/l", "mg/dl"),
        "vitamin-b12": ("ng/l", "pmol/l"),
        "folate": ("ug/l", "nmol/l"),
        "vitamin-d": ("nmol/l", "ng/ml"),
        "acr": ("mg/mmol", "mg/g"),
    }
    for test, units in both.items():
        assert set(units) <= set(BY_ID[test].units), test


@pytest.mark.parametrize(
    ("loinc", "si", "si_unit", "conventional", "conventional_unit"),
    [
        ("2345-7", 5.0, "mmol/L", 90.08, "mg/dL"),
        ("2160-0", 88.4, "umol/L", 1.0, "mg/dL"),
        ("22664-7", 5.0, "mmol/L", 14.005, "mg/dL"),
        ("4548-4", 48.0, "mmol/mol", 6.542, "%"),
        ("17861-6", 2.5, "mmol/L", 10.02, "mg/dL"),
        ("718-7", 135.0, "g/L", 13.5, "g/dL"),
        ("1975-2", 17.1, "umol/L", 1.0, "mg/dL"),
        ("3024-7", 12.87, "pmol/L", 1.0, "ng/dL"),
        ("2132-9", 200.0, "ng/L", 147.6, "pmol/L"),
        ("2284-8", 3.0, "ug/L", 6.8, "nmol/L"),
        ("62292-8", 25.0, "nmol/L", 10.0, "ng/mL"),
        ("9318-7", 3.0, "mg/mmol", 26.52, "mg/g"),
    ],
)
def test_a_conventional_result_converts_to_the_si_value(
    loinc: str, si: float, si_unit: str, conventional: float, conventional_unit: str
) -> None:
    t = next(x for x in RESULTS.tests if loinc in x.codes)
    assert in_interval_unit(t, si, si_unit) == pytest.approx(si)
    # rounded to the precision the test is reported at in its own unit
    got = in_interval_unit(t, conventional, conventional_unit)
    assert got == pytest.approx(si, abs=_step(t) / 2 + 1e-9)


# ------------------------------------------------------------------------- the net's lines


def test_an_unexplained_high_potassium_is_a_line_with_its_range_date_and_trend() -> None:
    p = profile(
        obs("k0", "6298-4", 4.9, "mmol/L", AS_OF - timedelta(days=90)),
        obs("k1", "6298-4", 5.8, "mmol/L"),
    )
    lines = net_lines(p)
    assert lines[f"{NET}potassium"] == (
        "Review Potassium 5.8 mmol/L (3.5-5.3 mmol/L) on 2026-11-20, up from 4.9 on "
        "2026-08-22: not addressed by any check"
    )
    assert known_options(p)[f"{NET}potassium"].timeframe == "7d"


def test_a_result_a_criterion_already_cites_is_not_repeated() -> None:
    """Low potassium with citalopram: the criterion's line cites the potassium, so the net says
    nothing of it (the same result without citalopram is a net line)."""
    citalopram = Medication(
        "MedicationRequest/m1",
        "citalopram 20 MG Oral Tablet",
        (Code(RXNORM, "200371", "citalopram 20 MG Oral Tablet"),),
        "active",
        "order",
        date(2020, 1, 1),
    )
    low = obs("k1", "6298-4", 3.2, "mmol/L")
    alone = analyse(profile(low))
    assert f"{NET}potassium" in {x.id for x in alone.proposals}
    with_drug = analyse(profile(low, meds=(citalopram,)))
    ids = {x.id for x in with_drug.proposals}
    assert f"{NET}potassium" not in ids
    assert any(low.ref in x.refs for x in with_drug.proposals)


def test_a_line_citing_the_test_explains_it_in_the_net_itself() -> None:
    k = obs("k1", "6298-4", 5.8, "mmol/L")
    p = profile(k)
    o = Output()
    point = Point("gp", "support", "cites the potassium", (k.ref,), ("EB-RESULTS-001",), 0.5)
    o.proposals.append(Proposal("opt-other", "Other", "monitoring", "", (k.ref,), (), (point,)))
    result_net(Facts(p), o)
    assert [x.id for x in o.proposals] == ["opt-other"]
    bare = Output()
    result_net(Facts(p), bare)
    assert [x.id for x in bare.proposals] == [f"{NET}potassium"]


def test_in_range_old_child_and_unknown_unit_results_make_no_line() -> None:
    assert net_lines(profile(obs("k", "6298-4", 4.5, "mmol/L"))) == {}
    old = AS_OF - timedelta(days=366)
    assert net_lines(profile(obs("k", "6298-4", 5.8, "mmol/L", old))) == {}
    inside = AS_OF - timedelta(days=365)
    assert f"{NET}potassium" in net_lines(profile(obs("k", "6298-4", 5.8, "mmol/L", inside)))
    child = profile(obs("k", "6298-4", 5.8, "mmol/L"), born=date(2015, 1, 1))
    assert net_lines(child) == {}
    assert net_lines(profile(obs("g", "2345-7", 400.0, "furlongs"))) == {}


def test_only_the_latest_result_counts() -> None:
    p = profile(
        obs("k0", "6298-4", 5.9, "mmol/L", AS_OF - timedelta(days=30)),
        obs("k1", "6298-4", 4.4, "mmol/L"),
    )
    assert net_lines(p) == {}


def test_the_interval_follows_sex() -> None:
    hb = obs("h", "718-7", 12.5, "g/dL")
    assert f"{NET}haemoglobin" in net_lines(profile(hb, sex="male"))
    assert f"{NET}haemoglobin" not in net_lines(profile(hb, sex="female"))
    assert net_lines(profile(hb, sex="unknown")) == {}


def test_creatinine_is_spoken_for_by_an_abnormal_egfr() -> None:
    cr = obs("c", "2160-0", 1.6, "mg/dL")
    egfr = obs("e", "33914-3", 45.0, "mL/min/{1.73_m2}")
    both = net_lines(profile(cr, egfr))
    assert f"{NET}egfr" in both and f"{NET}creatinine" not in both
    alone = net_lines(profile(cr))
    assert alone[f"{NET}creatinine"].startswith("Review Creatinine 1.6 mg/dL (0.7-1.2 mg/dL)")


def test_an_inr_on_an_anticoagulant_is_left_to_its_target() -> None:
    warfarin = Medication(
        "MedicationRequest/w",
        "warfarin sodium 5 MG Oral Tablet",
        (Code(RXNORM, "855332", "warfarin sodium 5 MG Oral Tablet"),),
        "active",
        "order",
        date(2020, 1, 1),
    )
    inr = obs("i", "6301-6", 2.6, "{INR}")
    assert f"{NET}inr" in net_lines(profile(inr))
    assert f"{NET}inr" not in net_lines(profile(inr, meds=(warfarin,)))


@pytest.mark.parametrize(("value", "unit"), [(2.4, "mmol/L"), (43.0, "mg/dL")])
def test_a_critical_glucose_is_today_and_leads_with_its_first_step(value: float, unit: str) -> None:
    p = profile(obs("g", "2345-7", value, unit))
    option = known_options(p)[f"{NET}glucose"]
    assert option.timeframe == "now"
    from inference.embedded import _action

    prop = analyse(p).proposal(f"{NET}glucose")
    assert prop is not None
    title = _action(prop, p)[1]
    assert title.startswith("Treat the low glucose now and recheck today")
    assert f"Review Glucose {value:g} {unit}" in title


@pytest.mark.parametrize(("value", "unit"), [(3.0, "mmol/L"), (54.0, "mg/dL")])
def test_a_low_glucose_above_the_critical_value_is_this_week(value: float, unit: str) -> None:
    """Short of a critical value, an acute test's result outside its interval is reviewed
    this week (timeframes.yaml, rcpath-non-critical)."""
    p = profile(obs("g", "2345-7", value, unit))
    assert known_options(p)[f"{NET}glucose"].timeframe == "7d"


def test_a_slow_tests_result_outside_its_interval_is_reviewed_in_routine_time() -> None:
    p = profile(obs("a", "1742-6", 95.0, "U/L"))  # ALT: no harm within days on its own
    assert known_options(p)[f"{NET}alt"].timeframe == "4w"


def test_hba1c_in_percent_and_mmol_mol_both_judged_against_diabetes_or_not() -> None:
    assert f"{NET}hba1c" in net_lines(profile(obs("a", "4548-4", 6.0, "%")))
    assert f"{NET}hba1c" not in net_lines(profile(obs("a", "4548-4", 5.9, "%")))
    assert f"{NET}hba1c" in net_lines(profile(obs("a", "4548-4", 42.0, "mmol/mol")))
    assert f"{NET}hba1c" not in net_lines(profile(obs("a", "4548-4", 41.0, "mmol/mol")))


# ------------------------------------------------------------------------- the file itself


def test_the_shipped_file_loads_and_every_conversion_is_known() -> None:
    data = load_results()
    assert {c for t in data.tests for c in t.units.values()} <= set(RESULT_CONVERSIONS)


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('units: {"mmol/l": same, "meq/l": same}', 'units: {"mmol/l": nope}', "conversion"),
        ("source: harmony-2011}", "source: nobody}", "unknown source"),
        ("group: sodium", "group: natrium", "no LOINC group"),
        ("low: 133, high: 146", "low: 146, high: 133", "not below"),
        ("covered_by: [egfr]", "covered_by: [kidney]", "unknown test"),
        ('"hydroxybutyrate"]', '"hydroxy(butyrate"]', "no regular expression"),
    ],
)
def test_a_bad_file_is_refused_by_name(tmp_path: Path, old: str, new: str, problem: str) -> None:
    text = RESULTS_FILE.read_text()
    assert old in text
    bad = tmp_path / "reference_intervals.yaml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(KnowledgeFileError, match=problem):
        load_results(bad)


def test_the_line_cites_evidence_that_exists() -> None:
    evidence = json.loads((Path(inference.__file__).parent / "evidence_base.json").read_text())
    ids = {d["id"] for d in evidence["documents"]}
    assert set(RESULTS.line.point.evidence) <= ids


@pytest.mark.parametrize(
    ("born", "judged"), [(date(2008, 11, 20), True), (date(2008, 11, 21), False)]
)
def test_the_adult_age_is_an_edge(born: date, judged: bool) -> None:
    """18 on the result's day: judged; a day short of it: not (the intervals are adult ones)."""
    assert RESULTS.adult_from_years == 18
    p = profile(obs("k", "6298-4", 5.8, "mmol/L"), born=born)
    assert (f"{NET}potassium" in net_lines(p)) == judged


def _with(p: PatientProfile, o: Output) -> list[str]:
    result_net(Facts(p), o)
    return [x.id for x in o.proposals if x.id.startswith(NET)]


def _citing(*refs: str) -> Output:
    o = Output()
    o.proposals.append(Proposal("opt-other", "Other", "monitoring", "", refs, (), ()))
    return o


def test_a_line_on_the_problem_the_result_shows_addresses_it() -> None:
    """A low glucose with a line citing a hypoglycaemia condition: no net line; a line citing
    another condition leaves it."""
    hypo = Condition(
        "Condition/h",
        "Hypoglycemia (disorder)",
        (Code(SNOMED, "302866003", "Hypoglycemia (disorder)"),),
        "active",
        "confirmed",
        AS_OF,
    )
    other = Condition(
        "Condition/o",
        "Osteoarthritis of knee",
        (Code(SNOMED, "239873007", "Osteoarthritis of knee"),),
        "active",
        "confirmed",
        AS_OF,
    )
    glucose = obs("g", "2345-7", 3.1, "mmol/L")
    p = replace(profile(glucose), problems=(hypo, other))
    assert _with(p, _citing(hypo.ref)) == []
    assert _with(p, _citing(other.ref)) == [f"{NET}glucose"]


def test_a_line_on_the_contact_the_result_was_taken_in_addresses_it() -> None:
    stay = Encounter("Encounter/e", "Emergency visit", AS_OF - timedelta(days=1), AS_OF)
    earlier = Encounter("Encounter/x", "Check-up", AS_OF - timedelta(days=40))
    p = replace(profile(obs("g", "2345-7", 3.1, "mmol/L")), encounters=(stay, earlier))
    assert _with(p, _citing(stay.ref)) == []
    assert _with(p, _citing(earlier.ref)) == [f"{NET}glucose"]


@pytest.mark.parametrize(("days", "timeframe"), [(7, "now"), (8, "7d")])
def test_a_critical_value_is_for_today_only_while_recent(days: int, timeframe: str) -> None:
    assert RESULTS.window.critical_days == 7
    p = profile(obs("g", "2345-7", 2.2, "mmol/L", AS_OF - timedelta(days=days)))
    assert known_options(p)[f"{NET}glucose"].timeframe == timeframe


def test_the_trend_is_said_in_the_latest_result_unit() -> None:
    p = profile(
        obs("c0", "2160-0", 97.0, "umol/L", AS_OF - timedelta(days=60)),
        obs("c1", "2160-0", 1.6, "mg/dL"),
    )
    title = net_lines(p)[f"{NET}creatinine"]
    assert "1.6 mg/dL (0.7-1.2 mg/dL)" in title
    assert ", up from 1.1 on 2026-09-21:" in title


def test_a_converted_bound_is_shown_at_the_results_precision_never_hiding_it() -> None:
    """The interval is shown to the places the result is stated in, and to more where fewer
    would make the result read as inside it (1.2 against an upper bound of 1.18)."""
    at_one = net_lines(profile(obs("c", "2160-0", 1.6, "mg/dL")))[f"{NET}creatinine"]
    assert "(0.7-1.2 mg/dL)" in at_one
    close = net_lines(profile(obs("c", "2160-0", 1.2, "mg/dL")))[f"{NET}creatinine"]
    assert "1.2 mg/dL (0.67-1.18 mg/dL)" in close


def test_a_bound_in_the_files_own_unit_is_shown_as_stated_whatever_the_results_precision() -> None:
    """Potassium 3 (no decimal) is shown against 3.5-5.3, not the interval rounded to its
    precision (4-5), which would misstate the interval."""
    line = net_lines(profile(obs("k", "6298-4", 3.0, "mmol/L")))[f"{NET}potassium"]
    assert "(3.5-5.3 mmol/L)" in line


# ------------------------------------------------------------------------- results known by name


def named_obs(i: str, display: str, value: float, unit: str, when: date = AS_OF) -> Observation:
    """A result with no LOINC coding: the record names it only in words."""
    return Observation(f"Observation/{i}", "", display, value, unit, when, recognised=False)


def uncoded(*observations: Observation, **kw: object) -> PatientProfile:
    """A record whose uncoded results are observations only (ingest keeps no reading of one)."""
    p = profile(**kw)  # type: ignore[arg-type]
    return replace(p, observations=observations)


def test_an_uncoded_result_is_read_by_its_name() -> None:
    ketones = named_obs("b", "Blood ketones (beta-hydroxybutyrate)", 3.8, "mmol/L")
    line = net_lines(uncoded(ketones))[f"{NET}ketones"]
    assert line.startswith("Review Blood ketones 3.8 mmol/L (up to 0.5 mmol/L) on 2026-11-20")
    # a urine ketone is another test, and a normal blood ketone makes no line
    assert net_lines(uncoded(named_obs("u", "Urine ketones", 3.8, "mmol/L"))) == {}
    assert net_lines(uncoded(named_obs("b", "Capillary ketone", 0.5, "mmol/L"))) == {}
    assert f"{NET}ketones" in net_lines(uncoded(named_obs("b", "Capillary ketone", 0.6, "mmol/L")))


def test_a_line_citing_an_uncoded_result_explains_it() -> None:
    ketones = named_obs("b", "Blood ketones", 3.8, "mmol/L")
    p = uncoded(ketones)
    assert _with(p, _citing(ketones.ref)) == []
    assert _with(p, _citing("Observation/other")) == [f"{NET}ketones"]


def test_a_coded_result_is_not_read_by_its_name() -> None:
    """A result with a usable LOINC code of another test is that test's, whatever its name."""
    o = Observation("Observation/x", "2345-7", "Blood ketones", 3.8, "mmol/L", AS_OF)
    assert f"{NET}ketones" not in net_lines(profile(o))


def test_of_two_results_of_one_day_the_one_outside_its_interval_is_said() -> None:
    """The two eyes measured the same day: the raised one is the line, whichever comes first."""
    right = named_obs("r", "Intraocular pressure, right eye", 12.0, "mm[Hg]")
    left = named_obs("l", "Intraocular pressure, left eye", 27.0, "mm[Hg]")
    for pair in ((right, left), (left, right)):
        line = net_lines(uncoded(*pair))[f"{NET}intraocular-pressure"]
        assert line.startswith("Review Intra-ocular pressure 27 mmHg (up to 21 mmHg)")
    normal = named_obs("l", "Intraocular pressure, left eye", 21.0, "mm[Hg]")
    assert net_lines(uncoded(right, normal)) == {}


def test_oxygen_saturation_is_judged_against_the_lower_target_with_copd() -> None:
    copd = Condition(
        "Condition/c",
        "Chronic obstructive lung disease (disorder)",
        (Code(SNOMED, GROUPS_BY_KEY["copd"].snomed[0], "COPD"),),
        "active",
        "confirmed",
        AS_OF,
    )
    spo2 = obs("s", "59408-5", 90.0, "%")
    assert f"{NET}oxygen-saturation" in net_lines(profile(spo2))
    assert f"{NET}oxygen-saturation" not in net_lines(replace(profile(spo2), problems=(copd,)))
    low = obs("s", "59408-5", 87.0, "%")
    with_copd = net_lines(replace(profile(low), problems=(copd,)))
    assert with_copd[f"{NET}oxygen-saturation"].startswith(
        "Review Oxygen saturation 87 % (88 % or more)"
    )
    assert (
        known_options(replace(profile(low), problems=(copd,)))[f"{NET}oxygen-saturation"].timeframe
        == "7d"
    )


@pytest.mark.parametrize(
    ("rate", "fires"), [(49.0, True), (50.0, False), (100.0, False), (101.0, True)]
)
def test_a_resting_heart_rate_outside_50_to_100_is_a_line(rate: float, fires: bool) -> None:
    assert (f"{NET}heart-rate" in net_lines(profile(obs("h", "8867-4", rate, "/min")))) == fires


# ------------------------------------------------------------------ against the patient's best


def _pef(
    i: str, value: float, when: date = AS_OF, name: str = "Peak expiratory flow"
) -> Observation:
    return named_obs(i, name, value, "L/min", when)


@pytest.mark.parametrize(
    ("now", "timeframe"), [(419.0, "now"), (420.0, "7d"), (447.0, "7d"), (448.0, None)]
)
def test_a_peak_flow_under_a_fraction_of_the_best_is_a_line_timed_by_its_band(
    now: float, timeframe: str | None
) -> None:
    """Best 560: under 75% (420) is today, under 80% (448) this week, 80% or more nothing."""
    best = _pef("b", 560.0, AS_OF - timedelta(days=700), "Peak expiratory flow, best")
    p = uncoded(_pef("n", now), best)
    got = known_options(p).get("opt-review-best-peak-flow")
    assert (got.timeframe if got is not None else None) == timeframe


def test_the_peak_flow_line_says_the_percentage_and_the_best_as_recorded() -> None:
    best = _pef("b", 560.0, date(2024, 1, 1), "Peak expiratory flow, best")
    p = uncoded(_pef("n", 310.0), best)
    title = {x.id: x.title for x in analyse(p).proposals}["opt-review-best-peak-flow"]
    assert title == (
        "Review Peak flow 310 L/min (55% of the value recorded as 'Peak expiratory flow, best', "
        "560 L/min on 2024-01-01) on 2026-11-20: not addressed by any check"
    )


def test_an_earlier_result_is_the_best_when_none_is_named() -> None:
    p = profile(
        obs("a", "33452-4", 500.0, "L/min", AS_OF - timedelta(days=60)),
        obs("b", "33452-4", 300.0, "L/min"),
    )
    title = {x.id: x.title for x in analyse(p).proposals}["opt-review-best-peak-flow"]
    assert "(60% of the best earlier result, 500 L/min on 2026-09-21)" in title


def test_a_peak_flow_with_no_best_or_a_line_citing_it_makes_no_best_line() -> None:
    now = _pef("n", 300.0)
    assert "opt-review-best-peak-flow" not in {x.id for x in analyse(uncoded(now)).proposals}
    best = _pef("b", 560.0, AS_OF - timedelta(days=30), "Peak flow (best)")
    o = _citing(now.ref)
    result_net(Facts(uncoded(now, best)), o)
    assert [x.id for x in o.proposals] == ["opt-other"]
    bare = Output()
    result_net(Facts(uncoded(now, best)), bare)
    assert [x.id for x in bare.proposals] == ["opt-review-best-peak-flow"]


# ------------------------------------------------------------------ results tied to medicines


def _med(name: str, rxcui: str) -> Medication:
    return Medication(
        f"MedicationRequest/{name}",
        name,
        (Code(RXNORM, rxcui, name),),
        "active",
        "order",
        date(2020, 1, 1),
    )


LEFLUNOMIDE = _med("leflunomide 20 MG Oral Tablet", "27169")
NITROFURANTOIN = _med("nitrofurantoin 100 MG Oral Capsule", "7454")


@pytest.mark.parametrize(("alt", "timeframe"), [(120.0, "4w"), (121.0, "72h")])
def test_an_alt_on_a_medicine_that_harms_the_liver_names_it_and_is_sooner_above_three_times(
    alt: float, timeframe: str
) -> None:
    """Nitrofurantoin's label warns of liver injury: the line names it and cites it; above three
    times the upper limit (40) the line is within 72 hours, at three times routine. (On a DMARD
    monitored under BSR 2017 an ALT over 100 withholds it instead: test_action_thresholds.)"""
    p = profile(obs("a", "1742-6", alt, "U/L"), meds=(NITROFURANTOIN,))
    line = net_lines(p)[f"{NET}alt"]
    assert line.endswith(", on nitrofurantoin: not addressed by any check")
    assert NITROFURANTOIN.ref in analyse(p).proposal(f"{NET}alt").refs  # type: ignore[union-attr]
    assert known_options(p)[f"{NET}alt"].timeframe == timeframe


def test_an_alt_on_a_medicine_it_monitors_names_it() -> None:
    """Leflunomide's monograph monitors ALT: the line names it and cites it."""
    p = profile(obs("a", "1742-6", 90.0, "U/L"), meds=(LEFLUNOMIDE,))
    assert net_lines(p)[f"{NET}alt"].endswith(", on leflunomide: not addressed by any check")
    assert LEFLUNOMIDE.ref in analyse(p).proposal(f"{NET}alt").refs  # type: ignore[union-attr]


def test_without_the_medicine_the_alt_line_names_none_and_keeps_routine_time() -> None:
    p = profile(obs("a", "1742-6", 300.0, "U/L"))
    assert net_lines(p)[f"{NET}alt"].endswith("2026-11-20: not addressed by any check")
    assert known_options(p)[f"{NET}alt"].timeframe == "4w"


def test_a_medicine_that_harms_the_test_is_named_only_on_its_side() -> None:
    """A myelosuppressive medicine explains a low count, not a high one."""
    assert "flag:myelosuppressive" in BY_ID["neutrophils"].medicines.harmed_by
    low = net_lines(profile(obs("n", "751-8", 1.7, "10*9/L"), meds=(LEFLUNOMIDE,)))
    assert low[f"{NET}neutrophils"].endswith(", on leflunomide: not addressed by any check")
    high = net_lines(profile(obs("n", "751-8", 9.0, "10*9/L"), meds=(LEFLUNOMIDE,)))
    assert "leflunomide" not in high[f"{NET}neutrophils"]


SIMVASTATIN = _med("simvastatin 40 MG Oral Tablet", "36567")
AMLODIPINE = _med("amlodipine 5 MG Oral Tablet", "17767")


@pytest.mark.parametrize(("ck", "timeframe"), [(3200.0, "4w"), (3201.0, "72h")])
def test_a_ck_on_a_medicine_that_injures_muscle_names_it_and_is_sooner_above_ten_times(
    ck: float, timeframe: str
) -> None:
    """Simvastatin is myotoxic (its label warns of myopathy): the CK line names it; above ten
    times the upper limit (320 in men) it is within 72 hours, at ten times routine."""
    p = profile(obs("c", "2157-6", ck, "U/L"), meds=(SIMVASTATIN,))
    assert net_lines(p)[f"{NET}ck"].endswith(", on simvastatin: not addressed by any check")
    assert known_options(p)[f"{NET}ck"].timeframe == timeframe


def test_a_ck_without_a_medicine_that_injures_muscle_names_none_and_keeps_routine_time() -> None:
    p = profile(obs("c", "2157-6", 4000.0, "U/L"), meds=(AMLODIPINE,))
    assert net_lines(p)[f"{NET}ck"].endswith("2026-11-20: not addressed by any check")
    assert known_options(p)[f"{NET}ck"].timeframe == "4w"


def test_an_alt_or_ast_names_a_medicine_whose_label_warns_of_liver_injury() -> None:
    for test, loinc in (("alt", "1742-6"), ("ast", "1920-8")):
        on = net_lines(profile(obs("a", loinc, 90.0, "U/L"), meds=(NITROFURANTOIN,)))
        assert on[f"{NET}{test}"].endswith(", on nitrofurantoin: not addressed by any check")
        off = net_lines(profile(obs("a", loinc, 90.0, "U/L"), meds=(AMLODIPINE,)))
        assert "amlodipine" not in off[f"{NET}{test}"]


def test_the_liver_and_muscle_flags_are_the_monographs() -> None:
    from inference.knowledge.drugs import members

    hepatotoxic, myotoxic = members("flag:hepatotoxic"), members("flag:myotoxic")
    assert {"methotrexate", "leflunomide", "valproate", "nitrofurantoin"} <= set(hepatotoxic)
    assert {"simvastatin", "atorvastatin", "colchicine", "fenofibrate"} <= set(myotoxic)
    assert "amlodipine" not in set(hepatotoxic) | set(myotoxic)


# ------------------------------------------------- sodium, urate, lipids, calprotectin, NT-proBNP


def _started(name: str, rxcui: str, day: date) -> Medication:
    return replace(_med(name, rxcui), authored=day)


DESMOPRESSIN = _started("desmopressin 0.2 MG Oral Tablet", "", date(2026, 10, 1))


def test_a_low_sodium_names_a_medicine_that_lowers_it_and_when_it_was_first_prescribed() -> None:
    """Desmopressin's label warns of hyponatraemia: the low sodium line names it, and, first
    prescribed between the normal sodium and the low one, says when."""
    p = profile(
        obs("s0", "2951-2", 138.0, "mmol/L", date(2026, 9, 1)),
        obs("s1", "2951-2", 124.0, "mmol/L"),
        meds=(DESMOPRESSIN,),
    )
    line = net_lines(p)[f"{NET}sodium"]
    assert "down from 138 on 2026-09-01" in line
    assert line.endswith(
        ", on desmopressin (first prescribed 2026-10-01): not addressed by any check"
    )


def test_a_medicine_prescribed_before_the_earlier_sodium_is_named_without_a_date() -> None:
    early = replace(DESMOPRESSIN, authored=date(2026, 8, 1))
    p = profile(
        obs("s0", "2951-2", 138.0, "mmol/L", date(2026, 9, 1)),
        obs("s1", "2951-2", 124.0, "mmol/L"),
        meds=(early,),
    )
    assert net_lines(p)[f"{NET}sodium"].endswith(", on desmopressin: not addressed by any check")


def test_a_high_sodium_does_not_name_a_medicine_that_lowers_it() -> None:
    p = profile(obs("s1", "2951-2", 150.0, "mmol/L"), meds=(DESMOPRESSIN,))
    assert "desmopressin" not in net_lines(p)[f"{NET}sodium"]


def test_the_sodium_lowering_flag_is_the_monographs_and_the_siadh_flag_also_counts() -> None:
    from inference.knowledge.drugs import members

    assert "desmopressin" in set(members("flag:sodium-lowering"))
    assert "flag:siadh-risk" in BY_ID["sodium"].medicines.harmed_by
    assert "amlodipine" not in set(members("flag:sodium-lowering"))


ALLOPURINOL = _med("allopurinol 100 MG Oral Tablet", "519")
ISOTRETINOIN = _med("isotretinoin 20 MG Oral Capsule", "")


@pytest.mark.parametrize(("urate", "fires"), [(359.0, False), (360.0, True), (540.0, True)])
def test_a_urate_on_urate_lowering_treatment_is_judged_against_the_target(
    urate: float, fires: bool
) -> None:
    """NICE NG219: under 360 umol/L on urate-lowering therapy; allopurinol's monograph
    monitors urate, so the line names it."""
    lines = net_lines(profile(obs("u", "14933-6", urate, "umol/L"), meds=(ALLOPURINOL,)))
    assert (f"{NET}urate" in lines) is fires
    if fires:
        assert lines[f"{NET}urate"].endswith(", on allopurinol: not addressed by any check")


def test_a_urate_without_urate_lowering_treatment_is_not_judged() -> None:
    assert f"{NET}urate" not in net_lines(profile(obs("u", "14933-6", 540.0, "umol/L")))


def test_a_urate_in_mg_dl_is_judged_in_umol_l() -> None:
    lines = net_lines(profile(obs("u", "3084-1", 9.1, "mg/dL"), meds=(ALLOPURINOL,)))
    assert f"{NET}urate" in lines


def test_triglycerides_and_alt_on_isotretinoin_name_it() -> None:
    p = profile(
        obs("t", "2571-8", 5.9, "mmol/L"), obs("a", "1742-6", 96.0, "U/L"), meds=(ISOTRETINOIN,)
    )
    lines = net_lines(p)
    assert lines[f"{NET}triglycerides"].endswith(", on isotretinoin: not addressed by any check")
    assert lines[f"{NET}alt"].endswith(", on isotretinoin: not addressed by any check")


@pytest.mark.parametrize(("tg", "fires"), [(5.9, False), (9.9, False), (10.0, True)])
def test_triglycerides_off_isotretinoin_are_a_line_only_at_the_level_acted_on(
    tg: float, fires: bool
) -> None:
    assert (f"{NET}triglycerides" in net_lines(profile(obs("t", "2571-8", tg, "mmol/L")))) is fires


@pytest.mark.parametrize(("value", "fires"), [(49.0, False), (50.0, True), (860.0, True)])
def test_a_faecal_calprotectin_at_the_cut_off_or_above_is_a_line(value: float, fires: bool) -> None:
    lines = net_lines(profile(obs("c", "38445-3", value, "ug/g")))
    assert (f"{NET}calprotectin" in lines) is fires


def test_a_rising_nt_probnp_is_a_line_with_its_trend() -> None:
    p = profile(
        obs("b0", "33762-6", 900.0, "pg/mL", date(2026, 10, 1)),
        obs("b1", "33762-6", 2400.0, "pg/mL"),
    )
    line = net_lines(p)[f"{NET}nt-probnp"]
    assert line.startswith("Review NT-proBNP 2400 pg/mL (up to 399 pg/mL) on 2026-11-20")
    assert "up from 900 on 2026-10-01" in line
    assert f"{NET}nt-probnp" not in net_lines(profile(obs("b", "33762-6", 399.0, "pg/mL")))


# ------------------------------------------------------------------ scored questionnaires


@pytest.mark.parametrize(
    ("loinc", "display", "score", "words"),
    [
        ("75624-7", "Total score [AUDIT]", 24.0, "zone IV, possible dependence"),
        ("75624-7", "Total score [AUDIT]", 16.0, "zone III, harmful drinking"),
        ("75624-7", "Total score [AUDIT]", 8.0, "zone II, risky drinking"),
        ("44261-6", "PHQ-9 total score", 12.0, "moderate depression range"),
        ("69737-5", "GAD-7 total score", 15.0, "severe anxiety range"),
        ("", "STOP-Bang score", 5.0, "high risk of obstructive sleep apnoea"),
    ],
)
def test_a_score_in_a_band_is_a_line_that_names_the_band(
    loinc: str, display: str, score: float, words: str
) -> None:
    o = Observation(f"Observation/{display}", loinc, display, score, "{score}", AS_OF)
    lines = [t for t in net_lines(profile(o)).values() if f"({words})" in t]
    assert len(lines) == 1
    assert lines[0].endswith(f" {score:g} ({words}) on 2026-11-20: not addressed by any check")


@pytest.mark.parametrize(
    ("loinc", "display", "score"),
    [
        ("75624-7", "Total score [AUDIT]", 7.0),
        ("44261-6", "PHQ-9 total score", 9.0),
        ("69737-5", "GAD-7 total score", 9.0),
        ("", "STOP-Bang score", 4.0),
        ("", "AUDIT-C score", 9.0),
    ],
)
def test_a_score_under_its_bands_or_of_another_questionnaire_makes_no_line(
    loinc: str, display: str, score: float
) -> None:
    o = Observation(f"Observation/{display}", loinc, display, score, "{score}", AS_OF)
    assert net_lines(profile(o)) == {}


def test_a_file_whose_score_bands_do_not_rise_is_refused(tmp_path: Path) -> None:
    text = RESULTS_FILE.read_text(encoding="utf-8").replace(
        '{at_least: 16, words: "zone III', '{at_least: 4, words: "zone III'
    )
    bad = tmp_path / "reference_intervals.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(KnowledgeFileError, match="score_bands must rise"):
        load_results(bad)
