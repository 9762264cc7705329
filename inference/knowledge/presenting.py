"""Presenting problems no line of the plan addresses, named in the plan and in its coverage.

A problem is presenting when the record dates it within ``presenting.window_days`` of the plan
day: a Condition the record keeps as a problem (``rules._record_problems`` accepted it) whose
onset, else recorded date, is that recent, or the reason of a contact (an Encounter's
``reasonReference`` Conditions and ``reasonCode``) that recent. One that no line cites (by its
Condition or contact, or by its problem id) becomes "Not addressed by this plan: <problem>
since <date>", and the same words are a gap of the coverage statement (``gaps``), so that the
plan says what it did not reason about. A problem is for today when it is dated at most
``presenting.today_days`` before the plan day, or when it is the reason of a contact within
``presenting.acute_days`` whose results meet an emergency pattern or reach a critical value
(``emergencies.acute_contact``): those results join the line's facts. Runs last
(``rules.analyse``), after every other line; pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from service.core.model import CoverageGap
from service.record.profile import Condition, Encounter, Observation

from . import conditions
from ._datafile import DATA_DIR, load_yaml
from .analysis import Output, ProblemCase, Proposal, rid
from .claims import CLAIMS, Recent, check, latest_named_is
from .criteria.interpret import day_words
from .emergencies import acute_contact, said
from .facts import without_tag
from .parameters import param_int
from .registry import Case
from .rule_points import make_point, rule_option

__all__ = ["PRESENTING", "PRESENTING_PREFIX", "PRESENTING_TODAY", "gaps", "name_unaddressed"]

PRESENTING = "net-presenting-problem"  # the lines' criterion id (timeframes.yaml)
PROBLEM_RESULTS_FILE = DATA_DIR / "problem_results.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProblemResult(_Strict):
    problem: tuple[str, ...] = Field(min_length=1)
    results: tuple[str, ...] = Field(min_length=1)


class ProblemResultsFile(_Strict):
    version: str
    source: str = Field(min_length=1)
    problems: tuple[ProblemResult, ...] = Field(min_length=1)


PROBLEM_RESULTS = load_yaml(PROBLEM_RESULTS_FILE, ProblemResultsFile)
# ... of a problem the patient is seen for now (``presenting.today_days``): for today
PRESENTING_TODAY = "net-presenting-problem-today"
PRESENTING_PREFIX = "opt-presenting-problem-"
_KEPT = frozenset({"chronic", "unrecognised"})  # record problems judged current and real
_TITLE = "Not addressed by this plan: "


@dataclass(frozen=True, slots=True)
class _Presenting:
    name: str
    since: date
    refs: tuple[str, ...]  # the Condition and/or the contact that records it
    problem_id: str = ""
    # what the date is: the problem's onset, the day it was recorded, or the day of the contact
    # it was the reason for (never said as an onset: a visit is not when a problem began)
    dated: Literal["onset", "recorded", "contact"] = "onset"

    def when(self) -> str:
        day = day_words(self.since)
        return {
            "onset": f"since {day}",
            "recorded": f"recorded {day}",
            "contact": f"the reason for the contact of {day}",
        }[self.dated]


def name_unaddressed(c: Case, o: Output) -> None:
    """Add a line for each presenting problem that no line of ``o`` addresses and no active
    medicine was ordered for (``MedicationRequest.reasonReference``: care already in place)."""
    window = param_int("presenting.window_days")
    addressed = _addressed(o) | {r for m in c.p.active_medications for r in m.reasons}
    for x in _presenting(c, window):
        if addressed & {*x.refs, x.problem_id} or _named_by_a_line(x, c, o, addressed):
            continue
        o.claims_checked += 1
        if check(Recent(x.since, window), c.p, c.p.plan_day) is not None:
            o.withheld.append(f"{PRESENTING}:recent")
            continue
        o.proposals.append(_line(x, window, c))


def gaps(proposals: Iterable[Proposal]) -> tuple[CoverageGap, ...]:
    """The coverage gaps of a plan's unaddressed presenting problems (one per line), labelled
    as the statement lists a gap ("problem no line addresses: Headache (since ...)")."""
    return tuple(
        CoverageGap(
            "unaddressed",
            p.id,
            "problem no line addresses: " + p.title.removeprefix(_TITLE),
            "assess it at this contact: no check of the knowledge reasoned about it",
            False,
            p.refs,
        )
        for p in proposals
        if p.id.startswith(PRESENTING_PREFIX)
    )


def _addressed(o: Output) -> frozenset[str]:
    return frozenset(
        x
        for p in o.proposals
        for x in (*p.refs, *p.problem_ids, *(f for pt in p.points for f in pt.facts))
    )


def _named_by_a_line(x: _Presenting, c: Case, o: Output, addressed: frozenset[str]) -> bool:
    """A contact's reason in words that a line answers: it names a medicine a line acts on, or
    a test whose result of that contact's day a line cites ("INR 6.4, gums bleeding" beside the
    line on that INR). Only words the reason itself says count, so an unrelated line on the
    same day answers nothing."""
    if x.dated != "contact":
        return _same_group_cited(x, c, addressed) or _result_cited(x, c, addressed)
    if _contact_groups(x, c) & _cited_groups(c, addressed):
        return True  # the contact names conditions ("review (COPD, diabetes)") lines act on
    words = x.name.lower()
    acted = {p.medication_ref for p in o.proposals if p.medication_ref}
    if any(m.ref in acted and any(_says(words, d) for d in m.drugs) for m in c.meds):
        return True
    tests = [t for t, said in CLAIMS.test_words.items() if any(_says(words, w) for w in said)]
    return any(
        r.ref in addressed and r.effective == x.since and latest_named_is(r, t)
        for r in c.p.observations
        for t in tests
    )


def _contact_groups(x: _Presenting, c: Case) -> set[str]:
    """The condition groups a contact's reason and type name, in codes or words."""
    out: set[str] = set()
    for e in c.p.encounters:
        if e.ref in x.refs:
            codes = tuple((k.system, k.code) for k in (*e.reasons, *e.types))
            out.update(conditions.classify_words(codes, f"{e.reason_text} {e.kind}"))
    return out


def _cited_groups(c: Case, addressed: frozenset[str]) -> set[str]:
    """The condition groups of the Conditions the plan's lines cite."""
    return {g for pr in c.p.problems if pr.ref in addressed for g in conditions.classify(pr)}


def _same_group_cited(x: _Presenting, c: Case, addressed: frozenset[str]) -> bool:
    """A recent problem a line answers through another record of the same condition group: a
    Condition, or a contact whose reason is of that group (a hypoglycaemia Condition beside the
    line on the hypoglycaemia visit)."""
    by_ref = {pr.ref: pr for pr in c.p.problems}
    own = {g for r in x.refs if r in by_ref for g in conditions.classify(by_ref[r])}
    cited = {
        g
        for r in addressed
        if r in by_ref and r not in x.refs
        for g in conditions.classify(by_ref[r])
    }
    for e in c.p.encounters:
        if e.ref in addressed:
            codes = tuple((k.system, k.code) for k in e.reasons)
            text = " ".join([e.reason_text or "", *(k.display for k in e.reasons)])
            cited.update(conditions.classify_words(codes, text))
    return bool(own & cited)


def _result_cited(x: _Presenting, c: Case, addressed: frozenset[str]) -> bool:
    """A problem recorded as the name of an abnormal result ("Neutropenia") answered by a line
    that cites a result of that test (``data/problem_results.yaml``)."""
    name = x.name.lower()
    tests = [
        p.results for p in PROBLEM_RESULTS.problems if any(_starts(name, w) for w in p.problem)
    ]
    if not tests:
        return False
    cited = [o.display.lower() for o in c.p.observations if o.ref in addressed]
    return any(_starts(d, w) for words in tests for w in words for d in cited)


def _starts(text: str, stem: str) -> bool:
    """``stem`` at the start of a word of ``text``."""
    return re.search(rf"(?<![a-z0-9]){re.escape(stem)}", text) is not None


def _says(text: str, word: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(word.lower())}(?![a-z0-9])", text) is not None


def _recent(c: Case, day: date | None, window: int) -> bool:
    return day is not None and 0 <= (c.p.plan_day - day).days <= window


def _presenting(c: Case, window: int) -> list[_Presenting]:
    kept: dict[str, ProblemCase] = {
        ref: pc for pc in c.base if pc.initial == "accept" and pc.kind in _KEPT for ref in pc.refs
    }
    by_ref = {pr.ref: pr for pr in c.p.problems}
    out: dict[str, _Presenting] = {}
    for ref, pc in kept.items():
        pr = by_ref.get(ref)
        day = None if pr is None else pr.onset or pr.recorded
        if pr is not None and day is not None and _recent(c, day, window):
            dated: Literal["onset", "recorded"] = "onset" if pr.onset else "recorded"
            out.setdefault(pc.id, _Presenting(pc.display, day, (ref,), pc.id, dated))
    for e in c.p.encounters:
        day = e.start or e.end
        if day is None or not _recent(c, day, window):
            continue
        for x in _reasons(e, day, by_ref, kept):
            key = x.problem_id or f"{e.ref}#{x.name.lower()}"
            out.setdefault(key, x)
    return sorted(out.values(), key=lambda x: (x.since, x.name))


def _reasons(
    e: Encounter, day: date, by_ref: dict[str, Condition], kept: dict[str, ProblemCase]
) -> list[_Presenting]:
    """The problems a contact was for: the kept Conditions it names, else its coded reason."""
    out: list[_Presenting] = []
    for ref in e.reason_refs:
        pc = kept.get(ref)
        if pc is not None:
            out.append(_Presenting(pc.display, day, (ref, e.ref), pc.id, "contact"))
    if out or not (e.reasons or e.reason_text):
        return out
    codes = {(x.system, x.code) for x in e.reasons}
    for ref, pc in kept.items():
        pr = by_ref.get(ref)
        if pr is not None and codes & {(x.system, x.code) for x in pr.codes}:
            return [_Presenting(pc.display, day, (ref, e.ref), pc.id, "contact")]
    name = e.reason_text or next((x.display for x in e.reasons if x.display), "")
    return [_Presenting(name, day, (e.ref,), dated="contact")] if name else []


def _acute(x: _Presenting, c: Case) -> tuple[Observation, ...]:
    """The results of the problem's contact, when recent, that meet an emergency pattern or
    reach a critical value (``emergencies.acute_contact``)."""
    contact = next((r for r in x.refs if r.startswith("Encounter/")), None)
    if x.dated != "contact" or contact is None:
        return ()
    found = set(acute_contact(c.p, contact, c))
    return tuple(o for o in c.p.readings if o.ref in found)


def _line(x: _Presenting, window: int, c: Case) -> Proposal:
    spec = rule_option("presenting-problem")
    when = x.when()
    name = without_tag(" ".join(x.name.split()))
    point = make_point("presenting.not-addressed", x.refs, name=name, day=when, days=window)
    acute = _acute(x, c)
    today = bool(acute) or (c.p.plan_day - x.since).days <= param_int("presenting.today_days")
    what = (
        f"{name} ({when}) is within {window} days of this plan, and no other line of the "
        "plan addresses it. Assess it and record a plan for it."
    )
    if acute:
        what += (
            f" Results of that contact ({', '.join(said(o) for o in acute)}) reach a critical "
            "value or an emergency pattern: assess it today."
        )
    return Proposal(
        f"{PRESENTING_PREFIX}{rid(x.refs[0])}",
        f"{_TITLE}{name} ({when})",
        spec.category,
        what,
        (*x.refs, *(o.ref for o in acute)),
        (x.problem_id,) if x.problem_id else (),
        (point,),
        urgency=spec.urgency,
        priority=spec.priority,
        criteria=(PRESENTING_TODAY if today else PRESENTING,),
        urgency_class=spec.urgency_class,
        action="review",
    )
