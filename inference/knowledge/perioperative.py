"""A booked operation, and what the plan must settle before it (``data/perioperative.yaml``).

The record books an operation with a ServiceRequest (the intents, statuses and surgical
categories the file lists) dated within ``perioperative.window_days`` of the plan day. For the
soonest one, each medicine being taken that the file names gets a line due before a day it
names (an anticoagulant's interruption planned, an SGLT2 inhibitor stopped); a P2Y12 inhibitor
or two antiplatelets after a recent coronary event get a line for a cardiology discussion of
the operation's timing; allergies and histories that matter in theatre are quoted in one line
for the anaesthetist. Every line names the operation and its day, and states its claim
(``claims.Booked``) before it is said. Pure: no I/O after import, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Booking, Condition, Order, PatientProfile

from ._datafile import DATA_DIR, check_patterns, load_yaml
from .analysis import Output, Point, Proposal, rid
from .claims import Booked, check
from .criteria.interpret import day_words
from .equivalence import equivalent
from .facts import MedFact
from .parameters import param_int
from .registry import Case
from .rule_points import make_point, rule_option
from .units import DAYS_PER_MONTH

__all__ = [
    "PERIOPERATIVE",
    "PERIOPERATIVE_FILE",
    "Operation",
    "PerioperativeFile",
    "booked_operation",
    "issue_steroid_card",
    "load_perioperative",
    "prepare_for_operation",
]

PERIOPERATIVE_FILE = DATA_DIR / "perioperative.yaml"
_SNOMED = "http://snomed.info/sct"
_ICD10 = ("http://hl7.org/fhir/sid/icd-10-cm", "http://hl7.org/fhir/sid/icd-10")
_NOT_CURRENT = frozenset({"inactive", "resolved", "refuted", "entered-in-error"})

_Days = Annotated[int, Field(ge=0, le=60)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _OperationRule(_Strict):
    intents: tuple[str, ...] = Field(min_length=1)
    statuses: tuple[str, ...] = Field(min_length=1)
    categories: tuple[str, ...] = Field(min_length=1)
    source: str
    # A planned Encounter or a Procedure in preparation: an operation when one of its codes or
    # its category is in ``categories``, or its text matches one of ``booking_text``.
    booking_statuses: tuple[str, ...] = Field(min_length=1)
    booking_text: tuple[str, ...] = Field(min_length=1)
    booking_source: str
    # A ServiceRequest with no surgical category is an operation by its words as well
    # (``booking_text``), unless they say it is a referral or an assessment (``not_text``).
    not_text: tuple[str, ...] = ()


class _Medicine(_Strict):
    spec: str = Field(pattern=r"^(drug|class):[a-z0-9-]+$")
    action: Literal["interrupt", "stop"]
    lead_days: Annotated[int, Field(gt=0, le=30)]
    source: str


class _Event(_Strict):
    id: str
    label: str
    months: Annotated[int, Field(gt=0, le=60)]
    snomed: tuple[str, ...] = ()
    icd10: tuple[str, ...] = ()
    text: tuple[str, ...] = ()
    source: str


class _Antiplatelet(_Strict):
    alone: str  # one medicine of this spec is enough
    pair: str
    pair_count: Annotated[int, Field(ge=2, le=5)]  # or this many distinct ones of this spec
    guideline: str = Field(min_length=1)  # how the line names the source
    source: str
    events: tuple[_Event, ...] = Field(min_length=1)


class _Anaesthetist(_Strict):
    allergy_words: tuple[str, ...] = Field(min_length=1)
    allergy_source: str
    history_words: tuple[str, ...] = Field(min_length=1)
    history_sources: tuple[str, ...] = Field(min_length=1)


class _Timing(_Strict):
    from_days: _Days | None = None  # the least number of days left that this row needs
    criterion: str = Field(pattern=r"^net-perioperative-[a-z0-9]+$")
    source: str


class _SteroidDose(_Strict):
    min_reference_daily_mg: Annotated[float, Field(gt=0, le=100)]  # as the table's reference
    min_days: Annotated[int, Field(gt=0, le=365)]  # first ordered at least this long ago
    source: str


class _Steroids(_Strict):
    group: str = Field(min_length=1)  # the condition group of adrenal insufficiency
    spec: str = Field(pattern=r"^(drug|class):[a-z0-9-]+$")
    table: str = Field(min_length=1)  # data/dose_equivalence.yaml
    cover: _SteroidDose
    card: _SteroidDose
    card_text: tuple[str, ...] = Field(min_length=1)
    card_criterion: str = Field(pattern=r"^net-perioperative-[a-z0-9]+$")
    card_timing_source: str


class _Spec(_Strict):
    spec: str = Field(pattern=r"^(drug|class):[a-z0-9-]+$")
    source: str


class PerioperativeFile(_Strict):
    version: str
    last_reviewed: str
    sources: dict[str, str] = Field(min_length=1)
    operation: _OperationRule
    medicines: tuple[_Medicine, ...]
    antiplatelet: _Antiplatelet
    anaesthetist: _Anaesthetist
    steroids: _Steroids
    pregnancy_source: str
    maoi: _Spec
    timing: tuple[_Timing, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _known(self) -> PerioperativeFile:
        cited = {
            self.operation.source,
            self.operation.booking_source,
            self.antiplatelet.source,
            self.anaesthetist.allergy_source,
            *self.anaesthetist.history_sources,
            *(m.source for m in self.medicines),
            *(e.source for e in self.antiplatelet.events),
            *(t.source for t in self.timing),
            self.steroids.cover.source,
            self.steroids.card.source,
            self.steroids.card_timing_source,
            self.pregnancy_source,
            self.maoi.source,
        }
        bad = sorted(cited - set(self.sources))
        if bad:
            raise ValueError(f"sources {bad} are not in 'sources'")
        if self.timing[-1].from_days is not None:
            raise ValueError("the last timing row must state no from_days (it matches all)")
        check_patterns([t for e in self.antiplatelet.events for t in e.text], "events: ")
        check_patterns(list(self.operation.booking_text), "operation: ")
        check_patterns(list(self.operation.not_text), "operation: ")
        check_patterns(list(self.steroids.card_text), "steroids: ")
        return self


def load_perioperative(path: Path = PERIOPERATIVE_FILE) -> PerioperativeFile:
    return load_yaml(path, PerioperativeFile)


PERIOPERATIVE = load_perioperative()


@dataclass(frozen=True, slots=True)
class Operation:
    """The operation the record books: its order and day, and how the lines name it."""

    ref: str
    day: date
    name: str  # as the order's code text reads ("" when it states none)

    def words(self) -> str:
        """ "the operation "Total knee replacement" of 8 January 2027"."""
        named = f' "{self.name}"' if self.name else ""
        return f"the operation{named} booked for {day_words(self.day)}"


def booked_operation(
    p: PatientProfile, data: PerioperativeFile = PERIOPERATIVE
) -> Operation | None:
    """The soonest operation the record books within the window from the plan day: a
    ServiceRequest first, else a planned Encounter or a Procedure in preparation."""
    window = param_int("perioperative.window_days")
    found = [
        (o.due, o.ref, o.text)
        for o in p.orders
        if _is_operation(o, data) and _within(o.due, p.plan_day, window)
    ] or [
        (b.day, b.ref, b.text)
        for b in p.bookings
        if _is_booked_operation(b, data) and _within(b.day, p.plan_day, window)
    ]
    if not found:
        return None
    day, ref, text = min(found, key=lambda x: (x[0] or date.max, x[1]))
    assert day is not None  # _within holds only for a dated order
    return Operation(ref, day, " ".join(text.split()))


def _is_booked_operation(b: Booking, data: PerioperativeFile) -> bool:
    rule = data.operation
    if b.status not in rule.booking_statuses:
        return False
    if any(c.code in rule.categories for c in (*b.codes, *b.categories)):
        return True
    text = " ".join([b.text, *(c.display for c in (*b.codes, *b.categories))]).lower()
    return any(re.search(t, text) for t in rule.booking_text)


def _is_operation(o: Order, data: PerioperativeFile) -> bool:
    rule = data.operation
    if o.intent not in rule.intents or o.status not in rule.statuses:
        return False
    if any(c.code in rule.categories for c in o.categories):
        return True
    text = " ".join([o.text, *(c.display for c in o.codes)]).lower()
    return any(re.search(t, text) for t in rule.booking_text) and not any(
        re.search(t, text) for t in rule.not_text
    )


def _within(day: date | None, plan_day: date, window: int) -> bool:
    return day is not None and 0 <= (day - plan_day).days <= window


def prepare_for_operation(c: Case, o: Output, data: PerioperativeFile = PERIOPERATIVE) -> None:
    """Add the lines a booked operation needs: medicines, antiplatelets, the anaesthetist."""
    op = booked_operation(c.p, data)
    if op is None:
        return
    o.claims_checked += 1
    if check(Booked(op.ref, op.day), c.p, c.p.plan_day) is not None:
        o.withheld.append("net-perioperative:booked")
        return
    for m, rule in _medicines(c, data):
        o.proposals.append(_medicine_line(c, op, m, rule, data))
    antiplatelet = _antiplatelet_line(c, op, data)
    if antiplatelet is not None:
        o.proposals.append(antiplatelet)
    anaesthetist = _anaesthetist_line(c, op, data)
    if anaesthetist is not None:
        o.proposals.append(anaesthetist)
    for line in (_steroid_cover_line(c, op, data), _pregnancy_line(c, op, data)):
        if line is not None:
            o.proposals.append(line)
    o.proposals.extend(_maoi_line(c, op, m) for m in c.distinct_with_spec(data.maoi.spec))


def issue_steroid_card(c: Case, o: Output, data: PerioperativeFile = PERIOPERATIVE) -> None:
    """Adrenal insufficiency, or a glucocorticoid at the alert's dose and duration, with no
    steroid emergency card anywhere in the record's words: a line to issue one."""
    rule = data.steroids
    basis = _steroid_basis(c, rule, rule.card)
    if basis is None or _card_recorded(c, rule):
        return
    said, refs = basis
    title = f"Issue an NHS Steroid Emergency Card: {said}; no card recorded"
    what = (
        f"{_capital(said)}, and no steroid emergency card is recorded. The 2020 National "
        "Patient Safety Alert asks that the card be issued to everyone in this group and "
        "checked for before emergency treatment or an operation."
    )
    point = make_point("perioperative.steroid-card", refs, basis=_capital(said))
    spec = rule_option("steroid-emergency-card")
    o.proposals.append(
        Proposal(
            f"{spec.id}-{rid(refs[0])}",
            title,
            spec.category,
            what,
            refs,
            (),
            (point,),
            urgency=spec.urgency,
            priority=spec.priority,
            criteria=(rule.card_criterion,),
            urgency_class=spec.urgency_class,
            action="review",
        )
    )


def _steroid_basis(
    c: Case, rule: _Steroids, dose: _SteroidDose
) -> tuple[str, tuple[str, ...]] | None:
    """What puts the patient at risk of adrenal crisis, in words, and the facts it rests on."""
    found = c.active(rule.group)
    if found:
        pr = found[0]
        return f'the record holds "{" ".join(pr.text.split())}"', (pr.ref,)
    for m in c.with_spec(rule.spec):
        if len(m.drugs) != 1 or m.daily_mg is None or m.first_authored is None:
            continue
        eq = equivalent(rule.table, m.drugs[0], m.daily_mg)
        days = (c.p.as_of - m.first_authored).days
        if eq is None or eq.reference_daily_mg < dose.min_reference_daily_mg:
            continue
        if days < dose.min_days:
            continue
        same = "" if eq.reference == m.name else f" ({eq.reference} {eq.reference_daily_mg:g} mg)"
        return (
            f"{m.name} {m.daily_mg:g} mg a day{same}, first ordered {day_words(m.first_authored)}",
            (m.ref,),
        )
    return None


def _card_recorded(c: Case, rule: _Steroids) -> bool:
    p = c.p
    words = [
        *(" ".join([x.text, *(k.display for k in x.codes)]) for x in p.problems),
        *(x.text for x in p.social),
        *(" ".join([x.text, *(k.display for k in x.codes)]) for x in p.orders),
        *(x.conclusion for x in p.reports),
    ]
    low = " ".join(words).lower()
    return any(re.search(t, low) for t in rule.card_text)


def _steroid_cover_line(c: Case, op: Operation, data: PerioperativeFile) -> Proposal | None:
    basis = _steroid_basis(c, data.steroids, data.steroids.cover)
    if basis is None:
        return None
    said, refs = basis
    title = (
        f"Plan peri-operative hydrocortisone cover for the operation on {day_words(op.day)} and "
        f"tell the anaesthetist: {said}"
    )
    what = (
        f"{_capital(said)}, and {op.words()}. The 2020 guideline of the Association of "
        "Anaesthetists and the Society for Endocrinology asks for extra hydrocortisone around "
        "the operation, planned with the anaesthetist before the day."
    )
    refs = (*refs, op.ref)
    point = make_point(
        "perioperative.steroid-cover", refs, basis=_capital(said), operation=op.words()
    )
    when = _criterion(c, op.day, data)
    return _proposal(f"steroid-cover-{rid(op.ref)}", title, what, refs, point, when)


def _pregnancy_line(c: Case, op: Operation, data: PerioperativeFile) -> Proposal | None:
    preg = c.pregnancy
    if preg is None:
        return None
    fact = preg.basis
    title = (
        f"Tell the surgical and anaesthetic teams before the operation on {day_words(op.day)}: "
        f"pregnancy ({fact})"
    )
    what = (
        f"The record shows pregnancy ({fact}), and {op.words()}. NICE NG45 asks that the "
        "risks of the anaesthetic and the procedure to the fetus are discussed before an "
        "elective operation, and the discussion recorded."
    )
    refs = (*preg.refs, op.ref)
    point = make_point("perioperative.pregnancy", refs, fact=fact, operation=op.words())
    when = _criterion(c, op.day, data)
    return _proposal(f"pregnancy-{rid(op.ref)}", title, what, refs, point, when)


def _maoi_line(c: Case, op: Operation, m: MedFact) -> Proposal:
    title = (
        f"Tell the anaesthetist before the operation on {day_words(op.day)}: {m.name} (an "
        "irreversible MAOI) is being taken"
    )
    what = (
        f"{_capital(m.name)} is an irreversible MAOI being taken, and {op.words()}. With it, "
        "pethidine can cause serotonin toxicity and indirectly acting sympathomimetics (such "
        "as ephedrine) a hypertensive crisis; plan the anaesthetic with the anaesthetist, and "
        "do not stop the MAOI without the psychiatrist's advice."
    )
    refs = (m.ref, op.ref)
    point = make_point("perioperative.maoi", refs, name=m.name, operation=op.words())
    when = _criterion(c, op.day, PERIOPERATIVE)
    return _proposal(f"maoi-{rid(m.ref)}", title, what, refs, point, when, m.ref)


def _medicines(c: Case, data: PerioperativeFile) -> list[tuple[MedFact, _Medicine]]:
    out: dict[str, tuple[MedFact, _Medicine]] = {}
    for rule in data.medicines:
        for m in c.with_spec(rule.spec):
            out.setdefault(m.ref, (m, rule))
    return list(out.values())


def _criterion(c: Case, by: date, data: PerioperativeFile) -> str:
    """The first timing row whose ``from_days`` the days left before ``by`` reach."""
    left = (by - c.p.plan_day).days
    return next(t.criterion for t in data.timing if t.from_days is None or left >= t.from_days)


def _medicine_line(
    c: Case, op: Operation, m: MedFact, rule: _Medicine, data: PerioperativeFile
) -> Proposal:
    by = op.day - timedelta(days=rule.lead_days)
    name = m.name
    if rule.action == "interrupt":
        title = f"Plan the interruption of {name} before {day_words(by)}, for {op.words()}"
        what = (
            f"{_capital(name)} is an anticoagulant being taken and {op.words()}. Agree with "
            "the surgical team when to stop and restart it and whether bridging is needed, "
            "taking the kidney function and the operation's bleeding risk into account; the "
            "longest "
            f"interruption the guideline gives for this class is {rule.lead_days} days, so the "
            f"plan is needed by {day_words(by)}."
        )
        key = "perioperative.interrupt"
    else:
        title = f"Stop {name} from {day_words(by)}, {rule.lead_days} days before {op.words()}"
        what = (
            f"{_capital(name)} is being taken and {op.words()}. Its label says to stop it at least "
            f"{rule.lead_days} days before a scheduled operation (risk of ketoacidosis): no dose "
            f"from {day_words(by)}, and restart once eating and drinking are back to normal."
        )
        key = "perioperative.stop"
    point = make_point(key, (m.ref, op.ref), name=name, operation=op.words(), days=rule.lead_days)
    refs = (m.ref, op.ref)
    return _proposal(rid(m.ref), title, what, refs, point, _criterion(c, by, data), m.ref)


def _antiplatelet_line(c: Case, op: Operation, data: PerioperativeFile) -> Proposal | None:
    """A P2Y12 inhibitor, or two antiplatelets, within the window of a recent coronary event."""
    rule = data.antiplatelet
    taken = c.distinct_with_spec(rule.pair)
    if not c.with_spec(rule.alone) and len({m.name for m in taken}) < rule.pair_count:
        return None
    found = _recent_event(c, op, rule)
    if found is None:
        return None
    pr, event, day = found
    names = " and ".join(dict.fromkeys(m.name for m in taken or c.with_spec(rule.alone)))
    said = f'"{" ".join(pr.text.split())}" ({day_words(day)})'
    title = (
        f"Agree the timing of {op.words()} with cardiology before stopping {names}: "
        f"{said} is within {event.months} months"
    )
    what = (
        f"{_capital(names)} being taken, and the record holds {said}, a {event.label} within "
        f"{event.months} months of the operation day. {rule.guideline} defers elective "
        f"non-cardiac surgery until {event.months} months after a {event.label}; agree with "
        f"cardiology whether to defer the operation and how to manage {names} around it, and "
        "do not stop them before that discussion."
    )
    meds = tuple(m.ref for m in taken)
    point = make_point(
        "perioperative.antiplatelet",
        (*meds, pr.ref, op.ref),
        names=names,
        event=said,
        months=event.months,
        operation=op.words(),
    )
    refs = (*meds, pr.ref, op.ref)
    when = _criterion(c, op.day, data)
    return _proposal(f"antiplatelet-{rid(op.ref)}", title, what, refs, point, when)


def _recent_event(
    c: Case, op: Operation, rule: _Antiplatelet
) -> tuple[Condition, _Event, date] | None:
    """The latest recorded coronary event of the file within its months before the operation."""
    hits: list[tuple[date, str, Condition, _Event]] = []
    for pr in c.p.problems:
        day = pr.onset or pr.recorded
        if day is None or pr.verification in _NOT_CURRENT or day > c.p.plan_day:
            continue
        for event in rule.events:
            if _names_event(pr, event) and (op.day - day).days <= event.months * DAYS_PER_MONTH:
                hits.append((day, pr.ref, pr, event))
                break
    if not hits:
        return None
    day, _, pr, event = max(hits, key=lambda h: (h[0], h[1]))
    return pr, event, day


def _names_event(pr: Condition, event: _Event) -> bool:
    for x in pr.codes:
        if x.system == _SNOMED and x.code in event.snomed:
            return True
        code = x.code.replace(".", "").upper()
        if x.system in _ICD10 and any(code.startswith(i.replace(".", "")) for i in event.icd10):
            return True
    text = " ".join([pr.text, *(x.display for x in pr.codes)]).lower()
    return any(re.search(t, text) for t in event.text)


def _anaesthetist_line(c: Case, op: Operation, data: PerioperativeFile) -> Proposal | None:
    """The allergies and histories of the record that matter in theatre, quoted as written."""
    rule = data.anaesthetist
    said: list[tuple[str, str]] = []
    for a in c.p.allergies:
        current = a.clinical_status not in _NOT_CURRENT and a.verification not in _NOT_CURRENT
        words = " ".join([a.substance, *(x.display for x in a.codes)])
        if current and _has_any(words, rule.allergy_words):
            said.append((a.ref, f'"{" ".join(a.substance.split())}" (allergy)'))
    for pr in c.p.problems:
        words = " ".join([pr.text, *(x.display for x in pr.codes)])
        if pr.verification not in _NOT_CURRENT and _has_any(words, rule.history_words):
            said.append((pr.ref, f'"{" ".join(pr.text.split())}" (recorded problem)'))
    if not said:
        return None
    items = "; ".join(dict.fromkeys(s for _, s in said))
    title = f"Tell the anaesthetist before {op.words()}: {items}"
    what = (
        f"The record holds {items}, and {op.words()}. Tell the anaesthetic team before the day "
        "so that the anaesthetic and the theatre can be planned around them."
    )
    refs = (*dict.fromkeys(r for r, _ in said), op.ref)
    point = make_point("perioperative.anaesthetist", refs, items=items, operation=op.words())
    when = _criterion(c, op.day, data)
    return _proposal(f"anaesthetist-{rid(op.ref)}", title, what, refs, point, when)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _has_any(text: str, words: tuple[str, ...]) -> bool:
    low = text.lower()
    return any(re.search(rf"\b{re.escape(w)}", low) for w in words)


def _proposal(
    key: str,
    title: str,
    what: str,
    refs: tuple[str, ...],
    point: Point,
    criterion: str,
    medicine: str | None = None,
) -> Proposal:
    spec = rule_option("prepare-for-operation")
    return Proposal(
        f"{spec.id}-{key}",
        title,
        spec.category,
        what,
        refs,
        (),
        (point,),
        medication_ref=medicine,
        urgency=spec.urgency,
        priority=spec.priority,
        criteria=(criterion,),
        urgency_class=spec.urgency_class,
        action="review",
    )
