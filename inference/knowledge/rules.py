"""The case analysis: a ``PatientProfile`` in, a deterministic ``Analysis`` out.

Knowledge lives in two places: the criteria files (``criteria/*.json``, interpreted by
``criteria.interpret``) and, for what cannot be said as data, the short rule functions below,
one rule each, registered in ``registry``. This module judges the record's own problems, runs
both, merges their proposals and scores complexity. Pure: no I/O, no clock, no randomness; the
same profile gives the same analysis, ordered.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache

from inference.protocol import Complexity, Judgement, Locale
from service.core.evaluation import CATEGORY_ORDER
from service.record.profile import (
    MAX_AGE_YEARS,
    Condition,
    Observation,
    PatientProfile,
    SocialFact,
    years_between,
)

from .adherence_net import note_not_taken
from .analysis import (
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
from .conditions import GROUPS_BY_KEY, is_sdoh_need
from .criteria.interpret import _ago, _since, apply_criteria
from .drugs import CLASS_LABELS
from .emergencies import flag_emergencies
from .facts import BloodPressure, MedFact, fmt, setting_of, without_tag
from .goals import goals_of_care, review_goals_of_care, withdrawn
from .living import adapt_to_living
from .parameters import param
from .perioperative import issue_steroid_card, prepare_for_operation
from .pregnancy import PREGNANCY
from .presenting import name_unaddressed
from .registry import Case, age_phrase, names, prob_ids, rule, run_rules
from .report_net import follow_reports_and_orders
from .result_net import result_net
from .result_words import worded_net
from .roles import POOL, ROLE_BY_NAME
from .rule_points import make_point as _point
from .rule_points import rule_option
from .site import Knowledge, active, shipped
from .taken import said_as_taken
from .triggers import candidates, trigger_index
from .units import CHOLESTEROL_MG_DL_PER_MMOL_L, MONTHS_PER_YEAR

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


def _at_least(value: float | None, name: str) -> bool:
    """``value`` is known and at or above parameter ``name``."""
    return value is not None and value >= param(name)


# --------------------------------------------------------------------- record problems


@dataclass(frozen=True, slots=True)
class _Verdict:
    initial: Judgement
    kind: str
    why: str
    conf: float | None = None  # None: ``problem.confidence_judged``
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
    if "family" in s.kinds:
        return _Verdict(
            "reject", "family", "about a relative or ruled out: not the patient's problem"
        )
    if "history" not in s.kinds:
        return None
    return _Verdict(
        "reject", "history", "a past event recorded as a situation, not a current problem"
    )


def _noise(c: Case, s: _Seen) -> _Verdict | None:
    if "noise" not in s.kinds or (s.years or 0) < 1:
        return None
    why = f"an acute pregnancy event still marked active{s.since}: a record artefact"
    return _Verdict("reject", "noise", why, param("problem.confidence_artefact"))


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
    if "acute" not in s.kinds or (c.days_since(s.pr.onset) or 0) <= param(
        "problem.stale_acute_days"
    ):
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
    if "obesity" not in s.groups or bmi is None or bmi.value is None:
        return None
    if _at_least(bmi.value, "problem.obesity_bmi"):
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
    conf = param("problem.confidence_unrecognised")
    return _Verdict("accept", "unrecognised", why, conf, domains=("general",))


def _chronic(c: Case, s: _Seen) -> _Verdict:
    treated = _treated(c, s.groups)
    supported = treated or s.pr.verification == "confirmed"
    conf = param(
        "problem.confidence_chronic_supported" if supported else "problem.confidence_chronic"
    )
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
    return pr.abatement is not None and (c.days_since(pr.abatement) or 0) <= param(
        "problem.resolved_shown_days"
    )


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
        v.conf if v.conf is not None else param("problem.confidence_judged"),
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
# One rule each; texts name the patient's own facts. What each point says, who makes it and how
# strong it is are data (``data/rule_points.yaml``, taken by id); the thresholds are named
# parameters (``data/parameters.yaml``, read with ``param``).


def _points(
    ids: Sequence[str], facts: Iterable[str | Cited], *, stronger_if: str = "", **values: object
) -> list[Point]:
    """The points ``ids`` about ``facts``, their templates filled with ``values``."""
    cited = refs(facts)
    return [_point(i, cited, stronger_if=stronger_if, **values) for i in ids]


def _proposal(
    key: str,
    title: str,
    description: str,
    cited: tuple[str, ...],
    problem_ids: tuple[str, ...],
    points: Iterable[Point],
    code: tuple[str, str, str] | None = None,
) -> Proposal:
    """The option ``key`` of the data file (id, category, urgency, priority ...) with this
    patient's wording, references, problems and points."""
    spec = rule_option(key)
    return Proposal(
        spec.id,
        title,
        spec.category,
        description,
        cited,
        problem_ids,
        tuple(points),
        code,
        None,
        spec.urgency,
        spec.priority,
        urgency_class=spec.urgency_class,
        answers=spec.answers,
    )


@rule("medication-review-polypharmacy", "NICE NG5 medicines optimisation, 2015")
def polypharmacy(c: Case, o: Output) -> None:
    """Five or more active medicines: a structured medication review."""
    n = len(c.meds)
    if not _at_least(n, "polypharmacy.medicines"):
        return
    hyper = _at_least(n, "polypharmacy.hyper_medicines")
    label = "Hyperpolypharmacy" if hyper else "Polypharmacy"
    why = (
        f"{n} medicines on the list; threshold {fmt(param('polypharmacy.medicines'))} "
        f"({fmt(param('polypharmacy.hyper_medicines'))} for hyperpolypharmacy)"
    )
    text = names(c.meds)
    pid = o.problem(
        "prob-polypharmacy",
        f"{label} ({n} medicines on the list)",
        c.meds,
        why,
        ("medication",),
        text,
        param("problem.confidence_polypharmacy"),
    )
    # hyperpolypharmacy: the pharmacist's case is stronger
    pts = [
        _point(
            "polypharmacy.structured-review",
            c.meds,
            stronger_if="hyperpolypharmacy" if hyper else "",
            n=n,
            names=text,
        ),
        _point("polypharmacy.treatment-burden", c.meds, n=n),
        _point("polypharmacy.another-appointment", c.meds[:1]),
    ]
    pts += [_point("polypharmacy.older-adult", c.meds, age=age_phrase(c))] if c.older else []
    desc = f"Review all {n} medicines on the list for indication, dose, interactions and burden."
    o.proposals.append(
        _proposal(
            "medication-review",
            "Structured medication review",
            desc,
            refs(c.meds),
            (pid,),
            pts,
            MEDICATION_REVIEW,
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


def _very_old(c: Case, b: BloodPressure) -> bool:
    """Old enough for the geriatrician's caution on a blood pressure that is not severe."""
    return _at_least(c.age, "bp.older_caution_age_years") and not b.severe


def _bp_caveats(c: Case, b: BloodPressure, bp: str, facts: tuple[Cited | str, ...]) -> list[Point]:
    """The nurse's act-now or confirm-first point, the NSAID point, the very-old caution."""
    out: list[Point] = []
    if b.severe:
        out.append(_point("raised-bp.severe-act-now", facts, bp=bp))
    elif b.readings <= 1 or b.raised <= 1:
        one = "one raised reading" if b.raised <= 1 else "one reading"
        out.append(_point("raised-bp.confirm-first", facts, bp=bp, one=one))
    if nsaids := c.with_spec("class:nsaid"):
        out.append(_point("raised-bp.stop-nsaid", (*nsaids, *b.refs[-1:]), nsaids=names(nsaids)))
    if _very_old(c, b):
        oldest = "oldest-old" if _at_least(c.age, "bp.oldest_caution_age_years") else ""
        out.append(
            _point("raised-bp.very-old-caution", facts, stronger_if=oldest, age=age_phrase(c))
        )
    return out


def _raised(b: BloodPressure) -> bool:
    """The latest reading at or above the raised systolic or diastolic value."""
    return _at_least(b.systolic, "bp.raised_systolic_mmhg") or _at_least(
        b.diastolic, "bp.raised_diastolic_mmhg"
    )


def _count(b: BloodPressure) -> str:
    if b.readings > 1:
        return f"{b.raised} of {b.readings} readings in the last year raised"
    return "one reading in the last year"


@rule("review-raised-blood-pressure", "ACC/AHA blood pressure guideline 2017; NICE NG136 2019")
def blood_pressure(c: Case, o: Output) -> None:
    """Hypertension above target, read from every reading of the last year; a severe reading
    (180 systolic or 110 diastolic and above) is acted on, not deferred."""
    htn, b = c.active("hypertension"), c.bp
    if not htn or b is None or not _raised(b):
        return
    bp = f"{fmt(b.systolic)}/{fmt(b.diastolic)} mmHg"
    facts: tuple[Cited | str, ...] = (*htn, *b.refs)
    drugs = tuple(dict.fromkeys(m for k in _BP_LOWERING for m in c.with_spec(k)))
    count = _count(b)
    on = names(drugs) or "no antihypertensive"
    lead = _point(
        "raised-bp.above-target",
        (*facts, *drugs),
        stronger_if="severe" if b.severe else "",
        bp=bp,
        count=count,
        condition=htn[0].text,
        on=on,
    )
    then = " now." if b.severe else " after confirming raised readings."
    # with no blood-pressure medicine taken there is no treatment to review: say so
    title = (
        f"Review blood pressure treatment (latest {bp})"
        if drugs
        else f"Review blood pressure (latest {bp}): no antihypertensive taken"
    )
    act = "adjust antihypertensive treatment" if drugs else "consider starting treatment"
    o.proposals.append(
        _proposal(
            "review-bp-severe" if b.severe else "review-bp",
            title,
            f"{count.capitalize()}; {act}{then}",
            refs(facts),
            prob_ids(htn),
            (lead, *_bp_caveats(c, b, bp, facts)),
        )
    )


def _bp_suspected(c: Case) -> BloodPressure | None:
    """Raised clinic readings standing for a diagnosis not yet made: the latest reading at or
    above 140/90 and at least one more in the last year, or a severe latest reading (NICE NG136
    2019, 1.2: repeated clinic readings are confirmed out of the clinic; a severe one is acted
    on). None when hypertension is recorded or a blood-pressure-lowering medicine is taken (the
    review of treatment is ``review-raised-blood-pressure``'s)."""
    b = c.bp
    if (
        b is None
        or c.active("hypertension")
        or (c.age is not None and c.age < param("age.adult_years"))
    ):
        return None
    if any(c.with_spec(k) for k in _BP_LOWERING):
        return None
    latest_raised = _at_least(round(b.systolic), "bp.raised_systolic_mmhg") or _at_least(
        round(b.diastolic), "bp.raised_diastolic_mmhg"
    )
    if not latest_raised or (b.raised < param("bp.suspected_raised_readings") and not b.severe):
        return None
    return b


_SEVERE_DESC = (
    "{count}, latest {bp} and severe, with no hypertension diagnosis or "
    "blood-pressure medicine recorded: check today for organ damage (fundi, urine "
    "albumin, kidney function, ECG) and for symptoms of accelerated hypertension, "
    "referring the same day if present; start treatment to lower blood pressure "
    "without waiting for ambulatory readings when organ damage is found, otherwise "
    "repeat the clinic reading within a week."
)
_CONFIRM_DESC = (
    "{count} with no hypertension diagnosis or blood-pressure medicine "
    "recorded: confirm with ambulatory monitoring (home monitoring if ambulatory is "
    "unsuitable); meanwhile check for organ damage (urine albumin, kidney function, "
    "HbA1c, ECG, fundi) and assess cardiovascular risk; if hypertension is confirmed, "
    "start treatment to lower blood pressure alongside lifestyle advice."
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
    count = _count(b).capitalize()
    facts: tuple[Cited | str, ...] = b.refs
    pts = [_point("suspected-hypertension.untreated-harm", facts, count=count, bp=bp)]
    if b.severe:
        pts.append(_point("suspected-hypertension.severe-organ-damage", facts[-1:], bp=bp))
        title = f"Assess a severe blood pressure now (latest {bp}, no hypertension recorded)"
        desc = _SEVERE_DESC.format(count=count, bp=bp)
    else:
        pts.append(_point("suspected-hypertension.confirm-out-of-clinic", facts))
        title = f"Confirm suspected hypertension (latest {bp}, no diagnosis recorded)"
        desc = _CONFIRM_DESC.format(count=count)
    if _very_old(c, b):
        pts.append(_point("suspected-hypertension.very-old-target", facts, age=age_phrase(c)))
    o.proposals.append(
        _proposal(
            "confirm-hypertension-severe" if b.severe else "confirm-hypertension",
            title,
            desc,
            refs(facts),
            (),
            pts,
        )
    )


# QRISK3 is validated from 25 to 84 (NICE NG238 2023, 1.1); NICE's systematic, opportunistic
# assessment starts at 40 (``cvr.*`` parameters). Diabetes and chronic kidney disease have their
# own statin criteria (``start-statin-diabetes``, ``start-statin-ckd``), and established
# cardiovascular disease its secondary-prevention one.
_CVD = ("chd", "stroke", "tia", "pad")
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
        return o.value * CHOLESTEROL_MG_DL_PER_MMOL_L
    if unit in ("mg/dl", "mg/100ml"):
        return o.value
    return None


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
    if ldl is not None and _at_least(mg, "lipids.ldl_high_mg_dl"):
        words.append(f"LDL cholesterol {fmt(ldl.value)} {ldl.unit}".strip())
        cited.append(ldl.ref)
    else:
        mg, ldl = None, None
    lipids = c.active("hyperlipidemia")
    if lipids:
        words.append(without_tag(lipids[0].text))
        cited.append(lipids[0].ref)
    return words, cited, mg, ldl


def _cv_risk_applies(c: Case) -> bool:
    """An adult in the assessed ages with no cardiovascular disease, statin, diabetes, kidney
    disease, familial hypercholesterolaemia or limited life expectancy. NICE CG181 (1.1.14, kept
    in NG238) does not use a risk tool in familial hypercholesterolaemia, which the tools
    underestimate: its own line refers it (refer-familial-hypercholesterolaemia)."""
    if not (
        _at_least(c.age, "cvr.assess_from_age_years")
        and c.age is not None
        and c.age <= param("cvr.assess_to_age_years")
    ):
        return False
    if any(c.ever(g) for g in _CVD) or c.with_spec("class:statin"):
        return False
    if c.active("diabetes") or c.active("ckd") or c.lab_ckd:
        return False
    if c.ever("familial-hypercholesterolaemia"):  # suspected or confirmed
        return False
    return not c.active("limited-life-expectancy")


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
    if not _cv_risk_applies(c):
        return
    words, cited, mg, ldl = _risk_factors(c)
    if not words:
        return
    factors = "; ".join(words)
    tool, body = _CVR_TOOLS[c.locale]
    who = f"Aged {c.age}"
    pts = _points(
        ("cv-risk.estimate-risk", "cv-risk.measured-score"),
        cited,
        who=who,
        factors=factors,
        tool=tool,
    )
    if ldl is not None and _at_least(mg, "lipids.ldl_very_high_mg_dl"):
        pts.append(_point("cv-risk.very-high-ldl", (ldl.ref,), ldl=f"{fmt(ldl.value)} {ldl.unit}"))
    # from 75 the evidence for starting a statin in primary prevention is weaker: a review to
    # hold with the person, not an omission
    older = _at_least(c.age, "cvr.older_from_age_years")
    if older:
        pts.append(_point("cv-risk.older-uncertain-benefit", cited, age=age_phrase(c)))
    pts.append(_point("cv-risk.lifestyle-first", cited))
    o.proposals.append(
        _proposal(
            "assess-cv-risk-older" if older else "assess-cv-risk",
            f"Assess ten-year cardiovascular risk ({tool.removeprefix('the ')}) and discuss "
            "starting a statin",
            f"No cardiovascular disease or statin recorded, with risk factors: {factors}. This "
            f"plan does not calculate the score: enter the measured values in {tool} with the "
            "person, and offer atorvastatin at the primary-prevention dose when the risk "
            f"reaches the {body} threshold, alongside "
            + ("help to stop smoking and " if c.smoking is not None and c.smoking.current else "")
            + "blood-pressure control.",
            refs(cited),
            (),
            pts,
        )
    )


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


def _anticoagulant_points(
    c: Case, given: date, event_facts: Sequence[str | Cited], ref: str
) -> tuple[list[Point], list[MedFact], tuple[MedFact, ...]]:
    """The pharmacist's points on an anticoagulant prescribed before the event and on an
    antiplatelet with it; the anticoagulants and antiplatelets they cite."""
    anticoag = [
        m
        for m in c.with_spec("class:anticoagulant")
        if m.first_authored is not None and m.first_authored <= given
    ]
    anti = c.with_spec("class:antiplatelet")
    if not anticoag:
        return [], anticoag, anti
    a = anticoag[0]
    control = (
        "the INR at the time of the event"
        if a in c.with_spec("class:vka")
        else "whether the dose suited the kidney function"
    )
    pts = [
        _point(
            "after-thrombolysis.on-anticoagulant",
            (*event_facts, a),
            anticoagulant=a.text,
            control=control,
        )
    ]
    if anti:
        pts.append(
            _point(
                "after-thrombolysis.combined-antithrombotics",
                (ref, a, anti[0]),
                antiplatelet=anti[0].text,
                anticoagulant=a.text,
            )
        )
    return pts, anticoag, anti


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
    given = c.recent_orders("class:thrombolytic", round(param("window.thrombolysis_days")))
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
    lead = _point(
        "after-thrombolysis.which-event",
        event_facts,
        drug=t.text,
        where=where,
        when=when,
        what=what,
    )
    more, anticoag, anti = _anticoagulant_points(c, t.authored, event_facts, t.ref)
    pts = [lead, *more, _point("after-thrombolysis.discharge-letter", (t.ref,))]
    desc = (
        f"{t.text} was given {where} {when} ({what}). Find out what the event was, check "
        "adherence and anticoagulant control at the time, and agree the antithrombotic plan "
        "and the secondary prevention with the stroke or cardiology team."
    )
    o.proposals.append(
        _proposal(
            "review-after-thrombolysis",
            "Review antithrombotic treatment after the recent thrombolysis",
            desc,
            refs(event_facts, anticoag, anti if anticoag else ()),
            c.base_ids(dx),
            pts,
            MEDICATION_REVIEW,
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


def _age_words(c: Case) -> str:
    """The patient's age as a fall risk factor: named below the cap, grouped from it."""
    cap = param("falls.age_named_below_years")
    return f"age {c.age}" if (c.age or 0) < cap else f"age {fmt(cap)} or over"


def _fall_risk(c: Case) -> _FallRisk | None:
    """Risk factors for falls in an older adult: enough of them (``falls.risk_factors``), or
    any recorded fall."""
    if not c.older:
        return None
    falls, fractures = c.social("fall"), c.ever("fracture")
    osteo, dementia, stroke = c.active("osteoporosis"), c.active("dementia"), c.active("stroke")
    frids = tuple(m for m in c.meds if any(k in m.classes for k in _FRID))
    found = (
        ("falls recorded", bool(falls)),
        ("previous fractures", bool(fractures)),
        ("osteoporosis", bool(osteo)),
        ("dementia", bool(dementia)),
        ("fall-risk medicines: " + ", ".join(m.drugs[0] for m in frids), bool(frids)),
        (_age_words(c), _at_least(c.age, "falls.risk_age_years")),
        ("previous stroke", bool(stroke)),
    )
    n = sum(on for _, on in found)
    if n < 1 or (n < param("falls.risk_factors") and not falls):
        return None
    parts = tuple(t for t, on in found if on)
    cited = refs(falls, fractures, osteo, dementia, frids, stroke)
    alone = c.social("alone", "no caregiver", "no carer")
    return _FallRisk(parts, cited, falls, fractures, osteo, dementia, alone)


def _fall_problem(o: Output, r: _FallRisk) -> str:
    why = "; ".join(r.parts)
    conf = param("problem.confidence_fall_risk")
    return o.problem("prob-fall-risk", "Fall risk", r.cited, why, ("falls", "function"), why, conf)


def _falls_cautions(c: Case, r: _FallRisk) -> list[Point]:
    out: list[Point] = []
    if r.osteo or r.fractures:
        what = "osteoporosis" if r.osteo else "previous fractures"
        out.append(_point("falls.fracture-risk", (*r.osteo, *r.fractures), what=what))
    if anticoag := c.with_spec("class:anticoagulant"):
        out.append(_point("falls.bleeding-on-anticoagulant", anticoag, drugs=names(anticoag)))
    if r.dementia:
        mmse = c.latest("mmse")
        score = f" (MMSE {fmt(mmse.value)})" if mmse else ""
        cited = (*r.dementia, *((mmse,) if mmse else ()))
        out.append(
            _point("falls.dementia-supervision", cited, dementia=r.dementia[0].text, score=score)
        )
    out += [_point("falls.no-carer", r.alone)] if r.alone else []
    if _at_least(c.age, "falls.very_old_age_years"):
        out.append(_point("falls.very-old-tolerance", (), age=age_phrase(c)))
    return out


@rule("falls-prevention", "World Falls Guidelines 2022 (multifactorial assessment, exercise)")
def falls_prevention(c: Case, o: Output) -> None:
    """Older adult with fall risk factors: multifactorial assessment and exercise."""
    r = _fall_risk(c)
    if r is None:
        return
    first = ("falls.multifactorial-assessment", "falls.home-risks-check", "falls.home-exercise")
    pts = (*_points(first, r.cited, parts="; ".join(r.parts)), *_falls_cautions(c, r))
    o.proposals.append(
        _proposal(
            "falls-prevention",
            "Falls risk assessment and strength and balance programme",
            "Multifactorial falls assessment with supervised strength and balance exercise.",
            r.cited,
            (_fall_problem(o, r),),
            pts,
        )
    )


@rule("home-safety-assessment", "World Falls Guidelines 2022 (home hazard assessment)")
def home_safety(c: Case, o: Output) -> None:
    """Fall risk with dementia, living alone, or a fall or fracture: home hazard assessment."""
    r = _fall_risk(c)
    if r is None or not (r.dementia or r.alone or r.falls or r.fractures):
        return
    pts = [
        _point("home-safety.hazard-assessment", r.cited),
        _point("home-safety.extra-visit", r.cited[:1]),
    ]
    if r.dementia:
        pts.append(_point("home-safety.dementia", r.dementia, dementia=r.dementia[0].text))
    o.proposals.append(
        _proposal(
            "home-safety",
            "Home safety assessment by occupational therapy",
            "Occupational therapy home hazard assessment and adaptations.",
            r.cited,
            (_fall_problem(o, r),),
            pts,
        )
    )


@rule("carer-support-dementia", "NICE NG97 dementia, 2018 (supporting carers)")
def carer_support(c: Case, o: Output) -> None:
    """Dementia: a carer's needs assessment (who the carer is comes from social facts)."""
    dementia = c.active("dementia")
    if not dementia:
        return
    carer, alone = c.social("caregiver", "carer"), c.social("alone")
    pts = [
        _point("carer.needs-assessment", (*dementia, *carer, *alone), dementia=dementia[0].text),
        _point("carer.named-contact", dementia),
    ]
    if alone:
        pts.append(_point("carer.lives-alone", alone))
    elif not carer:
        pts.append(_point("carer.unknown-carer", dementia))
    o.proposals.append(
        _proposal(
            "carer-support",
            "Carer needs assessment and support",
            "Assess the carer's needs; education, respite and community support.",
            refs(dementia, carer, alone),
            prob_ids(dementia),
            pts,
        )
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
        _proposal(
            "psychosocial-support",
            "Screen for depression and offer psychosocial support",
            "Mood screening and psychosocial support.",
            refs(stress),
            c.base_ids(stress),
            _points(("stress.mood-screen", "stress.social-causes"), stress, stress=stress[0].text),
        )
    )


def _needs(c: Case) -> tuple[Condition | SocialFact, ...]:
    coded = (pr for pr, gs in c.problems if pr.active and "sdoh-need" in gs)
    return (
        *(pr for pr in coded if is_sdoh_need(pr)),
        *(f for f in c.p.social if f.kind in NEED_KINDS),
    )


_ABUSE_KINDS = ("intimate_partner_abuse", "violence_in_environment")


@rule("safety-assessment-abuse", "NICE PH50 domestic violence and abuse, 2014")
def safety_assessment(c: Case, o: Output) -> None:
    """Recorded abuse or violence: a confidential safety assessment now."""
    abuse = tuple(
        x for x in _needs(c) if "abuse" in x.text.lower() or getattr(x, "kind", "") in _ABUSE_KINDS
    )
    if not abuse:
        return
    ids = ("abuse.safety-assessment", "abuse.ask-privately", "abuse.safe-contact")
    o.proposals.append(
        _proposal(
            "safety-assessment",
            "Confidential safety assessment and referral",
            "Safety planning for intimate partner abuse.",
            refs(abuse),
            c.base_ids(abuse),
            _points(ids, abuse, abuse=abuse[0].text),
        )
    )


@rule("social-work-needs", "NICE NG22 older people with social care needs, 2015")
def social_work(c: Case, o: Output) -> None:
    """Recorded social needs: a social work assessment."""
    needs = _needs(c)
    if not needs:
        return
    items = "; ".join(x.text for x in needs[:4])
    ids = ("social-needs.community-resources", "social-needs.feasibility")
    o.proposals.append(
        _proposal(
            "social-work",
            "Social work assessment of social needs",
            "Assess and address recorded social needs.",
            refs(needs),
            c.base_ids(needs),
            _points(ids, needs, items=items),
        )
    )


@rule("confirm-current-record", "NICE NG5 medicines optimisation, 2015 (medicines reconciliation)")
def confirm_current_record(c: Case, o: Output) -> None:
    """A record that ends long before the plan date: confirm current medicines and results
    before acting on it (the months are ``window.record_confirm_months``)."""
    months = int(param("window.record_confirm_months"))
    as_of, plan_day = c.p.as_of, c.p.plan_day
    if not _months_after(as_of, months) < plan_day:
        return
    ids = ("record-confirm.reconcile", "record-confirm.results")
    o.proposals.append(
        _proposal(
            "confirm-current-record",
            f"Confirm current medicines and results first: the record ends {as_of.isoformat()}",
            "The record ends more than the stated months before this plan: confirm the current "
            "medicines, doses and results with the patient before acting on any line below.",
            (c.p.ref,),
            (),
            _points(
                ids, (c.p.ref,), as_of=as_of.isoformat(), months=months, ago=_since(plan_day, as_of)
            ),
        )
    )


def _months_after(day: date, months: int) -> date:
    """``day`` moved ``months`` calendar months later, on the month's last day if need be.

    >>> _months_after(date(2026, 8, 31), 6)
    datetime.date(2027, 2, 28)
    """
    index = day.year * MONTHS_PER_YEAR + day.month - 1 + months
    year, month = divmod(index, MONTHS_PER_YEAR)
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))


# ------------------------------------------------------------------------- complexity


def _band(value: float | None, *names: str) -> int:
    """How many of the parameters ``names`` (ascending) ``value`` reaches: a score band."""
    return sum(_at_least(value, name) for name in names)


def _impaired(mmse: Observation | None) -> bool:
    """An MMSE result (a score of 0 read as not recorded) below the impaired value."""
    return (
        mmse is not None
        and bool(mmse.value)
        and not _at_least(mmse.value, "complexity.mmse_impaired_below")
    )


def _score(c: Case, base: Sequence[ProblemCase], out: Output) -> tuple[tuple[str, int], ...]:
    """Multimorbidity (0-3) + polypharmacy (0-2) + age (0-2) + cognition (0 or its points)
    + falls (0/1) + psychosocial (0-2) + safety findings (0-2); the bands are parameters."""
    n = sum(1 for p in base if p.initial == "accept")
    needs = sum(1 for p in base if p.kind == "sdoh-need") + sum(
        1 for f in c.p.social if f.kind in NEED_KINDS
    )
    cognition = c.active("dementia") or _impaired(c.latest("mmse"))
    conditions = ("complexity.conditions_point_1", "complexity.conditions_point_2")
    return (
        ("multimorbidity", _band(n, *conditions, "complexity.conditions_point_3")),
        (
            "polypharmacy",
            _band(len(c.meds), "polypharmacy.medicines", "polypharmacy.hyper_medicines"),
        ),
        (
            "age",
            _band(c.age, "complexity.age_point_1_years", "complexity.age_point_2_years"),
        ),
        ("cognition", round(param("complexity.cognition_points")) if cognition else 0),
        ("falls", 1 if c.social("fall") or c.ever("fracture") else 0),
        ("psychosocial", min(needs, 1) + _at_least(needs, "complexity.needs_point_2")),
        (
            "safety findings",
            min(out.high_risk, 1) + _at_least(out.high_risk, "complexity.safety_point_2"),
        ),
    )


def _dimensions(
    c: Case, base: Sequence[ProblemCase], out: Output, score: dict[str, int]
) -> tuple[str, ...]:
    n = sum(1 for p in base if p.initial == "accept")
    egfr = c.latest("egfr")
    # a result of 0 is read as not recorded
    low_kidney = (
        egfr is not None
        and bool(egfr.value)
        and not _at_least(egfr.value, "complexity.egfr_low_below")
    )
    dims = (
        (f"multimorbidity ({n} active conditions)", n > 0),
        (f"polypharmacy ({len(c.meds)} medicines on the list)", score["polypharmacy"] > 0),
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


_LEVELS: tuple[Complexity, ...] = ("low", "moderate", "high", "very high")


def _complexity(
    c: Case, base: Sequence[ProblemCase], out: Output
) -> tuple[Complexity, int, tuple[tuple[str, int], ...], tuple[str, ...]]:
    """Levels by score: low, then moderate, high and very high from their parameters."""
    breakdown = _score(c, base, out)
    score = sum(v for _, v in breakdown)
    level = _LEVELS[
        _band(
            score,
            "complexity.level_moderate_from",
            "complexity.level_high_from",
            "complexity.level_very_high_from",
        )
    ]
    return level, score, breakdown, _dimensions(c, base, out, dict(breakdown))


# ------------------------------------------------------------------------------ entry


def _role_weights(
    problems: Sequence[ProblemCase], proposals: Sequence[Proposal]
) -> tuple[tuple[str, float], ...]:
    weights: dict[str, float] = {a.role: 0.0 for a in POOL}
    for prop in proposals:
        safety = prop.category == "immediate-safety"
        boost = param("weights.immediate_safety_boost") if safety else 1.0
        for pt in prop.points:
            if pt.role in weights:
                weights[pt.role] += pt.tau * boost
    for pc in problems:
        if pc.initial == "accept":
            for a in POOL:
                if a.role != "gp" and set(pc.domains) & set(a.expertise):
                    weights[a.role] += param("weights.problem_expertise")
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
    known problems only, in plan order (every option states its priority: the criteria's and
    the rule functions' data)."""
    merged = Output(o.problems, [], o.high_risk)
    for prop in o.proposals:
        add_or_merge(merged, prop)
    known = {p.id for p in problems}
    out = (
        replace(p, problem_ids=tuple(x for x in p.problem_ids if x in known))
        for p in merged.proposals
        if not _review_covered(p, merged.proposals)
    )
    return tuple(sorted(out, key=lambda p: (CATEGORY_ORDER.index(p.category), -p.urgency, p.id)))


def analyse(profile: PatientProfile, locale: Locale = "uk") -> Analysis:
    """The whole deterministic case analysis for one profile (cached per profile value: every
    step of a plan asks for it); ``locale`` picks the risk tools a clinician there uses."""
    # One cache key whether the locale was passed or defaulted: the cache keys the call. The
    # active knowledge (compared by identity, and kept alive by the cache while it holds it)
    # is part of the key, so no plan reads an analysis made under other knowledge.
    return _analyse(profile, locale, active())


@lru_cache(maxsize=64)
def _analyse(profile: PatientProfile, locale: Locale, _knowledge: Knowledge) -> Analysis:
    c = Case(profile, locale)
    base = _record_problems(c)
    c.base = tuple(base)
    o = Output()
    # Adult items a current pregnancy makes wrong (a cardiovascular risk score, the adult
    # blood-pressure review) do not run for a pregnant woman (``data/pregnancy.yaml``).
    skip = NOT_IN_PREGNANCY if c.pregnancy is not None else frozenset()
    # Palliative or end-of-life care recorded: prevention and long-horizon targets are left
    # out, and one line says so and why (``data/goals_of_care.yaml``).
    goals = goals_of_care(c)
    skip |= withdrawn(goals)
    run_rules(c, o, skip)
    # Criteria after the rule functions: where both propose an activity, the rule's wording
    # (often more specific) leads and the points are united in one option.
    # Only the criteria this record can trigger (``triggers``): the others cannot fire.
    able = candidates(trigger_index(active()), c)
    fired = apply_criteria([x for x in able if x.id not in skip], c, o)
    # The nets under the criteria: an abnormal recent result no line above cites (a number, then
    # one stated in words or flags), reports and orders left open, then (last, once every other
    # line is known) the presenting problems no line addresses.
    flag_emergencies(c, o)  # results of a recent contact that meet an emergency pattern
    prepare_for_operation(c, o)  # a booked operation: its medicines, antiplatelets, anaesthetist
    issue_steroid_card(c, o)  # at risk of adrenal crisis with no steroid emergency card recorded
    result_net(c, o)
    worded_net(c, o)
    follow_reports_and_orders(c, o)
    note_not_taken(c, o)
    review_goals_of_care(c, o, goals)
    name_unaddressed(c, o)
    adapt_to_living(c.p, o)  # advice that assumes a household, for one without
    level, score, breakdown, dims = _complexity(c, base, o)
    problems = (*base, *sorted(o.problems, key=lambda p: p.id))
    proposals = said_as_taken(_proposals(o, problems), c.p)
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
        o.claims_checked,
        tuple(o.withheld),
    )
