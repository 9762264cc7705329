"""The criteria interpreter: evaluate data criteria against a patient's typed facts.

For each criterion, every binding of its trigger (the active medicines bound to ``a``, ``b``...,
the matching problem ``cond``, the labs it reads) that no exception excuses becomes a proposal
(one per option id; several criteria proposing the same activity are merged) carrying the
points of view rendered from the templates, each with a strength from the factor table.
Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from enum import IntEnum, auto
from itertools import product
from typing import Literal

from inference.protocol import Severity
from service.core.evaluation import CATEGORY_ORDER, PRIORITY_ORDER
from service.record.profile import Condition, Immunization, Observation
from service.record.vocabulary import LOINC_SHORT_NAMES
from service.text.words import duration_words, unit_words
from service.work import checkpoint

from ..adherence import not_taken_refs
from ..analysis import Output, Point, Proposal, add_or_merge, most_urgent, refs, rid, slug
from ..claims import (
    AboveLimit,
    Claim,
    CurrentSmoker,
    FeatureRead,
    NoResult,
    NotGiven,
    NotUnderCare,
    Recent,
    StoppedInStay,
    TakenTogether,
    care_service,
    check,
    latest_named,
)
from ..dose_features import FeatureDose, Met, feature_doses
from ..drugs import (
    RenalLimit,
    drug,
    matches,
    monitor_of,
    named_in,
    renal_limit,
    renal_straddle,
    weight_max_of,
)
from ..equivalence import Equivalent, equivalent, in_table
from ..facts import (
    Conflict,
    Event,
    Facts,
    Kidney,
    MedFact,
    Unsteady,
    age_phrase,
    fmt,
    without_tag,
)
from ..levels import Level, LevelEntry, Reading, level_entry, level_of
from ..panels import PANELS
from ..parameters import param_int
from ..pk import PkEffect, by_roles, interactions
from ..reports_orders import quote
from ..scope import marked
from ..strength import Factors, tau
from ..transitions import MedChange, Stay
from ..units import (
    DAYS_PER_FORTNIGHT,
    DAYS_PER_WEEK,
    DAYS_PER_WHOLE_MONTH,
    DAYS_PER_YEAR,
    DAYS_STATED_BELOW,
    DAYS_STATED_IN_YEARS_FROM,
    PAIR,
    PER_UL_PER_THOUSAND_PER_UL,
)
from ..weight_dosing import WeightDose, per_kg
from .properties import above_max_daily, magnesium_mmol_l, smoking_stopped, stand_down
from .schema import (
    MAX_URGENCY,
    Criterion,
    LabTest,
    LevelTest,
    PointTemplate,
    Trigger,
    WeightCeiling,
    urgency_class_of,
)

__all__ = ["VERIFY_PREFIX", "Firing", "apply_criteria", "claims_of", "evaluate"]

# The id prefix of a request to verify a dose that is not stated (the action it may lead to is
# not proposed until the dose is known).
VERIFY_PREFIX = "opt-verify-"

_PLACEHOLDER = re.compile(r"\{([a-z_]+)(?:\.([a-z_0-9]+))?\}")


@dataclass(frozen=True, slots=True)
class _Cond:
    """A bound condition: a coded problem, or CKD shown by labs."""

    text: str
    refs: tuple[str, ...]
    problem: Condition | None = None


@dataclass
class Binding:
    meds: dict[str, MedFact] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # binding -> matched ingredient
    cond: _Cond | None = None
    labs: dict[str, Observation] = field(default_factory=dict)
    count: tuple[MedFact, ...] = ()
    count_value: int = 0
    monitor_last: Observation | None = None
    monitor_quantity: str = ""
    monitor_days: int = 0  # the drug's own interval for the test (``own_monitor_grace``)
    conflict: Conflict | None = None
    limit: RenalLimit | None = None
    uncertain: bool = False  # a fact it rests on is unknown (dose not stated)
    probable: bool = False  # a fact it rests on is indirect or stale
    vaccine: str = ""  # the vaccine found due
    doses: tuple[Immunization, ...] = ()  # its doses ever recorded (too few or too old)
    event: Event | None = None  # the latest recent high-stakes event
    stroke: bool = False  # the CHA2DS2-VASc threshold was met
    event_days: int = 0  # distinct days of the recent events found (``event.count``)
    pk: PkEffect | None = None  # the mechanism a ``pk_table`` binding rests on
    per_kg: WeightDose | None = None  # the bound ingredient against the child's weight
    pregnancy: bool = False  # the trigger read the current pregnancy
    lactation: bool = False  # the trigger read current breastfeeding
    level: Level | None = None  # the drug level a level test read
    stay: Stay | None = None  # the index hospital stay a stay or change test read
    change: MedChange | None = None  # the medicine change bound with ``a``
    stale_event: bool = False  # the event it rests on is not recent on the plan day
    equivalent: Equivalent | None = None  # ``a``'s daily dose as its table's reference drug
    features: FeatureDose | None = None  # a counted-feature dose rule read for ``a``
    # The kidney band holds at the lower estimate only: eGFR and clearance straddle its edge.
    straddle: bool = False

    def copy(self) -> Binding:
        return Binding(
            dict(self.meds),
            dict(self.names),
            self.cond,
            dict(self.labs),
            self.count,
            self.count_value,
            self.monitor_last,
            self.monitor_quantity,
            self.monitor_days,
            self.conflict,
            self.limit,
            self.uncertain,
            self.probable,
            self.vaccine,
            self.doses,
            self.event,
            self.stroke,
            self.event_days,
            self.pk,
            self.per_kg,
            self.pregnancy,
            self.lactation,
            self.level,
            self.stay,
            self.change,
            self.stale_event,
            self.equivalent,
            self.features,
            self.straddle,
        )


@dataclass(frozen=True, slots=True)
class Firing:
    criterion: Criterion
    binding: Binding
    proposal: Proposal


_NAMES = "abcdefgh"
_QUANTITY_LABEL = {
    "egfr": "eGFR",
    "creatinine": "creatinine",
    "potassium": "potassium",
    "sodium": "sodium",
    "hba1c": "HbA1c",
    "inr": "INR",
    "systolic_bp": "systolic blood pressure",
    "blood_pressure": "systolic blood pressure",
    "diastolic_bp": "diastolic blood pressure",
    "haemoglobin": "haemoglobin",
    "ldl": "LDL cholesterol",
    "uacr": "urine albumin-creatinine ratio",
    "weight": "body weight",
    "tsh": "TSH",
}


def _conds(f: Facts, groups: Sequence[str]) -> list[_Cond]:
    out = [_Cond(p.text, (p.ref,), p) for g in groups for p in f.active(g)]
    if "ckd" in groups and not any(c.problem for c in out) and f.lab_ckd:
        out.append(_Cond("chronic kidney disease shown by laboratory results", f.lab_ckd))
    return out


def _value(f: Facts, quantity: str) -> tuple[float, Observation | None] | None:
    if quantity == "kidney":
        k = f.kidney
        if k is None:
            return None
        return k.value, k.reported or k.creatinine
    o = f.latest(quantity)
    if o is None or o.value is None:
        return None
    if quantity == "eosinophils":
        per_ul = _per_microlitre(o)
        return None if per_ul is None else (per_ul, o)
    if quantity == "magnesium":
        mmol = magnesium_mmol_l(o)
        return None if mmol is None else (mmol, o)
    return o.value, o


def _disputed(f: Facts, lab: LabTest, threshold: float) -> bool:
    """The reported eGFR meets ``lab`` but the estimates disagree (``Kidney.discordant``) and
    the eGFR from that day's creatinine does not: no referral or kidney-function category
    rests on a value the record itself contradicts; the repeat that settles it comes first.
    (Dosing reads the governing ``kidney`` value, the lower one, at lower certainty.)"""
    k = f.kidney
    if lab.quantity != "egfr" or k is None or not k.discordant or k.computed is None:
        return False
    return not _cmp(k.computed, lab.op, threshold)


# Absolute blood cell counts in cells per microlitre from the units laboratories report them in
# (UCUM): 10*3/uL and 10*9/L are thousands per microlitre. A percentage is not a count.
_PER_UL = {
    "10*3/ul": PER_UL_PER_THOUSAND_PER_UL,
    "10*9/l": PER_UL_PER_THOUSAND_PER_UL,
    "10^9/l": PER_UL_PER_THOUSAND_PER_UL,
    "k/ul": PER_UL_PER_THOUSAND_PER_UL,
    "/ul": 1.0,
    "cells/ul": 1.0,
    "{cells}/ul": 1.0,
    "10*6/l": 1.0,
}


def _per_microlitre(o: Observation) -> float | None:
    factor = _PER_UL.get(o.unit.strip().lower().replace("µ", "u").replace(" ", ""))
    return None if factor is None or o.value is None else o.value * factor


def _cmp(value: float, op: str, threshold: float) -> bool:
    return {
        "<": value < threshold,
        "<=": value <= threshold,
        ">": value > threshold,
        ">=": value >= threshold,
    }[op]


# The trigger's parts, one handler per field, in the order they are read. A guard says whether
# its part holds (it binds nothing); a binder extends the binding or says no (``None``); a
# combination check tests, and may annotate, one binding of the medicines (``False`` drops it).
_Params = dict[str, float]
_Guard = Callable[[Trigger, Facts, _Params, Binding | None], bool]
_Binder = Callable[[Trigger, Facts, _Params, Binding], Binding | None]
_ComboCheck = Callable[[Trigger, Facts, _Params, Binding], bool]


def _part(t: Trigger, name: str, value: float | None, params: _Params) -> bool:
    """The numeric part ``name`` of ``t`` holds for the patient's ``value`` (unknown: it does
    not), compared with its param as ``t.ops`` states; a part not given holds."""
    key = getattr(t, name)
    if key is None:
        return True
    return value is not None and _cmp(value, t.ops[name], params[key])


def _age_min(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return _part(t, "age_min", f.age, params)


def _age_max(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return _part(t, "age_max", f.age, params)


def _sex(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return t.sex is None or f.p.sex == t.sex


def _absent_drugs(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    """No active request, and no statement that it is taken now, of any of the drugs."""
    return not any(f.with_spec(s) or _stated(f, s) for s in t.absent_drugs)


# Statuses of a MedicationStatement that say the medicine is taken now (FHIR R4).
_TAKEN_NOW = ("active", "intended")


def _stated(f: Facts, spec: str) -> bool:
    """An active MedicationStatement names a drug of ``spec`` (by its text or a code's name)."""
    return any(
        matches(name, spec)
        for st in f.p.statements
        if st.status in _TAKEN_NOW
        for text in (st.text, *(c.display for c in st.codes))
        for name in named_in(text)
    )


def _absent_conditions(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not any(_conds(f, (g,)) for g in t.absent_conditions)


def _ever_conditions(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not t.ever_conditions or bool(_ever(t, f))


def _kidney_discordant(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not t.kidney_discordant or (f.kidney is not None and f.kidney.discordant)


def _kidney_acute(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not t.kidney_acute or f.aki is not None


def _kidney_unsteady(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not t.kidney_unsteady or (f.kidney is not None and bool(f.kidney.unsteady))


def _lab_ckd(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not t.lab_ckd or bool(f.lab_ckd)


def _bp_severe(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not t.bp_severe or (f.bp is not None and f.bp.severe)


def _smoking(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not t.smoking or (f.smoking is not None and f.smoking.status in t.smoking)


def _conflict(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not t.conflict or bool(f.conflicts)


def _pregnancy(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return _pregnancy_holds(t, f, params)


def _outside_part(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not t.outside or any(_outside(f, m) for m in t.outside)


def _recent_orders(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    ro = t.recent_orders
    return ro is None or any(f.recent_orders(s, params[ro.days]) for s in ro.specs)


def _none_of(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    return not any(next(_match(n, f, params, base), None) is not None for n in t.none_of)


def _level_cause(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    # Read from the binding a level test made (a point's ``when``, an exception); a trigger's
    # own level test applies it to the bindings it makes.
    return not (
        t.level_cause and t.level is None and not (base and base.level and "b" in base.meds)
    )


def _bound_matches(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> bool:
    if not t.bound_matches:
        return True
    bound = base.meds.get("a") if base is not None else None
    return bound is not None and any(bound in f.with_spec(s) for s in t.bound_matches)


_GUARDS: tuple[_Guard, ...] = (
    _age_min,
    _age_max,
    _sex,
    _absent_drugs,
    _absent_conditions,
    _ever_conditions,
    _kidney_discordant,
    _kidney_unsteady,
    _kidney_acute,
    _lab_ckd,
    _bp_severe,
    _smoking,
    _conflict,
    _pregnancy,
    _outside_part,
    _recent_orders,
    _none_of,
    _level_cause,
    _bound_matches,
    smoking_stopped,
)


def _ever(t: Trigger, f: Facts) -> list[Condition]:
    return [pr for g in t.ever_conditions for pr in f.ever(g)]


def _bind_conflict(t: Trigger, f: Facts, params: _Params, b: Binding) -> Binding | None:
    if t.conflict:
        b.conflict = next(iter(sorted(f.conflicts.values(), key=lambda c: c.quantity)))
    return b


def _bind_labs(t: Trigger, f: Facts, params: _Params, b: Binding) -> Binding | None:
    for lab in t.labs:
        got = _value(f, lab.quantity)
        if got is None or not _cmp(got[0], lab.op, _bound(lab, got[1], params[lab.param])):
            return None
        if _disputed(f, lab, params[lab.param]):
            return None
        if got[1] is not None:
            b.labs[lab.quantity] = got[1]
        if lab.quantity == "kidney" and f.kidney is not None and not f.kidney.settled:
            b.probable = True
    return b


def _bound(lab: LabTest, o: Observation | None, threshold: float) -> float:
    """``threshold``, or the result's own bound on the compared side (``record_bound``) where it
    states one in its own unit."""
    if not lab.record_bound or o is None or (o.range_unit and o.range_unit != o.unit):
        return threshold
    own = o.range_high if lab.op in (">", ">=") else o.range_low
    return threshold if own is None else own


def _bind_monitor(t: Trigger, f: Facts, params: _Params, b: Binding) -> Binding | None:
    if t.monitor is None:
        return b
    q = t.monitor.quantity
    last = _latest_result(f, q)
    age_days = f.days_since(last.effective) if last is not None else None
    recent = age_days is not None and not _cmp(age_days, t.monitor.op, params[t.monitor.days])
    if last is not None and recent:
        return None
    b.monitor_last, b.monitor_quantity = last, q
    return b


def _latest_result(f: Facts, q: str) -> Observation | None:
    """The newer of a coded result and one named so (a score recorded today under a local
    code is today's score, not the coded one of last year)."""
    coded, named = f.p.latest_of(_loincs(q)), latest_named(f.p, q)
    return max((x for x in (coded, named) if x), key=_when, default=None)


def _when(o: Observation) -> date:
    return o.effective or date.min


def _own_monitor_bindings(
    t: Trigger, f: Facts, params: _Params, base: Binding
) -> Iterator[Binding]:
    """Each active medicine and test of its monograph with no result within the interval
    plus the grace (``Trigger.own_monitor_grace``)."""
    for m in f.distinct_meds:
        for name in m.drugs:
            for test, days in monitor_of(name):
                last = _latest_result(f, test)
                age = f.days_since(last.effective) if last is not None else None
                overdue = None if age is None else age - days
                if last is not None and not _part(t, "own_monitor_grace", overdue, params):
                    continue
                b = base.copy()
                b.meds["a"], b.names["a"] = m, name
                b.monitor_last, b.monitor_quantity, b.monitor_days = last, test, days
                yield b


def _bind_count(t: Trigger, f: Facts, params: _Params, b: Binding) -> Binding | None:
    if t.count is None:
        return b
    skip = not_taken_refs(f.p)  # a medicine recorded as not taken adds no load
    if t.count.by == "acb":
        meds = tuple(m for m in f.meds if m.acb > 0 and m.ref not in skip)
        n = sum(m.acb for m in meds)
    else:
        found = (m for s in t.count.specs for m in f.with_spec(s) if m.ref not in skip)
        meds = tuple(dict.fromkeys(found))
        n = len(meds)
        if t.count.by == "ingredients-in-class":
            n = len({d for m in meds for d in m.drugs})
    if not _cmp(n, t.count.op, params[t.count.min]):
        return None
    if t.count.min_medicines and len(meds) < params[t.count.min_medicines]:
        return None
    b.count, b.count_value = meds, n
    return b


def _bind_vaccine(t: Trigger, f: Facts, params: _Params, b: Binding) -> Binding | None:
    v = t.vaccine
    if v is None:
        return b
    if v.available_from is not None and f.p.as_of < v.available_from:
        return None
    if v.only_with_history and not any(i.given for i in f.p.immunizations):
        return None
    window = params[v.within_days] if v.within_days else None
    given = f.doses(v.cvx, window)
    if v.final_at_age:
        if _dose_at_age(f, given, params[v.final_at_age]):
            return None
    elif len(given) >= (params[v.doses] if v.doses else 1):
        return None
    # The texts state every dose ever recorded (the last may be out of date).
    b.vaccine, b.doses = v.vaccine, f.doses(v.cvx, None)
    return b


def _bind_stroke_risk(t: Trigger, f: Facts, params: _Params, b: Binding) -> Binding | None:
    if t.stroke_risk is None:
        return b
    threshold = params[t.stroke_risk.min_female if f.female else t.stroke_risk.min_male]
    if not _cmp(f.stroke.score, t.stroke_risk.op, threshold):
        return None
    b.stroke = True
    return b


def _events(t: Trigger, f: Facts, params: _Params) -> Sequence[Event]:
    ev = t.recent_event
    if ev is None:
        return ()
    return f.events(
        ev.groups, params[ev.days], ev.encounter_classes, ev.conditions, ev.encounter_text
    )


def _bind_recent_event(t: Trigger, f: Facts, params: _Params, b: Binding) -> Binding | None:
    ev = t.recent_event
    if ev is None:
        return b
    events = _events(t, f, params)
    if not events:
        return None
    if ev.min_events and len({e.day for e in events}) < params[ev.min_events]:
        return None
    b.event = events[0]
    b.event_days = len({e.day for e in events})
    return b


def _bind_stay(t: Trigger, f: Facts, params: _Params, b: Binding) -> Binding | None:
    if t.stay is None and t.change is None:
        return b
    if not _stay_holds(t, f, params):
        return None
    b.stay = f.stay
    return b


def _bind_any_of(t: Trigger, f: Facts, params: _Params, b: Binding) -> Binding | None:
    if not t.any_of:
        return b
    return next((x for a in t.any_of for x in _match(a, f, params, b)), None)


_BINDERS: tuple[_Binder, ...] = (
    _bind_conflict,
    _bind_labs,
    _bind_monitor,
    _bind_count,
    _bind_vaccine,
    _bind_stroke_risk,
    _bind_recent_event,
    _bind_stay,
    _bind_any_of,
)


def _start(t: Trigger, f: Facts, params: _Params, base: Binding | None) -> Binding | None:
    """The binding every medicine combination extends, or ``None`` where a part fails."""
    if not all(guard(t, f, params, base) for guard in _GUARDS):
        return None
    b = base.copy() if base is not None else Binding()
    b.pregnancy = b.pregnancy or bool(t.pregnant)
    b.lactation = b.lactation or bool(t.lactating)
    for bind in _BINDERS:
        got = bind(t, f, params, b)
        if got is None:
            return None
        b = got
    return b


def _match(t: Trigger, f: Facts, params: _Params, base: Binding | None = None) -> Iterator[Binding]:
    """Every binding under which all parts of ``t`` hold (extending ``base``)."""
    b0 = _start(t, f, params, base)
    if b0 is None:
        return
    if t.renal_table:
        yield from _renal_bindings(f, b0)
    elif t.pk_table is not None:
        yield from _pk_bindings(f, b0, t.pk_table)
    elif t.feature_dose is not None:
        yield from _feature_bindings(f, b0, t.feature_dose)
    elif t.own_monitor_grace is not None:
        yield from _own_monitor_bindings(t, f, params, b0)
    elif t.roles is not None:
        yield from _role_bindings(t, f, params, b0)
    elif t.level is not None:
        for b in _level_bindings(f, b0, t.level, params):
            if not t.level_cause or "b" in b.meds:
                yield b
    else:
        yield from _medicine_bindings(t, f, params, b0)


def _trigger_conds(t: Trigger, f: Facts) -> list[_Cond | None] | None:
    """The condition each binding carries (``None`` where the trigger names none and there is
    none to bind); ``None`` itself where the conditions the trigger asks for are absent."""
    if t.any_conditions:
        found = _conds(f, t.any_conditions)
        return [found[0]] if found else None
    ever = _ever(t, f)
    return [_Cond(ever[0].text, (ever[0].ref,))] if ever else [None]


def _medicine_bindings(t: Trigger, f: Facts, params: _Params, b0: Binding) -> Iterator[Binding]:
    conds = _trigger_conds(t, f)
    if conds is None:
        return
    changes = _changes(t, f)
    if t.change is not None and not changes:
        return
    specs = (("",) if t.change is not None else ()) + t.drugs
    pools = [f.distinct_with_spec(s) for s in t.drugs]
    binds: list[MedChange | None] = [*changes] or [None]
    combos: list[tuple[MedFact, ...]] = list(product(*pools)) if pools else [()]
    for ch, rest in [(ch, rest) for ch in binds for rest in combos]:
        checkpoint()
        combo = ((f.med_fact(ch.med),) if ch is not None else ()) + rest
        if not _combo_allowed(t, f, ch, combo, specs):
            continue
        b = b0.copy()
        b.change = ch
        for i, m in enumerate(combo):
            b.meds[_NAMES[i]] = m
            b.names[_NAMES[i]] = _change_name(ch, t) if i == 0 and ch else _pick(m, specs[i])
        if not all(check(t, f, params, b) for check in _COMBO_CHECKS):
            continue
        for c in conds:
            bc = b.copy()
            bc.cond = c
            yield bc


def _combo_allowed(
    t: Trigger,
    f: Facts,
    ch: MedChange | None,
    combo: tuple[MedFact, ...],
    specs: tuple[str, ...],
) -> bool:
    if ch is not None and not _duplicate_ok(t, f, combo):
        return False
    refs_ = [m.ref for m in combo]
    if len(set(refs_)) != len(refs_):
        return False
    # Two specs naming the same class bind each unordered pair of ingredients once.
    return not any(
        specs[i]
        and specs[i] == specs[j]
        and (combo[i].ref > combo[j].ref or combo[i].drugs == combo[j].drugs)
        for i in range(len(combo))
        for j in range(i + 1, len(combo))
    )


def _on_drug(t: Trigger, f: Facts, params: _Params, b: Binding) -> bool:
    if t.recent_event is None or not t.recent_event.on_drug:
        return True
    a = b.meds.get("a")
    start = a.first_authored if a is not None else None
    during = [e for e in _events(t, f, params) if start is not None and e.day >= start]
    if not during:
        return False
    b.event = during[0]
    return True


def _days_on(f: Facts, b: Binding) -> int | None:
    a = b.meds.get("a")
    start = a.first_authored if a is not None else None
    return None if start is None else (f.p.as_of - start).days


def _min_years_on(t: Trigger, f: Facts, params: _Params, b: Binding) -> bool:
    a = b.meds.get("a")
    return _part(t, "min_years_on", f.years_on(a) if a is not None else None, params)


def _min_days_on(t: Trigger, f: Facts, params: _Params, b: Binding) -> bool:
    return _part(t, "min_days_on", _days_on(f, b), params)


def _started_within(t: Trigger, f: Facts, params: _Params, b: Binding) -> bool:
    return _part(t, "started_within", _days_on(f, b), params)


def _daily_mg_above(t: Trigger, f: Facts, params: _Params, b: Binding) -> bool:
    if t.daily_mg_above is None:
        return True
    a = b.meds.get("a")
    if a is None:
        return False
    ceiling = params[t.daily_mg_above]
    if a.daily_mg is not None:
        return _part(t, "daily_mg_above", a.daily_mg, params)
    # Dose not stated, but one unit a day of the prescribed strength already above the ceiling:
    # the action stands (reduce or switch), not a verification. Otherwise fire at lower
    # certainty, as a routine request to verify the daily dose.
    if not (a.unit_mg is not None and _cmp(a.unit_mg, t.ops["daily_mg_above"], ceiling)):
        b.uncertain = True
    return True


def _equivalent_dose(t: Trigger, f: Facts, params: _Params, b: Binding) -> bool:
    """Drug ``a``'s daily dose as its table's reference drug meets the part; a drug the table
    does not hold never does; an unstated dose fires at lower certainty, to verify it."""
    if t.equivalence is None:
        return True
    a = b.meds.get("a")
    if a is None or len(a.drugs) != 1:
        return False
    if a.daily_mg is None:
        b.uncertain = True
        return in_table(t.equivalence, a.drugs[0])
    eq = equivalent(t.equivalence, a.drugs[0], a.daily_mg)
    if eq is None or not _part(t, "equivalent_daily_min", eq.reference_daily_mg, params):
        return False
    b.equivalent = eq
    return True


def _weight_dose(t: Trigger, f: Facts, params: _Params, b: Binding) -> bool:
    if t.weight_dose is None:
        return True
    a = b.meds.get("a")
    if a is None:
        return False
    dosed = per_kg(f, a, b.names["a"], params[t.weight_dose.weight_days])
    over = _over(t.weight_dose, dosed, params)
    if over is False or (over is None and not t.weight_dose.verify):
        return False
    b.per_kg = dosed
    if over is None:
        b.uncertain = True  # no recent weight or no stated dose: weigh and verify
    return True


def _weight_max(t: Trigger, f: Facts, params: _Params, b: Binding) -> bool:
    """``a``'s ingredient a day per kg of a recent weight is above the drug's own maximum."""
    test = t.above_weight_max
    if test is None:
        return True
    a = b.meds.get("a")
    name = b.names.get("a")
    top = weight_max_of(name) if name is not None else None
    if a is None or name is None or top is None:
        return False
    dosed = per_kg(f, a, name, params[test.weight_days])
    day, kg = dosed.per_kg_day, dosed.kg
    if day is None or kg is None or not dosed.complete:
        return False
    per_kg_max, below_kg = top
    if below_kg is not None and not kg < below_kg:
        return False
    if not _cmp(day, test.op, per_kg_max):
        return False
    b.per_kg = dosed
    return True


_COMBO_CHECKS: tuple[_ComboCheck, ...] = (
    above_max_daily,
    _on_drug,
    _min_years_on,
    _min_days_on,
    _started_within,
    _daily_mg_above,
    _equivalent_dose,
    _weight_dose,
    _weight_max,
)


def _stay_holds(t: Trigger, f: Facts, params: dict[str, float]) -> bool:
    """The index stay exists and meets the trigger's stay test (a change test needs a stay)."""
    st = f.stay
    if st is None:
        return False
    test = t.stay
    if test is None:
        return True
    if test.groups and not set(test.groups) & set(st.groups):
        return False
    if test.classes and st.encounter.class_code not in test.classes:
        return False
    if test.within_days and not _cmp(st.days_since, test.within_op or "", params[test.within_days]):
        return False
    return not any(
        o.effective is not None and o.effective > st.discharged
        for q in test.unchecked
        for o in f.p.series(_loincs(q))
    )


def _changes(t: Trigger, f: Facts) -> list[MedChange]:
    """The stay's medicine changes a change test binds, each once per medicine and kind."""
    test = t.change
    if test is None:
        return []
    return [
        c
        for c in f.changes
        if c.kind in test.kinds
        and (not test.specs or any(matches(n, sp) for n in c.drugs for sp in test.specs))
    ]


def _change_name(ch: MedChange, t: Trigger) -> str:
    """The ingredient of a changed medicine that the change test matched (its first one when
    the test names no medicine)."""
    specs = t.change.specs if t.change is not None else ()
    hit = next((n for n in ch.drugs for sp in specs if matches(n, sp)), None)
    return hit or (ch.drugs[0] if ch.drugs else ch.med.text)


def _duplicate_ok(t: Trigger, f: Facts, combo: Sequence[MedFact]) -> bool:
    """A change test with ``same_class`` holds only for a home medicine of the changed one's
    class (its duplicate between the two lists)."""
    classes = t.change.same_class if t.change is not None else ()
    return not classes or (_same_class(classes, combo) and _from_home(f, combo[1]))


def _same_class(classes: Sequence[str], combo: Sequence[MedFact]) -> bool:
    """The changed medicine (first) and the next share one of ``classes``."""
    if not combo[1:]:  # no next medicine
        return False
    return bool(set(combo[0].classes) & set(combo[1].classes) & set(classes))


def _from_home(f: Facts, m: MedFact) -> bool:
    """A medicine of the list before admission: not itself one of the stay's changes."""
    return not any(c.med.ref == m.ref for c in f.changes if c.kind in ("new", "dose-changed"))


def _dose_at_age(f: Facts, given: Sequence[Immunization], years: float) -> bool:
    """Some dose in ``given`` was given at or after ``years`` of age."""
    born = f.p.birth_date
    if born is None:
        return False
    return any(
        i.occurred is not None and (i.occurred - born).days >= years * DAYS_PER_YEAR for i in given
    )


def _over(w: WeightCeiling, got: WeightDose, params: dict[str, float]) -> bool | None:
    """True: a known dose per kg is above a ceiling; False: every ceiling is known to hold;
    None: a ceiling could not be checked (no recent weight, or a dose not stated)."""
    factor = params[w.rounding] if w.rounding else 1.0
    per_dose = params[w.per_dose] * factor if w.per_dose else None
    per_day = params[w.per_day] * factor if w.per_day else None
    dose, day = got.per_kg_dose, got.per_kg_day
    if (per_dose is not None and dose is not None and _cmp(dose, w.op, per_dose)) or (
        per_day is not None and day is not None and _cmp(day, w.op, per_day)
    ):
        return True
    if got.kg is None:
        return None
    if (per_dose is not None and dose is None) or (per_day is not None and not got.complete):
        return None
    return False


def _pregnancy_holds(t: Trigger, f: Facts, params: dict[str, float]) -> bool:
    """The pregnancy and breastfeeding parts of ``t`` (gestational bounds pass when the
    gestational age is not recorded)."""
    if t.lactating is not None and (f.lactation is not None) != t.lactating:
        return False
    if t.pregnant is None:
        return True
    preg = f.pregnancy
    if (preg is not None) != t.pregnant:
        return False
    weeks = preg.weeks if preg is not None else None
    if weeks is None:
        return True
    return _part(t, "gestation_weeks_min", weeks, params) and _part(
        t, "gestation_weeks_max", weeks, params
    )


# Strictest first: one band, one activity per ingredient.
_ACTION_RANK = ("avoid", "switch", "max-dose", "reduce", "review", "monitor")


def _lower_egfr(k: Kidney) -> float | None:
    """The lower of the reported and the computed eGFR, which the kidney bands read."""
    estimates = [v for v in (k.reported.value if k.reported else None, k.computed) if v]
    return min(estimates) if estimates else None


def _renal_bindings(f: Facts, base: Binding) -> Iterator[Binding]:
    k = f.kidney
    if k is None:
        return
    egfr = _lower_egfr(k)
    for m in f.distinct_meds:
        for name in m.drugs:
            straddled = renal_straddle(name, egfr=egfr, crcl=k.crcl)
            limits = [
                lim
                for lim in (*renal_limit(name, egfr=egfr, crcl=k.crcl), *straddled)
                if lim.action in _ACTION_RANK and not _withheld(f, name, lim)
            ]
            for lim in sorted(limits, key=lambda x: (_ACTION_RANK.index(x.action), -x.urgent)):
                b = base.copy()
                b.meds["a"], b.names["a"], b.limit = m, name, lim
                b.straddle = lim in straddled
                if not k.settled or b.straddle:
                    b.probable = True
                if lim.action == "max-dose" and lim.max_daily_mg is not None:
                    if m.daily_mg is not None and m.daily_mg <= lim.max_daily_mg:
                        continue
                    if m.daily_mg is None:
                        b.uncertain = True
                yield b
                break


_DOSE_CHANGES = ("max-dose", "reduce")
_AKI_WITHHOLD = "flag:aki-withhold"  # drugs.yaml: the medicines a source withholds in AKI


def _withheld(f: Facts, name: str, lim: RenalLimit) -> bool:
    """In acute kidney injury a medicine the injury withholds is not dosed down: the dose a
    band reads from an unsteady creatinine is not reliable, and the withhold line acts on it."""
    return f.aki is not None and lim.action in _DOSE_CHANGES and matches(name, _AKI_WITHHOLD)


def _feature_bindings(
    f: Facts, base: Binding, direction: Literal["above", "below"]
) -> Iterator[Binding]:
    for d in feature_doses(f, direction):
        if _kidney_rules_out(f, d.rule.drug):
            continue  # its kidney band changes the drug: a label dose for it is moot
        b = base.copy()
        b.meds["a"], b.names["a"], b.features = d.med, d.rule.drug, d
        b.uncertain = d.med.daily_mg is None  # the dose is not stated: verify it
        yield b


_RULES_OUT = ("avoid", "switch")


def _kidney_rules_out(f: Facts, name: str) -> bool:
    """True when the patient's kidney function falls in a band of ``name`` that avoids or
    switches the drug (dabigatran under a clearance of 30): the kidney line acts on it."""
    k = f.kidney
    if k is None:
        return False
    egfr = _lower_egfr(k)
    return any(lim.action in _RULES_OUT for lim in renal_limit(name, egfr=egfr, crcl=k.crcl))


def _pk_bindings(f: Facts, base: Binding, direction: str) -> Iterator[Binding]:
    """One binding per (perpetrator, substrate) pair of distinct active medicines that the
    mechanism table links in ``direction``, every shared pathway in one claim."""
    for m, n in product(f.distinct_meds, f.distinct_meds):
        checkpoint()
        if m.ref == n.ref:
            continue
        for a_name, b_name in product(m.drugs, n.drugs):
            effect = next(
                (e for e in interactions(a_name, b_name) if e.direction == direction), None
            )
            if effect is None:
                continue
            b = base.copy()
            b.meds["a"], b.names["a"] = m, a_name
            b.meds["b"], b.names["b"] = n, b_name
            b.pk = effect
            yield b


def _ended_within(f: Facts, days: float) -> tuple[MedFact, ...]:
    """Medicines no longer taken whose order ended (``Medication.ends``) within ``days``
    before the record date, none of whose ingredients is still ordered."""
    taking = {d for m in f.meds for d in m.drugs}
    out = []
    for m in f.p.medications:
        if m.active or m.ends is None or not 0 <= (f.p.as_of - m.ends).days <= days:
            continue
        fact = f.med_fact(m)
        if fact.drugs and not set(fact.drugs) & taking:
            out.append(fact)
    return tuple(out)


def _role_bindings(t: Trigger, f: Facts, params: _Params, base: Binding) -> Iterator[Binding]:
    """One binding per (perpetrator, substrate) pair the monographs' pathway roles link
    (``RoleTest``): the perpetrator active, or ended within the window; the substrate active."""
    test = t.roles
    assert test is not None
    ended = test.stopped_within
    perpetrators = f.distinct_meds if ended is None else _ended_within(f, params[ended])
    for m, n in product(perpetrators, f.distinct_meds):
        checkpoint()
        if m.ref == n.ref or set(m.drugs) & set(n.drugs):
            continue
        for a_name, b_name in product(m.drugs, n.drugs):
            effect = by_roles(a_name, b_name, test.direction, test.perpetrator, test.substrate)
            if effect is None:
                continue
            b = base.copy()
            b.meds["a"], b.names["a"] = m, a_name
            b.meds["b"], b.names["b"] = n, b_name
            b.pk = effect
            if _started_within(t, f, params, b):
                yield b
                break


def _outside(f: Facts, marker: str) -> tuple[str, ...]:
    return marked(f, marker)


def _mover(
    f: Facts, specs: Sequence[str], m: MedFact, after: date | None, until: date | None
) -> tuple[MedFact, str] | None:
    """A co-prescribed medicine of ``specs`` (not ``m`` itself) first ordered after ``after``
    and on or before ``until`` (each bound only when given)."""
    for spec in specs:
        for other in f.with_spec(spec):
            start = other.first_authored
            if other.ref == m.ref or set(other.drugs) & set(m.drugs):
                continue
            if after is not None and (start is None or start <= after):
                continue
            if until is not None and (start is None or start > until):
                continue
            return other, _pick(other, spec)
    return None


_Mover = tuple[MedFact, str] | None


def _level_state(
    f: Facts, m: MedFact, lv: Level, test: LevelTest, params: dict[str, float]
) -> tuple[bool, _Mover]:
    """Whether ``test`` holds for this medicine's level, and the medicine that explains it."""
    e, last, prev, rng = lv.entry, lv.latest, lv.previous, lv.range
    if test.state in ("above", "below"):
        if last is None or rng is None:
            return False, None
        out = last.value > rng.high if test.state == "above" else last.value < rng.low
        specs = e.raised_by if test.state == "above" else e.lowered_by
        return out, _mover(f, specs, m, None, last.obs.effective) if out else None
    if test.state in ("risen", "fallen"):
        if last is None or prev is None or rng is not None:
            return False, None
        rose = test.state == "risen"
        if (last.value > prev.value) != rose or last.value == prev.value:
            return False, None
        specs = e.raised_by if rose else e.lowered_by
        cause = _mover(f, specs, m, prev.obs.effective, last.obs.effective)
        return cause is not None, cause
    if test.state == "never":
        return last is None and e.routine and not e.due_elsewhere, None
    since = last.obs.effective if last is not None else None
    cause = _mover(f, (*e.raised_by, *e.lowered_by), m, since, None)
    start = cause[0].first_authored if cause is not None else None
    window = params[test.days] if test.days else 0.0
    return start is not None and (f.p.as_of - start).days <= window, cause


def _level_bindings(
    f: Facts, base: Binding, test: LevelTest, params: dict[str, float]
) -> Iterator[Binding]:
    for m in f.distinct_meds:
        for name in m.drugs:
            entry: LevelEntry | None = level_entry(name)
            if entry is None:
                continue
            groups = frozenset(g for r in entry.ranges for g in r.conditions if f.active(g))
            lv = level_of(entry, f.p, groups)
            holds, cause = _level_state(f, m, lv, test, params)
            if not holds:
                continue
            b = base.copy()
            b.meds["a"], b.names["a"], b.level = m, name, lv
            if cause is not None:
                b.meds["b"], b.names["b"] = cause
            yield b


def _pick(m: MedFact, spec: str) -> str:
    """The ingredient of ``m`` that ``spec`` matched (a combination product has several)."""
    kind, _, name = spec.partition(":")
    if kind == "drug":
        return name
    for d in m.drugs:
        ds = drug(d)
        if name in (getattr(ds, "flags", ()) if kind == "flag" else ds.classes):
            return d
    return m.name


def _loincs(quantity: str) -> tuple[str, ...]:
    from service.record.vocabulary import LOINC_GROUPS

    return LOINC_GROUPS[quantity]


def _holds(t: Trigger, f: Facts, params: dict[str, float], b: Binding) -> bool:
    return _held(t, f, params, b) is not None


def _held(t: Trigger, f: Facts, params: dict[str, float], b: Binding) -> tuple[str, ...] | None:
    """None when ``t`` does not hold under ``b``; else the facts it matched beyond ``b``'s own
    (a co-prescribed medicine, a condition): what makes a point with this ``when`` apply."""
    got = next(_match(t, f, params, b if not t.drugs else None), None)
    if got is None:
        return None
    own = set(_cited(_CITABLE, b, f))
    return tuple(r for r in _cited(_CITABLE, got, f) if r not in own)


def _with_when_count(pt: PointTemplate, f: Facts, params: dict[str, float], b: Binding) -> Binding:
    """``b`` with the medicines a point's own ``when`` counted (``{count.names}``), where the
    trigger counted none: the point names what it holds for, never an empty list."""
    if pt.when is None or pt.when.count is None or b.count:
        return b
    got = next(_match(pt.when, f, params, b), None)
    if got is None or not got.count:
        return b
    out = b.copy()
    out.count, out.count_value = got.count, got.count_value
    return out


def _excused(c: Criterion, f: Facts, b: Binding) -> bool:
    for ex in c.exceptions:
        # An exception's drugs are checked for presence only; its dose/duration parts read ``a``.
        for _ in _match(ex, f, c.params, b if not ex.drugs else None):
            return True
    return False


# -- rendering -------------------------------------------------------------------------------


def _dose_phrase(m: MedFact) -> str:
    # Printed inside brackets after the medicine's name: no brackets of its own. A dose taken
    # less often than daily (alendronate 70 mg once a week) is said as it is taken, never as
    # the daily average it amounts to ("10 mg a day" would be false).
    if m.daily_mg is not None and m.unit_mg and m.daily_mg < m.unit_mg:
        every = _INTERVAL_WORDS.get(round(m.unit_mg / m.daily_mg), "less often than daily")
        return f"{fmt(m.unit_mg)} mg {every}"
    if m.daily_mg is not None:
        return f"{fmt(m.daily_mg)} mg a day"
    if m.unit_mg is not None:
        return f"dose not stated, product strength {fmt(m.unit_mg)} mg: verify"
    return "dose not stated: verify"


# A dose taken every so many days, in words (a week, a fortnight, a month of days).
_INTERVAL_WORDS = {
    DAYS_PER_WEEK: "once a week",
    DAYS_PER_FORTNIGHT: "once every two weeks",
    DAYS_PER_WHOLE_MONTH: "once a month",
}


def _months(days: int) -> int:
    return max(0, days) // DAYS_PER_WHOLE_MONTH


def _ago(days: int) -> str:
    """How long before the record date, in the unit a reader expects."""
    if days == 0:
        return "on the record date"
    if days == 1:
        return "1 day before the record date"
    if days < DAYS_STATED_BELOW:
        return f"{days} days before the record date"
    return f"{_months(days)} months before the record date"


def _since(plan_day: date, day: date) -> str:
    """How long before the plan day ``day`` was, counted to the plan day (not the record's
    last date): "today", "3 days ago", "15 months ago"."""
    days = max(0, (plan_day - day).days)
    if days == 0:
        return "today"
    if days < DAYS_STATED_BELOW:
        return "1 day ago" if days == 1 else f"{days} days ago"
    if days < DAYS_STATED_IN_YEARS_FROM:
        return f"{_months(days)} months ago"
    return f"{int(days // DAYS_PER_YEAR)} years ago"


def _since_number(plan_day: date, day: date) -> str:
    days = max(0, (plan_day - day).days)
    if days < DAYS_STATED_BELOW:
        return str(days)
    return str(_months(days) if days < DAYS_STATED_IN_YEARS_FROM else int(days // DAYS_PER_YEAR))


def _ago_number(days: int) -> str:
    return str(days if days < DAYS_STATED_BELOW else _months(days))


def _doses_phrase(f: Facts, b: Binding) -> str:
    if not b.doses:
        return "no dose"
    last = b.doses[-1].occurred
    days = f.days_since(last)
    n = len(b.doses)
    head = f"{n} dose{'s' if n != 1 else ''}"
    return head if days is None else f"{head}, the last {_ago(days)}"


def _unsteady_phrase(unsteady: Sequence[Unsteady], reported: Observation | None) -> str:
    """Why the kidney function is not settled, each creatinine named once."""
    out: list[str] = []
    said: set[str] = set()
    for u in unsteady:
        c = u.creatinine
        first = f"creatinine {fmt(c.value)} {unit_words(c.unit)}".strip()
        implied = f"an eGFR of {fmt(u.implied_egfr)}"
        if u.later is None:
            beside = f"a reported eGFR of {fmt(reported.value)}" if reported else "a reported eGFR"
            out.append(f"{first}, taken the same day as {beside}, implies {implied}")
        else:
            later = f"{fmt(u.later.value)} {unit_words(u.later.unit)}".strip()
            moved = "rose" if (u.later.value or 0) > (c.value or 0) else "fell"
            head = "it" if c.ref in said else f"{first} ({implied})"
            out.append(f"{head} {moved} to {later} {u.days} days later")
        said.add(c.ref)
    return "; ".join(out)


def _reading_phrase(r: Reading | None) -> str:
    if r is None:
        return "no level in the record"
    o = r.obs
    when = f" on {o.effective}" if o.effective else ""
    return f"{fmt(o.value)} {unit_words(o.unit)}".strip() + when


def _level_phrase(lv: Level, attr: str | None) -> str:
    """A level placeholder: ``{level}`` the latest, ``{level.previous}``, ``{level.range}``
    (or why no range applies), ``{level.target}``, ``{level.drug}``."""
    rng = lv.range
    if attr == "previous":
        return _reading_phrase(lv.previous) if lv.previous else "no earlier level"
    if attr == "range":
        if rng is None:
            return f"no fixed range ({lv.entry.target}): check against the patient's own target"
        unit = unit_words(lv.entry.unit)
        return f"{fmt(rng.low)}-{fmt(rng.high)} {unit} for {rng.population}"
    if attr == "target":
        return lv.entry.target or "the range the prescriber set"
    if attr == "drug":
        return lv.entry.drug
    return _reading_phrase(lv.latest)


# The placeholders a text may hold, one handler per head (``{head}`` or ``{head.attr}``); a
# head with no handler, or a handler with nothing to say, renders as "?".
_Placeholder = Callable[[str | None, Facts, Binding, dict[str, float]], str | None]


def _med_text(head: str, attr: str | None, f: Facts, b: Binding) -> str:
    """``{a}``, ``{a.dose}``...: the medicine bound to a name."""
    med = b.meds.get(head)
    if med is None:
        return "?"
    if attr is None:
        return b.names.get(head, med.name)
    if attr == "text":
        return med.text
    if attr == "dose":
        return _dose_phrase(med)
    if attr == "years":
        return fmt(float(f.years_on(med) or 0))
    if attr == "weeks":
        days = f.days_since(med.first_authored)
        return fmt(float(days // DAYS_PER_WEEK)) if days is not None else "?"
    if attr == "equivalent":  # the daily dose and, for another drug, its reference equivalent
        return _equivalent_phrase(med, b.equivalent)
    if attr == "duration":  # how long taken, in the unit a clinician uses
        days = f.days_since(med.first_authored)
        return duration_words(days) if days is not None else "an unknown time"
    return "?"


def _equivalent_phrase(med: MedFact, eq: Equivalent | None) -> str:
    if eq is None or eq.drug not in med.drugs:
        return _dose_phrase(med)
    own = f"{fmt(eq.daily_mg)} mg a day"
    if eq.drug == eq.reference:
        return own
    return f"{own}, equal to {eq.reference} {fmt(eq.reference_daily_mg)} mg a day"


def _trigger_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    if b.cond is not None:
        return b.cond.text
    return ", ".join(m.text for m in b.meds.values()) or "this patient"


def _cond_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    return b.cond.text if b.cond else "the condition"


def _age_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    return age_phrase(f.age)


def _param_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    return fmt(params[attr]) if attr else None


def _lab_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    if not attr:
        return None
    o = b.labs.get(attr) or f.latest(attr) or _named_value(f, attr)
    if o is not None:
        return f"{fmt(o.value)} {unit_words(o.unit)}".strip()
    worded = latest_named(f.p, attr)  # a result the record states in words ("QTc 486 ms")
    if worded is not None and worded.value_text:
        day = f" on {worded.effective}" if worded.effective else ""
        return f'recorded in words as "{quote(worded.value_text)}"{day}'
    return "not recorded"


def _named_value(f: Facts, quantity: str) -> Observation | None:
    """The latest numeric result of ``quantity`` known by its name where no coded one is
    usable (a QTc a site codes its own way): "not recorded" is said only when none is."""
    if quantity in f.conflicts:
        return None
    o = latest_named(f.p, quantity)
    return o if o is not None and o.value is not None else None


def _lab_on_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    """The day of the result a lab placeholder states."""
    if not attr:
        return None
    o = b.labs.get(attr) or f.latest(attr)
    return str(o.effective) if o is not None and o.effective else "an unknown date"


def _kidney_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    k = f.kidney
    if k is None:
        return "not known"
    if attr == "detail":
        parts = []
        if k.reported is not None:
            parts.append(f"reported eGFR {fmt(k.reported.value)}")
        if k.computed is not None:
            parts.append(f"CKD-EPI eGFR from creatinine {fmt(k.computed)}")
        if k.crcl is not None:
            parts.append(f"Cockcroft-Gault clearance {fmt(k.crcl)} mL/min")
        return ", ".join(parts)
    if attr == "unsteady":
        return _unsteady_phrase(k.unsteady, k.reported)
    if b.limit is not None and b.straddle:  # both estimates, one each side of the band's edge
        higher = b.limit.measure  # the band's own measure reads above its edge
        lower = "crcl" if higher == "egfr" else "egfr"
        return (
            f"{_band_value(k, lower)}, with {_band_value(k, higher)} on the other side of this "
            "band's edge"
        )
    if b.limit is not None:  # the value the dose band was read against, not another estimate
        return _band_value(k, b.limit.measure) or f"{fmt(k.value)} ({k.basis})"
    return f"{fmt(k.value)} ({k.basis})"


def _aki_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    """The creatinine rise that meets the acute kidney injury criteria, as the record has it."""
    a = f.aki
    if a is None:
        return "?"
    first, last = a.baseline, a.latest
    was = f"{fmt(first.value)} {unit_words(first.unit)}".strip()
    now = f"{fmt(last.value)} {unit_words(last.unit)}".strip()
    span = "the same day" if a.days == 0 else f"{a.days} day{'s' if a.days != 1 else ''} later"
    return f"creatinine {was} on {first.effective} rose to {now} {span}"


def _band_value(k: Kidney, measure: str) -> str | None:
    """The kidney function a dose band of ``measure`` reads (``renal_limit``: the lower eGFR
    estimate, or the Cockcroft-Gault clearance), with its basis; None when it is not known."""
    egfrs = [
        (v, basis)
        for v, basis in (
            (k.reported.value if k.reported else None, "reported eGFR"),
            (k.computed, "eGFR from creatinine"),
        )
        if v
    ]
    if measure == "egfr" and egfrs:
        value, basis = min(egfrs)
        return f"{fmt(value)} ({basis})"
    if measure == "crcl" and k.crcl is not None:
        return f"{fmt(k.crcl)} (Cockcroft-Gault clearance)"
    return None


def _count_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    if attr == "names":
        return ", ".join(m.text for m in b.count)
    return str(b.count_value)


def _limit_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    lim = b.limit
    if lim is None:
        return None
    if attr == "instead":
        return lim.instead or "another treatment"
    if attr == "below":
        return fmt(lim.below)
    if attr == "max":
        return fmt(lim.max_daily_mg)
    if attr == "measure":
        return "eGFR" if lim.measure == "egfr" else "creatinine clearance"
    return lim.advice  # ``advice``, and the bare head


def _feature_phrase(x: Met) -> str:
    """One feature as the record gives it: the age, a result with its day, a medicine."""
    if x.kind == "age":
        cap = param_int("age.stated_cap_years")
        return f"age {cap} or over" if x.value >= cap else f"age {fmt(x.value)}"
    if x.kind == "drug":
        return f"taken with {x.text}"
    name = "body weight" if x.kind == "weight" else "creatinine"
    when = f" on {x.day.isoformat()}" if x.day is not None else ""
    return f"{name} {fmt(x.value)} {x.unit}{when}"


def _features_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    d = b.features
    if d is None:
        return None
    if attr == "dose":
        return d.rule.reduced_dose
    if attr == "needed":
        return str(d.rule.at_least)
    if attr == "indication":
        return d.rule.indication
    if attr == "count":
        return str(len(d.met))
    shown = d.read if attr == "read" else d.met
    return ", ".join(_feature_phrase(x) for x in shown if x.kind != "drug" or x.met)


def _pk_placeholder(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    return _pk_text(b.pk, attr, f, b, params) if b.pk is not None else None


def _level_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    return _level_phrase(b.level, attr) if b.level is not None else None


def _conflict_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    c = b.conflict
    if c is None:
        return None
    if attr == "quantity":
        return _QUANTITY_LABEL.get(c.quantity, c.quantity)
    return ", ".join(fmt(v) for v in c.values)


def _monitor_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    if attr == "test":  # the test by its short name ("TSH", "Lithium level")
        name = LOINC_SHORT_NAMES.get(b.monitor_quantity, b.monitor_quantity)
        head = name.split(" ")[0]
        return name[:1].lower() + name[1:] if head[1:].islower() else name
    if attr == "days":  # the drug's own interval for it
        return str(b.monitor_days)
    last = b.monitor_last
    if last is None:
        return "no result in the record"
    value = f"{fmt(last.value)} {unit_words(last.unit)}".strip() if last.value is not None else ""
    value = value or last.value_text
    head = f"last result {value}" if value else "last result"
    if last.effective is None:
        return f"{head}, which has no date"
    return f"{head} on {last.effective.isoformat()}, {_since(f.p.plan_day, last.effective)}"


def _vaccine_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    return _doses_phrase(f, b) if attr == "record" else b.vaccine


def _vaccines_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    """This firing's vaccine; ``apply_criteria`` lists them all."""
    return b.vaccine


def _perkg_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    if attr == "max":
        return _weight_max_phrase(b)
    return _per_kg_phrase(b.per_kg, attr) if b.per_kg is not None else None


def _weight_max_amounts(b: Binding) -> tuple[float, float] | None:
    """The drug's maximum in mg/kg a day and in mg a day at the weight read."""
    name = b.names.get("a")
    top = weight_max_of(name) if name is not None else None
    w = b.per_kg
    if top is None or w is None or w.kg is None:
        return None
    return top[0], top[0] * w.kg


def _weight_max_phrase(b: Binding) -> str | None:
    """``{perkg.max}``: the drug's daily maximum per kg and what it comes to at this weight."""
    got = _weight_max_amounts(b)
    if got is None:
        return None
    per_kg_max, day_max = got
    return f"{fmt(per_kg_max)} mg/kg a day ({fmt(day_max)} mg a day at this weight)"


def _event_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    ev = b.event
    if ev is None:
        return None
    if attr == "when":
        return f"{ev.setting} {_ago(max(0, (f.p.as_of - ev.day).days))}"
    if attr == "count":
        return str(b.event_days)
    return ev.text


def _stay_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    return _transition_text("stay", attr, f, b)


def _change_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    return _transition_text("change", attr, f, b)


def _admitted_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    return _admitted_phrase(f, attr) if attr else None


def _stroke_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    st = f.stroke
    if attr == "parts":
        return ", ".join(f"{label} ({pts})" for label, pts, _ in st.parts) or "none"
    return str(st.score)


def _smoking_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    sm = f.smoking
    if sm is None:
        return None
    if attr == "when":
        if sm.day is None:
            return "on an unknown date"
        return _ago(max(0, (f.p.as_of - sm.day).days))
    return sm.text or sm.status


def _pregnancy_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    pr = f.pregnancy
    if pr is None:
        return None
    if attr == "basis":
        return pr.basis
    if attr == "weeks":
        return str(pr.weeks) if pr.weeks is not None else "unknown"
    return pr.phrase


def _lactation_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    return f.lactation.basis if f.lactation is not None else None


def _bp_text(attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str | None:
    bp = f.bp
    if bp is None:
        return None
    if attr == "latest":
        return f"{fmt(bp.systolic)}/{fmt(bp.diastolic)} mmHg"
    if attr == "readings":
        return str(bp.readings)
    if attr == "raised":
        return str(bp.raised)
    return None


_PLACEHOLDERS: dict[str, _Placeholder] = {
    "trigger": _trigger_text,
    "cond": _cond_text,
    "age": _age_text,
    "param": _param_text,
    "lab": _lab_text,
    "lab_on": _lab_on_text,
    "kidney": _kidney_text,
    "aki": _aki_text,
    "count": _count_text,
    "limit": _limit_text,
    "features": _features_text,
    "pk": _pk_placeholder,
    "level": _level_text,
    "conflict": _conflict_text,
    "monitor": _monitor_text,
    "vaccine": _vaccine_text,
    "vaccines": _vaccines_text,
    "perkg": _perkg_text,
    "event": _event_text,
    "stay": _stay_text,
    "change": _change_text,
    "admitted": _admitted_text,
    "stroke": _stroke_text,
    "smoking": _smoking_text,
    "pregnancy": _pregnancy_text,
    "lactation": _lactation_text,
    "bp": _bp_text,
}


def render(text: str, f: Facts, b: Binding, params: dict[str, float]) -> str:
    def one(m: re.Match[str]) -> str:
        head, attr = m.groups()
        if head in b.meds or (len(head) == 1 and head in _NAMES):
            return _med_text(head, attr, f, b)
        handler = _PLACEHOLDERS.get(head)
        got = handler(attr, f, b, params) if handler is not None else None
        return "?" if got is None else got

    return _PLACEHOLDER.sub(one, text)


def _admitted_phrase(f: Facts, quantity: str) -> str:
    """``{admitted.potassium}``: "4.1 on admission, 4.9 mmol/L at discharge" where the stay
    holds both, else the latest value with its day."""
    got = f.stay_values(quantity)
    if got is not None:
        first, last = got
        unit = f" {unit_words(last.unit)}" if unit_words(last.unit) else ""
        return f"{fmt(first.value)} on admission, {fmt(last.value)}{unit} at discharge"
    o = f.latest(quantity)
    if o is None:
        return "not recorded"
    unit = f" {unit_words(o.unit)}" if unit_words(o.unit) else ""
    return f"{fmt(o.value)}{unit} on {o.effective or 'an unknown date'}"


def day_words(d: date) -> str:
    """A date as the texts write it: "8 December 2026".

    >>> day_words(date(2026, 12, 8))
    '8 December 2026'
    """
    return f"{d.day} {d:%B} {d.year}"


_CHANGE_WORDS = {
    "new": "new",
    "stopped": "stopped",
    "dose-changed": "dose changed",
    "held": "held",
    "course-ending": "course ending",
    "course-ended": "course ended",
}


def _transition_text(head: str, attr: str | None, f: Facts, b: Binding) -> str:
    """``{stay}`` "hospital stay for Heart failure"; ``{stay.when}`` "discharged 25 November
    2026, 5 days ago"; ``{stay.days}``; ``{stay.reason}``; ``{change}`` the kind of change in
    words; ``{change.ends}`` the last day of a course; ``{change.days}`` its length;
    ``{change.before}`` the replaced request's dose."""
    st = b.stay or f.stay
    if head == "stay":
        if st is None:
            return "?"
        if attr == "when":
            return f"discharged {day_words(st.discharged)}, {st.days_since} days ago"
        if attr == "days":
            return str(st.days_since)
        if attr == "reason":
            return without_tag(st.label)
        return f"{st.setting} for {without_tag(st.label)}"
    ch = b.change
    if ch is None:
        return "?"
    if attr == "ends":
        return day_words(ch.ends) if ch.ends else "an unknown date"
    if attr == "days":
        start = ch.med.starts or ch.med.authored
        return str((ch.ends - start).days + 1) if ch.ends and start else "?"
    if attr == "before":
        prev = ch.previous
        return (prev.dose or prev.text) if prev is not None else "not recorded"
    return _CHANGE_WORDS[ch.kind]


def _pk_text(pk: PkEffect, attr: str | None, f: Facts, b: Binding, params: dict[str, float]) -> str:
    """``{pk.verb}`` "strongly inhibits"; ``{pk.pathway}`` "CYP3A4 and P-gp"; ``{pk.route}``
    "clears" or "turns into its active form"; ``{pk.effect}``, ``{pk.advice}`` (the table's
    texts, themselves templates over ``a`` and ``b``); ``{pk.source}``."""
    if attr == "verb":
        return pk.verb
    if attr == "pathway":
        return pk.pathway
    if attr == "route":
        return "clears" if pk.route == "clears" else "turns into the active form of"
    if attr == "advice":
        return render(pk.advice, f, b, params) + _latest_level_note(pk.substrate, f)
    if attr == "source":
        return pk.source
    return render(pk.effect, f, b, params)


def _latest_level_note(drug_name: str, f: Facts) -> str:
    """ " (latest <drug> level <value> on <day>)" where the record holds a level of the drug whose
    level the advice moves: an action that asks for a level says the one already there."""
    entry = level_entry(drug_name)
    if entry is None:
        return ""
    latest = level_of(entry, f.p, frozenset()).latest
    if latest is None:
        return ""
    return f" (latest {entry.drug} level {_reading_phrase(latest)})"


def _per_kg_phrase(w: WeightDose, attr: str | None) -> str:
    """``{perkg.weight}``, ``{perkg.dose}`` (mg/kg a dose), ``{perkg.day}`` (mg/kg a day),
    ``{perkg.day_mg}`` (mg a day over every product) and ``{perkg.products}``."""
    if attr == "weight":
        if w.weight is None or w.kg is None:
            return "no recent body weight"
        return f"{fmt(w.kg)} kg on {w.weight.effective}"
    if attr == "dose":
        dose = w.per_kg_dose
        return "a dose per kg not known" if dose is None else f"{fmt(dose)} mg/kg a dose"
    if attr == "day":
        day = w.per_kg_day
        if day is None:
            return "a daily total per kg not known"
        return f"{fmt(day)} mg/kg a day" + ("" if w.complete else " from the doses stated")
    if attr == "day_mg":
        return "not known" if w.day_mg is None else f"{fmt(w.day_mg)} mg a day"
    if attr == "products":
        return ", ".join(m.text for m in w.products)
    return "?"


def _monitor_numbers(last: Observation | None, f: Facts) -> set[str]:
    """The last result of a monitored test: its value, its date and how long before the plan
    day (and the months before the record date older texts state)."""
    if last is None:
        return set()
    out = set()
    days = f.days_since(last.effective)
    if days is not None:
        out.add(str(_months(days)))
    if last.value is not None:
        out.add(fmt(last.value))
    if last.effective is not None:
        out |= set(re.findall(r"\d+", last.effective.isoformat()))
        out.add(_since_number(f.p.plan_day, last.effective))
    return out


_NUMBER = r"\d+(?:\.\d+)?"


def numbers_of(b: Binding, f: Facts) -> frozenset[str]:
    """Derived numbers a binding may state (counts and months), beyond ``Facts.numbers``."""
    out = {str(b.count_value)}
    out |= _monitor_numbers(b.monitor_last, f)
    if b.monitor_days:  # the drug's own interval, from its monograph
        out.add(str(b.monitor_days))
    if f.bp is not None:
        out |= {str(f.bp.readings), str(f.bp.raised)}
    for m in b.meds.values():
        days = f.days_since(m.first_authored)
        if days is not None:
            out.add(fmt(float(days // DAYS_PER_WEEK)))
            out.add(duration_words(days).split()[0])  # ``{a.duration}``
    out |= _event_numbers(b, f)
    out |= {str(f.stroke.score), *(str(p) for _, p, _ in f.stroke.parts)}
    if f.smoking is not None and f.smoking.day is not None:
        out.add(_ago_number(max(0, (f.p.as_of - f.smoking.day).days)))
    out |= _dose_numbers(b)
    out |= _feature_numbers(b)
    if b.stay is not None:  # the stay's dates and the numbers its diagnoses quote
        out |= set(re.findall(_NUMBER, b.stay.label))
    if b.change is not None and b.change.previous is not None:
        out |= set(re.findall(_NUMBER, b.change.previous.dose))
    return frozenset(out)


def _feature_numbers(b: Binding) -> set[str]:
    """A counted-feature dose rule's values, days, thresholds and doses as stated."""
    d = b.features
    if d is None:
        return set()
    out = {str(d.rule.at_least), str(len(d.met)), *re.findall(_NUMBER, d.rule.reduced_dose)}
    for x in d.read:
        out |= {fmt(x.value), fmt(x.threshold)}
        if x.day is not None:
            out |= set(re.findall(_NUMBER, x.day.isoformat()))
    return out


def _event_numbers(b: Binding, f: Facts) -> set[str]:
    """The vaccine doses and the recent events a binding rests on: counts and intervals, and
    numbers quoted in the record's own wording."""
    out: set[str] = set()
    if b.doses:
        out.add(str(len(b.doses)))
        days = f.days_since(b.doses[-1].occurred)
        if days is not None:
            out.add(_ago_number(days))
    if b.event_days:
        out.add(str(b.event_days))
    if b.event is not None:
        out.add(_ago_number(max(0, (f.p.as_of - b.event.day).days)))
        out |= set(re.findall(_NUMBER, b.event.text))
    return out


def _dose_numbers(b: Binding) -> set[str]:
    """The doses per kg computed from the record, a level's range and dates, and a kidney
    band's own thresholds, as their sources state them."""
    out: set[str] = set()
    if b.per_kg is not None:
        w = b.per_kg
        out |= {fmt(v) for v in (w.kg, w.dose_mg, w.day_mg, w.per_kg_dose, w.per_kg_day) if v}
        if w.weight is not None and w.weight.effective is not None:  # the weight's date
            out |= set(re.findall(r"\d+", w.weight.effective.isoformat()))
        out |= {fmt(v) for v in _weight_max_amounts(b) or ()}
    if b.level is not None:
        lv = b.level
        if lv.range is not None:
            out |= {fmt(lv.range.low), fmt(lv.range.high)}
            out |= set(re.findall(_NUMBER, lv.range.population))
        out |= set(re.findall(_NUMBER, lv.entry.target))
        for r in (lv.latest, lv.previous):
            if r is not None and r.obs.effective is not None:
                out |= set(re.findall(r"\d+", str(r.obs.effective)))
    if b.limit is not None:
        lim = b.limit
        out |= {fmt(v) for v in (lim.below, lim.at_least, lim.max_daily_mg) if v is not None}
        out |= set(re.findall(_NUMBER, lim.advice))
    return out


_CITABLE = (
    "a",
    "b",
    "c",
    "cond",
    "count",
    "monitor",
    "event",
    "vaccine",
    "stroke",
    "smoking",
    "weight",
    "pregnancy",
    "lactation",
    "level",
    "stay",
    "change",
)


def _cited(names: Sequence[str], b: Binding, f: Facts) -> tuple[str, ...]:
    """The record references the named parts of a binding rest on, in the order named."""
    out: list[str] = []
    for n in names:
        if n in b.meds:
            out += f.copies(b.meds[n].ref)
        elif n.startswith("lab:") and n[4:] in b.labs:
            out.append(b.labs[n[4:]].ref)
        else:
            part = _CITED_PARTS.get(n)
            out += part(b, f) if part is not None else ()
    return refs(out)


def _level_refs(b: Binding, f: Facts) -> list[str]:
    lv = b.level
    return [] if lv is None else [r.obs.ref for r in (lv.latest, lv.previous) if r is not None]


def _weight_refs(b: Binding, f: Facts) -> list[str]:
    w = b.per_kg
    return [w.weight.ref] if w is not None and w.weight is not None else []


# What each named part of a binding cites (a part not bound cites nothing).
_CITED_PARTS: dict[str, Callable[[Binding, Facts], Sequence[str]]] = {
    "cond": lambda b, f: b.cond.refs if b.cond is not None else (),
    "count": lambda b, f: [m.ref for m in b.count],
    "kidney": lambda b, f: f.kidney.refs if f.kidney is not None else (),
    "aki": lambda b, f: (f.aki.baseline.ref, f.aki.latest.ref) if f.aki is not None else (),
    "monitor": lambda b, f: [b.monitor_last.ref] if b.monitor_last is not None else [],
    "conflict": lambda b, f: b.conflict.refs if b.conflict is not None else (),
    "bp": lambda b, f: f.bp.refs if f.bp is not None else (),
    "vaccine": lambda b, f: [i.ref for i in b.doses],
    "event": lambda b, f: b.event.refs if b.event is not None else (),
    "stay": lambda b, f: b.stay.refs if b.stay is not None else (),
    "change": lambda b, f: b.change.refs if b.change is not None else (),
    "stroke": lambda b, f: f.stroke.refs if b.stroke else (),
    "smoking": lambda b, f: f.smoking.refs if f.smoking is not None else (),
    "weight": _weight_refs,
    "features": lambda b, f: [x.ref for x in b.features.read if x.ref] if b.features else [],
    "pregnancy": lambda b, f: f.pregnancy.refs if b.pregnancy and f.pregnancy else (),
    "lactation": lambda b, f: f.lactation.refs if b.lactation and f.lactation else (),
    "level": _level_refs,
}


_CERTAINTY_ORDER = ("certain", "probable", "uncertain")


def _certainty(b: Binding, own: str | None) -> str:
    bound = "uncertain" if b.uncertain else "probable" if b.probable else "certain"
    if own is None:
        return bound
    return max(bound, own, key=_CERTAINTY_ORDER.index)


# The strength table's four severity levels in the comparator's three: a critical or major harm
# is the "severe, likely harm" that beats convenience in a clash.
_HARM: dict[str, Severity] = {
    "critical": "severe",
    "major": "severe",
    "moderate": "moderate",
    "minor": "minor",
}


def _point(
    c: Criterion, pt: PointTemplate, f: Facts, b: Binding, first: tuple[str, ...] = ()
) -> Point:
    severity = pt.severity or c.factors.severity
    factors = Factors(severity, _certainty(b, pt.certainty), pt.directness or c.factors.directness)
    facts = refs(first, _cited(pt.cites, b, f))
    strength = tau(
        factors.severity,
        factors.certainty,
        c.factors.grade,
        factors.directness,
        about_patient=pt.stance == "support" or bool(facts),
    )
    return Point(
        pt.role,
        pt.stance,
        render(pt.text, f, b, c.params),
        facts,
        pt.evidence or c.evidence,
        strength,
        harm=_HARM[severity],
        factors=factors,
        recent="event" in pt.cites and b.event is not None,
        themes=pt.themes,
        concern=pt.concern or "",  # stated: none
    )


def _proposal(c: Criterion, f: Facts, b: Binding, out: Output | None) -> Proposal:
    p = c.params
    o = c.option
    pids: tuple[str, ...] = ()
    if c.problem is not None and out is not None:
        pt = c.problem
        cited = [ref for m in b.meds.values() for ref in f.copies(m.ref)]
        if b.cond:
            cited += list(b.cond.refs)
        pids = (
            out.problem(
                slug_id(render(pt.id, f, b, p)),
                render(pt.display, f, b, p),
                cited,
                render(pt.why, f, b, p),
                pt.domains,
                "; ".join(m.text for m in b.meds.values()) or (b.cond.text if b.cond else ""),
                pt.confidence,
            ),
        )
    elif b.cond is not None and b.cond.problem is not None:
        pids = (f"prob-{rid(b.cond.problem.ref)}",)
    # A point that holds only under its own ``when`` cites first what that condition matched
    # (the antiplatelet beside warfarin that makes an INR urgent): the fact that justifies it.
    whens = [(pt, () if pt.when is None else _held(pt.when, f, p, b)) for pt in c.points]
    points = tuple(
        _point(c, pt, f, _with_when_count(pt, f, p, b), first)
        for pt, first in whens
        if first is not None
    )
    every = _cited(_CITABLE, b, f)
    every = refs(every, *(pt.facts for pt in points))
    acts = b.meds.get(o.acts_on) if o.acts_on else None
    oid, title, category, urgency = o.id, o.title, c.category, o.urgency
    priority, answers, action = o.priority or c.priority, o.answers, o.action
    when = urgency_class_of(c)
    if b.limit is not None and b.limit.action in c.variants:
        v = c.variants[b.limit.action]
        oid, title, category, priority, answers = v.id, v.title, v.category, v.priority, ()
        action = v.action
        if b.limit.urgent:
            category, priority, urgency = "immediate-safety", "safety", MAX_URGENCY
            when = "urgent"
    if b.stale_event and when in ("resolve-first", "urgent"):
        when = "soon"  # the event it rests on is not recent on the plan day
    if b.probable and when == "urgent":
        # resting on a fact that is indirect or not settled (kidney estimates that disagree):
        # acted on soon, after the repeat that settles it, not as if it were certain
        when = "soon"
    evidence = tuple(dict.fromkeys((*b.limit.evidence, *c.evidence))) if b.limit else ()
    if b.pk is not None:
        evidence = tuple(dict.fromkeys((*b.pk.evidence, *c.evidence)))
    if evidence:
        points = tuple(replace(x, evidence=evidence) for x in points)
    if o.caveat and (o.caveat_when is None or _held(o.caveat_when, f, p, b) is not None):
        title = f"{title} ({o.caveat})"
    held = _held_meds(f, b) if b.change is None else ()
    if held:
        # a medicine it rests on is on hold (and not as the stay's change a transition
        # criterion reads): the finding matters when it is restarted, not now
        names = _and([m.name for m in b.meds.values() if m.ref in held])
        verb = "is" if len(held) == 1 else "are"
        title = f"While {names} {verb} on hold: {title[:1].lower()}{title[1:]}"
        if when in ("resolve-first", "urgent"):
            when = "soon"
        category = "medication" if category == "immediate-safety" else category
    pid = slug_id(render(oid, f, b, p))
    if b.uncertain:
        # A request to verify is its own activity, not the action it may lead to (whose id
        # reads as a safety verb: "opt-reduce-..."), so it ranks as the routine review it is.
        pid = VERIFY_PREFIX + pid.removeprefix("opt-")
    return Proposal(
        pid,
        render(o.verify_title if b.uncertain else title, f, b, p),
        "medication" if b.uncertain and category == "immediate-safety" else category,
        render(o.verify_description if b.uncertain else o.description, f, b, p),
        every,
        pids,
        points,
        o.code,
        acts.ref if acts is not None else None,
        min(urgency, 1) if b.uncertain else urgency,
        "review" if b.uncertain else priority,
        (c.id,),
        # a request to verify a dose is the routine check it is, not the action it may lead to
        urgency_class="routine" if b.uncertain and when != "resolve-first" else when,
        answers=() if b.uncertain else answers,
        action="" if b.uncertain or action is None else action,
    )


def slug_id(text: str) -> str:
    head, _, rest = text.partition("-")
    return f"{head}-{slug(rest)}" if rest else slug(text)


_KEY = re.compile(r"\{([a-h])\}")


def _stops(c: Criterion, f: Facts, b: Binding) -> str | None:
    """The MedicationRequest a firing's activity ends, if it ends one: a deprescribing
    criterion's ``acts_on`` drug, or an activity whose id reads as a stop (``opt-stop-{a}``,
    or ``opt-taper-{a}`` titled to taper and stop), a kidney band's "avoid" included. A
    request to verify a dose ends nothing."""
    if b.uncertain:
        return None
    o = c.option
    oid, title = o.id, o.title
    if b.limit is not None and b.limit.action in c.variants:
        v = c.variants[b.limit.action]
        oid, title = v.id, v.title
    key = o.acts_on if c.kind == "deprescribing" and o.acts_on else None
    if key is None and (
        oid.startswith("opt-stop-") or (oid.startswith("opt-taper-") and "stop" in title.lower())
    ):
        found = _KEY.search(oid)
        key = o.acts_on or (found.group(1) if found else None)
    m = b.meds.get(key) if key else None
    return m.ref if m is not None else None


def _stopped_proposals(out: Output | None) -> set[str]:
    """MedicationRequests that a rule function's activity (already in ``out``) stops."""
    if out is None:
        return set()
    return {
        p.medication_ref
        for p in out.proposals
        if p.medication_ref is not None and p.id.startswith("opt-stop-")
    }


def _bindings(
    criteria: Sequence[Criterion], f: Facts, out: Output | None = None
) -> list[tuple[Criterion, Binding]]:
    """Every (criterion, binding) that fires, less monitoring that ends with the drug
    (``_ends_with_the_drug``) of a drug that some activity of the plan
    stops, whether a criterion's or a rule function's: the test would judge a treatment that
    is ending. Safety monitoring (levels, INR, potassium, kidney function) stays: a stop is a
    proposal the clinician may decline, and until the drug is out the check still protects."""
    found = _said(
        _own_monitor_named(
            criteria,
            f,
            stand_down(
                _pair_wins(
                    [
                        (c, b)
                        for c in criteria
                        for b in _match(c.trigger, f, c.params)
                        if not _excused(c, f, b) and not _named_pair(c, b, criteria)
                    ]
                )
            ),
        ),
        f,
        out,
    )
    stopping = _stopped_proposals(out) | {
        ref for c, b in found for ref in (_stops(c, f, b),) if ref is not None
    }
    return [
        (c, b)
        for c, b in found
        if not (
            _ends_with_the_drug(c.trigger)
            and "a" in b.meds
            and any(ref in stopping for ref in f.copies(b.meds["a"].ref))
        )
    ]


def _ends_with_the_drug(t: Trigger) -> bool:
    """Monitoring that has no purpose once its drug is stopped: a test of the treatment's
    response or harm (``Monitor``), or the routine test of a drug's own interval "once the
    dose is stable" (``own_monitor_grace``), which a drug being stopped will not reach."""
    if t.own_monitor_grace is not None:
        return True
    return t.monitor is not None and bool(t.monitor.response or t.monitor.harm)


def claims_of(c: Criterion, f: Facts, b: Binding) -> tuple[Claim, ...]:
    """What a firing asserts about the record, for ``claims.check`` to hold against it."""
    t = c.trigger
    out: list[Claim] = []
    if b.change is not None and b.change.kind in ("stopped", "held") and b.stay is not None:
        out.append(StoppedInStay(b.change.med.ref, b.stay.encounter.ref))
    if b.monitor_quantity and b.monitor_last is None:
        out.append(NoResult(b.monitor_quantity))
    a = b.meds.get("a")
    if t.daily_mg_above is not None and a is not None and not b.uncertain:
        daily = a.daily_mg if a.daily_mg is not None else a.unit_mg
        out.append(AboveLimit(a.ref, daily, t.ops["daily_mg_above"], c.params[t.daily_mg_above]))
    if t.equivalent_daily_min is not None and b.equivalent is not None and a is not None:
        limit = c.params[t.equivalent_daily_min]
        op = t.ops["equivalent_daily_min"]
        out.append(AboveLimit(a.ref, b.equivalent.reference_daily_mg, op, limit))
    if t.above_weight_max is not None and a is not None:
        got = _weight_max_amounts(b)
        day = b.per_kg.day_mg if b.per_kg is not None else None
        if got is not None:
            out.append(AboveLimit(a.ref, day, t.above_weight_max.op, got[1]))
    if c.kind in ("drug-drug", "duplicate-class") and "b" in b.meds and not _held_meds(f, b):
        out.append(TakenTogether(tuple(m.ref for m in b.meds.values())))
    if b.features is not None and a is not None:
        out += _feature_claims(b.features, a, t.feature_dose)
    if "current" in t.smoking:
        out.append(CurrentSmoker())
    service = care_service(c.option.id)
    if service is not None:
        out.append(NotUnderCare(service))
    if b.vaccine and t.vaccine is not None and t.vaccine.within_days:
        out.append(NotGiven(t.vaccine.vaccine, int(c.params[t.vaccine.within_days])))
    if b.event is not None and t.recent_event is not None:
        out.append(Recent(b.event.day, int(c.params[t.recent_event.days])))
    return tuple(out)


def _feature_claims(d: FeatureDose, a: MedFact, direction: str | None) -> list[Claim]:
    """Each feature stated (the met ones; every one read for a dose below the rule's), and the
    dose against the reduced one where it is stated."""
    out: list[Claim] = []
    for x in d.read:
        if x.kind == "drug":
            if x.met:
                out.append(TakenTogether((a.ref, x.ref)))
        elif x.met or direction == "below":
            out.append(FeatureRead(x.kind, x.ref, x.value, x.op, x.threshold, x.met))
    if a.daily_mg is not None:
        op = ">" if direction == "above" else "<="
        out.append(AboveLimit(a.ref, a.daily_mg, op, d.rule.reduced_daily_mg))
    return out


def _held_meds(f: Facts, b: Binding) -> tuple[str, ...]:
    """The bound medicines on hold (to be resumed): an interaction with one is for its
    restart, not for now."""
    bound = {m.ref for m in b.meds.values()}
    return tuple(m.ref for m in f.p.medications if m.ref in bound and m.status == "on-hold")


def _said(
    found: list[tuple[Criterion, Binding]], f: Facts, out: Output | None
) -> list[tuple[Criterion, Binding]]:
    """The firings whose every claim holds for the record on the plan day; each withheld one
    is named in ``out`` by criterion and claim kind."""
    kept = []
    for c, b in found:
        claims = claims_of(c, f, b)
        failed = [x for x in claims if check(x, f.p, f.p.plan_day) is not None]
        # An event that is not recent on the plan day (an old record) still happened as the
        # text says; what fails is its being new: the firing stays, no longer urgent on its own.
        stale = [x for x in failed if isinstance(x, Recent)]
        failed = [x for x in failed if not isinstance(x, Recent)]
        if out is not None:
            out.claims_checked += len(claims)
            out.withheld += [f"{c.id}:{x.kind}" for x in failed]
        if not failed:
            b.stale_event = bool(stale)
            kept.append((c, b))
    return kept


def _trigger_specs(t: Trigger) -> tuple[str, ...]:
    """The drug specs a trigger or one of its alternatives binds."""
    return (*t.drugs, *(s for a in t.any_of for s in _trigger_specs(a)))


def _own_monitor_named(
    criteria: Sequence[Criterion], f: Facts, found: list[tuple[Criterion, Binding]]
) -> list[tuple[Criterion, Binding]]:
    """A test due by the drug's own interval (``own_monitor_grace``) gives way to any
    monitoring criterion that names that drug and a test of the same codes, whether or not it
    fires: that criterion holds the interval its own source states, and judges it alone."""
    named = [
        (frozenset(_loincs(c.trigger.monitor.quantity)), _trigger_specs(c.trigger))
        for c in criteria
        if c.trigger.monitor is not None and c.trigger.own_monitor_grace is None
    ]

    def covered(b: Binding) -> bool:
        codes, m = set(_loincs(b.monitor_quantity)), b.meds["a"]
        return any(codes & q and any(m in f.with_spec(s) for s in sp) for q, sp in named)

    return [(c, b) for c, b in found if c.trigger.own_monitor_grace is None or not covered(b)]


def _pair(b: Binding) -> frozenset[str] | None:
    if "a" not in b.meds or "b" not in b.meds:
        return None
    return frozenset((b.meds["a"].ref, b.meds["b"].ref))


def _named_pair(c: Criterion, b: Binding, criteria: Sequence[Criterion]) -> bool:
    """A pathway-role binding whose two ingredients some criterion names as a pair (its first
    two drug specs), whether or not that criterion fires: the named criterion holds the
    label's own judgement of the pair (a dose ceiling, a threshold), and the generic line
    would contradict it where it stays silent."""
    if c.trigger.roles is None:
        return False
    a, s = b.names.get("a", ""), b.names.get("b", "")
    for other in criteria:
        specs = other.trigger.drugs[:PAIR]
        if other is c or len(specs) < PAIR or other.kind not in ("drug-drug", "dose-ceiling"):
            continue
        x, y = specs
        if (matches(a, x) and matches(s, y)) or (matches(a, y) and matches(s, x)):
            return True
    return False


class _Generality(IntEnum):
    """How general a drug-drug criterion is: one that names its drugs, the mechanism table
    (``pk_table``), the monographs' pathway roles (``roles``). The more general gives way."""

    NAMED = auto()
    TABLE = auto()
    ROLES = auto()


def _generality(t: Trigger) -> _Generality:
    if t.roles is not None:
        return _Generality.ROLES
    return _Generality.TABLE if t.pk_table is not None else _Generality.NAMED


def _pair_wins(found: list[tuple[Criterion, Binding]]) -> list[tuple[Criterion, Binding]]:
    """A mechanism firing (``pk_table``, ``roles``) gives way to any less general drug-drug
    criterion that fires for the same two medicines: the pair criterion names the interaction
    and its own action, and a second activity for the same two drugs would repeat it less
    precisely. A pathway-role firing gives way to the mechanism table's as well."""
    named: dict[frozenset[str], _Generality] = {}
    for c, b in found:
        pair = _pair(b)
        if c.kind == "drug-drug" and pair is not None:
            named[pair] = min(named.get(pair, _Generality.ROLES), _generality(c.trigger))
    return [
        (c, b)
        for c, b in found
        if _generality(c.trigger) == _Generality.NAMED
        or named.get(_pair(b) or frozenset(), _Generality.ROLES) >= _generality(c.trigger)
    ]


def evaluate(criteria: Sequence[Criterion], f: Facts) -> tuple[Firing, ...]:
    """Every (criterion, binding) that fires, with its proposal (no problems recorded)."""
    return tuple(Firing(c, b, _proposal(c, f, b, None)) for c, b in _bindings(criteria, f))


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _list_vaccines(
    firings: Sequence[tuple[Criterion, Binding, str]], f: Facts, out: Output
) -> None:
    """One activity offers every vaccine found due: several vaccination criteria merge into
    one option, whose title and description name each of them (``{vaccines}``), not only the
    first. The retrieval query keeps the title without the list: every vaccine document is
    cited by the vaccine points anyway, and the vaccines' rare words would otherwise crowd the
    documents on the rest of the record out of the search."""
    due: dict[str, dict[str, str]] = {}
    first: dict[str, tuple[Criterion, Binding]] = {}
    for c, b, pid in firings:
        if "{vaccines}" in c.option.description and b.vaccine and c.trigger.vaccine is not None:
            first.setdefault(pid, (c, b))
            due.setdefault(pid, {}).setdefault(b.vaccine, c.trigger.vaccine.short)
    for i, p in enumerate(out.proposals):
        if p.id in first:
            c, b = first[p.id]
            # the title names them short, as a count ("3 due: flu, zoster, Td"), so the
            # summary line keeps room for the fact and the reason; the description in full
            shorts = list(due[p.id].values())
            listed = (f"{len(shorts)} due: {', '.join(shorts)}", _and(list(due[p.id])))
            title, description = (
                render(t.replace("{vaccines}", "\x00"), f, b, c.params).replace("\x00", words)
                for t, words in zip((c.option.title, c.option.description), listed, strict=True)
            )
            query = render(c.option.title.replace("{vaccines}", ""), f, b, c.params)
            out.proposals[i] = replace(
                p, title=title, description=description, query=query.rstrip(": ")
            )


def _find(out: Output, pid: str) -> int | None:
    return next((i for i, p in enumerate(out.proposals) if p.id == pid), None)


def _absorb(firings: Sequence[tuple[Criterion, Binding, str]], f: Facts, out: Output) -> None:
    """Fold each action that a firing option ``absorbs`` (same medicine) into that option:
    one activity per medicine where one change settles several problems (a dose change and
    the level that guides it; an interaction review and the recent event that decides it).
    Every point of the absorbed action joins, as ``add_or_merge`` unites points (its objection
    to a lower dose without a replacement statin is answered by the switch itself, and keeps
    the order the argument scores gave before the merge). An option already folded into
    another still folds what it absorbs, into the one that holds it now."""
    into: dict[str, str] = {}  # absorbed id -> the id of the activity that holds it
    for c, b, pid in firings:
        o = c.option
        for template in o.absorbs:
            other = slug_id(render(template, f, b, c.params))
            i, j = _find(out, into.get(pid, pid)), _find(out, other)
            if i is None or j is None or i == j:
                continue
            host, gone = out.proposals[i], out.proposals[j]
            # Same medicine: the same order, or an action on no order of its own (a level to
            # check, an event to review) that cites the host's order among its facts.
            same = gone.medication_ref == host.medication_ref or (
                gone.medication_ref is None and host.medication_ref in gone.refs
            )
            if host.medication_ref and not same:
                continue
            # A request to verify the dose is settled by the change itself: it joins with its
            # facts and criterion only, not its text, points or name (the problem it checks is
            # not known to exist, and the host's own points already ask to check interactions).
            verify = gone.id.startswith(VERIFY_PREFIX)
            said = "" if verify else " " + _sentence(gone.description)
            title = host.title
            if o.merged_title and not verify:
                title = render(o.merged_title, f, b, c.params)
            out.proposals[i] = Proposal(
                host.id,
                title,
                min(host.category, gone.category, key=CATEGORY_ORDER.index),
                host.description + said,
                refs(host.refs, gone.refs),
                refs(host.problem_ids, gone.problem_ids),
                (*host.points, *(() if verify else gone.points)),
                host.code or gone.code,
                host.medication_ref or gone.medication_ref,
                max(host.urgency, gone.urgency),
                min(host.priority, gone.priority, key=PRIORITY_ORDER.index),
                tuple(dict.fromkeys((*host.criteria, *gone.criteria))),
                urgency_class=most_urgent(host.urgency_class, gone.urgency_class),
                answers=host.answers,  # what the host's design answers; the gone one's is moot
                action=host.action,
            )
            into |= {other: host.id} | {k: host.id for k, v in into.items() if v == other}
            del out.proposals[j]


def _sentence(text: str) -> str:
    """``text`` as a sentence: first letter up (not in "eGFR"), one final full stop."""
    head = text[:1].upper() if text[1:2].islower() else text[:1]
    return head + text[1:].rstrip(". ") + "."


def _merge_panels(firings: Sequence[tuple[Criterion, Binding, str]], f: Facts, out: Output) -> None:
    """Monitoring due for two or more quantities of one blood panel (``panels.PANELS``)
    becomes one activity, ``opt-monitor-<panel>``, naming each test in its title and each
    reason, with its status, in its description: one sample, one order."""
    for panel in PANELS:
        due: dict[str, tuple[str, str]] = {}  # proposal id -> (quantity, status)
        for c, b, pid in firings:
            m = c.trigger.monitor
            if m is not None and m.quantity in panel.quantities and pid not in due:
                due[pid] = (m.quantity, render("{monitor}", f, b, c.params))
        found = [(i, p) for i, p in enumerate(out.proposals) if p.id in due]
        if len({due[p.id][0] for _, p in found}) < param_int("panel.min_quantities"):
            continue
        order = list(panel.quantities)
        found.sort(key=lambda ip: (order.index(due[ip[1].id][0]), ip[1].id))
        parts = [p for _, p in found]
        tests = _and(list(dict.fromkeys(panel.quantities[due[p.id][0]] for p in parts)))
        reasons = " ".join(
            _sentence(f"{p.description.rstrip('. ')} ({due[p.id][1]})") for p in parts
        )
        merged = Proposal(
            f"opt-monitor-{panel.id}",
            panel.title.replace("{tests}", tests),
            min((p.category for p in parts), key=CATEGORY_ORDER.index),
            f"{panel.intro} {reasons}",
            refs(*(p.refs for p in parts)),
            refs(*(p.problem_ids for p in parts)),
            tuple(pt for p in parts for pt in p.points),
            next((p.code for p in parts if p.code), None),
            None,
            max(p.urgency for p in parts),
            min((p.priority for p in parts), key=PRIORITY_ORDER.index),
            tuple(dict.fromkeys(c for p in parts for c in p.criteria)),
            urgency_class=most_urgent(*(p.urgency_class for p in parts)),
        )
        first = min(i for i, _ in found)
        gone = {p.id for p in parts}
        out.proposals[:] = [p for p in out.proposals if p.id not in gone]
        out.proposals.insert(min(first, len(out.proposals)), merged)


def _grouped(found: Sequence[tuple[Criterion, Binding]], f: Facts) -> dict[int, str]:
    """Which bindings join a lab-problem group (``LabGroup``): index -> the group's option id,
    for each group whose bindings hold at least its ``min_medicines`` distinct medicines."""
    members: dict[str, list[int]] = {}
    need: dict[str, int] = {}
    for i, (c, b) in enumerate(found):
        g = c.option.group
        if g is None or "a" not in b.meds:
            continue
        gid = slug_id(render(g.id, f, b, c.params))
        members.setdefault(gid, []).append(i)
        need.setdefault(gid, g.min_medicines)
    out: dict[int, str] = {}
    joins: dict[str, tuple[str, set[str]]] = {}  # absorbed criterion id -> group, its drugs
    for gid, idx in members.items():
        drugs = {ref for i in idx for ref in f.copies(found[i][1].meds["a"].ref)}
        if len(drugs) >= need[gid]:
            out |= dict.fromkeys(idx, gid)
            for i in idx:
                g = found[i][0].option.group
                for cid in g.absorbs_criteria if g else ():
                    joins.setdefault(cid, (gid, set()))[1].update(drugs)
    for i, (c, b) in enumerate(found):
        acts = b.meds.get(c.option.acts_on or "")
        if i not in out and c.id in joins and acts is not None and acts.ref in joins[c.id][1]:
            out[i] = joins[c.id][0]
    return out


def _group_proposal(
    gid: str, parts: Sequence[tuple[Criterion, Binding, Proposal]], f: Facts
) -> Proposal:
    """One activity for one lab problem: the title and description of the first criterion's
    group over every drug that may cause it (each named once, with what it contributes), and
    every drug's own points, facts, problems and criteria, with those of the actions it
    absorbs (``LabGroup.absorbs_criteria``)."""
    c0, b0, _ = parts[0]
    g = c0.option.group
    assert g is not None
    names = list(
        dict.fromkeys(render("{a}", f, b, c.params) for c, b, _ in parts if c.option.group)
    )
    said = list(
        dict.fromkeys(
            render(c.option.group.part, f, b, c.params) for c, b, _ in parts if c.option.group
        )
    )
    title, description = (
        render(t.replace("{drugs}", "\x00").replace("{parts}", "\x01"), f, b0, c0.params)
        .replace("\x00", _and(names))
        .replace("\x01", "; ".join(said))
        for t in (g.title, g.description)
    )
    seen: set[tuple[str, str, str]] = set()
    points: list[Point] = []
    for _, _, p in parts:
        for pt in p.points:
            if (pt.role, pt.stance, pt.text) not in seen:
                seen.add((pt.role, pt.stance, pt.text))
                points.append(pt)
    props = [p for _, _, p in parts]
    return Proposal(
        gid,
        title,
        min((p.category for p in props), key=CATEGORY_ORDER.index),
        description,
        refs(*(p.refs for p in props)),
        refs(*(p.problem_ids for p in props)),
        tuple(points),
        next((p.code for p in props if p.code), None),
        None,
        max(p.urgency for p in props),
        min((p.priority for p in props), key=PRIORITY_ORDER.index),
        tuple(dict.fromkeys(x for p in props for x in p.criteria)),
        # Retrieval: the title without the drug list (each drug's points cite its documents).
        render(re.sub(r" ?\(?\{(drugs|parts)\}\)?", "", g.title), f, b0, c0.params),
        most_urgent(*(p.urgency_class for p in props)),
    )


def apply_criteria(criteria: Sequence[Criterion], f: Facts, out: Output) -> tuple[str, ...]:
    """Add every firing criterion's problem and proposal to ``out``; the ids that fired."""
    fired: list[str] = []
    firings: list[tuple[Criterion, Binding, str]] = []
    found = _bindings(criteria, f, out)
    grouped = _grouped(found, f)
    groups: dict[str, list[tuple[Criterion, Binding, Proposal]]] = {}
    for i, (c, b) in enumerate(found):
        checkpoint()
        prop = _proposal(c, f, b, out)
        gid = grouped.get(i)
        if gid is not None:
            if gid not in groups:  # the group's place in the list is its first member's
                groups[gid] = []
                out.proposals.append(Proposal(gid, "", c.category, "", (), (), ()))
            groups[gid].append((c, b, prop))
        else:
            add_or_merge(out, prop)
        firings.append((c, b, gid or prop.id))
        if c.high_risk:
            out.high_risk += 1
        fired.append(c.id)
    for gid, parts in groups.items():
        at = _find(out, gid)
        assert at is not None
        out.proposals[at] = _group_proposal(gid, parts, f)
    _list_vaccines(firings, f, out)
    _absorb(firings, f, out)
    _merge_panels(firings, f, out)
    return tuple(dict.fromkeys(fired))
