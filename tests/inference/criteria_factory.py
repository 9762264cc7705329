"""Profiles built from a criterion's own data: one that satisfies its trigger, one that an
exception (or a missing trigger part) excuses. Used by the table-driven criteria tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, timedelta

from inference.knowledge.conditions import GROUPS_BY_KEY
from inference.knowledge.coverage import SCOPE
from inference.knowledge.criteria.schema import Criterion, Trigger
from inference.knowledge.drugs import DRUGS, max_daily_mg, monitor_of
from inference.knowledge.facts import SMOKING_CODES, Facts
from inference.knowledge.levels import LEVELS, LevelEntry
from inference.knowledge.transitions import TRANSITIONS
from service.record.profile import (
    Code,
    Condition,
    Encounter,
    Immunization,
    Medication,
    Observation,
    PatientProfile,
)
from service.record.vocabulary import CVX, LOINC_GROUPS, RXNORM, SNOMED

AS_OF = date(2024, 6, 1)
CHILD_KG = 20.0  # the body weight of a weight-dosed positive case
_UNITS = {
    "egfr": "mL/min/{1.73_m2}",
    "creatinine": "mg/dL",
    "potassium": "mmol/L",
    "eosinophils": "/uL",
}


def drug_for(spec: str, avoid: frozenset[str] = frozenset()) -> str:
    kind, _, name = spec.partition(":")
    if kind == "drug":
        return name
    for d in DRUGS:
        if d.name in avoid or len(d.classes) > 6:
            continue
        pool = getattr(d, "flags", ()) if kind == "flag" else d.classes
        if name in pool:
            return d.name
    raise LookupError(spec)


@dataclass
class Builder:
    age: int = 75
    sex: str = "female"
    meds: list[Medication] = field(default_factory=list)
    problems: list[Condition] = field(default_factory=list)
    obs: list[Observation] = field(default_factory=list)
    imms: list[Immunization] = field(default_factory=list)
    encs: list[Encounter] = field(default_factory=list)
    onset_days: int = 60  # how long before the record date conditions began
    discharged_days: int = 5  # how long before the record date a hospital stay ended
    n: int = 0

    def _id(self) -> str:
        self.n += 1
        return f"x{self.n}"

    def med(
        self,
        name: str,
        authored: date = date(2023, 1, 1),
        dose_mg: float | None = None,
    ) -> Medication:
        m = Medication(
            f"MedicationRequest/{self._id()}",
            name,
            (Code(RXNORM, "", name),),
            "active",
            "order",
            authored,
            dose_value=dose_mg,
            dose_unit="mg" if dose_mg is not None else "",
            times_per_day=1.0 if dose_mg is not None else None,
        )
        self.meds.append(m)
        return m

    def condition(self, group: str) -> None:
        g = GROUPS_BY_KEY[group]
        code = g.snomed[0] if g.snomed else ""
        self.problems.append(
            Condition(
                f"Condition/{self._id()}",
                g.label,
                (Code(SNOMED, code, g.label),) if code else (),
                "active",
                "confirmed",
                AS_OF - timedelta(days=self.onset_days),
            )
        )

    def resolved(self, group: str) -> None:
        """A problem of ``group`` that ended a year before the record date."""
        self.condition(group)
        p = self.problems[-1]
        self.problems[-1] = replace(
            p,
            clinical_status="resolved",
            onset=AS_OF - timedelta(days=3 * 365),
            abatement=AS_OF - timedelta(days=365),
        )

    def immunization(self, cvx: str, when: date) -> None:
        self.imms.append(
            Immunization(
                f"Immunization/{self._id()}", "vaccine", (Code(CVX, cvx),), "completed", when
            )
        )

    def encounter(self, group: str, class_code: str, when: date) -> None:
        g = GROUPS_BY_KEY[group]
        reason = (Code(SNOMED, g.snomed[0], g.label),) if g.snomed else ()
        self.encs.append(
            Encounter(
                f"Encounter/{self._id()}",
                "Emergency room admission",
                when,
                when,
                class_code=class_code,
                reasons=reason,
                reason_text=g.label,
            )
        )

    @property
    def discharged(self) -> date:
        return AS_OF - timedelta(days=self.discharged_days)

    def stay(self, groups: tuple[str, ...]) -> None:
        """A hospital stay that ended ``discharged_days`` ago, its diagnosis of ``groups[0]``."""
        diagnoses: tuple[str, ...] = ()
        if groups:
            self.condition(groups[0])
            diagnoses = (self.problems[-1].ref,)
        self.encs.append(
            Encounter(
                f"Encounter/{self._id()}",
                "Hospital admission",
                self.discharged - timedelta(days=4),
                self.discharged,
                class_code="IMP",
                diagnoses=diagnoses,
            )
        )

    def change(self, kind: str, name: str) -> None:
        """A medicine request that reads as a ``kind`` of change around the stay."""
        at = self.discharged
        if kind == "dose-changed":
            old = self.med(name, dose_mg=10)
            self.meds[-1] = replace(old, status="stopped")
            new = self.med(name, at, 20)
            self.meds[-1] = replace(new, prior=old.ref)
            return
        m = self.med(name, at if kind in ("new", "course-ending") else date(2023, 1, 1))
        shape = {
            "held": {"status": "on-hold", "status_reason": "held in hospital"},
            "stopped": {"status": "stopped", "status_reason": "stopped in hospital for harm"},
            "course-ending": {"starts": at, "ends": AS_OF + timedelta(days=7)},
            "course-ended": {
                "status": "completed",
                "authored": at - timedelta(days=3),
                "ends": AS_OF - timedelta(days=2),
            },
        }.get(kind, {})
        self.meds[-1] = replace(m, **shape)  # type: ignore[arg-type]

    def lab(self, quantity: str, value: float, when: date = AS_OF) -> None:
        loinc = LOINC_GROUPS[quantity][0]
        self.obs.append(
            Observation(
                f"Observation/{self._id()}", loinc, quantity, value, _UNITS.get(quantity, ""), when
            )
        )

    def level(self, e: LevelEntry, value: float, when: date) -> None:
        """A blood level of ``e``'s drug, in the table's own unit."""
        self.obs.append(
            Observation(
                f"Observation/{self._id()}", e.loinc[0], f"{e.drug} level", value, e.unit, when
            )
        )

    def smoking(self, status: str, when: date = AS_OF) -> None:
        """A tobacco smoking status Observation (LOINC 72166-2) coded with ``status``."""
        code = next(c for (_, c), st in SMOKING_CODES.items() if st == status)
        self.obs.append(
            Observation(
                f"Observation/{self._id()}",
                LOINC_GROUPS["smoking_status"][0],
                "Tobacco smoking status",
                None,
                "",
                when,
                f"{status} smoker",
                value_codes=(Code(SNOMED, code, f"{status} smoker"),),
            )
        )

    def build(self) -> PatientProfile:
        latest: dict[str, Observation] = {}
        for o in sorted(self.obs, key=lambda o: o.effective or date.min):
            latest[o.loinc] = o
        born = date(AS_OF.year - self.age - 1, 12, 31)
        return PatientProfile(
            "Patient/p",
            self.sex,
            born,
            AS_OF,
            problems=tuple(self.problems),
            medications=tuple(self.meds),
            observations=tuple(latest.values()),
            readings=tuple(sorted(self.obs, key=lambda o: o.effective or date.min)),
            encounters=tuple(self.encs),
            immunizations=tuple(self.imms),
        )


def _excluded(c: Criterion) -> frozenset[str]:
    """Drugs an exception names for the bound ``a`` (a positive case must avoid them)."""
    out: set[str] = set()
    for ex in c.exceptions:
        for spec in ex.bound_matches:
            kind, _, name = spec.partition(":")
            out |= {name} if kind == "drug" else {d.name for d in DRUGS if name in d.classes}
    return frozenset(out)


def _satisfy_stay(b: Builder, t: Trigger, taken: set[str]) -> None:
    """A stay of the trigger's groups, and first (so that it is ``a``) the changed medicine."""
    if t.change is not None:
        spec = t.change.specs[0] if t.change.specs else "class:dhp-ccb"
        name = drug_for(spec, frozenset(taken))
        taken.add(name)
        b.change(t.change.kinds[0], name)
    b.stay(t.stay.groups if t.stay is not None else ())


def _satisfy(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    """Add to ``b`` what trigger ``t`` needs, part by part, in a fixed order (the first
    medicine ordered is the bound ``a``)."""
    for step in _SATISFY_STEPS:
        step(b, t, params, taken)


def _demographics(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    if t.stay is not None or t.change is not None:
        _satisfy_stay(b, t, taken)
    if t.age_min is not None:
        b.age = max(b.age, int(params[t.age_min]) + 1)
    if t.age_max is not None:
        b.age = min(b.age, int(params[t.age_max]) - 1)
    if t.sex is not None:
        b.sex = t.sex


def _trigger_drugs(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    for i, spec in enumerate(t.drugs):
        if i and spec == t.drugs[i - 1] and spec.startswith("drug:"):
            # The same ingredient twice: the second order is a combination product holding it.
            other = next(d.name for d in DRUGS if d.name not in taken and d.name != spec[5:])
            taken.add(other)
            b.med(f"{spec[5:]} / {other}")
            continue
        name = drug_for(spec, frozenset(taken))
        taken.add(name)
        if i == 0:
            b.med(name, *_first_drug_order(t, params))
        else:
            b.med(name, date(2023, 1, 1), None)


def _first_drug_order(t: Trigger, params: dict[str, float]) -> tuple[date, float | None]:
    """When the bound medicine was ordered and its daily dose, as the trigger needs them."""
    dose = None
    authored = date(2023, 1, 1)
    if t.daily_mg_above is not None:
        dose = params[t.daily_mg_above] * 2
    if t.above_max_daily:  # twice the drug's usual daily maximum
        dose = 2 * (max_daily_mg(drug_for(t.drugs[0])) or 1.0)
    if t.above_weight_max is not None:  # hydroxychloroquine 400 mg a day: 7.7 mg/kg at 52 kg
        dose = WEIGHT_MAX_DOSE_MG
    if t.weight_dose is not None:  # twice the ceiling per kg at CHILD_KG
        w = t.weight_dose
        dose = 2 * CHILD_KG * params[w.per_dose or w.per_day or ""]
    if t.min_years_on is not None:
        authored = date(AS_OF.year - int(params[t.min_years_on]) - 1, 1, 1)
    if t.min_days_on is not None:
        authored = AS_OF - timedelta(days=int(params[t.min_days_on]) + 10)
    if t.started_within is not None:
        authored = AS_OF - timedelta(days=int(params[t.started_within]) // 2)
    return authored, dose


def _conditions_and_labs(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    for group in t.any_conditions[:1]:
        b.condition(group)
    for group in t.ever_conditions[:1]:
        b.resolved(group)
    unchecked = t.stay.unchecked if t.stay is not None else ()
    for lab in t.labs:
        v = params[lab.param]
        value = v * 0.9 if lab.op in ("<", "<=") else v * 1.1 + 1
        when = b.discharged if lab.quantity in unchecked else AS_OF  # the result at discharge
        b.lab("egfr" if lab.quantity == "kidney" else lab.quantity, value, when)


def _count(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    if t.count is not None and t.count.by == "acb":
        _count_burden(b, t, params, taken)
    elif t.count is not None:
        need = int(params[t.count.min])
        # Trigger drugs already prescribed that the count's specs also match count toward it.
        facts = Facts(b.build())
        got = len({m.ref for spec in t.count.specs for m in facts.with_spec(spec)})
        for spec in t.count.specs:
            while got < need:
                try:
                    name = drug_for(spec, frozenset(taken))
                except LookupError:
                    break
                taken.add(name)
                b.med(name)
                got += 1


def _count_burden(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    """Anticholinergic medicines until the burden (and the number of medicines) is reached."""
    assert t.count is not None
    total = n = 0
    least = params[t.count.min_medicines] if t.count.min_medicines else 0
    for d in DRUGS:
        if total >= params[t.count.min] and n >= least:
            break
        if getattr(d, "acb", 0) and d.name not in taken:
            taken.add(d.name)
            b.med(d.name)
            total += int(d.acb)
            n += 1


def _record_flags(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    """The readings and medicines a trigger's yes/no parts ask for."""
    if t.kidney_acute:  # creatinine 1.0 two days ago, 2.4 today
        b.lab("creatinine", 1.0, AS_OF - timedelta(days=2))
        b.lab("creatinine", 2.4)
    if t.kidney_discordant:
        b.lab("egfr", 85.0)
        b.lab("creatinine", 3.0)
    if t.kidney_unsteady:  # creatinine 3.0 a month ago, 0.8 today beside a normal eGFR
        b.lab("creatinine", 3.0, AS_OF - timedelta(days=30))
        b.lab("creatinine", 0.8)
        b.lab("egfr", 85.0)
    if t.lab_ckd:
        b.lab("egfr", 50.0, AS_OF - timedelta(days=120))
        b.lab("egfr", 48.0)
    if t.bp_severe:
        b.lab("systolic_bp", 190.0)
    if t.smoking:
        b.smoking(t.smoking[0])
    if t.smoking_stopped_within is not None:  # smoked until half the window ago
        half = int(params[t.smoking_stopped_within]) // 2
        b.smoking("current", AS_OF - timedelta(days=half))
        b.smoking("former")
    if t.renal_table:
        b.med("metformin")
        b.lab("egfr", 25.0)
    if t.feature_dose is not None:
        _feature_dose(b, t.feature_dose)
    if t.above_weight_max is not None:
        b.obs.append(_weight(LIGHT_KG))
    if t.own_monitor_grace is not None:  # tests its monograph names, none in the record
        b.med("leflunomide")
    if t.pk_table is not None:  # a perpetrator no pair criterion names, then its substrate
        b.med("clarithromycin" if t.pk_table == "inhibition" else "rifampicin")
        b.med("tacrolimus")
    if t.roles is not None:  # a perpetrator by role, then a substrate the mechanism table lacks
        _satisfy_roles(b, t, params)
    if t.conflict:
        b.lab("potassium", 4.0)
        b.lab("potassium", 6.1)


# A daily dose above hydroxychloroquine's 5 mg/kg at a light weight, and a weight at which the
# same dose is within it (400 mg at 80 kg is exactly 5 mg/kg).
WEIGHT_MAX_DOSE_MG = 400.0
LIGHT_KG = 52.0
HEAVY_KG = 80.0


def _weight(kg: float) -> Observation:
    return Observation("Observation/wt", LOINC_GROUPS["weight"][0], "weight", kg, "kg", AS_OF)


def _feature_dose(b: Builder, direction: str) -> None:
    """Atrial fibrillation on dabigatran 300 mg a day at 85 (above the reduced dose), or on
    apixaban 5 mg a day at 70, 80 kg, creatinine 1.0 mg/dL (reduced with no feature met)."""
    b.condition("af")
    if direction == "above":
        b.age = 85
        b.med("dabigatran", dose_mg=300)
        return
    b.age = 70
    b.med("apixaban", dose_mg=5)
    b.lab("creatinine", 1.0)
    b.obs.append(
        Observation(
            f"Observation/{b._id()}", LOINC_GROUPS["weight"][0], "weight", 80.0, "kg", AS_OF
        )
    )


def _satisfy_roles(b: Builder, t: Trigger, params: dict[str, float]) -> None:
    assert t.roles is not None
    authored = date(2023, 1, 1)
    if t.started_within is not None:
        authored = AS_OF - timedelta(days=int(params[t.started_within]) // 2)
    m = b.med("clarithromycin" if t.roles.direction == "inhibition" else "rifampicin", authored)
    if t.roles.stopped_within is not None:  # ended half the window ago
        ended = AS_OF - timedelta(days=int(params[t.roles.stopped_within]) // 2)
        b.meds[b.meds.index(m)] = replace(m, status="stopped", ends=ended)
    b.med("fentanyl")


def _stroke_risk(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    if t.stroke_risk is None:
        return
    # A man of 50 with one point per condition, to the threshold.
    b.age, b.sex = 50, "male"
    need = int(params[t.stroke_risk.min_male]) - Facts(b.build()).stroke.score
    have = {p.text for p in b.problems}
    fresh = [
        g
        for g in ("hypertension", "diabetes", "heart-failure", "pad")
        if GROUPS_BY_KEY[g].label not in have
    ]
    for group in fresh[: max(0, need)]:
        b.condition(group)


def _recent_event(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    if t.recent_event is None:
        return
    event = t.recent_event
    when = AS_OF - timedelta(days=b.onset_days)
    if event.conditions:
        b.condition(event.groups[0])
    else:
        b.encounter(event.groups[0], (event.encounter_classes or ("EMER",))[0], when)


def _pregnancy(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    if not (t.pregnant or t.lactating):
        return
    # A woman of 30, pregnant (a Condition) or breastfeeding.
    b.age, b.sex = 30, "female"
    code = ("77386006", "Pregnant") if t.pregnant else ("413712001", "Breastfeeding")
    b.problems.append(
        Condition(
            f"Condition/{b._id()}",
            code[1],
            (Code(SNOMED, *code),),
            "active",
            "confirmed",
            AS_OF - timedelta(days=b.onset_days),
        )
    )


def _level(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    if t.level is not None:
        _satisfy_level(b, t, params, taken)


def _outside(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    for marker in t.outside[:1]:  # a problem coded as the scope marker says (e.g. pregnant)
        m = next(x for x in SCOPE.markers if x.id == marker)
        # A marker read from a typed fact (pregnancy, lactation) is shown by its Condition.
        fact_codes = {"pregnancy": "77386006", "lactation": "413712001"}
        code = m.snomed[0] if m.snomed else fact_codes[str(m.fact)]
        if m.sex:
            b.sex = m.sex
        b.problems.append(
            Condition(
                f"Condition/{b._id()}",
                m.label,
                (Code(SNOMED, code, m.label),),
                "active",
                "confirmed",
                AS_OF - timedelta(days=30),
            )
        )


def _any_of(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    if t.any_of:
        _satisfy(b, t.any_of[0], params, taken)


def _weight_and_vaccines(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    if t.weight_dose is not None:
        b.obs.append(
            Observation(
                "Observation/weight", LOINC_GROUPS["weight"][0], "weight", CHILD_KG, "kg", AS_OF
            )
        )
    if t.vaccine is not None and t.vaccine.only_with_history:  # some other vaccine on record
        other = next(c for c in ("08", "20", "10", "03") if c not in t.vaccine.cvx)
        b.immunization(other, AS_OF - timedelta(days=400))


_SATISFY_STEPS: tuple[Callable[[Builder, Trigger, dict[str, float], set[str]], None], ...] = (
    _demographics,
    _trigger_drugs,
    _conditions_and_labs,
    _count,
    _record_flags,
    _stroke_risk,
    _recent_event,
    _pregnancy,
    _level,
    _outside,
    _any_of,
    _weight_and_vaccines,
)


def _level_entry(t: Trigger) -> LevelEntry:
    """A fixed-range drug for above/below (with a drug that moves it that way when the
    criterion asks for a cause), a patient-target drug with movers for the rest."""
    assert t.level is not None
    state = t.level.state
    if state in ("above", "below"):
        movers = "raised_by" if state == "above" else "lowered_by"
        return next(e for e in LEVELS if e.ranges and (not t.level_cause or getattr(e, movers)))
    return next(e for e in LEVELS if not e.ranges and e.raised_by and e.lowered_by)


def _satisfy_level(b: Builder, t: Trigger, params: dict[str, float], taken: set[str]) -> None:
    assert t.level is not None
    state = t.level.state
    e = _level_entry(t)
    taken.add(e.drug)
    b.med(e.drug)
    if state in ("above", "below"):
        rng = e.ranges[0]
        for group in rng.conditions[:1]:
            b.condition(group)
        b.level(e, rng.high * 1.5 if state == "above" else rng.low * 0.5, AS_OF - timedelta(days=3))
        if t.level_cause:
            spec = (e.raised_by if state == "above" else e.lowered_by)[0]
            b.med(drug_for(spec, frozenset(taken)))
        return
    if state == "never":
        return
    spec = (e.lowered_by if state == "fallen" else e.raised_by)[0]
    mover = drug_for(spec, frozenset(taken))
    taken.add(mover)
    if state == "unchecked":
        b.level(e, 6.0, AS_OF - timedelta(days=int(params[t.level.days or ""]) + 30))
        b.med(mover, AS_OF - timedelta(days=int(params[t.level.days or ""]) // 2))
        return
    b.level(e, 8.0, AS_OF - timedelta(days=60))
    b.med(mover, AS_OF - timedelta(days=30))
    b.level(e, 16.0 if state == "risen" else 2.0, AS_OF - timedelta(days=3))


def _level_negative(b: Builder, t: Trigger, params: dict[str, float]) -> tuple[PatientProfile, str]:
    assert t.level is not None
    e = _level_entry(t)
    if t.level.state in ("above", "below"):
        rng = e.ranges[0]
        b.obs = [o for o in b.obs if o.loinc not in e.loinc]
        b.level(e, (rng.low + rng.high) / 2, AS_OF - timedelta(days=3))
        return b.build(), "a level within its range"
    if t.level.state == "never":
        b.level(e, 6.0, AS_OF - timedelta(days=3))
        return b.build(), "a level on record"
    if t.level.state == "unchecked":
        b.level(e, 6.0, AS_OF - timedelta(days=1))
        return b.build(), "a level taken after the interacting drug started"
    b.obs = b.obs[:-1]
    b.level(e, 8.0, AS_OF - timedelta(days=3))
    return b.build(), "the level did not move"


def positive(c: Criterion) -> PatientProfile:
    b = Builder()
    _satisfy(b, c.trigger, c.params, set(_excluded(c)))
    return b.build()


Negative = tuple[PatientProfile, str]


def negative(c: Criterion) -> Negative:
    """A profile the criterion must not fire on, and why: the positive case with the first
    part of the criterion that can be undone, undone."""
    b = Builder()
    taken: set[str] = set(_excluded(c))
    _satisfy(b, c.trigger, c.params, taken)
    for undo in _UNDO:
        found = undo(b, c, taken)
        if found is not None:
            return found
    raise AssertionError(f"{c.id}: no negative case can be built")


def _undo_level(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    if c.trigger.level is None:
        return None
    return _level_negative(b, c.trigger, c.params)  # the level itself on the other side


def _undo_by_exception(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    if not c.exceptions:
        return None
    ex = c.exceptions[0]
    if ex.bound_matches:  # the bound drug is the excepted one
        b.meds[0] = replace(b.meds[0], text=drug_for(ex.bound_matches[0]))
    # An exception's labs replace the trigger's own readings of the same quantity.
    qs = {("egfr" if lab.quantity == "kidney" else lab.quantity) for lab in ex.labs}
    b.obs = [o for o in b.obs if o.display not in qs]
    _satisfy(b, ex, c.params, taken)
    if ex.monitor is not None:
        b.lab(ex.monitor.quantity, 1.0)
    return b.build(), "exception 0"


def _undo_pregnancy(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    if not (c.trigger.pregnant or c.trigger.lactating):
        return None
    b.problems = [p for p in b.problems if p.text not in ("Pregnant", "Breastfeeding")]
    return b.build(), "not pregnant or breastfeeding"


def _undo_vaccine(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    vaccine = c.trigger.vaccine
    if vaccine is None:
        return None
    need = int(c.params[vaccine.doses]) if vaccine.doses else 1
    for k in range(need):
        b.immunization(vaccine.cvx[0], AS_OF - timedelta(days=30 + 60 * k))
    return b.build(), "the vaccine is recorded"


def _undo_window(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    """The same record with its stay or event before the window, or its drug started before."""
    trigger = c.trigger
    if trigger.stay is not None or trigger.change is not None:  # the stay long past
        old = Builder(discharged_days=TRANSITIONS.stay.days + 10)
        _satisfy(old, trigger, c.params, set(_excluded(c)))
        return old.build(), "the stay ended before the window"
    if trigger.recent_event is not None:  # the same event, but before the window
        old = Builder(onset_days=int(c.params[trigger.recent_event.days]) + 30)
        _satisfy(old, trigger, c.params, set(_excluded(c)))
        return old.build(), "the event lies outside the window"
    if trigger.started_within is not None:
        days = int(c.params[trigger.started_within]) + 30
        b.meds[0] = replace(b.meds[0], authored=AS_OF - timedelta(days=days))
        return b.build(), "started before the window"
    return None


def _undo_stroke_risk_or_monitor(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    trigger = c.trigger
    if trigger.stroke_risk is not None:
        b.problems = [p for p in b.problems if p.text == GROUPS_BY_KEY["af"].label]
        b.age, b.sex = 50, "male"
        return b.build(), "a CHA2DS2-VASc below the threshold"
    if trigger.monitor is not None:
        quantity = trigger.monitor.quantity
        loinc = LOINC_GROUPS[quantity][0]
        value = {"blood_pressure": 120.0, "inr": 2.5, "cognition": 25.0}.get(quantity, 5.0)
        b.obs.append(Observation("Observation/recent", loinc, "", value, "", AS_OF))
        return b.build(), "a recent result"
    return None


def _undo_dose(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    trigger = c.trigger
    if trigger.daily_mg_above is not None:
        b.meds[0] = replace(b.meds[0], dose_value=c.params[trigger.daily_mg_above] / 2)
        return b.build(), "dose within the ceiling"
    if trigger.weight_dose is not None:
        w = trigger.weight_dose
        least = min(c.params[x] for x in (w.per_dose, w.per_day) if x)
        b.meds[0] = replace(b.meds[0], dose_value=least * CHILD_KG / 2)
        return b.build(), "dose per kg within the ceiling"
    return None


def _undo_lab(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    if not c.trigger.labs:
        return None
    lab = c.trigger.labs[0]
    v = c.params[lab.param]
    quantity = "egfr" if lab.quantity == "kidney" else lab.quantity
    b.obs = [o for o in b.obs if o.display != quantity]
    b.lab(quantity, v * 1.5 + 1 if lab.op in ("<", "<=") else v * 0.5)
    return b.build(), "lab on the other side"


def _undo_drugs_or_condition(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    trigger = c.trigger
    if trigger.absent_drugs:
        b.med(drug_for(trigger.absent_drugs[0], frozenset(taken)))
        return b.build(), "the missing therapy is prescribed"
    if trigger.drugs:
        b.meds.pop()
        return b.build(), "one trigger drug missing"
    if trigger.any_conditions:
        b.problems.pop(0)
        return b.build(), "the condition is absent"
    if trigger.ever_conditions and not trigger.any_conditions:
        b.problems.pop(0)
        return b.build(), "the condition was never recorded"
    if trigger.count is not None and trigger.count.by == "medicines":
        b.meds.pop()
        return b.build(), "one drug of the count missing"
    return None


def _undo_age_or_perpetrator(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    trigger = c.trigger
    if trigger.age_min is not None:
        b.age = int(c.params[trigger.age_min]) - 5
        return b.build(), "younger than the threshold"
    if trigger.pk_table is not None or trigger.roles is not None:
        b.meds = [m for m in b.meds if m.text not in ("clarithromycin", "rifampicin")]
        b.med("azithromycin")  # an antibiotic that spares CYP3A4
        return b.build(), "the perpetrator replaced by a drug that spares the pathway"
    if trigger.age_max is not None:
        b.age = int(c.params[trigger.age_max]) + 1
        return b.build(), "older than the threshold"
    return None


def _undo_kidney_or_conflict(b: Builder, c: Criterion, taken: set[str]) -> Negative | None:
    trigger = c.trigger
    if trigger.own_monitor_grace is not None:
        for test, _days in monitor_of("leflunomide"):
            b.lab(test, 1.0)
        return b.build(), "every test of the drug's own interval done today"
    if trigger.above_weight_max is not None:
        b.obs = [o for o in b.obs if o.ref != "Observation/wt"]
        b.obs.append(_weight(HEAVY_KG))
        return b.build(), "the same dose within the maximum at a heavier weight"
    if trigger.feature_dose == "above":
        b.age = 70
        return b.build(), "no feature of the dose rule met"
    if trigger.feature_dose == "below":
        b.age = 85
        b.lab("creatinine", 1.6)
        return b.build(), "two features of the dose rule met"
    if trigger.renal_table:
        b.obs = [o for o in b.obs if o.display != "egfr"]
        b.lab("egfr", 95.0)
        return b.build(), "kidney function above every band"
    if trigger.kidney_discordant:
        b.obs = [o for o in b.obs if o.display != "creatinine"]
        return b.build(), "a single kidney estimate"
    if trigger.conflict:
        b.obs = b.obs[:-1]
        return b.build(), "one value on the day"
    if trigger.kidney_unsteady:
        b.obs = [o for o in b.obs if o.effective == AS_OF]
        return b.build(), "a stable creatinine"
    return None


# In this order: the first that applies makes the negative case.
_UNDO: tuple[Callable[[Builder, Criterion, set[str]], Negative | None], ...] = (
    _undo_level,
    _undo_by_exception,
    _undo_pregnancy,
    _undo_vaccine,
    _undo_window,
    _undo_stroke_risk_or_monitor,
    _undo_dose,
    _undo_lab,
    _undo_drugs_or_condition,
    _undo_age_or_perpetrator,
    _undo_kidney_or_conflict,
)
