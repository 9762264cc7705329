"""The coverage statement: what a plan checked for this patient and what it could not.

The scope is data (``data/scope.yaml``, validated against ``ScopeFile`` when this module is
imported): the population the knowledge was built and validated for, the check families and the
criteria kinds that make them, the markers (by code group) of a patient outside that population,
and the facts whose absence disables a check. ``assess`` applies it to one ``PatientProfile``
and returns the core's ``Coverage``: the families that ran or not (and why), and the gaps (out of
scope, medicines not recognised, facts missing), each with what a human should check. No
criteria here and nothing about what the plan proposes; no I/O after import.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache

from service.core.model import Coverage, CoverageFamily, CoverageGap, SiteRetirement
from service.record.profile import PatientProfile
from service.record.vocabulary import LOINC_GROUPS

from . import concepts, conditions, drugs
from .claims import latest_named
from .criteria import Criterion
from .criteria.schema import Trigger
from .facts import Facts, MedFact
from .parameters import param
from .pregnancy import is_pregnancy_test
from .scope import (
    SCOPE,
    SCOPE_FILE,
    Applies,
    FamilyDef,
    MarkerDef,
    ScopeFile,
    load_scope,
    marker_refs,
    within,
)
from .site import Knowledge, active, shipped
from .units import DAYS_PER_MONTH, DAYS_STATED_BELOW

__all__ = [
    "SCOPE",
    "SCOPE_FILE",
    "ScopeFile",
    "assess",
    "knowledge_version",
    "load_scope",
    "retired",
]


def knowledge_version() -> str:
    """The versions of the knowledge a plan was checked against, in one line, led by the
    release the plan's Provenance records (and the site overlay's label where one is loaded),
    so the version a reader sees is the recorded one."""
    k = active()
    release = k.stamp.version + (f" with site {k.stamp.site_version}" if k.stamp.site_hash else "")
    return (
        f"{release}: drugs {drugs.VERSION}, conditions {conditions.VERSION}, "
        f"{len(k.criteria)} criteria, scope {SCOPE.version}"
    )


def assess(profile: PatientProfile) -> Coverage:
    """The coverage statement of one patient: families that ran, and every gap."""
    f = Facts(profile)
    knowledge = active()
    made = _made(knowledge)
    families = tuple(
        _family(fd, f, made, knowledge) for fd in SCOPE.families if _applies(fd.applies, f)
    )
    out_of_scope = tuple(g for m in SCOPE.markers if (g := _marker(m, f)) is not None)
    gaps = (
        *out_of_scope,
        *_missing(f, {g.key for g in out_of_scope}),
        *_uncovered(f, {r for g in out_of_scope for r in g.refs}),
    )
    return Coverage(
        knowledge_version(), SCOPE.population, families, gaps, retired=retired(knowledge)
    )


@lru_cache(maxsize=8)
def retired(knowledge: Knowledge) -> tuple[SiteRetirement, ...]:
    """The criteria the site retired, each with the site's reason, in its file's order (read
    once per knowledge: a site's changes list every criterion it adds)."""
    return tuple(
        SiteRetirement(ch.criterion, ch.detail) for ch in knowledge.changes if ch.kind == "retired"
    )


# ---------------------------------------------------------------------------------- families


def _applies(a: Applies, f: Facts) -> bool:
    if a.sex is not None and f.p.sex != a.sex:
        return False
    if f.age is None:
        return a.age_min is None and a.age_max is None
    return (a.age_min is None or f.age >= a.age_min) and (a.age_max is None or f.age <= a.age_max)


def _reads_group(t: Trigger, groups: tuple[str, ...]) -> bool:
    """Whether ``t`` (or an alternative of it) fires on a condition of one of ``groups``."""
    if set(t.any_conditions) & set(groups) or set(t.ever_conditions) & set(groups):
        return True
    return any(_reads_group(alt, groups) for alt in t.any_of)


def _makes(fd: FamilyDef, c: Criterion) -> bool:
    return c.kind in fd.kinds or bool(fd.groups and _reads_group(c.trigger, fd.groups))


@lru_cache(maxsize=8)
def _made(knowledge: Knowledge) -> frozenset[str]:
    """The families some active criterion of ``knowledge`` makes (a draft fires only where a
    site tests it, a retired one never): read once per knowledge, not once per plan."""
    live = [c for c in knowledge.criteria if c.status == "active"]
    return frozenset(fd.id for fd in SCOPE.families if any(_makes(fd, c) for c in live))


def _family(fd: FamilyDef, f: Facts, made: frozenset[str], knowledge: Knowledge) -> CoverageFamily:
    """Whether ``fd`` ran: only an active criterion of it counts, so a family the site emptied
    is not "checked"."""
    if fd.id not in made:
        by_id = {c.id: c for c in shipped().criteria}
        gone = [
            r for r in retired(knowledge) if r.criterion in by_id and _makes(fd, by_id[r.criterion])
        ]
        if gone:
            label = knowledge.stamp.site_version or "the site"
            why = f"every criterion of it retired by the site knowledge ({label})"
            return CoverageFamily(fd.id, fd.label, False, why, site_emptied=True)
        return CoverageFamily(fd.id, fd.label, False, "no active criteria for it in this knowledge")
    if fd.needs == "kidney" and f.kidney is None:
        return CoverageFamily(fd.id, fd.label, False, _no_kidney(f.p))
    if fd.needs == "age" and f.age is None:
        return CoverageFamily(fd.id, fd.label, False, "no date of birth on record")
    return CoverageFamily(fd.id, fd.label, True)


def _no_kidney(p: PatientProfile) -> str:
    """Why no kidney function was read: none on record, or results that could not be used
    (the latest day's results conflict, or none gives a usable value or an adult age)."""
    held = any(latest_named(p, test) is not None for test in ("egfr", "creatinine"))
    if held:
        return "the eGFR and creatinine on record give no usable value for dosing"
    return "no eGFR or creatinine on record"


# ----------------------------------------------------------------------------------- markers


def _marker(m: MarkerDef, f: Facts) -> CoverageGap | None:
    if m.sex is not None and f.p.sex != m.sex:
        return None
    refs = tuple(dict.fromkeys(marker_refs(m, f)))
    if not refs:
        return None
    return CoverageGap("out-of-scope", m.id, m.label, m.check, True, refs)


# ------------------------------------------------------------------- unrecognised and missing


def _uncovered(f: Facts, named: set[str]) -> Iterator[CoverageGap]:
    """Each item of the record that no check of the knowledge can fire on (``concepts``),
    high-risk medicines first; an item another gap names already (an out-of-scope marker) is
    not named twice."""
    for item in concepts.uncovered(concepts.items(f)):
        if item.ref in named and item.kind != "medicine":
            continue
        yield _gap(item)


def _gap(item: concepts.Item) -> CoverageGap:
    risk = item.risk
    if item.kind == "medicine":
        high = risk is not None or not item.known
        what = (
            "is not in the drug knowledge"
            if not item.known
            else "is in the drug knowledge, but no check reads it"
        )
        check = (
            f"{item.label} {what}: its interactions, doses and monitoring were not checked; "
            "check it against a drug reference"
        )
        if risk is not None:
            check += f" ({risk.label}, {risk.entry}: {risk.cited()})"
        key = "unrecognised-medicine" if not item.known else "uncovered-medicine"
        label = item.label if item.known else f"{item.label} (not in the drug knowledge)"
        return CoverageGap("uncovered", key, label, check, high, (item.ref,))
    if item.suspected:
        check = (
            "no check treats a suspected diagnosis as made: decide the work-up or referral it "
            "needs yourself"
        )
        return CoverageGap("uncovered", "suspected-condition", item.label, check, True, (item.ref,))
    return CoverageGap(
        "uncovered", f"uncovered-{item.kind}", item.label, _CHECKS[item.kind], False, (item.ref,)
    )


_CHECKS: dict[str, str] = {
    "condition": "no check of this knowledge reads it: review its treatment and monitoring "
    "yourself",
    "encounter-problem": "a problem of a recent encounter that no check reads (a reason in words "
    "is never taken as read: a check may read only part of it): confirm it was addressed",
    "result": "no check reads this test: review the result yourself",
    "report": "no check reads this report: read it and act on its conclusion yourself",
    "order": "no check follows this order: confirm it was done and its result read",
}


def _window(days: int) -> str:
    """Days as a reader says them: 365 -> "12 months", 90 -> "3 months", 30 -> "30 days"."""
    if days < DAYS_STATED_BELOW:
        return f"{days} days"
    return f"{round(days / DAYS_PER_MONTH)} months"


def _measured(f: Facts, loincs: Iterable[str], days: int, words: Iterable[str] = ()) -> bool:
    """A result of ``loincs`` (or one whose name holds one of ``words``: a site's other
    code for the same test) within ``days`` of the record date."""
    wanted = set(loincs)
    named = tuple(w.lower() for w in words)
    return any(
        (o.loinc in wanted or any(w in o.display.lower() for w in named))
        and (o.value is not None or o.value_text)
        and within(o.effective, f.p.as_of, days)
        for o in (*f.p.observations, *f.p.readings)
    )


def _cannot_conceive(f: Facts, words: Iterable[str]) -> bool:
    """The record says the woman cannot become pregnant (after the menopause, after a
    hysterectomy or sterilisation): a problem or a result whose words say so."""
    texts = [pr.text for pr in f.p.active_problems] + [
        f"{o.display} {o.value_text}" for o in (*f.p.observations, *f.p.readings)
    ]
    low = [t.lower() for t in texts]
    return any(w in t for t in low for w in words)


def _names(meds: Iterable[MedFact]) -> str:
    return ", ".join(dict.fromkeys(m.text for m in meds))


def _missing(f: Facts, out_of_scope: set[str]) -> Iterator[CoverageGap]:
    ms = SCOPE.missing
    groups = LOINC_GROUPS
    limited = {n for n in {n for m in f.meds for n in m.drugs} if drugs.renal_limits(n)}
    cleared = [m for m in f.meds if any(n in limited for n in m.drugs)]
    days = ms.kidney_function_days
    if cleared and not _measured(f, (*groups["egfr"], *groups["creatinine"]), days):
        yield CoverageGap(
            "missing-fact",
            "no-kidney-function",
            f"no eGFR or creatinine within {_window(days)} on kidney-cleared {_names(cleared)}",
            "their kidney-function dose limits were not checked: measure creatinine and eGFR, "
            "then review the doses",
            True,
            tuple(m.ref for m in cleared),
        )
    days = ms.child_weight_days
    if (
        f.age is not None
        and f.age < param("age.adult_years")
        and f.meds
        and not _measured(f, groups["weight"], days)
    ):
        yield CoverageGap(
            "missing-fact",
            "no-weight",
            f"no body weight within {_window(days)} for a child on medicines",
            "no dose could be checked by weight: weigh the child and check every dose per kg",
            True,
            (f.p.ref,),
        )
    yield from _pregnancy_unknown(f, out_of_scope)
    for lv in ms.levels:
        on = [m for m in f.meds if lv.drug in m.drugs]
        if on and not _measured(f, lv.loinc, lv.days, (lv.drug,)):
            yield CoverageGap(
                "missing-fact",
                f"no-level-{lv.drug}",
                f"no {lv.label} within {_window(lv.days)} on {_names(on)}",
                f"{lv.drug} has a narrow therapeutic range and its dose and toxicity could not "
                f"be checked: measure the {lv.label}",
                True,
                tuple(m.ref for m in on),
            )


def _pregnancy_unknown(f: Facts, out_of_scope: set[str]) -> Iterator[CoverageGap]:
    ps = SCOPE.missing.pregnancy_status
    if not f.female or f.age is None or not ps.age_min <= f.age <= ps.age_max:
        return
    on = f.with_spec(f"flag:{ps.flag}")
    if not on or ps.marker in out_of_scope or _measured(f, ps.status_loinc, ps.days):
        return
    tests = (o for o in f.p.observations if is_pregnancy_test(o))
    if any(within(o.effective, f.p.as_of, ps.days) for o in tests):
        return  # a test a site codes by name only still tells the status
    if _cannot_conceive(f, ps.cannot_conceive_words):
        return
    yield CoverageGap(
        "missing-fact",
        "pregnancy-status-unknown",
        f"pregnancy status unknown for a woman of {f.age} on {_names(on)}",
        "the harm of these medicines to an unborn child could not be weighed: confirm "
        "pregnancy status and contraception before continuing them",
        True,
        tuple(m.ref for m in on),
    )
