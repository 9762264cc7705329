"""The case analysis: a ``PatientProfile`` in, a deterministic ``Analysis`` out.

Knowledge lives in two places: the criteria files (``criteria/*.json``, interpreted by
``criteria.interpret``) and, for what cannot be said as data, the short rule functions below,
one rule each, registered in ``registry``. This module judges the record's own problems, runs
both, merges their proposals and scores complexity. Pure: no I/O, no clock, no randomness; the
same profile gives the same analysis, ordered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache

from inference.protocol import Complexity, Judgement, Locale, Priority
from service.core.evaluation import CATEGORY_ORDER
from service.record.profile import (
    MAX_AGE_YEARS,
    Condition,
    Observation,
    PatientProfile,
    SocialFact,
    years_between,
)

from .conditions import GROUPS_BY_KEY, is_sdoh_need
from .criteria.interpret import _ago, apply_criteria
from .drugs import CLASS_LABELS
from .facts import BloodPressure, MedFact, fmt, setting_of, without_tag
from .model import (
    Analysis,
    Cited,
    Output,
    Point,
    ProblemCase,
    Proposal,
    add_or_merge,
    refs,
    rid,
)
from .pregnancy import PREGNANCY
from .registry import Case, age_phrase, names, point, prob_ids, rule, run_rules
from .roles import POOL, ROLE_BY_NAME
from .site import active, firing, shipped

__all__ = ["CRITERIA", "Analysis", "MedFact", "Point", "ProblemCase", "Proposal", "analyse"]

# Loaded and validated at import, so a bad criteria file stops start-up (KnowledgeError).
# The shipped set; plans use ``site.active()``, this with a site's overlay when one is installed.
CRITERIA = shipped().criteria
NOT_IN_PREGNANCY = frozenset(x.id for x in PREGNANCY.not_in_pregnancy)

SNOMED_URL = "http://snomed.info/sct"
MEDICATION_REVIEW = (SNOMED_URL, "182836005", "Review of medication")


def _years(a: date | None, b: date) -> int | None:
    """Whole years from ``a`` to ``b``: 0 when ``a`` is later, None when unknown or longer
    than any lifetime."""
    if a is None:
        return None
    years = max(0, years_between(a, b))
    return years if years <= MAX_AGE_YEARS else None


def _obs_text(o: Observation) -> str:
    return f"{o.display} {fmt(o.value)} {o.unit}".strip()


# --------------------------------------------------------------------- record problems


@dataclass(frozen=True, slots=True)
class _Verdict:
    initial: Judgement
    kind: str
    why: str
    conf: float = 0.75
    keepers: tuple[tuple[str, str], ...] = ()
    quote: str | None = None
    domains: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class _Seen:
    """One record problem as the judges see it."""

    pr: Condition
    groups: tuple[str, ...]
    kinds: frozenset[str]
    years: int | None

    @property
    def since(self) -> str:
        return f" (recorded active for {self.years} years)" if self.years else ""


def _resolved(c: Case, s: _Seen) -> _Verdict | None:
    if s.pr.active:
        return None
    return _Verdict("reject", "resolved", "resolved within the last year; not a current problem")


def _history(c: Case, s: _Seen) -> _Verdict | None:
    if "history" not in s.kinds:
        return None
    return _Verdict(
        "reject", "history", "a past event recorded as a situation, not a current problem"
    )


def _noise(c: Case, s: _Seen) -> _Verdict | None:
    if "noise" not in s.kinds or (s.years or 0) < 1:
        return None
    why = f"an acute pregnancy event still marked active{s.since}: a record artefact"
    return _Verdict("reject", "noise", why, 0.9)


_SDOH_KEEPERS = (
    (
        "social-worker",
        "a live psychosocial need that the care plan must address, whatever its coding",
    ),
    ("care-coordinator", "affects how the plan can be delivered"),
)


def _sdoh(c: Case, s: _Seen) -> _Verdict | None:
    if "sdoh" not in s.kinds:
        return None
    social = ("general", "social")
    if is_sdoh_need(s.pr):
        why = "a social circumstance rather than a medical diagnosis; it belongs in the social plan"
        return _Verdict("reject", "sdoh-need", why, keepers=_SDOH_KEEPERS, domains=social)
    why = "social context, not a need or a medical problem"
    return _Verdict("reject", "sdoh-context", why, domains=social)


def _stale(c: Case, s: _Seen) -> _Verdict | None:
    if "acute" not in s.kinds or (c.days_since(s.pr.onset) or 0) <= 180:
        return None
    keepers: tuple[tuple[str, str], ...] = ()
    if "cardiac-arrest" in s.groups:
        keepers = (
            (
                "cardiologist",
                "a survived cardiac arrest keeps arrhythmia risk relevant to rate-slowing and "
                "QT-prolonging drugs",
            ),
        )
    why = f"an acute, self-limiting event still marked active{s.since}"
    return _Verdict("reject", "stale", why, keepers=keepers)


def _superseded(c: Case, s: _Seen) -> _Verdict | None:
    if "prediabetes" not in s.groups or not c.active("diabetes"):
        return None
    return _Verdict("reject", "superseded", "superseded by the recorded diagnosis of diabetes")


def _contradicted(c: Case, s: _Seen) -> _Verdict | None:
    bmi = c.latest("bmi")
    if "obesity" not in s.groups or bmi is None or bmi.value is None or bmi.value >= 30:
        return None
    why = f"the latest body mass index is {fmt(bmi.value)}, below the obesity threshold"
    keep = "still overweight; weight management matters for the cardiometabolic conditions"
    return _Verdict(
        "reject", "contradicted", why, keepers=(("dietitian", keep),), quote=_obs_text(bmi)
    )


def _unrecognised(c: Case, s: _Seen) -> _Verdict | None:
    if s.groups:
        return None
    why = "recorded as active; not covered by our knowledge tables, kept for review"
    return _Verdict("accept", "unrecognised", why, 0.55, domains=("general",))


def _chronic(c: Case, s: _Seen) -> _Verdict:
    treated = _treated(c, s.groups)
    conf = 0.85 if treated or s.pr.verification == "confirmed" else 0.7
    why = "active, clinically meaningful condition" + (
        "; current treatment confirms it" if treated else ""
    )
    return _Verdict("accept", "chronic", why, conf)


# The first judge with a verdict decides; ``_chronic`` always has one.
_JUDGES = (_resolved, _history, _noise, _sdoh, _stale, _superseded, _contradicted, _unrecognised)


def _judge(c: Case, s: _Seen) -> _Verdict:
    return next((v for j in _JUDGES if (v := j(c, s)) is not None), None) or _chronic(c, s)


def _current(c: Case, pr: Condition) -> bool:
    """Active, or resolved within the last year (shown as resolved, so not re-added)."""
    if pr.active:
        return True
    return pr.abatement is not None and (c.days_since(pr.abatement) or 0) <= 365


def _case_of(c: Case, pr: Condition, groups: tuple[str, ...]) -> ProblemCase:
    s = _Seen(
        pr, groups, frozenset(GROUPS_BY_KEY[g].kind for g in groups), _years(pr.onset, c.p.as_of)
    )
    v = _judge(c, s)
    domains = v.domains or tuple(sorted({d for g in groups for d in GROUPS_BY_KEY[g].domains}))
    return ProblemCase(
        f"prob-{rid(pr.ref)}",
        pr.text,
        (pr.ref,),
        v.initial,
        v.why,
        v.kind,
        domains or ("general",),
        v.quote or pr.text,
        v.conf,
        v.keepers,
    )


def _record_problems(c: Case) -> list[ProblemCase]:
    out: list[ProblemCase] = []
    seen: dict[str, int] = {}
    for pr, groups in c.problems:
        if not _current(c, pr):
            continue
        key = next((f"{x.system}|{x.code}" for x in pr.codes), pr.text.lower())
        if key in seen:  # Synthea repeats codes (two "Pathological fracture" entries)
            prev = out[seen[key]]
            out[seen[key]] = replace(prev, refs=(*prev.refs, pr.ref))
            continue
        seen[key] = len(out)
        out.append(_case_of(c, pr, groups))
    return out


_TREATS = {
    "diabetes": ("drug:metformin", "class:insulin", "class:sulfonylurea", "class:sglt2i"),
    "hypertension": (
        "class:thiazide",
        "class:acei",
        "class:arb",
        "class:dhp-ccb",
        "class:beta-blocker",
    ),
    "af": ("class:anticoagulant", "class:cardiac-glycoside", "class:rate-limiting-ccb"),
    "chd": ("class:statin", "class:antiplatelet", "class:nitrate"),
    "dementia": ("class:cholinesterase-inhibitor", "class:nmda-antagonist"),
    "osteoporosis": ("class:bisphosphonate",),
    "hypothyroidism": ("class:thyroid-hormone",),
    "copd": ("class:bronchodilator", "class:inhaled-corticosteroid"),
    "heart-failure": ("class:loop-diuretic", "class:beta-blocker"),
    "hyperlipidemia": ("class:statin",),
    "epilepsy": ("class:antiepileptic",),
}


def _treated(c: Case, groups: Iterable[str]) -> bool:
    return any(c.has(s) for g in groups for s in _TREATS.get(g, ()))


# ----------------------------------------------------------------------- registered rules
# One rule each; texts name the patient's own facts. Points are tables of
# (role, stance, text template, evidence, strength); templates take keyword values.

_Row = tuple[str, str, str, tuple[str, ...], float]


def _points(rows: Sequence[_Row], facts: Iterable[str | Cited], **values: object) -> list[Point]:
    cited = refs(facts)
    return [
        point(role, stance, text.format(**values), cited, ev, tau)  # type: ignore[arg-type]
        for role, stance, text, ev, tau in rows
    ]


_MM = ("EB-MM-001", "EB-MM-003")
_POLYPHARMACY = (
    (
        "pharmacist",
        "support",
        "{n} active medicines ({names}): a structured review finds "
        "interactions, duplicates and drugs without a current indication.",
        _MM,
        0.65,
    ),
    (
        "gp",
        "support",
        "With {n} regular medicines the treatment burden itself is a risk; a "
        "review aligns the list with current priorities.",
        ("EB-MM-003", "EB-MM-001"),
        0.55,
    ),
)
_POLY_OLDER = (
    (
        "geriatrician",
        "support",
        "In {age} polypharmacy predicts falls, confusion and "
        "admissions; deprescribing is part of good care.",
        ("EB-MM-001", "EB-MM-002"),
        0.6,
    ),
)
_POLY_BURDEN = (
    (
        "care-coordinator",
        "attack",
        "One more appointment adds to the treatment burden; it "
        "should be combined with an existing visit.",
        ("EB-MM-003",),
        0.25,
    ),
)


@rule("medication-review-polypharmacy", "NICE NG5 medicines optimisation, 2015")
def polypharmacy(c: Case, o: Output) -> None:
    """Five or more active medicines: a structured medication review."""
    n = len(c.meds)
    if n < 5:
        return
    label = "Hyperpolypharmacy" if n >= 10 else "Polypharmacy"
    why = f"{n} active medicines; threshold 5 (10 for hyperpolypharmacy)"
    text = names(c.meds)
    pid = o.problem(
        "prob-polypharmacy",
        f"{label} ({n} active medicines)",
        c.meds,
        why,
        ("medication",),
        text,
        0.85,
    )
    pts = _points(_POLYPHARMACY, c.meds, n=n, names=text)
    if n >= 10:  # hyperpolypharmacy: the pharmacist's case is stronger
        pts[0] = replace(pts[0], tau=0.8)
    pts += _points(_POLY_BURDEN, c.meds[:1])
    pts += _points(_POLY_OLDER, c.meds, age=age_phrase(c)) if c.older else []
    desc = f"Review all {n} active medicines for indication, dose, interactions and burden."
    o.proposals.append(
        Proposal(
            "opt-medication-review",
            "Structured medication review",
            "medication",
            desc,
            refs(c.meds),
            (pid,),
            tuple(pts),
            MEDICATION_REVIEW,
            None,
            1,
        )
    )


# Every class that lowers blood pressure, so the text names all of them (verapamil included).
_BP_LOWERING = (
    "class:antihypertensive",
    "class:ccb",
    "class:thiazide",
    "class:loop-diuretic",
    "class:beta-blocker",
    "class:alpha-blocker",
    "class:mra",
)
_BP_SEVERE = (
    (
        "nurse",
        "support",
        "A reading of {bp} is severe: treat now and recheck within days "
        "rather than waiting for home readings.",
        ("EB-CV-001", "EB-CV-002"),
        0.65,
    ),
)
_BP_CONFIRM = (
    (
        "nurse",
        "support",
        "Only {one} ({bp}) in the last year: confirm with home or ambulatory "
        "measurement before changing treatment.",
        ("EB-CV-002",),
        0.5,
    ),
)
_BP_NSAID = (
    (
        "pharmacist",
        "support",
        "{nsaids} raises blood pressure; stopping it is the first step.",
        ("EB-MEDSAFE-006",),
        0.5,
    ),
)
_BP_VERY_OLD = (
    (
        "geriatrician",
        "attack",
        "For {age} intensifying treatment risks orthostatic hypotension "
        "and falls; a less strict, individualised target is reasonable.",
        ("EB-CV-001", "EB-MM-002"),
        0.45,
    ),
)


def _bp_caveats(c: Case, b: BloodPressure, bp: str, facts: tuple[Cited | str, ...]) -> list[Point]:
    """The nurse's act-now or confirm-first point, the NSAID point, the very-old caution."""
    out: list[Point] = []
    if b.severe:
        out += _points(_BP_SEVERE, facts, bp=bp)
    elif b.readings <= 1 or b.raised <= 1:
        one = "one raised reading" if b.raised <= 1 else "one reading"
        out += _points(_BP_CONFIRM, facts, bp=bp, one=one)
    if nsaids := c.with_spec("class:nsaid"):
        out += _points(_BP_NSAID, (*nsaids, *b.refs[-1:]), nsaids=names(nsaids))
    if c.age is not None and c.age >= 80 and not b.severe:
        caution = _points(_BP_VERY_OLD, facts, age=age_phrase(c))[0]
        out.append(replace(caution, tau=0.55) if c.age >= 90 else caution)
    return out


@rule("review-raised-blood-pressure", "ACC/AHA blood pressure guideline 2017; NICE NG136 2019")
def blood_pressure(c: Case, o: Output) -> None:
    """Hypertension above target, read from every reading of the last year; a severe reading
    (180 systolic or 110 diastolic and above) is acted on, not deferred."""
    htn, b = c.active("hypertension"), c.bp
    if not htn or b is None or (b.systolic < 140 and b.diastolic < 90):
        return
    bp = f"{fmt(b.systolic)}/{fmt(b.diastolic)} mmHg"
    facts: tuple[Cited | str, ...] = (*htn, *b.refs)
    drugs = tuple(dict.fromkeys(m for k in _BP_LOWERING for m in c.with_spec(k)))
    count = (
        f"{b.raised} of {b.readings} readings in the last year raised"
        if b.readings > 1
        else "one reading in the last year"
    )
    on = names(drugs) or "no antihypertensive"
    text = f"Latest blood pressure {bp} ({count}) with {htn[0].text} on {on}: above target; "
    lead = point(
        "gp",
        "support",
        text + "adjust treatment.",
        (*facts, *drugs),
        ("EB-CV-001",),
        0.7 if b.severe else 0.62,
    )
    then = " now." if b.severe else " after confirming raised readings."
    o.proposals.append(
        Proposal(
            "opt-review-bp",
            f"Review blood pressure treatment (latest {bp})",
            "immediate-safety" if b.severe else "medication",
            f"{count.capitalize()}; adjust antihypertensive treatment{then}",
            refs(facts),
            prob_ids(htn),
            (lead, *_bp_caveats(c, b, bp, facts)),
            None,
            None,
            3 if b.severe else 1,
            "safety" if b.severe else "review",
            # a reading above target is a harm going on now, never a routine review
            urgency_class="urgent" if b.severe else "soon",
        )
    )


def _bp_suspected(c: Case) -> BloodPressure | None:
    """Raised clinic readings standing for a diagnosis not yet made: the latest reading at or
    above 140/90 and at least one more in the last year, or a severe latest reading (NICE NG136
    2019, 1.2: repeated clinic readings are confirmed out of the clinic; a severe one is acted
    on). None when hypertension is recorded or a blood-pressure-lowering medicine is taken (the
    review of treatment is ``review-raised-blood-pressure``'s)."""
    b = c.bp
    if b is None or c.active("hypertension") or (c.age is not None and c.age < 18):
        return None
    if any(c.with_spec(k) for k in _BP_LOWERING):
        return None
    latest_raised = round(b.systolic) >= 140 or round(b.diastolic) >= 90
    if not latest_raised or (b.raised < 2 and not b.severe):
        return None
    return b


_UNDIAGNOSED = (
    (
        "gp",
        "support",
        "{count}, latest {bp}, with no hypertension recorded and no medicine that lowers it: "
        "left unconfirmed and untreated, raised blood pressure leads to stroke, heart attack, "
        "heart failure and kidney disease.",
        ("EB-CV-020",),
        0.62,
    ),
)
_UNDIAGNOSED_CONFIRM = (
    (
        "nurse",
        "support",
        "Clinic readings run high in some people: ambulatory readings (home readings when "
        "ambulatory monitoring is unsuitable) confirm the diagnosis and give the baseline for "
        "treatment.",
        ("EB-CV-020", "EB-CV-002"),
        0.5,
    ),
)
_UNDIAGNOSED_SEVERE = (
    (
        "nurse",
        "support",
        "A reading of {bp} is severe: look for organ damage and for symptoms of accelerated "
        "hypertension today rather than waiting for ambulatory readings.",
        ("EB-CV-020",),
        0.65,
    ),
)
_UNDIAGNOSED_VERY_OLD = (
    (
        "geriatrician",
        "attack",
        "For {age} a treatment target is individualised and a postural drop checked before "
        "starting, because of orthostatic hypotension and falls.",
        ("EB-CV-001", "EB-MM-002"),
        0.45,
    ),
)


@rule(
    "confirm-raised-blood-pressure",
    "NICE NG136 hypertension in adults 2019, updated 2023 (diagnosis; severe hypertension); "
    "ACC/AHA blood pressure guideline 2017 (out-of-office confirmation)",
)
def undiagnosed_blood_pressure(c: Case, o: Output) -> None:
    """Raised clinic readings with no hypertension recorded and no blood-pressure medicine:
    confirm the diagnosis with ambulatory or home monitoring, look for organ damage and assess
    cardiovascular risk meanwhile, and start treatment if it is confirmed; a severe reading is
    assessed for organ damage at once, not deferred to monitoring."""
    b = _bp_suspected(c)
    if b is None:
        return
    bp = f"{fmt(b.systolic)}/{fmt(b.diastolic)} mmHg"
    count = (
        f"{b.raised} of {b.readings} readings in the last year raised"
        if b.readings > 1
        else "one reading in the last year"
    )
    facts: tuple[Cited | str, ...] = b.refs
    pts = _points(_UNDIAGNOSED, facts, count=count.capitalize(), bp=bp)
    if b.severe:
        pts += _points(_UNDIAGNOSED_SEVERE, facts[-1:], bp=bp)
        title = f"Assess a severe blood pressure now (latest {bp}, no hypertension recorded)"
        desc = (
            f"{count.capitalize()}, latest {bp} and severe, with no hypertension diagnosis or "
            "blood-pressure medicine recorded: check today for organ damage (fundi, urine "
            "albumin, kidney function, ECG) and for symptoms of accelerated hypertension, "
            "referring the same day if present; start treatment to lower blood pressure "
            "without waiting for ambulatory readings when organ damage is found, otherwise "
            "repeat the clinic reading within a week."
        )
    else:
        pts += _points(_UNDIAGNOSED_CONFIRM, facts)
        title = f"Confirm suspected hypertension (latest {bp}, no diagnosis recorded)"
        desc = (
            f"{count.capitalize()} with no hypertension diagnosis or blood-pressure medicine "
            "recorded: confirm with ambulatory monitoring (home monitoring if ambulatory is "
            "unsuitable); meanwhile check for organ damage (urine albumin, kidney function, "
            "HbA1c, ECG, fundi) and assess cardiovascular risk; if hypertension is confirmed, "
            "start treatment to lower blood pressure alongside lifestyle advice."
        )
    if c.age is not None and c.age >= 80 and not b.severe:
        pts += _points(_UNDIAGNOSED_VERY_OLD, facts, age=age_phrase(c))
    o.proposals.append(
        Proposal(
            "opt-confirm-hypertension",
            title,
            "immediate-safety" if b.severe else "monitoring",
            desc,
            refs(facts),
            (),
            tuple(pts),
            None,
            None,
            3 if b.severe else 2,
            "safety" if b.severe else "omission",
        )
    )


# QRISK3 is validated from 25 to 84 (NICE NG238 2023, 1.1); NICE's systematic, opportunistic
# assessment starts at 40. Diabetes and chronic kidney disease have their own statin criteria
# (``start-statin-diabetes``, ``start-statin-ckd``), and established cardiovascular disease its
# secondary-prevention one.
_CVR_AGES = (40, 84)
# From 75 the evidence for starting a statin in primary prevention is weaker (ACC/AHA 2018:
# "may be reasonable" after a clinician-patient discussion; NICE NG238 weighs frailty and
# life expectancy): a review to hold with the person, not an omission.
_CVR_OLDER_FROM = 75
_CVD = ("chd", "stroke", "tia", "pad")
# LDL cholesterol at or above 160 mg/dL (4.1 mmol/L) is a risk-enhancing factor (ACC/AHA 2018
# cholesterol guideline); at or above 190 mg/dL (4.9 mmol/L) it is treated without a risk score
# and familial hypercholesterolaemia considered (ACC/AHA 2018; NICE NG238 1.1 and CG71).
_LDL_HIGH_MG_DL = 160.0
_LDL_VERY_HIGH_MG_DL = 190.0
_MG_DL_PER_MMOL_L = 38.67  # cholesterol
# The ten-year risk tool a clinician uses where the plan is read (``CANOE_LOCALE``): QRISK3 in
# the UK (NICE NG238 2023: atorvastatin offered at a risk of 10% or more), the ACC/AHA Pooled
# Cohort Equations in the US (ACC/AHA 2018 cholesterol guideline: a statin discussed from an
# ASCVD risk of 7.5%; USPSTF 2022). Locale -> (tool, whose threshold).
_CVR_TOOLS: dict[str, tuple[str, str]] = {
    "uk": ("QRISK3", "NICE"),
    "us": ("the Pooled Cohort Equations (ASCVD risk)", "ACC/AHA"),
}


def _ldl_mg_dl(o: Observation) -> float | None:
    unit = o.unit.lower().replace(" ", "")
    if o.value is None:
        return None
    if "mmol" in unit:
        return o.value * _MG_DL_PER_MMOL_L
    if unit in ("mg/dl", "mg/100ml"):
        return o.value
    return None


_CVR = (
    (
        "gp",
        "support",
        "{who} with no cardiovascular disease and no statin, and these recorded risk factors: "
        "{factors}. A formal ten-year risk estimate decides whether a statin is worth taking, "
        "and the factors themselves are treated alongside.",
        ("EB-CV-021",),
        0.6,
    ),
    (
        "pharmacist",
        "support",
        "For primary prevention the overall risk, not one cholesterol value, decides the "
        "statin; the score is worked out with the person from measured values ({tool}), never "
        "guessed from part of the record.",
        ("EB-CV-021",),
        0.45,
    ),
)
_CVR_VERY_HIGH_LDL = (
    (
        "cardiologist",
        "support",
        "LDL cholesterol of {ldl} is high enough to treat without a risk score and to consider "
        "familial hypercholesterolaemia (family history, and testing of relatives).",
        ("EB-CV-021",),
        0.55,
    ),
)
_CVR_OLDER = (
    (
        "geriatrician",
        "attack",
        "For {age} the score is high from age alone; the benefit of starting a statin for "
        "primary prevention is less certain late in life and is weighed with frailty and the "
        "person's wishes.",
        ("EB-CV-013", "EB-MM-002"),
        0.4,
    ),
)
_CVR_LIFESTYLE = (
    (
        "nurse",
        "attack",
        "Some people prefer to stop smoking and change diet and activity first, then "
        "reassess their risk before a daily tablet.",
        ("EB-CV-021",),
        0.3,
    ),
)


def _risk_factors(c: Case) -> tuple[list[str], list[str], float | None, Observation | None]:
    """The recorded cardiovascular risk factors: their wording, their references, the LDL
    cholesterol in mg/dL and its Observation when it is one of them."""
    words: list[str] = []
    cited: list[str] = []
    sm = c.smoking
    if sm is not None and sm.current:
        words.append(f"current smoker ({sm.text})")
        cited += sm.refs
    htn = c.active("hypertension")
    if htn:
        words.append(without_tag(htn[0].text))
        cited.append(htn[0].ref)
    elif (b := _bp_suspected(c)) is not None:
        words.append(
            f"raised blood pressure without a diagnosis ({b.raised} of {b.readings} readings "
            f"in the last year, latest {fmt(b.systolic)}/{fmt(b.diastolic)} mmHg)"
        )
        cited += b.refs
    ldl = c.latest("ldl")
    mg = _ldl_mg_dl(ldl) if ldl is not None else None
    if ldl is not None and mg is not None and mg >= _LDL_HIGH_MG_DL:
        words.append(f"LDL cholesterol {fmt(ldl.value)} {ldl.unit}".strip())
        cited.append(ldl.ref)
    else:
        mg, ldl = None, None
    lipids = c.active("hyperlipidemia")
    if lipids:
        words.append(without_tag(lipids[0].text))
        cited.append(lipids[0].ref)
    return words, cited, mg, ldl


@rule(
    "assess-cardiovascular-risk",
    "NICE NG238 cardiovascular disease: risk assessment and reduction 2023 (QRISK3; statins "
    "for primary prevention); ACC/AHA cholesterol guideline 2018 (risk-enhancing factors)",
)
def cardiovascular_risk(c: Case, o: Output) -> None:
    """An adult of 40 to 84 with no cardiovascular disease, diabetes, kidney disease or statin,
    and with recorded risk factors (current smoking, hypertension or raised readings, high LDL
    cholesterol, a hyperlipidaemia diagnosis): assess the ten-year cardiovascular risk with
    QRISK3 and discuss a statin. The plan names the factors it found and never states a risk:
    a score computed from part of the record would be a guess."""
    lo, hi = _CVR_AGES
    if c.age is None or not lo <= c.age <= hi:
        return
    if any(c.ever(g) for g in _CVD) or c.with_spec("class:statin"):
        return
    if c.active("diabetes") or c.active("ckd") or c.lab_ckd:
        return
    if c.active("limited-life-expectancy"):
        return
    words, cited, mg, ldl = _risk_factors(c)
    if not words:
        return
    factors = "; ".join(words)
    tool, body = _CVR_TOOLS[c.locale]
    pts = _points(_CVR, cited, who=f"Aged {c.age}", factors=factors, tool=tool)
    if mg is not None and ldl is not None and mg >= _LDL_VERY_HIGH_MG_DL:
        pts += _points(_CVR_VERY_HIGH_LDL, (ldl.ref,), ldl=f"{fmt(ldl.value)} {ldl.unit}")
    older = c.age >= _CVR_OLDER_FROM
    if older:
        pts += _points(_CVR_OLDER, cited, age=age_phrase(c))
    pts += _points(_CVR_LIFESTYLE, cited)
    o.proposals.append(
        Proposal(
            "opt-assess-cv-risk",
            f"Assess ten-year cardiovascular risk ({tool.removeprefix('the ')}) and discuss "
            "starting a statin",
            "medication",
            f"No cardiovascular disease or statin recorded, with risk factors: {factors}. This "
            f"plan does not calculate the score: enter the measured values in {tool} with the "
            "person, and offer atorvastatin at the primary-prevention dose when the risk "
            f"reaches the {body} threshold, alongside help to stop smoking and blood-pressure "
            "control.",
            refs(cited),
            (),
            tuple(pts),
            None,
            None,
            1,
            "review" if older else "omission",
            # a risk assessment is prevention: after every specific problem of the record
            urgency_class="routine",
        )
    )


# A thrombolytic given this many days before the record date is a recent acute event whose
# consequences for the antithrombotic plan are still being settled (the same six months after
# which an acute condition still marked active reads as stale, ``_stale``).
THROMBOLYSIS_DAYS = 180
_EB_THROMBOLYSIS = ("EB-CV-018",)


def _event_conditions(c: Case, start: date, end: date) -> tuple[Condition, ...]:
    """Conditions with onset from the day before ``start`` to the day after ``end``."""
    return tuple(
        pr
        for pr, _ in c.problems
        if pr.onset is not None
        and pr.verification not in ("refuted", "entered-in-error")
        and (pr.onset - start).days >= -1
        and (pr.onset - end).days <= 1
    )


@rule(
    "review-after-thrombolysis",
    "AHA/ASA secondary stroke prevention 2021 (stroke on anticoagulation); "
    "ESC atrial fibrillation 2020 (antithrombotic therapy after an acute coronary syndrome)",
)
def after_thrombolysis(c: Case, o: Output) -> None:
    """A thrombolytic given in the last six months: an acute arterial or pulmonary clot that
    the plan must name and reconcile (what the event was, whether it happened on an
    anticoagulant, which antithrombotics now and for how long). The record's own wording only:
    where no diagnosis is recorded for the visit, the texts say so rather than guess."""
    given = c.recent_orders("class:thrombolytic", THROMBOLYSIS_DAYS)
    if not given:
        return
    t = given[0]
    assert t.authored is not None
    enc = c.encounter_of(t.authored)
    where = f"at an {setting_of(enc)}" if enc is not None else "in the record"
    if enc is not None and setting_of(enc) not in ("emergency visit",):
        where = f"during a {setting_of(enc)}"
    when = _ago(max(0, (c.p.as_of - t.authored).days))
    dx = _event_conditions(
        c,
        enc.start if enc is not None and enc.start else t.authored,
        (enc.end or enc.start) if enc is not None and enc.start else t.authored,
    )
    said = [x for x in (enc.reason_text if enc is not None else "",) if x]
    said += [pr.text for pr in dx if pr.text not in said]
    what = (
        f"recorded with it: {'; '.join(said)}"
        if said
        else "the record names no diagnosis for that visit"
    )
    event_facts: list[str | Cited] = [t.ref, *(dx)]
    if enc is not None:
        event_facts.append(enc.ref)
    lead = (
        f"{t.text} was given {where} {when} ({what}): a clot-dissolving drug is given for an "
        "acute stroke, heart attack or pulmonary embolism, and which one it was decides the "
        "antithrombotic plan and the secondary prevention; the discharge letter says which."
    )
    pts = [point("cardiologist", "support", lead, event_facts, _EB_THROMBOLYSIS, 0.7, recent=True)]
    anticoag = [
        m
        for m in c.with_spec("class:anticoagulant")
        if m.first_authored is not None and m.first_authored <= t.authored
    ]
    if anticoag:
        a = anticoag[0]
        control = (
            "the INR at the time of the event"
            if a in c.with_spec("class:vka")
            else "whether the dose suited the kidney function"
        )
        pts.append(
            point(
                "pharmacist",
                "support",
                f"The event happened while {a.text} was prescribed: ask about missed doses "
                f"and look for {control}; a clot despite anticoagulation is a reason to review "
                "the anticoagulant and how well it is controlled with the specialist team.",
                (*event_facts, a),
                _EB_THROMBOLYSIS,
                0.65,
                recent=True,
            )
        )
    anti = c.with_spec("class:antiplatelet")
    if anticoag and anti:
        a, b = anticoag[0], anti[0]
        pts.append(
            point(
                "pharmacist",
                "support",
                f"{b.text} is prescribed with {a.text}: whether the combination is meant, and "
                "for how long, depends on the event (a time-limited combination can follow a "
                "heart attack; after a stroke on an anticoagulant an added antiplatelet is "
                "not routinely advised); agree its reason and end date in writing.",
                (t.ref, a, b),
                (*_EB_THROMBOLYSIS, "EB-DDI-002"),
                0.6,
                recent=True,
            )
        )
    pts.append(
        point(
            "gp",
            "attack",
            "The hospital discharge letter may already set out the diagnosis and the plan; "
            "then this is a reconciliation of the record, not a new decision.",
            (t.ref,),
            _EB_THROMBOLYSIS,
            0.3,
        )
    )
    desc = (
        f"{t.text} was given {where} {when} ({what}). Find out what the event was, check "
        "adherence and anticoagulant control at the time, and agree the antithrombotic plan "
        "and the secondary prevention with the stroke or cardiology team."
    )
    o.proposals.append(
        Proposal(
            "opt-review-after-thrombolysis",
            "Review antithrombotic treatment after the recent thrombolysis",
            "immediate-safety",
            desc,
            refs(event_facts, anticoag, anti if anticoag else ()),
            c.base_ids(dx),
            tuple(pts),
            MEDICATION_REVIEW,
            None,
            2,
            "safety",
        )
    )


# SocialFact kinds (as fhir_mapping writes them) that are needs, not just context.
NEED_KINDS = frozenset(
    {
        "stress",
        "social_isolation",
        "limited_social_contact",
        "criminal_record",
        "intimate_partner_abuse",
        "lives_alone",
        "unemployed",
        "violence_in_environment",
        "housing",
        "transport",
        "substance_use",
        "sdoh",
    }
)

_FRID = (
    "benzodiazepine",
    "z-drug",
    "antipsychotic",
    "opioid",
    "sedating-antihistamine",
    "tca",
    "ssri",
    "antiepileptic",
)


@dataclass(frozen=True, slots=True)
class _FallRisk:
    parts: tuple[str, ...]  # the risk factors, in words
    cited: tuple[str, ...]
    falls: tuple[str, ...]  # recorded falls (social facts)
    fractures: tuple[Condition, ...]
    osteo: tuple[Condition, ...]
    dementia: tuple[Condition, ...]
    alone: tuple[str, ...]


def _fall_risk(c: Case) -> _FallRisk | None:
    """Risk factors for falls in an older adult: two or more, or any recorded fall."""
    if not c.older:
        return None
    falls, fractures = c.social("fall"), c.ever("fracture")
    osteo, dementia, stroke = c.active("osteoporosis"), c.active("dementia"), c.active("stroke")
    frids = tuple(m for m in c.meds if any(k in m.classes for k in _FRID))
    ages = f"age {c.age}" if (c.age or 0) < 90 else "age 90 or over"
    found = (
        ("falls recorded", bool(falls)),
        ("previous fractures", bool(fractures)),
        ("osteoporosis", bool(osteo)),
        ("dementia", bool(dementia)),
        ("fall-risk medicines: " + ", ".join(m.drugs[0] for m in frids), bool(frids)),
        (ages, c.age is not None and c.age >= 80),
        ("previous stroke", bool(stroke)),
    )
    n = sum(on for _, on in found)
    if n < 1 or (n < 2 and not falls):
        return None
    parts = tuple(t for t, on in found if on)
    cited = refs(falls, fractures, osteo, dementia, frids, stroke)
    alone = c.social("alone", "no caregiver", "no carer")
    return _FallRisk(parts, cited, falls, fractures, osteo, dementia, alone)


def _fall_problem(o: Output, r: _FallRisk) -> str:
    why = "; ".join(r.parts)
    return o.problem("prob-fall-risk", "Fall risk", r.cited, why, ("falls", "function"), why, 0.8)


_FALLS = (
    (
        "physiotherapist",
        "support",
        "Risk factors for falls ({parts}): a multifactorial "
        "assessment with strength and balance training prevents falls in older people.",
        ("EB-FALLS-001", "EB-FALLS-002"),
        0.7,
    ),
    (
        "nurse",
        "support",
        "A falls assessment checks gait, vision, footwear, continence and "
        "night-time risks at home.",
        ("EB-FALLS-002",),
        0.55,
    ),
    (
        "physiotherapist",
        "support",
        "A home exercise programme can continue between supervised sessions.",
        ("EB-FALLS-001",),
        0.4,
    ),
)
_FALLS_BONES = (
    (
        "geriatrician",
        "support",
        "With {what} a fall is likely to cause a fracture.",
        ("EB-FALLS-002",),
        0.6,
    ),
)
_FALLS_ANTICOAG = (
    (
        "cardiologist",
        "support",
        "On {drugs} a fall can cause serious bleeding; preventing falls "
        "is safer than stopping anticoagulation.",
        ("EB-CV-007", "EB-FALLS-002"),
        0.5,
    ),
)
_FALLS_DEMENTIA = (
    (
        "occupational-therapist",
        "attack",
        "{dementia}{score} limits learning and following an "
        "exercise programme; sessions must be supervised.",
        ("EB-FALLS-001",),
        0.4,
    ),
)
_FALLS_ALONE = (
    (
        "social-worker",
        "attack",
        "No carer is recorded at home to help with exercises or to "
        "accompany sessions: feasibility is doubtful without support.",
        ("EB-SOC-004",),
        0.4,
    ),
)
_FALLS_VERY_OLD = (
    (
        "geriatrician",
        "attack",
        "For {age} exercise tolerance is limited; the programme must be short and adapted.",
        ("EB-MM-002",),
        0.3,
    ),
)


def _falls_cautions(c: Case, r: _FallRisk) -> list[Point]:
    out: list[Point] = []
    if r.osteo or r.fractures:
        what = "osteoporosis" if r.osteo else "previous fractures"
        out += _points(_FALLS_BONES, (*r.osteo, *r.fractures), what=what)
    if anticoag := c.with_spec("class:anticoagulant"):
        out += _points(_FALLS_ANTICOAG, anticoag, drugs=names(anticoag))
    if r.dementia:
        mmse = c.latest("mmse")
        score = f" (MMSE {fmt(mmse.value)})" if mmse else ""
        cited = (*r.dementia, *((mmse,) if mmse else ()))
        out += _points(_FALLS_DEMENTIA, cited, dementia=r.dementia[0].text, score=score)
    out += _points(_FALLS_ALONE, r.alone) if r.alone else []
    very_old = c.age is not None and c.age >= 90
    return out + (_points(_FALLS_VERY_OLD, (), age=age_phrase(c)) if very_old else [])


@rule("falls-prevention", "World Falls Guidelines 2022 (multifactorial assessment, exercise)")
def falls_prevention(c: Case, o: Output) -> None:
    """Older adult with fall risk factors: multifactorial assessment and exercise."""
    r = _fall_risk(c)
    if r is None:
        return
    pts = (*_points(_FALLS, r.cited, parts="; ".join(r.parts)), *_falls_cautions(c, r))
    o.proposals.append(
        Proposal(
            "opt-falls-prevention",
            "Falls risk assessment and strength and balance programme",
            "rehabilitation",
            "Multifactorial falls assessment with supervised strength and balance exercise.",
            r.cited,
            (_fall_problem(o, r),),
            pts,
            None,
            None,
            2,
        )
    )


_HOME = (
    (
        "occupational-therapist",
        "support",
        "A home hazard assessment (lighting, rugs, bathroom "
        "rails, stairs) reduces falls for people at high risk.",
        ("EB-FALLS-003",),
        0.62,
    ),
)
_HOME_VISIT = (
    (
        "care-coordinator",
        "attack",
        "Adds a home visit to the schedule; waiting times may delay it.",
        ("EB-MM-003",),
        0.25,
    ),
)
_HOME_DEMENTIA = (
    (
        "geriatrician",
        "support",
        "With {dementia} the home must compensate for what memory no longer can.",
        ("EB-FALLS-003", "EB-COG-002"),
        0.5,
    ),
)


@rule("home-safety-assessment", "World Falls Guidelines 2022 (home hazard assessment)")
def home_safety(c: Case, o: Output) -> None:
    """Fall risk with dementia, living alone, or a fall or fracture: home hazard assessment."""
    r = _fall_risk(c)
    if r is None or not (r.dementia or r.alone or r.falls or r.fractures):
        return
    pts = _points(_HOME, r.cited) + _points(_HOME_VISIT, r.cited[:1])
    if r.dementia:
        pts += _points(_HOME_DEMENTIA, r.dementia, dementia=r.dementia[0].text)
    o.proposals.append(
        Proposal(
            "opt-home-safety",
            "Home safety assessment by occupational therapy",
            "rehabilitation",
            "Occupational therapy home hazard assessment and adaptations.",
            r.cited,
            (_fall_problem(o, r),),
            tuple(pts),
            None,
            None,
            1,
        )
    )


_CARER = (
    (
        "social-worker",
        "support",
        "Living with {dementia} depends on a carer; a carer's needs "
        "assessment, education and respite keep care at home sustainable.",
        ("EB-COG-003", "EB-SOC-004"),
        0.62,
    ),
)
_COORDINATOR = (
    (
        "care-coordinator",
        "support",
        "A named contact coordinates the appointments this plan creates.",
        ("EB-COG-002", "EB-MM-003"),
        0.5,
    ),
)
_ALONE = (
    (
        "social-worker",
        "support",
        "Lives alone: without a carer the risks at home rise quickly.",
        ("EB-SOC-003",),
        0.6,
    ),
)
_NO_CARER = (
    (
        "gp",
        "attack",
        "The record does not say who the carer is; the referral must first "
        "establish whether one exists.",
        ("EB-COG-003",),
        0.3,
    ),
)


@rule("carer-support-dementia", "NICE NG97 dementia, 2018 (supporting carers)")
def carer_support(c: Case, o: Output) -> None:
    """Dementia: a carer's needs assessment (who the carer is comes from social facts)."""
    dementia = c.active("dementia")
    if not dementia:
        return
    carer, alone = c.social("caregiver", "carer"), c.social("alone")
    pts = _points(_CARER, (*dementia, *carer, *alone), dementia=dementia[0].text)
    pts += _points(_COORDINATOR, dementia)
    pts += _points(_ALONE, alone) if alone else [] if carer else _points(_NO_CARER, dementia)
    o.proposals.append(
        Proposal(
            "opt-carer-support",
            "Carer needs assessment and support",
            "caregiver-support",
            "Assess the carer's needs; education, respite and community support.",
            refs(dementia, carer, alone),
            prob_ids(dementia),
            tuple(pts),
            None,
            None,
            1,
        )
    )


_STRESS = (
    (
        "psychiatrist",
        "support",
        "{stress} is recorded as current: screen for depression and "
        "anxiety and offer psychological support.",
        ("EB-MOOD-002",),
        0.55,
    ),
    (
        "social-worker",
        "support",
        "Stress usually has social causes that can be addressed directly.",
        ("EB-SOC-001",),
        0.5,
    ),
)


@rule("psychosocial-support-stress", "NICE CG91 depression with chronic physical illness, 2009")
def psychosocial_support(c: Case, o: Output) -> None:
    """Current stress (a condition or a social fact): mood screening and support."""
    coded = (pr for pr, gs in c.problems if pr.active and "sdoh-need" in gs)
    stress: tuple[Condition | SocialFact, ...] = (
        *(pr for pr in coded if "stress" in pr.text.lower()),
        *(f for f in c.p.social if f.kind == "stress"),
    )
    if not stress:
        return
    o.proposals.append(
        Proposal(
            "opt-psychosocial-support",
            "Screen for depression and offer psychosocial support",
            "mental-health",
            "Mood screening and psychosocial support.",
            refs(stress),
            c.base_ids(stress),
            tuple(_points(_STRESS, stress, stress=stress[0].text)),
            None,
            None,
            1,
        )
    )


def _needs(c: Case) -> tuple[Condition | SocialFact, ...]:
    coded = (pr for pr, gs in c.problems if pr.active and "sdoh-need" in gs)
    return (
        *(pr for pr in coded if is_sdoh_need(pr)),
        *(f for f in c.p.social if f.kind in NEED_KINDS),
    )


_ABUSE_KINDS = ("intimate_partner_abuse", "violence_in_environment")
_ABUSE = (
    (
        "social-worker",
        "support",
        "{abuse} is recorded as current: a confidential safety "
        "assessment and referral to specialist support are needed.",
        ("EB-SOC-002",),
        0.8,
    ),
    ("gp", "support", "Ask privately and document a safety plan.", ("EB-SOC-002",), 0.55),
    (
        "care-coordinator",
        "attack",
        "Contact must be arranged safely; a letter or call could alert the abuser.",
        ("EB-SOC-002",),
        0.35,
    ),
)


@rule("safety-assessment-abuse", "NICE PH50 domestic violence and abuse, 2014")
def safety_assessment(c: Case, o: Output) -> None:
    """Recorded abuse or violence: a confidential safety assessment now."""
    abuse = tuple(
        x for x in _needs(c) if "abuse" in x.text.lower() or getattr(x, "kind", "") in _ABUSE_KINDS
    )
    if not abuse:
        return
    o.proposals.append(
        Proposal(
            "opt-safety-assessment",
            "Confidential safety assessment and referral",
            "immediate-safety",
            "Safety planning for intimate partner abuse.",
            refs(abuse),
            c.base_ids(abuse),
            tuple(_points(_ABUSE, abuse, abuse=abuse[0].text)),
            None,
            None,
            3,
        )
    )


_SOCIAL = (
    (
        "social-worker",
        "support",
        "Recorded social needs ({items}) shape what care is feasible; link to community resources.",
        ("EB-SOC-001", "EB-SOC-003"),
        0.6,
    ),
    (
        "care-coordinator",
        "support",
        "Social circumstances decide whether appointments and medicines actually happen.",
        ("EB-SOC-001",),
        0.45,
    ),
)


@rule("social-work-needs", "NICE NG22 older people with social care needs, 2015")
def social_work(c: Case, o: Output) -> None:
    """Recorded social needs: a social work assessment."""
    needs = _needs(c)
    if not needs:
        return
    items = "; ".join(x.text for x in needs[:4])
    o.proposals.append(
        Proposal(
            "opt-social-work",
            "Social work assessment of social needs",
            "referral",
            "Assess and address recorded social needs.",
            refs(needs),
            c.base_ids(needs),
            tuple(_points(_SOCIAL, needs, items=items)),
            None,
            None,
            1,
        )
    )


# ------------------------------------------------------------------------- complexity


def _score(c: Case, base: Sequence[ProblemCase], out: Output) -> tuple[tuple[str, int], ...]:
    """Multimorbidity (0-3) + polypharmacy (0-2) + age (0-2) + cognition (0/2) + falls (0/1)
    + psychosocial (0-2) + safety findings (0-2)."""
    n = sum(1 for p in base if p.initial == "accept")
    nm = len(c.meds)
    mmse = c.latest("mmse")
    needs = sum(1 for p in base if p.kind == "sdoh-need") + sum(
        1 for f in c.p.social if f.kind in NEED_KINDS
    )
    return (
        ("multimorbidity", 0 if n <= 2 else 1 if n <= 5 else 2 if n <= 8 else 3),
        ("polypharmacy", 2 if nm >= 10 else 1 if nm >= 5 else 0),
        ("age", 0 if c.age is None or c.age < 65 else 1 if c.age < 85 else 2),
        ("cognition", 2 if c.active("dementia") or (mmse and (mmse.value or 30) < 24) else 0),
        ("falls", 1 if c.social("fall") or c.ever("fracture") else 0),
        ("psychosocial", 0 if needs == 0 else 1 if needs < 3 else 2),
        ("safety findings", 0 if out.high_risk == 0 else 1 if out.high_risk < 3 else 2),
    )


def _dimensions(
    c: Case, base: Sequence[ProblemCase], out: Output, score: dict[str, int]
) -> tuple[str, ...]:
    n = sum(1 for p in base if p.initial == "accept")
    egfr = c.latest("egfr")
    low_kidney = egfr is not None and (egfr.value or 100) < 60
    dims = (
        (f"multimorbidity ({n} active conditions)", n > 0),
        (f"polypharmacy ({len(c.meds)} active medicines)", score["polypharmacy"] > 0),
        (f"medication safety ({out.high_risk} high-risk findings)", score["safety findings"] > 0),
        ("kidney function", low_kidney or bool(c.active("ckd"))),
        ("glycaemic control", bool(c.active("diabetes"))),
        ("bleeding versus thrombosis", c.has("class:anticoagulant")),
        ("cognition", score["cognition"] > 0),
        ("falls and fractures", any(p.id == "prob-fall-risk" for p in out.problems)),
        ("psychosocial needs", score["psychosocial"] > 0),
        ("mood", bool(c.active("depression"))),
    )
    return tuple(d for d, on in dims if on)


def _complexity(
    c: Case, base: Sequence[ProblemCase], out: Output
) -> tuple[Complexity, int, tuple[tuple[str, int], ...], tuple[str, ...]]:
    """Levels: score 0-2 low, 3-5 moderate, 6-8 high, 9+ very high."""
    breakdown = _score(c, base, out)
    score = sum(v for _, v in breakdown)
    level: Complexity = (
        "low" if score <= 2 else "moderate" if score <= 5 else "high" if score <= 8 else "very high"
    )
    return level, score, breakdown, _dimensions(c, base, out, dict(breakdown))


# ------------------------------------------------------------------------------ entry


# Rule functions that state their own priority (it depends on the facts, not the category).
_OWN_PRIORITY = frozenset({"opt-confirm-hypertension", "opt-assess-cv-risk"})


def _legacy_priority(p: Proposal) -> Priority:
    """Priority of an activity proposed by a rule function (criteria state theirs)."""
    if p.category == "immediate-safety" or (p.category == "medication" and p.urgency >= 3):
        return "safety"
    if p.id in _OWN_PRIORITY:
        return p.priority
    if p.id.startswith("opt-start-"):
        return "omission"
    if p.category == "monitoring":
        return "monitoring"
    return "review"


def _role_weights(
    problems: Sequence[ProblemCase], proposals: Sequence[Proposal]
) -> tuple[tuple[str, float], ...]:
    weights: dict[str, float] = {a.role: 0.0 for a in POOL}
    for prop in proposals:
        boost = 1.5 if prop.category == "immediate-safety" else 1.0
        for pt in prop.points:
            if pt.role in weights:
                weights[pt.role] += pt.tau * boost
    for pc in problems:
        if pc.initial == "accept":
            for a in POOL:
                if a.role != "gp" and set(pc.domains) & set(a.expertise):
                    weights[a.role] += 0.2
    return tuple(
        sorted(
            ((r, round(w, 4)) for r, w in weights.items()),
            key=lambda rw: (-rw[1], ROLE_BY_NAME[rw[0]].order),
        )
    )


def _terms(
    c: Case, problems: Sequence[ProblemCase], proposals: Sequence[Proposal]
) -> tuple[str, ...]:
    """Retrieval terms for the evidence search."""
    terms: list[str] = ["older adults", "elderly"] if c.older else []
    for m in c.meds:
        terms += list(m.drugs) + [CLASS_LABELS[k] for k in m.classes]
    terms += [pc.display for pc in problems if pc.initial == "accept"]
    terms += [prop.query or prop.title for prop in proposals]
    terms += [s.kind.replace("_", " ") for s in c.p.social]
    return tuple(dict.fromkeys(terms))


def _facts_text(c: Case) -> tuple[tuple[str, str], ...]:
    p = c.p
    out = [(m.ref, m.text) for m in c.meds] + [(x.ref, x.text) for x in p.problems]
    out += [(ob.ref, _obs_text(ob)) for ob in p.observations]
    return tuple(out + [(s.ref, s.text) for s in p.social])


def _review_covered(p: Proposal, proposals: Sequence[Proposal]) -> bool:
    """A generic medication review (no medicine of its own, the whole list cited) is not
    proposed when specific actions already cover every medicine it names: each is the medicine
    another action changes, or a medicine an action on another medicine cites (the partner of
    an interaction). One review of the same medicines twice is noise above the real problems."""
    if p.id != "opt-medication-review" or not p.refs:
        return False
    covered: set[str] = set()
    for other in proposals:
        if other is not p and other.medication_ref is not None:
            covered.update((other.medication_ref, *other.refs))
    return all(r in covered for r in p.refs)  # its refs are the medicines it names


def _proposals(o: Output, problems: Sequence[ProblemCase]) -> tuple[Proposal, ...]:
    """One option per id (rule functions and criteria may propose the same activity), with
    known problems only, a priority, in plan order."""
    merged = Output(o.problems, [], o.high_risk)
    for prop in o.proposals:
        add_or_merge(merged, prop)
    known = {p.id for p in problems}
    out = (
        replace(
            p,
            problem_ids=tuple(x for x in p.problem_ids if x in known),
            priority=p.priority if p.criteria else _legacy_priority(p),
        )
        for p in merged.proposals
        if not _review_covered(p, merged.proposals)
    )
    return tuple(sorted(out, key=lambda p: (CATEGORY_ORDER.index(p.category), -p.urgency, p.id)))


@lru_cache(maxsize=64)
def analyse(profile: PatientProfile, locale: Locale = "uk") -> Analysis:
    """The whole deterministic case analysis for one profile (cached per profile value: every
    step of a plan asks for it); ``locale`` picks the risk tools a clinician there uses."""
    c = Case(profile, locale)
    base = _record_problems(c)
    c.base = tuple(base)
    o = Output()
    # Adult items a current pregnancy makes wrong (a cardiovascular risk score, the adult
    # blood-pressure review) do not run for a pregnant woman (``data/pregnancy.yaml``).
    skip = NOT_IN_PREGNANCY if c.pregnancy is not None else frozenset()
    run_rules(c, o, skip)
    # Criteria after the rule functions: where both propose an activity, the rule's wording
    # (often more specific) leads and the points are united in one option.
    fired = apply_criteria([x for x in firing(active()) if x.id not in skip], c, o)
    level, score, breakdown, dims = _complexity(c, base, o)
    problems = (*base, *sorted(o.problems, key=lambda p: p.id))
    proposals = _proposals(o, problems)
    return Analysis(
        c.age,
        level,
        score,
        breakdown,
        dims,
        problems,
        proposals,
        _role_weights(problems, proposals),
        _terms(c, problems, proposals),
        _facts_text(c),
        fired,
    )
