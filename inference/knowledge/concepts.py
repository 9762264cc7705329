"""The concept index: every concept some check of the knowledge can fire on, and each item of a
record placed against it (covered or not).

``concept_index`` builds the index once per knowledge (the shipped one, or a site's) from what
the knowledge holds when it is built, so a criterion or a table added later is read without a
change here:

* every firing criterion's trigger, walked as data: a drug spec (``drug:``, ``class:``,
  ``flag:``) anywhere in it stands for its members, a condition group list for its groups, a
  ``quantity`` for its result codes, and the table-driven parts (``renal_table``, ``pk_table``,
  ``level``, an anticholinergic ``count``, the kidney, blood-pressure, smoking, weight and
  pregnancy parts) for what their tables and facts read. What a trigger asks to be *absent*
  (``absent_*``, ``none_of``) and the populations it stands back from (``outside``) are not
  read: such a check cannot fire on the item it looks for;
* the kidney dose bands of the drug table, and every other table of ``data/`` that a check reads
  (levels, interactions, pregnancy, scope and any table added since), harvested by shape: a drug
  spec, a known ingredient name, a LOINC code under a key that names LOINC, or a result group
  (``LOINC_GROUPS``) or a condition group under a ``group`` or ``quantity`` key. The files
  that only word, rank or explain (``_NOT_CHECKS``) are skipped;
* the registered rules of ``rules.py`` (blood pressure, cardiovascular risk, falls, social
  needs), whose reads are listed here (``_RULE_*``).

``items`` then lists, for one patient, each active medicine, active condition, problem of an
encounter of the last ``coverage.encounter_days``, and result, released report and active order
of the last ``coverage.results_days``, each covered or not. A reader for another kind of record
item joins ``_READERS``: one function from ``Facts`` and the index to items. No criteria here,
no I/O after import.

Which results are items: a result is one when a check reads its code (covered), or when it is a
test a clinician must interpret (a laboratory result, a score), uncovered when no check reads
it. The vital signs and body measurements of the FHIR vital-signs profile (``scope.yaml``
``measurements``) are recorded at every contact as context: a height, a BMI or a pulse that no
check reads is not something the plan failed to reason about, and naming it in every statement
buried the results that are. Such a reading is still an item when a check reads it (weight,
blood pressure) or when the record itself flags it abnormal (its interpretation code), since
then someone must act on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Literal

from service.record.profile import REPORT_RELEASED, Code, Condition, Observation, Order, Report
from service.record.vocabulary import LOINC, LOINC_GROUPS

from . import conditions, drugs
from ._datafile import DATA_DIR, parse_file
from .criteria.schema import SPEC
from .facts import SUSPECTED, Facts
from .goals import palliative_refs
from .high_risk import HIGH_RISK, Risk, risk_of
from .parameters import param
from .reports_orders import REPORTS_ORDERS
from .rules import _CVD, _FRID, _TREATS, NEED_KINDS
from .scope import SCOPE
from .site import Knowledge, active, firing

__all__ = [
    "ITEM_KINDS",
    "ConceptIndex",
    "Item",
    "ItemKind",
    "concept_index",
    "flagged",
    "items",
    "measurement",
    "uncovered",
]

ItemKind = Literal["medicine", "encounter-problem", "condition", "report", "order", "result"]
# The order the statement names uncovered items in, after the high-risk medicines.
ITEM_KINDS: tuple[ItemKind, ...] = (
    "medicine",
    "encounter-problem",
    "condition",
    "report",
    "order",
    "result",
)

# Data files that word, rank, time or explain what the checks found, or that define the
# vocabularies the index is built over (every drug, every condition group, and the monographs,
# whose properties reach the checks as drug flags that the criteria name): nothing in them makes
# a check fire on an item by itself. The goals of care name medicines only to offer their review
# in palliative care: that line covers no medicine of any other patient.
_NOT_CHECKS = frozenset(
    {
        "goals_of_care.yaml",
        "actions.yaml",
        "changelog.yaml",
        "claims.yaml",
        "clinical_drugs.json",
        "conditions.yaml",
        "drugs.yaml",
        "high_risk_medicines.yaml",
        "locale.yaml",
        "monographs.yaml",
        "panels.yaml",
        "parameters.yaml",
        "patient_wording.yaml",
        "points.yaml",
        "precedence.yaml",
        "problem_groups.yaml",
        "rule_points.yaml",
        "themes.yaml",
        "timeframes.yaml",
    }
)
_LOINC = re.compile(r"^[0-9]{1,7}-[0-9]$")
# Keys under which a table names a result by its group (``LOINC_GROUPS``): a reference interval
# of "potassium".
_TABLE_QUANTITY_KEYS = frozenset({"group", "groups", "quantity", "quantities"})
# Keys under which a table names a condition group (``conditions.GROUPS_BY_KEY``) it acts on.
_TABLE_CONDITION_KEYS = frozenset({"group", "groups", "condition", "conditions"})
# Trigger keys not read as concepts: what must be absent, where the check stands back, and the
# tests a check asks for when none is recent (``monitor``, a stay's ``unchecked``): such a check
# reads a result's date, never its value, so it does not cover the result.
_NOT_READ = frozenset(
    {"absent_drugs", "absent_conditions", "none_of", "outside", "ops", "monitor", "unchecked"}
)
_GROUP_KEYS = frozenset({"any_conditions", "ever_conditions", "groups"})
_QUANTITY_KEYS = frozenset({"quantity"})
# Trigger flags and the result groups (``LOINC_GROUPS`` keys) the facts behind them read.
_FLAG_QUANTITIES: Mapping[str, tuple[str, ...]] = {
    "renal_table": ("egfr", "creatinine"),
    "kidney_discordant": ("egfr", "creatinine"),
    "kidney_unsteady": ("egfr", "creatinine"),
    "lab_ckd": ("egfr", "creatinine", "uacr"),
    "bp_severe": ("systolic_bp", "diastolic_bp", "bp_panel"),
    "smoking": ("smoking_status",),
    "smoking_stopped_within": ("smoking_status",),
    "weight_dose": ("weight",),
}
# What the registered rules read (``rules.py``): the drugs by spec, the condition groups, the
# result groups and whether recorded social needs are read.
_RULE_SPECS = (
    *(s for specs in _TREATS.values() for s in specs),
    *(f"class:{c}" for c in _FRID),
    "class:anticoagulant",
    "class:antiplatelet",
    "class:nsaid",
    "class:statin",
    "class:thrombolytic",
)
_RULE_GROUPS = (
    *_CVD,
    *_TREATS,
    "sdoh-need",
    "ckd",
    "dementia",
    "depression",
    "fracture",
    "hypertension",
    "limited-life-expectancy",
    "osteoporosis",
)
_RULE_QUANTITIES = ("systolic_bp", "diastolic_bp", "bp_panel", "ldl", "mmse")


@dataclass(frozen=True, slots=True)
class ConceptIndex:
    """What some check can fire on: ingredient names, condition groups, LOINC codes of results;
    ``pregnancy``: a check reads the pregnancy and breastfeeding facts; ``needs``: the kinds of
    recorded social need a check reads (empty when none does); ``report_statuses`` and
    ``order_intents``: the reports and orders a net reads whatever their code (``report_net``:
    every released report, every active order whose intent is an order), ``report_days`` how
    far back it reads reports."""

    drugs: frozenset[str]
    groups: frozenset[str]
    loincs: frozenset[str]
    pregnancy: bool
    needs: frozenset[str]
    report_statuses: frozenset[str] = frozenset()
    order_intents: frozenset[str] = frozenset()
    report_days: int = 0


@dataclass(slots=True)
class _Reads:
    specs: set[str]
    groups: set[str]
    quantities: set[str]
    loincs: set[str]
    names: set[str]
    pregnancy: bool = False


def _walk_trigger(node: object, out: _Reads, key: str = "") -> None:
    """Every concept a trigger (dumped as data) reads, its alternatives included."""
    if isinstance(node, Mapping):
        for k, v in node.items():
            if k in _NOT_READ or v in (None, False, (), [], ""):
                continue
            _flagged(str(k), v, out)
            _walk_trigger(v, out, str(k))
    elif isinstance(node, list | tuple):
        for v in node:
            _walk_trigger(v, out, key)
    elif isinstance(node, str):
        if SPEC.match(node):
            out.specs.add(node)
        elif key in _GROUP_KEYS:
            out.groups.add(node)
        elif key in _QUANTITY_KEYS:
            out.quantities.add(node)


def _flagged(key: str, value: object, out: _Reads) -> None:
    """The trigger parts that read a table or a fact rather than a named concept (the tables
    themselves are harvested whole, ``_tables``)."""
    out.quantities.update(_FLAG_QUANTITIES.get(key, ()))
    if key == "count" and isinstance(value, Mapping) and value.get("by") == "acb":
        out.names.update(d.name for d in drugs.DRUGS if d.acb)
    elif key in ("pregnant", "lactating"):
        out.pregnancy = True


def _harvest(node: object, out: _Reads, key: str) -> None:
    """Drug specs, known ingredient names (as values or keys) and LOINC codes (under a key
    that names LOINC) anywhere in one table."""
    known = _KNOWN_NAMES
    if isinstance(node, Mapping):
        for k, v in node.items():
            if isinstance(k, str) and k in known:
                out.names.add(k)
            _harvest(v, out, str(k))
    elif isinstance(node, list | tuple):
        for v in node:
            _harvest(v, out, key)
    elif isinstance(node, str):
        if SPEC.match(node):
            out.specs.add(node)
        elif node in known:
            out.names.add(node)
        elif ("loinc" in key.lower() or "observation" in key.lower()) and _LOINC.match(node):
            out.loincs.add(node)
        elif key in _TABLE_QUANTITY_KEYS and node in LOINC_GROUPS:
            out.quantities.add(node)
        if key in _TABLE_CONDITION_KEYS and node in conditions.GROUPS_BY_KEY:
            out.groups.add(node)  # a table's rule on a condition group (adrenal insufficiency)


_KNOWN_NAMES = frozenset(d.name for d in drugs.DRUGS)


def _tables(out: _Reads) -> None:
    """Every check table of ``data/`` (all but ``_NOT_CHECKS``), and the drug table's kidney
    dose bands, read by the checks that fire on a kidney-cleared medicine."""
    for path in sorted((*DATA_DIR.glob("*.yaml"), *DATA_DIR.glob("*.json"))):
        if path.name not in _NOT_CHECKS:
            _harvest(parse_file(path), out, "")
    out.names.update(d.name for d in drugs.DRUGS if drugs.renal_limits(d.name))


@cache
def _index_of(knowledge: Knowledge) -> ConceptIndex:
    out = _Reads(set(_RULE_SPECS), set(_RULE_GROUPS), set(_RULE_QUANTITIES), set(), set())
    for c in firing(knowledge):
        _walk_trigger(c.trigger.model_dump(), out)
    _tables(out)
    names = out.names | {n for s in out.specs for n in drugs.members(s)}
    kidney = ("egfr", "creatinine")
    quantities = {q for x in out.quantities for q in (kidney if x == "kidney" else (x,))}
    loincs = out.loincs | {code for q in quantities for code in LOINC_GROUPS.get(q, ())}
    groups = frozenset(g for g in out.groups if g in conditions.GROUPS_BY_KEY)
    needs = NEED_KINDS if "sdoh-need" in groups else frozenset()
    return ConceptIndex(
        frozenset(names),
        groups,
        frozenset(loincs),
        out.pregnancy,
        needs,
        frozenset(REPORT_RELEASED),
        frozenset(REPORTS_ORDERS.order_intents.values),
        REPORTS_ORDERS.report_lookback_days.value,
    )


def concept_index(knowledge: Knowledge | None = None) -> ConceptIndex:
    """The index of ``knowledge`` (the active one when None), built once per knowledge."""
    return _index_of(knowledge if knowledge is not None else active())


# ------------------------------------------------------------------------------------ items


@dataclass(frozen=True, slots=True)
class Item:
    """One item of the record placed against the index. ``label`` names it as the statement
    does; ``risk`` is the high-risk tier of a medicine (None when on no list); ``known``:
    False for a medicine the drug knowledge does not recognise at all."""

    kind: ItemKind
    ref: str
    label: str
    covered: bool
    risk: Risk | None = None
    known: bool = True
    suspected: bool = False

    def rank(self) -> tuple[int, int, str]:
        """Risk first (a high-alert medicine before all else), then the kind, then the name."""
        tier = self.risk.rank if self.risk is not None else len(HIGH_RISK.tiers)
        return (tier, ITEM_KINDS.index(self.kind), self.label.lower())


_SEMANTIC_TAG = re.compile(r"\s*\(([a-z ]+)\)\s*$")
# Semantic tags of a problem that are no problem to check: a situation ("medication review
# due"), a procedure or an event recorded on the problem list.
_NOT_PROBLEMS = frozenset({"situation", "procedure", "event", "regime/therapy"})


def _name(text: str) -> str:
    return _SEMANTIC_TAG.sub("", text).strip()


def _medicines(f: Facts, index: ConceptIndex) -> Iterator[Item]:
    seen: set[str] = set()
    for m in f.meds:
        if m.text in seen:
            continue
        seen.add(m.text)
        covered = any(n in index.drugs for n in m.drugs)
        yield Item("medicine", m.ref, m.text, covered, risk_of(m.text, m.drugs), bool(m.drugs))


def _context_only(pr: Condition, groups: tuple[str, ...]) -> bool:
    """A record entry no check needs to read: a past event, a record artefact, social context
    that is not a need, or a situation or procedure on the problem list."""
    tag = _SEMANTIC_TAG.search(pr.text)
    if tag is not None and tag.group(1) in _NOT_PROBLEMS:
        return True
    kinds = {conditions.GROUPS_BY_KEY[g].kind for g in groups}
    if not kinds or kinds - {"history", "family", "noise", "sdoh"}:
        return False
    return "sdoh" not in kinds or not conditions.is_sdoh_need(pr)


def _condition_covered(
    pr: Condition, groups: tuple[str, ...], index: ConceptIndex, context: Set[str]
) -> bool:
    if set(groups) & index.groups:
        return True
    if index.needs and conditions.is_sdoh_need(pr):
        return True
    return pr.ref in context


def _pregnancy_refs(f: Facts, index: ConceptIndex) -> set[str]:
    if not index.pregnancy:
        return set()
    held = (f.pregnancy, f.lactation)
    return {r for h in held if h is not None for r in h.refs}


def _conditions(f: Facts, index: ConceptIndex) -> Iterator[Item]:
    # Entries read as context: the pregnancy facts, and a palliative or end-of-life record
    # (the goals of care, which change the whole plan).
    context = _pregnancy_refs(f, index) | palliative_refs(f)
    for pr, groups in f.problems:
        if not pr.active or _context_only(pr, groups):
            continue
        label = _name(pr.text) or pr.ref
        if pr.verification in SUSPECTED:
            yield Item("condition", pr.ref, f"{label} (suspected)", False, suspected=True)
            continue
        if not f.is_current(pr, groups):  # resolved, or an acute illness long past
            continue
        yield Item("condition", pr.ref, label, _condition_covered(pr, groups, index, context))


def _within(d: date | None, as_of: date, days: float) -> bool:
    return d is not None and 0 <= (as_of - d).days <= days


def _encounter_problems(f: Facts, index: ConceptIndex) -> Iterator[Item]:
    """Each reason and diagnosis of an encounter of the last ``coverage.encounter_days`` that
    is not an active problem listed already."""
    days = param("coverage.encounter_days")
    listed = {pr.ref for pr in f.p.active_problems}
    by_ref = {pr.ref: (pr, gs) for pr, gs in f.problems}
    pregnancy = _pregnancy_refs(f, index)
    seen: set[str] = set()
    for e in f.p.encounters:
        if not _within(e.start, f.p.as_of, days):
            continue
        for ref in (*e.reason_refs, *e.diagnoses):
            got = by_ref.get(ref)
            if got is None or ref in listed or ref in seen or _context_only(*got):
                continue
            seen.add(ref)
            pr, gs = got
            covered = _condition_covered(pr, gs, index, pregnancy)
            yield Item("encounter-problem", ref, _encounter_label(pr.text, e.start), covered)
        said = e.reason_text or next((c.display for c in e.reasons if c.display), "")
        if (e.reasons or said) and not e.reason_refs and said.lower() not in seen:
            seen.add(said.lower())
            probe = Condition(e.ref, said, e.reasons, "active", "confirmed", e.start)
            gs = conditions.classify(probe)
            if _context_only(probe, gs):
                continue
            if e.reasons:
                covered = _condition_covered(probe, gs, index, pregnancy)
                yield Item("encounter-problem", e.ref, _encounter_label(said, e.start), covered)
            else:
                # A reason in words only: a check may read a condition it names, never all it
                # says ("atrial fibrillation; confused for a week"), so it is not claimed.
                label = _encounter_label(said, e.start, "reason in words")
                yield Item("encounter-problem", e.ref, label, False)


def _encounter_label(text: str, day: date | None, how: str = "") -> str:
    name = _name(text) or "reason not named"
    where = ", ".join(x for x in (how, f"encounter of {day.isoformat()}" if day else "") if x)
    return f"{name} ({where})" if where else name


def _results(f: Facts, index: ConceptIndex) -> Iterator[Item]:
    """The latest result of each test of the last ``coverage.results_days`` that is a
    reasoning item (see the module's docstring: a plain vital sign or body measurement that no
    check reads and the record does not flag is context, not an item)."""
    days = param("coverage.results_days")
    seen: set[str] = set()
    for o in f.p.observations:
        key = o.loinc or o.display.lower()
        if key in seen or not _within(o.effective, f.p.as_of, days) or not _valued(o):
            continue
        seen.add(key)
        covered = o.loinc in index.loincs
        if not covered and measurement(o) and not flagged(o):
            continue
        day = o.effective.isoformat() if o.effective is not None else ""
        name = o.display or o.loinc or "result without a name"
        yield Item("result", o.ref, f"{name} result of {day}", covered)


def measurement(o: Observation) -> bool:
    """A vital sign or body measurement (``scope.yaml`` ``measurements``), by code or name."""
    m = SCOPE.measurements
    if o.loinc:
        return o.loinc in m.codes
    low = o.display.lower()
    return any(n in low for n in m.names)


def flagged(o: Observation) -> bool:
    """The record flags the result abnormal (an abnormal, high or low interpretation code)."""
    abnormal = SCOPE.measurements.abnormal
    return any(c.code in abnormal for c in o.interpretation)


def _valued(o: Observation) -> bool:
    return o.value is not None or bool(o.value_text or o.value_codes)


def _loinc_read(codes: Iterable[Code], index: ConceptIndex) -> bool:
    return any(c.system == LOINC and c.code in index.loincs for c in codes)


def _reports(f: Facts, index: ConceptIndex) -> Iterator[Item]:
    """Each released report of the last ``coverage.results_days``: covered when the report
    net reads it (``index.report_statuses``, within ``index.report_days`` of the plan day) or
    a check reads its code."""
    days = param("coverage.results_days")
    for r in f.p.reports:
        day = r.day
        if not r.released or not _within(day, f.p.as_of, days):
            continue
        yield Item("report", r.ref, _report_label(r), _report_read(r, f, index))


def _report_read(r: Report, f: Facts, index: ConceptIndex) -> bool:
    netted = r.status in index.report_statuses and _within(r.day, f.p.plan_day, index.report_days)
    return netted or _loinc_read(r.codes, index)


def _report_label(r: Report) -> str:
    name = " ".join(r.text.split()) or "report without a name"
    return f"{name} report of {r.day.isoformat()}" if r.day is not None else f"{name} report"


def _orders(f: Facts, index: ConceptIndex) -> Iterator[Item]:
    """Each active order written in the last ``coverage.results_days`` (or undated): covered
    when the order net chases it (its intent is an order, ``index.order_intents``) or a check
    reads its code."""
    days = param("coverage.results_days")
    for x in f.p.orders:
        if not x.active or (x.authored is not None and not _within(x.authored, f.p.as_of, days)):
            continue
        covered = x.intent in index.order_intents or _loinc_read(x.codes, index)
        yield Item("order", x.ref, _order_label(x), covered)


def _order_label(x: Order) -> str:
    name = " ".join(x.text.split()) or "test without a name"
    return (
        f"{name} ordered {x.authored.isoformat()}" if x.authored is not None else f"{name} ordered"
    )


_READERS: tuple[Callable[[Facts, ConceptIndex], Iterator[Item]], ...] = (
    _medicines,
    _encounter_problems,
    _conditions,
    _results,
    _reports,
    _orders,
)


def items(f: Facts, index: ConceptIndex | None = None) -> tuple[Item, ...]:
    """Every item of one record the coverage statement answers for, covered or not."""
    ix = index if index is not None else concept_index()
    return tuple(i for read in _READERS for i in read(f, ix))


def uncovered(found: Iterable[Item]) -> tuple[Item, ...]:
    """The items no check covers, ordered by risk (``Item.rank``)."""
    return tuple(sorted((i for i in found if not i.covered), key=Item.rank))
