"""The concept index and the record items the coverage statement answers for.

The index is built from the real knowledge; the records are built by hand, each with the items
its case needs. The criteria are read here with their own typed fields (not with the index's
walk over the trigger as data), so a part the index missed fails the first test.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

from inference.knowledge import drugs
from inference.knowledge.concepts import ConceptIndex, concept_index, items, uncovered
from inference.knowledge.coverage import assess
from inference.knowledge.criteria.schema import Trigger
from inference.knowledge.facts import Facts
from inference.knowledge.high_risk import HIGH_RISK, risk_of
from inference.knowledge.levels import LEVELS
from inference.knowledge.site import active, firing
from service.core.model import Coverage, CoverageGap
from service.record.profile import (
    Code,
    Condition,
    Encounter,
    Medication,
    Observation,
    Order,
    PatientProfile,
    Report,
)
from service.record.vocabulary import LOINC, LOINC_GROUPS, SNOMED
from service.text.summary import NO_GAP, UNCOVERED_LEAD, coverage_detail, coverage_lines

AS_OF = date(2026, 6, 1)


def _med(ref: str, text: str) -> Medication:
    return Medication(f"MedicationRequest/{ref}", text, (), "active", "order", AS_OF)


def _problem(ref: str, text: str, code: str = "") -> Condition:
    codes = (Code(SNOMED, code, text),) if code else ()
    return Condition(f"Condition/{ref}", text, codes, "active", "confirmed", date(2020, 1, 1))


def _obs(ref: str, loinc: str, name: str, value: float, days_ago: int) -> Observation:
    day = AS_OF - timedelta(days=days_ago)
    return Observation(f"Observation/{ref}", loinc, name, value, "U/L", day)


def _profile(**kw: object) -> PatientProfile:
    return PatientProfile("Patient/p1", "male", date(1950, 1, 1), AS_OF, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------- index


def _specs_and_groups(t: Trigger) -> Iterator[tuple[str, str]]:
    """(kind, value) of what a trigger fires on, read from its typed fields."""
    for s in t.drugs:
        yield "spec", s
    for g in (*t.any_conditions, *t.ever_conditions):
        yield "group", g
    for lab in t.labs:
        yield "quantity", lab.quantity
    if t.count is not None:
        yield from (("spec", s) for s in t.count.specs)
    if t.recent_event is not None:
        yield from (("group", g) for g in t.recent_event.groups)
    if t.stay is not None:
        yield from (("group", g) for g in t.stay.groups)
    if t.change is not None:
        yield from (("spec", s) for s in t.change.specs)
    if t.recent_orders is not None:
        yield from (("spec", s) for s in t.recent_orders.specs)
    for alt in t.any_of:
        yield from _specs_and_groups(alt)


def test_every_criterion_drug_class_flag_group_and_lab_is_in_the_index() -> None:
    ix = concept_index()
    missing = []
    for c in firing(active()):
        for kind, value in _specs_and_groups(c.trigger):
            if kind == "spec":
                missing += [f"{c.id}: {value} ({n})" for n in drugs.members(value) - ix.drugs]
            elif kind == "group" and value not in ix.groups:
                missing.append(f"{c.id}: group {value}")
            elif kind == "quantity":
                wanted = LOINC_GROUPS.get(value, ()) if value != "kidney" else ("33914-3",)
                missing += [f"{c.id}: {value} {code}" for code in wanted if code not in ix.loincs]
    assert not missing, missing[:20]
    # every criterion contributed: the index is not the vocabulary itself
    assert 0 < len(ix.drugs) < len(drugs.DRUGS) + 1


def test_the_check_tables_are_in_the_index() -> None:
    ix = concept_index()
    for e in LEVELS:
        assert e.drug in ix.drugs and set(e.loinc) <= ix.loincs
    renal = {d.name for d in drugs.DRUGS if drugs.renal_limits(d.name)}
    assert renal and renal <= ix.drugs
    assert "simvastatin" in ix.drugs  # a CYP3A4 substrate of the interactions table


def test_the_index_is_built_once_per_knowledge() -> None:
    assert concept_index() is concept_index(active())


# ------------------------------------------------------------------------------------- items


def _unknown_only() -> PatientProfile:
    recent = AS_OF - timedelta(days=5)
    return _profile(
        problems=(
            _problem("c1", "Gribbleflux syndrome (disorder)", "999999999999"),
            _problem("c2", "Quorzal palsy (disorder)"),
        ),
        medications=(_med("m1", "Zorbitaxumab 40 MG Injection"), _med("m2", "Herbal tea")),
        observations=(_obs("o1", "99999-1", "Flurbin level", 4.0, 20),),
        encounters=(Encounter("Encounter/e1", "Office visit", recent, reason_text="Wobbly knees"),),
    )


def test_a_record_of_unknown_codes_lists_every_item_as_uncovered() -> None:
    p = _unknown_only()
    found = items(Facts(p))
    assert len(found) == 6 and not any(i.covered for i in found)
    c = assess(p)
    named = {r for g in c.gaps if g.kind == "uncovered" for r in g.refs}
    assert named == {
        "Condition/c1",
        "Condition/c2",
        "MedicationRequest/m1",
        "MedicationRequest/m2",
        "Observation/o1",
        "Encounter/e1",
    }
    lines = coverage_lines(c)
    assert lines[-1].startswith(f"{UNCOVERED_LEAD}: ")
    for name in ("Zorbitaxumab", "Herbal tea", "Gribbleflux", "Quorzal", "Flurbin", "Wobbly"):
        assert name in lines[-1]
    assert all(NO_GAP not in x for x in (*lines, *coverage_detail(c)))
    assert all("Nothing found outside" not in x for x in (*lines, *coverage_detail(c)))


def test_known_items_are_covered_and_old_results_are_not_asked_about() -> None:
    p = _profile(
        problems=(_problem("c1", "Atrial fibrillation (disorder)", "49436004"),),
        medications=(_med("m1", "Warfarin 5 MG Oral Tablet"),),
        observations=(
            _obs("o1", "6301-6", "INR", 2.4, 10),
            _obs("o2", "99999-1", "Flurbin level", 4.0, 400),  # older than a year
        ),
    )
    found = items(Facts(p))
    assert {i.ref for i in found} == {"Condition/c1", "MedicationRequest/m1", "Observation/o1"}
    assert all(i.covered for i in found)


def test_a_problem_of_a_recent_encounter_is_named_and_an_old_one_is_not() -> None:
    old = AS_OF - timedelta(days=200)
    p = replace(
        _unknown_only(),
        problems=(),
        medications=(),
        observations=(),
        encounters=(
            Encounter("Encounter/e1", "Office visit", AS_OF, reason_text="Wobbly knees"),
            Encounter("Encounter/e2", "Office visit", old, reason_text="Stiff elbows"),
        ),
    )
    (item,) = uncovered(items(Facts(p)))
    assert item.kind == "encounter-problem" and item.label.startswith("Wobbly knees")


def test_uncovered_items_are_ordered_by_risk() -> None:
    p = _profile(
        problems=(_problem("c1", "Quorzal palsy (disorder)"),),
        medications=(
            _med("m1", "Ezetimibe 10 MG Oral Tablet"),  # known, read by no check
            _med("m2", "Lenalidomide 10 MG Oral Capsule"),  # specialist-only, not in the table
            _med("m3", "Imatinib 400 MG Oral Tablet"),  # ISMP oral chemotherapy, not in the table
        ),
        observations=(_obs("o1", "99999-1", "Flurbin level", 4.0, 20),),
    )
    order = [i.ref for i in uncovered(items(Facts(p)))]
    assert order == [
        "MedicationRequest/m3",
        "MedicationRequest/m2",
        "MedicationRequest/m1",
        "Condition/c1",
        "Observation/o1",
    ]
    c = assess(p)
    gaps = {g.refs[0]: g for g in c.gaps if g.kind == "uncovered"}
    assert gaps["MedicationRequest/m3"].high_risk and gaps["MedicationRequest/m2"].high_risk
    assert not gaps["MedicationRequest/m1"].high_risk and not gaps["Condition/c1"].high_risk
    assert "ISMP" in gaps["MedicationRequest/m3"].check and c.high_risk
    line = coverage_lines(c)[-1]
    assert line.index("Imatinib") < line.index("Lenalidomide") < line.index("Ezetimibe")
    assert line.index("Ezetimibe") < line.index("Quorzal") < line.index("Flurbin")


@pytest.mark.parametrize(
    ("text", "ingredients", "tier"),
    [
        ("Warfarin 5 MG Oral Tablet", ("warfarin",), "high-alert"),
        ("Insulin glargine 100 UNT/ML", (), "high-alert"),
        (
            "Theophylline 200 MG Extended Release Tablet",
            ("theophylline",),
            "narrow-therapeutic-index",
        ),
        ("Clozapine 100 MG Oral Tablet", ("clozapine",), "specialist-only"),
        ("Ezetimibe 10 MG Oral Tablet", ("ezetimibe",), None),
    ],
)
def test_risk_tiers_come_from_the_cited_lists(
    text: str, ingredients: tuple[str, ...], tier: str | None
) -> None:
    got = risk_of(text, ingredients)
    assert (got.tier if got is not None else None) == tier
    if got is not None:
        assert got.sources and all(s in HIGH_RISK.sources for s in got.sources)


def test_results_past_the_named_count_are_counted_and_named_in_the_detail() -> None:
    gaps = tuple(
        CoverageGap("uncovered", "uncovered-result", f"Test {k} of 2026-05-01", "c", False, ())
        for k in range(12)
    )
    c = Coverage("v", "adults", (), gaps)
    line = coverage_lines(c, results_named=8)[-1]
    assert "Test 7 of" in line and "Test 8 of" not in line and "4 more results" in line
    assert sum("Test" in x for x in coverage_detail(c)) == 12
    assert NO_GAP not in " ".join(coverage_lines(c))


def test_nothing_uncovered_says_so_and_only_then() -> None:
    c = Coverage("v", "adults", (), ())
    (line,) = coverage_lines(c)
    assert line.endswith(NO_GAP)


def test_a_recognised_medicine_takes_its_tier_from_its_classes_and_flags() -> None:
    """Against an index that reads nothing, the record's medicines rank by their tier: a
    vitamin K antagonist (ISMP antithrombotic) before a narrow-therapeutic-index drug before a
    medicine on no list."""
    empty = ConceptIndex(frozenset(), frozenset(), frozenset(), False, frozenset())
    p = _profile(
        medications=(
            _med("m1", "Ezetimibe 10 MG Oral Tablet"),
            _med("m2", "Theophylline 200 MG Extended Release Tablet"),
            _med("m3", "Coumadin 5 MG Oral Tablet"),  # warfarin by its brand name
        )
    )
    ranked = uncovered(items(Facts(p), empty))
    assert [i.ref for i in ranked] == [
        "MedicationRequest/m3",
        "MedicationRequest/m2",
        "MedicationRequest/m1",
    ]
    assert [i.risk.tier if i.risk else None for i in ranked] == [
        "high-alert",
        "narrow-therapeutic-index",
        None,
    ]
    assert all(i.known for i in ranked)


def test_an_item_another_gap_names_is_not_named_twice_in_the_line() -> None:
    gaps = (
        CoverageGap("missing-fact", "x", "something missing", "c", False, ("Condition/c1",)),
        CoverageGap(
            "uncovered", "uncovered-condition", "Quorzal palsy", "c", False, ("Condition/c1",)
        ),
        CoverageGap(
            "uncovered", "uncovered-condition", "Gribbleflux", "c", False, ("Condition/c2",)
        ),
    )
    c = Coverage("v", "adults", (), gaps)
    assert coverage_lines(c)[-1] == f"{UNCOVERED_LEAD}: Gribbleflux."
    assert any("Quorzal palsy" in x for x in coverage_detail(c))


def test_a_table_added_to_the_knowledge_is_read_by_its_shape() -> None:
    """A new check table (a net of reference intervals, say) is harvested without a change to
    the index: drug specs and names, LOINC codes and result groups."""
    from inference.knowledge.concepts import _harvest, _Reads

    out = _Reads(set(), set(), set(), set(), set())
    table = {
        "tests": [
            {"id": "k", "group": "potassium", "loinc": ["2823-3"]},
            {"id": "ck", "loinc": ["2157-6"], "raised_by": ["class:statin", "colchicine"]},
        ],
        "source": "a text that names warfarin is not a name",
    }
    _harvest(table, out, "")
    assert out.quantities == {"potassium"} and out.loincs == {"2823-3", "2157-6"}
    assert out.specs == {"class:statin"} and out.names == {"colchicine"}


def test_a_reason_in_words_is_never_taken_as_read() -> None:
    """A check reads atrial fibrillation, but a reason given in words may say more than the
    condition it names: it is named, as a reason in words, and a coded one is not."""
    af = Code(SNOMED, "49436004", "Atrial fibrillation")
    p = _profile(
        encounters=(
            Encounter(
                "Encounter/e1",
                "Office visit",
                AS_OF,
                reason_text="Atrial fibrillation; confused and unsteady for a week",
            ),
            Encounter("Encounter/e2", "Office visit", AS_OF, reasons=(af,)),
        )
    )
    (item,) = uncovered(items(Facts(p)))
    assert item.ref == "Encounter/e1" and "(reason in words, encounter of 2026-06-01)" in item.label


def test_a_site_that_retires_the_criteria_reading_a_group_leaves_it_uncovered() -> None:
    """The index is the knowledge's own: retire every criterion whose trigger names gout and
    gout is no longer covered, while the shipped index still covers it."""
    shipped = active()
    reads_gout = {c.id for c in shipped.criteria if "gout" in c.trigger.model_dump_json()}
    assert reads_gout and "gout" in concept_index(shipped).groups
    site = replace(shipped, criteria=tuple(c for c in shipped.criteria if c.id not in reads_gout))
    assert "gout" not in concept_index(site).groups
    p = _profile(problems=(_problem("c1", "Gout (disorder)", "90560007"),))
    assert [i.covered for i in items(Facts(p), concept_index(site))] == [False]
    assert [i.covered for i in items(Facts(p), concept_index(shipped))] == [True]


def test_the_high_risk_list_refuses_an_unknown_class_or_source(tmp_path: Path) -> None:
    from inference.knowledge._datafile import KnowledgeFileError
    from inference.knowledge.high_risk import HIGH_RISK_FILE, load_high_risk

    text = HIGH_RISK_FILE.read_text(encoding="utf-8")
    for wrong, needle in (
        ("classes: [insulin]", "unknown drug class 'insulinz'"),
        ("sources: [smpc-clozapine]", "unknown source 'nowhere'"),
    ):
        bad = tmp_path / "high_risk_medicines.yaml"
        replacement = wrong.replace("insulin]", "insulinz]").replace("smpc-clozapine", "nowhere")
        bad.write_text(text.replace(wrong, replacement), encoding="utf-8")
        with pytest.raises(KnowledgeFileError, match=needle):
            load_high_risk(bad)


# ------------------------------------------------------------------ vital signs, reports, orders


def _reading(ref: str, loinc: str, name: str, value: float, *flags: str) -> Observation:
    o = _obs(ref, loinc, name, value, 3)
    return replace(o, interpretation=tuple(Code("v3", f, "") for f in flags))


def test_a_vital_sign_no_check_reads_is_context_unless_the_record_flags_it() -> None:
    """A height, a BMI or a respiratory rate read by no check is not an item; a flagged one is,
    a weight or a pulse is one that a check reads (the pulse since the heart-rate interval and
    the rate-lowering drugs), and a laboratory result is one whether read or not."""
    p = _profile(
        observations=(
            _reading("o1", "8302-2", "Body height", 170.0),
            _reading("o2", "39156-5", "Body mass index", 24.0),
            _reading("o3", "9279-1", "Respiratory rate", 16.0),
            _reading("o4", "", "Body Height", 171.0),  # a local code: by its name
            _reading("o5", "29463-7", "Body weight", 70.0),
            _reading("o6", "99999-1", "Flurbin level", 4.0),
            _reading("o7", "8867-4", "Heart rate", 72.0),
        ),
    )
    found = {i.ref: i.covered for i in items(Facts(p))}
    assert found == {"Observation/o5": True, "Observation/o6": False, "Observation/o7": True}
    flagged = replace(p, observations=(_reading("o3", "9279-1", "Respiratory rate", 30.0, "H"),))
    assert [(i.ref, i.covered) for i in items(Facts(flagged))] == [("Observation/o3", False)]


def _report(ref: str, status: str, days_ago: int, loinc: str = "") -> Report:
    codes = (Code(LOINC, loinc, "Chest X-ray"),) if loinc else ()
    return Report(
        f"DiagnosticReport/{ref}", "Chest X-ray", codes, status, AS_OF - timedelta(days_ago)
    )


def _order(ref: str, status: str, intent: str, loinc: str = "") -> Order:
    codes = (Code(LOINC, loinc, "Holter monitor"),) if loinc else ()
    return Order(f"ServiceRequest/{ref}", "Holter monitor", codes, status, intent, AS_OF)


def test_released_reports_and_active_orders_are_items_the_nets_cover() -> None:
    """The report net reads every released report and the order net every active order whose
    intent is an order: those are covered; a preliminary report and a finished order are no
    items; a proposal no net chases is uncovered."""
    p = _profile(
        reports=(_report("r1", "final", 10), _report("r2", "preliminary", 10)),
        orders=(
            _order("s1", "active", "order"),
            _order("s2", "completed", "order"),
            _order("s3", "active", "proposal"),
        ),
    )
    found = {i.ref: (i.kind, i.covered) for i in items(Facts(p))}
    assert found == {
        "DiagnosticReport/r1": ("report", True),
        "ServiceRequest/s1": ("order", True),
        "ServiceRequest/s3": ("order", False),
    }
    (gap,) = [g for g in assess(p).gaps if g.key == "uncovered-order"]
    assert gap.label == "Holter monitor ordered 2026-06-01" and gap.refs == ("ServiceRequest/s3",)


def test_without_a_net_a_report_or_order_is_covered_only_by_its_code() -> None:
    empty = ConceptIndex(frozenset(), frozenset(), frozenset({"2157-6"}), False, frozenset())
    p = _profile(
        reports=(_report("r1", "final", 10, "2157-6"), _report("r2", "final", 10, "36643-5")),
        orders=(_order("s1", "active", "order", "2157-6"), _order("s2", "active", "order")),
    )
    found = {i.ref: i.covered for i in items(Facts(p), empty)}
    assert found == {
        "DiagnosticReport/r1": True,
        "DiagnosticReport/r2": False,
        "ServiceRequest/s1": True,
        "ServiceRequest/s2": False,
    }


def test_a_report_older_than_the_net_reads_is_uncovered() -> None:
    """The net follows reports of its look-back from the plan day only; an older one still in
    the results window of the record date is named, and a newer one is not."""
    lookback = concept_index().report_days
    plan_day = AS_OF + timedelta(days=20)
    old = _report("r1", "final", lookback + 5 - 20)  # lookback + 5 days before the plan day
    new = _report("r2", "final", lookback - 5 - 20)
    p = replace(_profile(reports=(old, new)), received=plan_day)
    found = [(i.ref, i.covered) for i in items(Facts(p))]
    assert found == [("DiagnosticReport/r1", False), ("DiagnosticReport/r2", True)]


def test_a_condition_group_a_table_acts_on_is_covered() -> None:
    """The peri-operative table's steroid cover and emergency card act on adrenal insufficiency
    (``group: adrenal-insufficiency``): a plan with those lines must not also say no check
    covers the condition."""
    assert "adrenal-insufficiency" in concept_index().groups
