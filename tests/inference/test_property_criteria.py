"""Generic criteria on drug properties (criteria/properties.json, data/monographs.yaml): each
fires on its case and not on its nearest neighbour, and a named pair criterion stands it down,
so no line is said twice on any fixture or vignette."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.drugs import drug, max_daily_mg, members
from inference.knowledge.facts import Facts
from inference.knowledge.monographs import load_monographs
from inference.knowledge.rules import CRITERIA
from service.record.profile import Code, Condition, Observation
from service.record.vocabulary import LOINC_GROUPS, SNOMED
from tests.conftest import REALISTIC_BUNDLES

from .criteria_factory import AS_OF, Builder

PROPERTY = tuple(c for c in CRITERIA if c.id.startswith("prop-"))
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BUNDLES = sorted(
    [
        *REALISTIC_BUNDLES,
        *(
            p
            for d in EXAMPLES.glob("vignettes*")
            for p in d.glob("*.json")
            if '"Bundle"' in p.read_text(encoding="utf-8")[:400]
        ),
    ]
)


def _fired(b: Builder) -> set[str]:
    return {f.criterion.id for f in evaluate(CRITERIA, Facts(b.build()))}


def test_monographs_cover_the_lists_and_merge_as_flags() -> None:
    mf = load_monographs()
    assert len(mf.monographs) >= 300
    assert sum("top300" in m.lists for m in mf.monographs) >= 250
    assert "qt-conditional" in drug("sertraline").flags
    assert "smoking-sensitive" in drug("clozapine").flags
    assert "hepatic-avoid" in drug("duloxetine").flags
    assert max_daily_mg("sertraline") is not None
    assert {"clozapine", "olanzapine", "theophylline"} <= members("flag:smoking-sensitive")


def test_every_yields_to_names_a_shipped_criterion() -> None:
    ids = {c.id for c in CRITERIA}
    assert all(set(c.yields_to) <= ids for c in PROPERTY)


def test_qt_stack_with_low_potassium() -> None:
    b = Builder()
    b.med("sertraline")
    b.med("omeprazole")
    b.lab("potassium", 3.1)
    assert "prop-qt-stack-electrolytes" in _fired(b)
    n = Builder()
    n.med("sertraline")
    n.med("omeprazole")
    n.lab("potassium", 4.2)
    assert "prop-qt-stack-electrolytes" not in _fired(n)


def test_anticholinergic_load_with_constipation() -> None:
    b = Builder(age=50)
    b.med("tramadol")
    b.med("loratadine")
    b.condition("constipation")
    assert "prop-anticholinergic-load-harm" in _fired(b)
    n = Builder(age=50)
    n.med("loratadine")
    n.condition("constipation")
    assert "prop-anticholinergic-load-harm" not in _fired(n)
    pair = Builder(age=50)  # a strongly anticholinergic drug: the named criterion speaks
    pair.med("oxybutynin")
    pair.condition("constipation")
    got = _fired(pair)
    assert "dd-anticholinergic-constipation" in got
    assert "prop-anticholinergic-load-harm" not in got


def test_cns_depressants_with_sleep_apnoea() -> None:
    b = Builder(age=50)
    b.med("zolpidem")
    b.med("baclofen")
    b.condition("sleep-apnoea")
    assert "prop-cns-depressants-breathing" in _fired(b)
    n = Builder(age=50)
    n.med("zolpidem")
    n.med("baclofen")
    assert "prop-cns-depressants-breathing" not in _fired(n)


def test_nephrotoxic_stack_with_low_kidney_function() -> None:
    b = Builder()
    b.med("lithium")
    b.med("tacrolimus")
    b.lab("egfr", 40.0)
    assert "prop-nephrotoxic-stack" in _fired(b)
    n = Builder()
    n.med("lithium")
    n.med("tacrolimus")
    n.lab("egfr", 85.0)
    assert "prop-nephrotoxic-stack" not in _fired(n)


def test_hyperkalaemia_stack_and_its_pair_standing_it_down() -> None:
    b = Builder()
    b.med("spironolactone")
    b.med("tacrolimus")
    b.lab("potassium", 5.9)
    assert "prop-hyperkalaemia-stack" in _fired(b)
    n = Builder()
    n.med("spironolactone")
    n.med("tacrolimus")
    n.lab("potassium", 4.5)
    assert "prop-hyperkalaemia-stack" not in _fired(n)
    pair = Builder()
    pair.med("lisinopril")
    pair.med("amiloride")
    pair.lab("potassium", 5.9)
    got = _fired(pair)
    assert "ddi-acei-potassium-sparing" in got and "prop-hyperkalaemia-stack" not in got


def test_bleeding_stack_stands_down_for_a_named_pair() -> None:
    b = Builder()
    b.med("aspirin")
    b.med("icosapent ethyl")
    assert "prop-bleeding-stack" in _fired(b)
    n = Builder()
    n.med("aspirin")
    n.med("atorvastatin")
    assert "prop-bleeding-stack" not in _fired(n)
    pair = Builder()
    pair.med("warfarin")
    pair.med("ibuprofen")
    got = _fired(pair)
    assert "ddi-anticoagulant-nsaid" in got and "prop-bleeding-stack" not in got


@pytest.mark.parametrize(
    ("name", "cid"), [("duloxetine", "prop-hepatic-avoid"), ("tramadol", "prop-hepatic-reduce")]
)
def test_hepatic_guidance_needs_cirrhosis(name: str, cid: str) -> None:
    b = Builder()
    b.med(name)
    b.condition("cirrhosis")
    assert cid in _fired(b)
    n = Builder()
    n.med(name)
    n.condition("hypertension")
    assert cid not in _fired(n)


def test_smoking_stopped_raises_clozapine() -> None:
    b = Builder()
    b.med("clozapine")
    b.smoking("current", AS_OF - timedelta(days=30))
    b.smoking("former")
    assert "prop-smoking-stopped-cyp1a2" in _fired(b)
    n = Builder()
    n.med("clozapine")
    n.smoking("current")
    assert "prop-smoking-stopped-cyp1a2" not in _fired(n)


def test_dose_above_the_maximum() -> None:
    top = max_daily_mg("sertraline")
    assert top is not None
    b = Builder()
    b.med("sertraline", dose_mg=top * 2)
    assert "prop-dose-above-maximum" in _fired(b)
    n = Builder()
    n.med("sertraline", dose_mg=top)
    assert "prop-dose-above-maximum" not in _fired(n)


def test_blood_count_on_a_myelosuppressive_drug() -> None:
    b = Builder()
    b.med("azathioprine")
    assert "prop-monitor-blood-count-myelosuppressive" in _fired(b)
    n = Builder()
    n.med("azathioprine")
    n.lab("platelets", 250.0)
    assert "prop-monitor-blood-count-myelosuppressive" not in _fired(n)


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name)
def test_no_property_line_repeats_a_pair_line(bundle: Path) -> None:
    firings = evaluate(CRITERIA, Facts(ingest(bundle.read_bytes())))
    named: dict[str, set[str]] = {}
    for f in firings:
        refs = {m.ref for m in f.binding.meds.values()} | {m.ref for m in f.binding.count}
        named.setdefault(f.criterion.id, set()).update(refs)
    for f in firings:
        c = f.criterion
        if not c.yields_to:
            continue
        own = {m.ref for m in f.binding.meds.values()} | {m.ref for m in f.binding.count}
        covered = set().union(*(named.get(i, set()) for i in c.yields_to))
        assert not own <= covered, f"{c.id} repeats {sorted(c.yields_to)} on {bundle.name}"


def test_replacement_hydrocortisone_in_adrenal_insufficiency_asks_no_bone_protection() -> None:
    """Hydrocortisone replacing what the adrenal glands do not make is not long-term
    corticosteroid therapy (START E and NOGG 2022 are about therapeutic doses). The same record
    without the adrenal insufficiency still asks for bone protection."""
    import json
    from datetime import UTC, datetime

    from fhir_mapping.ingest import ingest
    from inference.knowledge import analyse
    from tests.conftest import REPO_ROOT

    path = next((REPO_ROOT / "examples/vignettes8").glob("v22_*.json"))
    bundle = json.loads(path.read_text(encoding="utf-8"))
    received = datetime(2026, 11, 30, 9, tzinfo=UTC)

    def fired(b: dict[str, object]) -> tuple[str, ...]:
        return analyse(ingest(json.dumps(b).encode(), received=received)).fired

    assert "start-bone-protection-steroid" not in fired(bundle)
    entries = bundle["entry"]
    assert isinstance(entries, list)
    without = {
        **bundle,
        "entry": [e for e in entries if "adrenal" not in json.dumps(e.get("resource", {})).lower()],
    }
    assert "start-bone-protection-steroid" in fired(without)


@pytest.mark.parametrize(("stent_days", "stands_down"), [(120, True), (3 * 365, False)])
def test_bleeding_stack_stands_down_for_dual_antiplatelets_after_a_stent(
    stent_days: int, stands_down: bool
) -> None:
    """Aspirin with ticagrelor four months after a coronary stent is the intended dual
    antiplatelet therapy (ESC: 12 months after an acute coronary syndrome): the generic stack
    line, which asks to keep only the drugs needed, stands down. Three years on it speaks."""
    b = Builder(age=70, onset_days=stent_days)
    b.condition("chd")
    b.med("aspirin")
    b.med("ticagrelor")
    assert ("prop-bleeding-stack" not in _fired(b)) is stands_down


@pytest.mark.parametrize(("event_days", "fires"), [(120, True), (365, True), (366, False)])
def test_within_a_year_of_a_coronary_event_both_antiplatelets_continue(
    event_days: int, fires: bool
) -> None:
    """Where the generic bleeding line stands down, one line says why: after an acute coronary
    syndrome dual antiplatelet therapy continues 12 months by default (ESC 2023); the window's
    edge is the data's 365 days."""
    b = Builder(age=60, onset_days=event_days)
    b.condition("chd")
    b.med("aspirin")
    b.med("ticagrelor")
    got = _fired(b)
    assert ("dapt-continue-after-coronary-event" in got) is fires
    one = Builder(age=60, onset_days=120)  # one antiplatelet: nothing to keep together
    one.condition("chd")
    one.med("aspirin")
    assert "dapt-continue-after-coronary-event" not in _fired(one)


@pytest.mark.parametrize(("on_ppi", "advised"), [(False, True), (True, False)])
def test_the_bleeding_stack_suggests_a_ppi_only_to_a_patient_without_one(
    on_ppi: bool, advised: bool
) -> None:
    """A blind review found "consider a PPI" said to a patient on omeprazole."""
    b = Builder(age=70)
    b.med("clopidogrel")
    b.med("citalopram")
    if on_ppi:
        b.med("omeprazole")
    (firing,) = [
        f for f in evaluate(CRITERIA, Facts(b.build())) if f.criterion.id == "prop-bleeding-stack"
    ]
    said = " ".join(pt.text for pt in firing.proposal.points)
    assert ("proton pump inhibitor" in said) is advised


def test_bleeding_stack_speaks_on_two_antiplatelets_without_a_coronary_event() -> None:
    b = Builder(age=70)
    b.med("aspirin")
    b.med("clopidogrel")
    assert "prop-bleeding-stack" in _fired(b)


def _pregnant(b: Builder, weeks: int) -> None:
    """A woman of 30, pregnant (a Condition), with a gestational age recorded today."""
    b.age, b.sex = 30, "female"
    preg = (Code(SNOMED, "77386006", "Pregnant"),)
    b.problems.append(Condition("Condition/preg", "Pregnant", preg, "active", "confirmed", AS_OF))
    b.obs.append(Observation("Observation/ga", "49051-6", "Gestational age", weeks, "wk", AS_OF))


def test_qt_stack_with_low_magnesium_in_either_unit() -> None:
    b = Builder()
    b.med("sertraline")
    b.med("omeprazole")
    b.lab("magnesium", 0.55)
    assert "prop-qt-stack-magnesium" in _fired(b)
    n = Builder()
    n.med("sertraline")
    n.med("omeprazole")
    n.lab("magnesium", 0.85)
    assert "prop-qt-stack-magnesium" not in _fired(n)
    # 1.9 mg/dL is 0.78 mmol/L: in range, although the number is above the threshold either way;
    # 1.2 mg/dL is 0.49 mmol/L: low
    for value, low in ((1.9, False), (1.2, True)):
        u = Builder()
        u.med("sertraline")
        u.med("omeprazole")
        u.lab("magnesium", value)
        u.obs[-1] = replace(u.obs[-1], unit="mg/dL")
        assert ("prop-qt-stack-magnesium" in _fired(u)) is low


def test_qt_stack_magnesium_stands_down_when_potassium_is_low_too() -> None:
    b = Builder()
    b.med("sertraline")
    b.med("omeprazole")
    b.lab("magnesium", 0.55)
    b.lab("potassium", 3.1)
    got = _fired(b)
    assert "prop-qt-stack-electrolytes" in got
    assert "prop-qt-stack-magnesium" not in got


def test_slow_heart_rate_on_drugs_that_slow_it() -> None:
    b = Builder()
    b.med("donepezil")
    b.med("bisoprolol")
    b.lab("heart_rate", 49.0)
    firing = next(
        f
        for f in evaluate(CRITERIA, Facts(b.build()))
        if f.criterion.id == "prop-heart-rate-lowering-bradycardia"
    )
    assert {m.drugs[0] for m in firing.binding.count} == {"donepezil", "bisoprolol"}
    assert "49" in firing.proposal.title
    edge = Builder()  # the source's rate is "below 50": 50 itself is not slow
    edge.med("donepezil")
    edge.lab("heart_rate", 50.0)
    assert "prop-heart-rate-lowering-bradycardia" not in _fired(edge)
    other = Builder()  # a slow rate on no drug that slows the heart
    other.med("omeprazole")
    other.lab("heart_rate", 45.0)
    assert "prop-heart-rate-lowering-bradycardia" not in _fired(other)


def test_combined_pill_after_a_venous_thromboembolism() -> None:
    b = Builder(age=32)
    b.med("ethinyl estradiol")
    b.resolved("venous-thromboembolism")
    assert "prop-oestrogen-after-vte" in _fired(b)
    n = Builder(age=32)
    n.med("ethinyl estradiol")
    n.condition("hypertension")
    assert "prop-oestrogen-after-vte" not in _fired(n)
    hrt = Builder(age=58)  # an oestrogen that is not a combined contraceptive: left out
    hrt.med("estradiol")
    hrt.resolved("venous-thromboembolism")
    assert "prop-oestrogen-after-vte" not in _fired(hrt)


@pytest.mark.parametrize("name", ["ibuprofen", "doxycycline"])
def test_late_pregnancy_harm_from_twenty_weeks(name: str) -> None:
    b = Builder()
    b.med(name)
    _pregnant(b, 24)
    assert "prop-pregnancy-late-harm" in _fired(b)
    early = Builder()
    early.med(name)
    _pregnant(early, 12)
    assert "prop-pregnancy-late-harm" not in _fired(early)
    aspirin = Builder()  # low-dose aspirin is not an NSAID of this warning
    aspirin.med("aspirin")
    _pregnant(aspirin, 24)
    assert "prop-pregnancy-late-harm" not in _fired(aspirin)


def _own(b: Builder) -> list[str]:
    return sorted(
        f.proposal.title
        for f in evaluate(CRITERIA, Facts(b.build()))
        if f.criterion.id == "prop-monitor-own-interval"
    )


def test_a_test_past_the_drugs_own_interval_is_asked_for() -> None:
    b = Builder()
    b.med("azathioprine")
    b.lab("alt", 22.0, AS_OF - timedelta(days=120))  # the monograph's interval is 90 days
    b.lab("egfr", 80.0, AS_OF - timedelta(days=30))
    got = _own(b)
    assert got == [
        f"Check ALT for azathioprine: last result 22 on {AS_OF - timedelta(days=120)}, 4 months ago"
    ]
    n = Builder()  # both within the interval; the edge: a result exactly 90 days old is recent
    n.med("azathioprine")
    n.lab("alt", 22.0, AS_OF - timedelta(days=90))
    n.lab("egfr", 80.0, AS_OF - timedelta(days=30))
    assert _own(n) == []


def test_no_result_at_all_says_so() -> None:
    b = Builder()
    b.med("leflunomide")
    assert any("ALT for leflunomide: no result in the record" in t for t in _own(b))


def test_a_named_monitoring_criterion_stands_the_own_interval_down() -> None:
    b = Builder()  # lithium's level, kidney and thyroid tests have named criteria of their own
    b.med("lithium")
    got = _fired(b)
    assert "monitor-lithium-level" in got
    assert _own(b) == []
    blood = Builder()  # the blood count on azathioprine is the myelosuppression criterion's
    blood.med("azathioprine")
    assert not any("latelets" in t for t in _own(blood))


def test_no_routine_test_of_a_drug_the_plan_stops() -> None:
    """Methotrexate in pregnancy is stopped now: its kidney test "every 90 days once stable"
    would judge a treatment that is ending, so it is not asked; not pregnant, it is."""
    b = Builder()
    _pregnant(b, 10)
    b.med("methotrexate")
    assert "preg-methotrexate" in _fired(b)
    assert _own(b) == []
    n = Builder()
    n.age, n.sex = 30, "female"
    n.med("methotrexate")
    assert any("for methotrexate" in t for t in _own(n))


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name)
def test_no_test_is_asked_twice_for_one_drug(bundle: Path) -> None:
    firings = evaluate(CRITERIA, Facts(ingest(bundle.read_bytes())))
    asked: dict[str, list[tuple[str, frozenset[str]]]] = {}
    for f in firings:
        m = f.criterion.trigger.monitor
        q = f.binding.monitor_quantity or (m.quantity if m is not None else "")
        if not q or "a" not in f.binding.meds:
            continue
        asked.setdefault(f.binding.meds["a"].ref, []).append(
            (f.criterion.id, frozenset(LOINC_GROUPS[q]))
        )
    for ref, tests in asked.items():
        for cid, codes in tests:
            if cid != "prop-monitor-own-interval":
                continue
            others = [o for o, c in tests if o != cid and c & codes]
            assert not others, f"{ref} on {bundle.name}: {cid} repeats {others}"


def test_two_drugs_that_raise_intracranial_pressure() -> None:
    b = Builder(age=19)
    b.med("doxycycline")
    b.med("isotretinoin")
    assert "prop-raised-icp-stack" in _fired(b)
    n = Builder(age=19)
    n.med("isotretinoin")
    n.med("clindamycin")
    assert not {"prop-raised-icp-stack", "prop-raised-icp-stack-symptoms"} & _fired(n)


def test_raised_pressure_drugs_with_a_headache_are_urgent_and_said_once() -> None:
    b = Builder(age=19)
    b.med("minocycline")
    b.med("isotretinoin")
    b.condition("raised-icp-symptom")
    found = [f for f in evaluate(CRITERIA, Facts(b.build())) if "icp" in f.criterion.id]
    assert [f.criterion.id for f in found] == ["prop-raised-icp-stack-symptoms"]
    assert found[0].criterion.option.urgency == 3
    n = Builder(age=19)
    n.med("minocycline")
    n.condition("raised-icp-symptom")
    assert "prop-raised-icp-stack-symptoms" not in _fired(n)


@pytest.mark.parametrize(
    ("systolic", "diastolic", "fires"),
    [
        (140.0, 80.0, True),  # at the clinic threshold: raised (>=)
        (139.0, 89.0, False),  # one below each threshold
        (130.0, 90.0, True),  # the diastolic alone at its threshold
    ],
)
def test_decongestant_with_raised_blood_pressure(
    systolic: float, diastolic: float, fires: bool
) -> None:
    b = Builder()
    b.med("pseudoephedrine", dose_mg=240.0)
    b.condition("hypertension")
    b.lab("systolic_bp", systolic)
    b.lab("diastolic_bp", diastolic)
    assert ("prop-decongestant-raised-bp" in _fired(b)) is fires


def test_decongestant_needs_hypertension_on_record() -> None:
    b = Builder()
    b.med("pseudoephedrine", dose_mg=240.0)
    b.lab("systolic_bp", 160.0)
    assert "prop-decongestant-raised-bp" not in _fired(b)
    b.condition("hypertension")
    assert "prop-decongestant-raised-bp" in _fired(b)
    drops = Builder()  # phenylephrine: eye drops share its name, and the record states no route
    drops.med("phenylephrine", dose_mg=40.0)
    drops.condition("hypertension")
    drops.lab("systolic_bp", 160.0)
    assert "prop-decongestant-raised-bp" not in _fired(drops)


def _weight_now(kg: float) -> Observation:
    return Observation("Observation/w", LOINC_GROUPS["weight"][0], "Body weight", kg, "kg", AS_OF)


@pytest.mark.parametrize(
    ("daily_mg", "kg", "fires"),
    [
        (400.0, 52.0, True),  # 7.7 mg/kg a day
        (260.0, 52.0, False),  # exactly 5 mg/kg a day: at the maximum
        (261.0, 52.0, True),  # one mg above it
        (400.0, 80.0, False),  # 5 mg/kg a day at 80 kg
    ],
)
def test_hydroxychloroquine_above_its_maximum_per_kg(
    daily_mg: float, kg: float, fires: bool
) -> None:
    b = Builder()
    b.med("hydroxychloroquine", dose_mg=daily_mg)
    b.obs.append(_weight_now(kg))
    firings = [
        x
        for x in evaluate(CRITERIA, Facts(b.build()))
        if x.criterion.id == "prop-dose-above-weight-maximum"
    ]
    assert bool(firings) is fires
    if fires:
        text = firings[0].proposal.description
        assert f"{kg:g} kg on" in text and "5 mg/kg a day" in text


def _weight(kg: float, when: date = AS_OF) -> Observation:
    return Observation("Observation/w", LOINC_GROUPS["weight"][0], "Body weight", kg, "kg", when)


def test_no_recent_weight_says_nothing_about_the_maximum_per_kg() -> None:
    b = Builder()
    b.med("hydroxychloroquine", dose_mg=400.0)
    b.obs.append(_weight(52.0, AS_OF - timedelta(days=400)))
    assert "prop-dose-above-weight-maximum" not in _fired(b)
    n = Builder()
    n.med("hydroxychloroquine")  # no dose stated
    n.obs.append(_weight(52.0))
    assert "prop-dose-above-weight-maximum" not in _fired(n)
