"""A child's dose per kilogram: the body weight, and how much of one ingredient is given.

Read by the criteria that hold a weight-based ceiling (``Trigger.weight_dose``). The weight is
the latest usable body weight within a window; the ingredient's amount per administration comes
from the stated dose (mg), or from a dose in millilitres times the strength per millilitre the
product's name states ("Acetaminophen 21.7 MG/ML / Dextromethorphan ..."); the amount a day
adds every active product that holds the ingredient, so paracetamol in a cough mixture counts
with the paracetamol suspension. Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from service.record.profile import Medication, Observation

from .drugs import drug
from .facts import Facts, MedFact
from .units import KG_PER_G, KG_PER_LB

__all__ = ["WeightDose", "ingredient_mg", "per_kg", "weight_kg"]

# Units a body weight is charted in (UCUM), to kilograms.
_TO_KG = {"kg": 1.0, "g": KG_PER_G, "[lb_av]": KG_PER_LB, "lb": KG_PER_LB, "lbs": KG_PER_LB}
_PER_ML = r"\s+[a-z ]*?(\d+(?:\.\d+)?)\s*mg\s*/\s*ml"


def weight_kg(o: Observation) -> float | None:
    factor = _TO_KG.get(o.unit.strip().lower())
    return None if factor is None or o.value is None or o.value <= 0 else o.value * factor


def _order(f: Facts, m: MedFact) -> Medication | None:
    return next((x for x in f.p.active_medications if x.ref == m.ref), None)


def _per_ml(text: str, name: str) -> float | None:
    """mg per mL of ``name`` that a product's name states, None when it states none."""
    low = text.lower()
    for word in (name, *drug(name).names):
        found = re.search(re.escape(word) + _PER_ML, low)
        if found:
            return float(found.group(1))
    return None


def ingredient_mg(f: Facts, m: MedFact, name: str) -> float | None:
    """mg of ingredient ``name`` in one administration of ``m``; None when not known."""
    order = _order(f, m)
    if order is None or order.dose_value is None:
        return None
    if order.dose_unit.strip().lower() in ("ml", "milliliter", "millilitre"):
        texts = (m.text, *(c.display for c in order.codes if c.display))
        strength = next((s for t in texts if (s := _per_ml(t, name)) is not None), None)
        return None if strength is None else strength * order.dose_value
    if len(m.drugs) == 1 and m.dose_stated:
        return m.unit_mg
    return None  # a combination dosed in mg or units: which ingredient is meant is not said


def _times(f: Facts, m: MedFact) -> float | None:
    order = _order(f, m)
    return None if order is None else order.times_per_day


@dataclass(frozen=True, slots=True)
class WeightDose:
    """One ingredient of one bound product against the child's weight."""

    weight: Observation | None  # usable and recent enough; None: weigh the child
    kg: float | None
    dose_mg: float | None  # one administration of the bound product
    day_mg: float | None  # the known part of every product's amount a day (None: none known)
    complete: bool  # every product's amount a day is known
    products: tuple[MedFact, ...]  # every active product holding the ingredient

    @property
    def per_kg_dose(self) -> float | None:
        return None if self.kg is None or self.dose_mg is None else self.dose_mg / self.kg

    @property
    def per_kg_day(self) -> float | None:
        return None if self.kg is None or self.day_mg is None else self.day_mg / self.kg


def per_kg(f: Facts, m: MedFact, name: str, weight_days: float) -> WeightDose:
    """The bound product ``m``'s ingredient ``name`` per kg of the latest recent weight."""
    o = f.latest("weight")
    age = f.days_since(o.effective) if o is not None else None
    kg = weight_kg(o) if o is not None else None
    if o is None or age is None or age > weight_days or kg is None:
        o, kg = None, None
    products = tuple(x for x in f.meds if name in x.drugs)
    daily: list[float | None] = []
    for x in products:
        mg, times = ingredient_mg(f, x, name), _times(f, x)
        daily.append(mg * times if mg is not None and times else None)
    known = [d for d in daily if d is not None]
    day = sum(known) if known else None
    return WeightDose(o, kg, ingredient_mg(f, m, name), day, len(known) == len(daily), products)
