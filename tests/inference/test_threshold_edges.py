"""Every numeric threshold of the knowledge, tested at its edge.

The cases come from the data, not from a list: each numeric part of each criterion's trigger
(ages, durations, daily doses, lab results, monitoring intervals, the days since a hospital
stay, weight-based ceilings) and each kidney-function band of the drugs table. For each, a
synthetic record (``criteria_factory``) is put at the threshold and one unit of the threshold's
own precision either side, and the criterion must fire exactly where the comparison the data
states (``<``, ``<=``, ``>``, ``>=``) holds. A part no record can be put on the edge of is
listed by ``_uncovered`` with the reason, so a new kind of part is seen, not silently skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal

import pytest

from inference.embedded import known_options
from inference.knowledge import analyse
from inference.knowledge.criteria import load
from inference.knowledge.criteria.interpret import VERIFY_PREFIX, _cmp, evaluate
from inference.knowledge.criteria.schema import NUMERIC_PARTS, Criterion, Trigger
from inference.knowledge.drugs import DRUGS, RenalLimit, renal_limits
from inference.knowledge.equivalence import equivalent
from inference.knowledge.facts import Facts
from service.record.profile import Observation, PatientProfile
from service.record.vocabulary import LOINC_GROUPS
from tests.inference.criteria_factory import AS_OF, CHILD_KG, Builder, _excluded, _satisfy

CRITERIA = tuple(c for c in load() if c.status == "active")

# The record a case is built on, given the value put at the edge.
Record = Callable[[float], PatientProfile]


@dataclass(frozen=True)
class Edge:
    """One numeric part: where it is read, its threshold and comparison, and how to put a
    record's value at ``value``. ``holds`` says whether the criterion must fire at a value
    (every part of the trigger reading the same number must hold)."""

    criterion: Criterion
    part: str
    threshold: float
    record: Record
    holds: Callable[[float], bool]
    whole: bool = False  # the number is counted in whole units (years, days)

    @property
    def id(self) -> str:
        return f"{self.criterion.id}:{self.part}"


def _unit(threshold: float, whole: bool) -> Decimal:
    """One unit of the threshold's own precision (``0.125`` -> 0.001, ``30`` -> 1); a whole
    quantity (an age, a count of days) moves by one at least."""
    exp = Decimal(repr(float(threshold))).normalize().as_tuple().exponent
    step = Decimal(1).scaleb(min(int(exp), 0))
    return max(step, Decimal(1)) if whole else step


def _values(e: Edge) -> tuple[float, ...]:
    t = Decimal(repr(float(e.threshold)))
    u = _unit(e.threshold, e.whole)
    return tuple(float(t + k * u) for k in (-1, 0, 1))


def _builder(c: Criterion, **kw: int) -> Builder:
    b = Builder(**kw)
    _satisfy(b, c.trigger, c.params, set(_excluded(c)))
    return b


def _alone(c: Criterion) -> Criterion:
    """``c`` without its exceptions: the trigger's own edge is tested, not an excuse's."""
    return c.model_copy(update={"exceptions": ()})


def _fires(c: Criterion, p: PatientProfile) -> bool:
    return any(f.criterion.id == c.id for f in evaluate([_alone(c)], Facts(p)))


def _all(t: Trigger, parts: tuple[str, ...], params: dict[str, float]) -> Callable[[float], bool]:
    """Every given part of ``parts`` holds for a value (they read the same number)."""
    given = [(p, params[getattr(t, p)]) for p in parts if getattr(t, p) is not None]
    return lambda v: all(_cmp(v, t.ops[p], thr) for p, thr in given)


def _with(b: Builder, fix: Callable[[Builder], None]) -> PatientProfile:
    fix(b)
    return b.build()


def _age_edges(c: Criterion) -> Iterator[Edge]:
    t = c.trigger
    for part in ("age_min", "age_max"):
        if getattr(t, part) is None:
            continue

        def record(v: float) -> PatientProfile:
            return _with(_builder(c), lambda b: setattr(b, "age", int(v)))

        holds = _all(t, ("age_min", "age_max"), c.params)
        yield Edge(c, part, c.params[getattr(t, part)], record, holds, whole=True)


def _first_order(b: Builder, authored: date | None = None, dose: float | None = None) -> None:
    """The bound medicine ``a`` (the first order of the record) ordered then, at that dose."""
    m = b.meds[0]
    b.meds[0] = replace(
        m,
        authored=authored or m.authored,
        dose_value=dose if dose is not None else m.dose_value,
        dose_unit="mg" if dose is not None else m.dose_unit,
        times_per_day=1.0 if dose is not None else m.times_per_day,
    )


def _drug_edges(c: Criterion) -> Iterator[Edge]:
    """Parts read from the bound medicine: how long it has been taken, its daily dose."""
    t = c.trigger
    if not t.drugs or t.stay is not None or t.change is not None:
        return
    days = ("min_days_on", "started_within")
    for part in days:
        if getattr(t, part) is None:
            continue

        def on_days(v: float) -> PatientProfile:
            return _with(_builder(c), lambda b: _first_order(b, AS_OF - timedelta(days=int(v))))

        yield Edge(c, part, c.params[getattr(t, part)], on_days, _all(t, days, c.params), True)
    if t.min_years_on is not None:

        def on_years(v: float) -> PatientProfile:
            when = AS_OF.replace(year=AS_OF.year - int(v))
            return _with(_builder(c), lambda b: _first_order(b, when))

        holds = _all(t, ("min_years_on",), c.params)
        yield Edge(c, "min_years_on", c.params[t.min_years_on], on_years, holds, whole=True)
    if t.daily_mg_above is not None:

        def dosed(v: float) -> PatientProfile:
            return _with(_builder(c), lambda b: _first_order(b, dose=v))

        holds = _all(t, ("daily_mg_above",), c.params)
        yield Edge(c, "daily_mg_above", c.params[t.daily_mg_above], dosed, holds)
    if t.equivalent_daily_min is not None and t.equivalence is not None:
        yield _equivalent_edge(c, t.equivalence, t.equivalent_daily_min)


def _equivalent_edge(c: Criterion, table: str, part: str) -> Edge:
    """The bound medicine dosed so that its reference-drug equivalent is the value."""

    def dosed(v: float) -> PatientProfile:
        def put(b: Builder) -> None:
            per_mg = equivalent(table, b.meds[0].text, 1.0)
            _first_order(b, dose=v / per_mg.reference_daily_mg if per_mg else v)

        return _with(_builder(c), put)

    holds = _all(c.trigger, ("equivalent_daily_min",), c.params)
    return Edge(c, "equivalent_daily_min", c.params[part], dosed, holds)


def _lab_edges(c: Criterion) -> Iterator[Edge]:
    t = c.trigger
    for i, lab in enumerate(t.labs):
        quantity = "egfr" if lab.quantity == "kidney" else lab.quantity
        same = [x for x in t.labs if x.quantity == lab.quantity]

        def record(v: float, quantity: str = quantity) -> PatientProfile:
            def put(b: Builder) -> None:
                when = next((o.effective for o in b.obs if o.display == quantity), AS_OF)
                b.obs = [o for o in b.obs if o.display != quantity]
                b.lab(quantity, v, when or AS_OF)

            return _with(_builder(c), put)

        def holds(v: float, same: list = same) -> bool:  # type: ignore[type-arg]
            return all(_cmp(v, x.op, c.params[x.param]) for x in same)

        yield Edge(c, f"labs[{i}] {lab.quantity} {lab.op}", c.params[lab.param], record, holds)


def _monitor_edges(c: Criterion) -> Iterator[Edge]:
    m = c.trigger.monitor
    if m is None:
        return

    def record(v: float) -> PatientProfile:
        def put(b: Builder) -> None:
            when = AS_OF - timedelta(days=int(v))
            b.obs.append(
                Observation("Observation/last", LOINC_GROUPS[m.quantity][0], "", 5.0, "", when)
            )

        return _with(_builder(c), put)

    def holds(v: float) -> bool:
        return _cmp(v, m.op, c.params[m.days])

    yield Edge(c, f"monitor {m.quantity} {m.op}", c.params[m.days], record, holds, whole=True)


def _stay_edges(c: Criterion) -> Iterator[Edge]:
    st = c.trigger.stay
    if st is None or st.within_days is None or st.within_op is None:
        return
    op, threshold = st.within_op, c.params[st.within_days]

    def record(v: float) -> PatientProfile:
        return _builder(c, discharged_days=int(v)).build()

    yield Edge(c, f"stay {op}", threshold, record, lambda v: _cmp(v, op, threshold), True)


def _weight_edges(c: Criterion) -> Iterator[Edge]:
    """A once-daily dose per kg at the edge of each ceiling (one dose a day: the dose is the
    day's total, so both ceilings read the same number)."""
    w = c.trigger.weight_dose
    if w is None or not c.trigger.drugs:
        return
    factor = Decimal(repr(c.params[w.rounding])) if w.rounding else Decimal(1)
    ceilings = [Decimal(repr(c.params[x])) * factor for x in (w.per_dose, w.per_day) if x]
    for name, ceiling in zip(("per_dose", "per_day"), ceilings, strict=False):

        def record(v: float) -> PatientProfile:
            dose = float(Decimal(repr(v)) * Decimal(repr(CHILD_KG)))
            return _with(_builder(c), lambda b: _first_order(b, dose=dose))

        def holds(v: float) -> bool:
            return any(_cmp(v, w.op, float(x)) for x in ceilings)

        yield Edge(c, f"weight_dose {name} {w.op}", float(ceiling), record, holds)


_EDGES: tuple[Callable[[Criterion], Iterator[Edge]], ...] = (
    _age_edges,
    _drug_edges,
    _lab_edges,
    _monitor_edges,
    _stay_edges,
    _weight_edges,
)
EDGES = tuple(e for c in CRITERIA for make in _EDGES for e in make(c))


def _parts(t: Trigger) -> list[str]:
    """Every numeric part of a trigger, by the name the edges give it (nested ones too)."""
    out = [p for p in NUMERIC_PARTS if getattr(t, p) is not None]
    out += [f"labs[{i}]" for i in range(len(t.labs))]
    for name in ("monitor", "count", "stroke_risk", "weight_dose", "recent_event", "vaccine"):
        out += [name] if getattr(t, name) is not None else []
    out += ["stay"] if t.stay is not None and t.stay.within_days else []
    out += ["recent_orders"] if t.recent_orders is not None else []
    out += ["level"] if t.level is not None and t.level.days else []
    return out


def _uncovered() -> dict[str, str]:
    """Numeric parts of the triggers that no edge reaches, each with why."""
    reached = {(e.criterion.id, e.part.split()[0]) for e in EDGES}
    out: dict[str, str] = {}
    for c in CRITERIA:
        for part in _parts(c.trigger):
            if (c.id, part) not in reached:
                out[f"{c.id}:{part}"] = _why(c.trigger, part)
    return out


def _why(t: Trigger, part: str) -> str:
    if part in ("count", "stroke_risk"):
        return "a count or score of several facts: no one value to put at the edge"
    if part in ("recent_event", "vaccine", "recent_orders", "level"):
        return "a window the record's facts apply (Facts.events, doses, recent_orders)"
    if part == "started_within":
        return "a window on a perpetrator's first order, its edge in test_pathway_role_interactions"
    if part == "own_monitor_grace":
        return "each drug's own interval (data/monographs.yaml), its edge in test_property_criteria"
    if part.startswith("gestation"):
        return "the synthetic pregnancy states no gestational age"
    if t.stay is not None or t.change is not None:
        return "the bound medicine is the stay's changed one"
    return "no record builder for this part"


def test_the_edges_cover_the_numeric_parts_of_the_data() -> None:
    """Most numeric parts are reached; what is not is named with the reason (the report)."""
    missing = _uncovered()
    assert all(why != "no record builder for this part" for why in missing.values()), missing
    assert len(EDGES) >= 180, len(EDGES)


@pytest.mark.parametrize("edge", EDGES, ids=[e.id for e in EDGES])
def test_a_criterion_fires_as_its_comparison_says_at_the_edge(edge: Edge) -> None:
    got = {v: _fires(edge.criterion, edge.record(v)) for v in _values(edge)}
    want = {v: edge.holds(v) for v in got}
    assert any(want.values()), f"{edge.id}: no value at the edge satisfies the trigger"
    assert got == want, f"{edge.id} at {edge.threshold}: fired {got}, comparison says {want}"


# -- the kidney-function bands of the drugs table ---------------------------------------------

RENAL = next(c for c in CRITERIA if c.trigger.renal_table)
BANDS = tuple(
    (d.name, lim)
    for d in DRUGS
    if "/" not in d.name
    for lim in renal_limits(d.name)
    if lim.spec == f"drug:{d.name}"
)


def _band_values(lim: RenalLimit) -> Iterator[float]:
    for edge in (lim.below, lim.at_least):
        if edge is not None:
            u = _unit(edge, True)
            yield from (float(Decimal(repr(edge)) + k * u) for k in (-1, 0, 1))


def _in_band(lim: RenalLimit, v: float) -> bool:
    """The band as the data states it: ``at_least`` <= v, and v ``below_op`` ``below``."""
    return _cmp(v, lim.below_op, lim.below) and (lim.at_least is None or v >= lim.at_least)


def _bound_limit(name: str, v: float) -> RenalLimit | None:
    """The band the kidney criterion binds for ``name`` with only an eGFR of ``v`` on record
    (the measure a band's source uses stands in for the other when only one is known)."""
    b = Builder()
    b.med(name)
    b.lab("egfr", v)
    found = evaluate([_alone(RENAL)], Facts(b.build()))
    return next((f.binding.limit for f in found if f.binding.limit is not None), None)


@pytest.mark.parametrize(
    ("name", "lim"),
    BANDS,
    ids=[f"{n}:{lim.measure}{lim.below_op}{lim.below:g}" for n, lim in BANDS],
)
def test_a_kidney_band_applies_exactly_as_its_edges_say(name: str, lim: RenalLimit) -> None:
    """A record at each edge of the band, and one unit either side: the band is what the
    kidney criterion binds there exactly when the data's comparison puts the value inside it
    and no stricter band of the same drug holds ("stopped below 30": at 29, not at 30)."""
    for v in _band_values(lim):
        inside = _in_band(lim, v)
        others = [x for x in renal_limits(name) if x is not lim and _in_band(x, v)]
        got = _bound_limit(name, v)
        if inside and not others:
            assert got == lim, f"{name} {lim.action} at eGFR {v}: bound {got}"
        elif not inside:
            assert got != lim, f"{name} {lim.action} at eGFR {v}: bound outside its band"


# -- a dose not stated is never above a limit -------------------------------------------------

CEILINGS = tuple(
    c for c in CRITERIA if c.trigger.drugs and (c.trigger.daily_mg_above or c.trigger.weight_dose)
)


@pytest.mark.parametrize("c", CEILINGS, ids=[c.id for c in CEILINGS])
def test_an_unstated_dose_is_a_request_to_verify_with_no_finding(c: Criterion) -> None:
    """The bound medicine with no dose: the criterion asks to verify it, routine, and states
    no finding (no "dose above the limit" DetectedIssue); the same record with the dose well
    above the ceiling states it."""
    b = _builder(c)
    _first_order(b)
    b.meds[0] = replace(b.meds[0], dose_value=None, dose_unit="", times_per_day=None)
    unstated = {k: o for k, o in known_options(b.build()).items() if c.id in _criteria(k, b)}
    asks = c.trigger.weight_dose is None or c.trigger.weight_dose.verify
    assert bool(unstated) == asks, c.id  # a toxicity check says nothing of an unknown dose
    for oid, o in unstated.items():
        assert oid.startswith(VERIFY_PREFIX) and o.findings == (), oid
        assert o.urgency_class == "routine", oid
    above = _builder(c).build()
    found = [f for o in known_options(above).values() for f in o.findings]
    assert any(f.criterion == c.id and f.kind == c.kind for f in found), c.id


def _criteria(oid: str, b: Builder) -> tuple[str, ...]:
    return next(p.criteria for p in analyse(b.build()).proposals if p.id == oid)
