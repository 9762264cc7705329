"""Trigger parts and precedence for criteria on drug properties (``criteria/properties.json``).

Generic criteria read what the monographs say of each drug (``data/monographs.yaml`` merged into
the drug table): a stack of drugs sharing a risk, a dose above the drug's usual maximum, a level
that rises when smoking stops. Two parts live here, hooked into the interpreter's lists of
guards and checks, and the rule that a named pair criterion stands a generic one down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Protocol, TypeVar

from service.record.profile import Observation
from service.record.vocabulary import LOINC_GROUPS

from ..drugs import max_daily_mg
from ..facts import Facts, MedFact, smoking_status
from ..units import MAGNESIUM_MG_DL_PER_MMOL_L
from .schema import Criterion, Trigger


class Binding(Protocol):
    """What these parts read of the interpreter's binding (``interpret.Binding``)."""

    @property
    def meds(self) -> Mapping[str, MedFact]: ...
    @property
    def count(self) -> tuple[MedFact, ...]: ...


B = TypeVar("B", bound=Binding)

__all__ = ["above_max_daily", "magnesium_mmol_l", "smoking_stopped", "stand_down"]


def magnesium_mmol_l(o: Observation) -> float | None:
    """A magnesium result in mmol/L (the unit the criteria's thresholds are written in); a
    result in another unit is not judged."""
    unit = o.unit.strip().lower().replace(" ", "")
    if o.value is None or unit not in ("mmol/l", "", "mg/dl"):
        return None
    return o.value / MAGNESIUM_MG_DL_PER_MMOL_L if unit == "mg/dl" else o.value


def above_max_daily(t: Trigger, f: Facts, params: dict[str, float], b: Binding) -> bool:
    """Drug ``a`` is one ingredient whose stated daily dose is above its usual maximum."""
    if not t.above_max_daily:
        return True
    a = b.meds.get("a")
    if a is None or len(a.drugs) != 1 or a.daily_mg is None:
        return False
    top = max_daily_mg(a.drugs[0])
    return top is not None and a.daily_mg > top


def _smoked_since(f: Facts, since_days: float) -> bool:
    """A record dated within ``since_days`` of the record date says the patient smoked."""
    start = f.p.as_of - timedelta(days=since_days)
    smoked = [
        o.effective
        for o in (*f.p.observations, *f.p.readings)  # the latest per code, then the history
        if o.loinc in LOINC_GROUPS["smoking_status"] and smoking_status(o.value_codes) == "current"
    ]
    smoked += [pr.abatement for pr in f.p.problems if smoking_status(pr.codes) == "current"]
    return any(d is not None and d >= start for d in smoked)


def smoking_stopped(t: Trigger, f: Facts, params: dict[str, float], base: Binding | None) -> bool:
    """The latest status is former smoker and the patient smoked within the window."""
    if t.smoking_stopped_within is None:
        return True
    sm = f.smoking
    return (
        sm is not None
        and sm.status == "former"
        and _smoked_since(f, params[t.smoking_stopped_within])
    )


def _refs(b: Binding) -> frozenset[str]:
    return frozenset({m.ref for m in b.meds.values()} | {m.ref for m in b.count})


def stand_down(found: Sequence[tuple[Criterion, B]]) -> list[tuple[Criterion, B]]:
    """Each firing of a criterion with ``yields_to`` gives way when the firings of those
    criteria already name every medicine it names: the pair criterion states the hazard with
    its own action, and the generic line would repeat it."""
    fired: dict[str, set[str]] = {}
    for c, b in found:
        fired.setdefault(c.id, set()).update(_refs(b))
    out = []
    for c, b in found:
        covered = set().union(*(fired.get(i, set()) for i in c.yields_to))
        own = _refs(b)
        if c.yields_to and own and own <= covered:
            continue
        out.append((c, b))
    return out
