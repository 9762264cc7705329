"""Interactions read from the monographs' clearance-pathway roles (``RoleTest``), the xanthine
oxidase pathway and absorption that needs stomach acid: each fires on its case and not on its
nearest neighbour, timing follows how recent the change is, and no generic line repeats a pair
line or a mechanism-table line on any fixture or vignette."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.drugs import members, named_in
from inference.knowledge.facts import Facts
from inference.knowledge.monographs import load_monographs
from inference.knowledge.pk import by_roles, interactions
from inference.knowledge.rules import CRITERIA
from tests.conftest import REALISTIC_BUNDLES

from .criteria_factory import AS_OF, Builder

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
STRONG = ("strong", "moderate", "listed")
SUBSTRATES = ("narrow-index", "sensitive")


def _fired(b: Builder) -> set[str]:
    return {f.criterion.id for f in evaluate(CRITERIA, Facts(b.build()))}


def _started(b: Builder, name: str, days_ago: int) -> None:
    b.med(name, AS_OF - timedelta(days=days_ago))


def test_roles_link_a_perpetrator_to_a_substrate_on_a_shared_pathway() -> None:
    got = by_roles("clarithromycin", "fentanyl", "inhibition", STRONG, SUBSTRATES)
    assert got is not None and got.pathways == ("CYP3A4",) and got.grade == "strong"
    assert by_roles("azithromycin", "fentanyl", "inhibition", STRONG, SUBSTRATES) is None
    # fentanyl is a CYP3A substrate, not a CYP2D6 one: a CYP2D6 inhibitor does not touch it
    assert by_roles("paroxetine", "fentanyl", "inhibition", STRONG, SUBSTRATES) is None
    # an inducer is not read as an inhibitor
    assert by_roles("rifampicin", "fentanyl", "inhibition", STRONG, SUBSTRATES) is None


def test_xanthine_oxidase_inhibitors_act_on_the_thiopurines() -> None:
    roles = {m.drug: m.cyp for m in load_monographs().monographs}
    for xo in ("allopurinol", "febuxostat"):
        assert [(r.path, r.role) for r in roles[xo]] == [("xanthine-oxidase", "inhibitor")]
        for thiopurine in ("azathioprine", "mercaptopurine"):
            assert ("xanthine-oxidase", "substrate") in [
                (r.path, r.role) for r in roles[thiopurine]
            ]
            got = interactions(xo, thiopurine)
            assert [(e.direction, e.pathways) for e in got] == [
                ("inhibition", ("xanthine oxidase",))
            ]
            # the table words the thiopurines' case, so the role reading leaves it to the table
            assert by_roles(xo, thiopurine, "inhibition", STRONG, SUBSTRATES) is None
    assert interactions("colchicine", "azathioprine") == ()
    assert {"azathioprine", "mercaptopurine"} <= members("flag:myelosuppressive")


@pytest.mark.parametrize("text", ["St John's wort", "St John\u2019s Wort 300 mg", "Hypericum"])
def test_st_johns_wort_is_recognised_however_written(text: str) -> None:
    assert named_in(text) == ("st johns wort",)


def test_st_johns_wort_induces_rivaroxaban_and_undoes_contraception() -> None:
    b = Builder(sex="female", age=34)
    b.med("St John's wort")
    b.med("rivaroxaban")
    b.med("ethinylestradiol")
    fired = _fired(b)
    assert {"ddi-mechanism-induction", "contraception-inducer"} <= fired
    # the mechanism table words rivaroxaban's case: the generic role line stands down
    assert not fired & {"prop-ddi-inducer", "prop-ddi-inducer-started"}


def test_allopurinol_with_azathioprine_is_found_and_febuxostat_too() -> None:
    for xo in ("allopurinol", "febuxostat"):
        b = Builder()
        b.med("azathioprine")
        b.med(xo)
        assert "ddi-mechanism-inhibition" in _fired(b)
    b = Builder()
    b.med("azathioprine")
    b.med("colchicine")
    assert "ddi-mechanism-inhibition" not in _fired(b)


def test_a_new_inhibitor_is_urgent_and_an_old_one_a_review() -> None:
    new = Builder()
    new.med("fentanyl")
    _started(new, "clarithromycin", 7)
    fired = _fired(new)
    assert "prop-ddi-inhibitor-started" in fired
    assert "prop-ddi-inhibitor" not in fired  # the recent line says it
    old = Builder()
    old.med("fentanyl")
    _started(old, "clarithromycin", 200)
    fired = _fired(old)
    assert "prop-ddi-inhibitor" in fired and "prop-ddi-inhibitor-started" not in fired
    none = Builder()
    none.med("fentanyl")
    _started(none, "azithromycin", 7)
    assert not _fired(none) & {"prop-ddi-inhibitor", "prop-ddi-inhibitor-started"}


def test_a_new_inducer_and_an_old_one() -> None:
    new = Builder()
    new.med("fentanyl")
    _started(new, "rifampicin", 10)
    assert "prop-ddi-inducer-started" in _fired(new)
    old = Builder()
    old.med("fentanyl")
    _started(old, "rifampicin", 400)
    fired = _fired(old)
    assert "prop-ddi-inducer" in fired and "prop-ddi-inducer-started" not in fired


def test_the_mechanism_table_wins_over_the_role_line() -> None:
    b = Builder()
    b.med("quetiapine")  # the table words quetiapine's case itself
    _started(b, "clarithromycin", 7)
    fired = _fired(b)
    assert "ddi-mechanism-inhibition" in fired
    assert not fired & {"prop-ddi-inhibitor", "prop-ddi-inhibitor-started"}


def _ended(days_ago: int, still_taken: bool = False) -> Builder:
    b = Builder()
    m = b.med("rifampicin")
    b.meds[0] = replace(m, status="stopped", ends=AS_OF - timedelta(days=days_ago))
    if still_taken:
        b.med("rifampicin", AS_OF - timedelta(days=3))
    b.med("fentanyl")
    return b


def test_an_inducer_stopped_recently_raises_a_narrow_index_substrate() -> None:
    assert "prop-ddi-inducer-stopped" in _fired(_ended(10))
    assert "prop-ddi-inducer-stopped" not in _fired(_ended(60))  # worn off long ago
    assert "prop-ddi-inducer-stopped" not in _fired(_ended(10, still_taken=True))


def test_acid_suppression_with_oral_iron_is_a_routine_review() -> None:
    b = Builder()
    b.med("ferrous sulfate")
    b.med("omeprazole")
    assert "prop-ddi-acid-absorption" in _fired(b)
    c = next(x for x in CRITERIA if x.id == "prop-ddi-acid-absorption")
    assert c.option.urgency_class == "routine" and c.priority == "review"
    alone = Builder()
    alone.med("ferrous sulfate")
    alone.med("paracetamol")
    assert "prop-ddi-acid-absorption" not in _fired(alone)
    h2 = Builder()
    h2.med("itraconazole")
    h2.med("famotidine")
    assert "prop-ddi-acid-absorption" in _fired(h2)


def _generality(c_id: str) -> int:
    c = next(x for x in CRITERIA if x.id == c_id)
    return 2 if c.trigger.roles is not None else 1 if c.trigger.pk_table is not None else 0


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name)
def test_no_generic_interaction_line_repeats_a_more_specific_one(bundle: Path) -> None:
    firings = evaluate(CRITERIA, Facts(ingest(bundle.read_bytes())))
    pairs: dict[frozenset[str], list[str]] = {}
    for f in firings:
        meds = f.binding.meds
        if f.criterion.kind == "drug-drug" and "a" in meds and "b" in meds:
            pairs.setdefault(frozenset((meds["a"].ref, meds["b"].ref)), []).append(f.criterion.id)
    for pair, ids in pairs.items():
        generic = [i for i in ids if _generality(i) > 0]
        for i in generic:
            beaten = [j for j in ids if _generality(j) < _generality(i)]
            assert not beaten, f"{i} repeats {beaten} on {bundle.name} ({sorted(pair)})"


def test_a_named_pair_criterion_keeps_its_judgement_even_when_silent() -> None:
    """Simvastatin within its ceiling beside verapamil: the dose-ceiling criterion names the
    pair and does not fire, and the role line does not second-guess it."""
    b = Builder()
    b.med("simvastatin", dose_mg=10.0)
    b.med("verapamil")
    fired = _fired(b)
    assert not fired & {"prop-ddi-inhibitor", "prop-ddi-inhibitor-started"}
    other = Builder()
    other.med("fentanyl")
    other.med("verapamil")
    assert "prop-ddi-inhibitor" in _fired(other)  # no criterion names that pair


def test_the_table_judges_the_substrates_it_lists() -> None:
    """Budesonide is in the mechanism table for strong CYP3A inhibitors only: a moderate one
    (ciprofloxacin) is below the table's threshold, and the role line stays silent too."""
    assert by_roles("ciprofloxacin", "budesonide", "inhibition", STRONG, SUBSTRATES) is None
    assert by_roles("ciprofloxacin", "fentanyl", "inhibition", STRONG, SUBSTRATES) is not None


@pytest.mark.parametrize(("days_ago", "recent"), [(27, True), (28, True), (29, False)])
def test_recent_means_first_ordered_28_days_ago_or_less(days_ago: int, recent: bool) -> None:
    """The window's edge: the data states ``<=`` 28 days; a day more is the established pair."""
    b = Builder()
    b.med("fentanyl")
    _started(b, "clarithromycin", days_ago)
    fired = _fired(b)
    assert ("prop-ddi-inhibitor-started" in fired) is recent
    assert ("prop-ddi-inhibitor" in fired) is not recent
