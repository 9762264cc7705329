"""Rule functions: a ``PatientProfile`` in, a deterministic ``Analysis`` out.

Each rule family reads the tables in ``drugs``, ``conditions`` and ``tables`` and proposes
problems and care options with the argument *points* each professional role would make about
them (stance, text naming the patient's own facts, the FHIR refs it cites, the evidence it
prefers, intrinsic strength). ``inference.embedded`` turns these into protocol answers.
Pure: no I/O, no clock, no randomness; the same profile gives the same analysis, ordered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import date
from functools import lru_cache
from typing import Literal

from inference.protocol import Complexity, Judgement, Priority
from service.core.evaluation import CATEGORY_ORDER
from service.core.profile import Medication, Observation, PatientProfile, Problem, SocialFact

from .conditions import GROUPS_BY_KEY, is_sdoh_need
from .criteria import load
from .criteria.interpret import apply_criteria
from .drugs import CLASS_LABELS, drug
from .facts import BloodPressure, Facts, MedFact, fmt
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
from .roles import POOL, ROLE_BY_NAME
from .tables import (
    LOINC_BMI,
    LOINC_MMSE,
    LOINC_POTASSIUM,
    LOINC_SBP,
    LOINC_UACR,
)

__all__ = ["CRITERIA", "Analysis", "MedFact", "Point", "ProblemCase", "Proposal", "analyse"]

# Loaded and validated at import, so a bad criteria file stops start-up (KnowledgeError).
CRITERIA = load()

Stance = Literal["support", "attack"]
SNOMED_URL = "http://snomed.info/sct"
LOINC_URL = "http://loinc.org"
MEDICATION_REVIEW = (SNOMED_URL, "182836005", "Review of medication")


# ---------------------------------------------------------------------------------- helpers


_DOSE = re.compile(r"(\d+(?:\.\d+)?)\s*mg\b", re.I)


def _dose_mg(text: str) -> float | None:
    m = _DOSE.search(text)
    return float(m.group(1)) if m else None


def _years(a: date | None, b: date) -> int | None:
    if a is None:
        return None
    return b.year - a.year - ((b.month, b.day) < (a.month, a.day))


def _fmt(value: float | None) -> str:
    """One rendering of numbers for rules and criteria (``facts.fmt``), so texts match facts."""
    return fmt(value)


class _Case(Facts):
    """The typed facts plus the lookups the remaining rule functions use."""

    def __init__(self, profile: PatientProfile) -> None:
        super().__init__(profile)
        self.older = self.age is not None and self.age >= 65
        self.obs = {o.loinc: o for o in profile.observations}

    def has(self, spec: str) -> bool:
        return bool(self.with_spec(spec))

    def egfr(self) -> Observation | None:
        return self.latest("egfr")

    def series_refs(self, bp: BloodPressure) -> tuple[str, ...]:
        return bp.refs

    def latest_obs(self, loincs: Iterable[str]) -> Observation | None:
        found = [self.obs[c] for c in loincs if c in self.obs]
        if not found:
            return None
        return max(found, key=lambda o: (o.effective or date.min, o.loinc))

    def days_before(self, d: date | None) -> int | None:
        return self.days_since(d)

    def social(self, *words: str) -> tuple[str, ...]:
        return tuple(
            s.ref for s in self.p.social if any(w in (s.kind + " " + s.text).lower() for w in words)
        )


def _first_display(m: Medication) -> str:
    return next((c.display for c in m.codes if c.display), m.ref)


def _obs_text(o: Observation) -> str:
    return f"{o.display} {_fmt(o.value)} {o.unit}".strip()


def _names(meds: Sequence[MedFact]) -> str:
    return ", ".join(m.text for m in meds)


def _pt(
    role: str,
    stance: Stance,
    text: str,
    facts: Iterable[str | Cited],
    ev: tuple[str, ...],
    tau: float,
) -> Point:
    return Point(role, stance, text, refs(facts), ev, round(tau, 3))


def _age_phrase(c: _Case) -> str:
    if c.age is None:
        return "an adult"
    if c.age >= 90:
        return "a person aged 90 or over"
    return f"a {c.age}-year-old"


# --------------------------------------------------------------------- record problems


def _record_problems(c: _Case) -> list[ProblemCase]:
    out: list[ProblemCase] = []
    seen: dict[str, int] = {}
    diabetes = bool(c.active("diabetes"))
    bmi = c.latest_obs((LOINC_BMI,))
    for pr, groups in c.problems:
        recent_resolved = (
            not pr.active and pr.abatement is not None and (c.days_before(pr.abatement) or 0) <= 365
        )
        if not pr.active and not recent_resolved:
            continue
        key = next((f"{x.system}|{x.code}" for x in pr.codes), pr.text.lower())
        if key in seen:  # Synthea repeats codes (two "Pathological fracture" entries)
            i = seen[key]
            prev = out[i]
            out[i] = ProblemCase(
                prev.id,
                prev.display,
                (*prev.refs, pr.ref),
                prev.initial,
                prev.rationale,
                prev.kind,
                prev.domains,
                prev.quote,
                prev.confidence,
                prev.keepers,
            )
            continue
        seen[key] = len(out)
        domains = tuple(sorted({d for g in groups for d in GROUPS_BY_KEY[g].domains}))
        kinds = {GROUPS_BY_KEY[g].kind for g in groups}
        years = _years(pr.onset, c.p.as_of)
        since = f" (recorded active for {years} years)" if years else ""
        pid = f"prob-{rid(pr.ref)}"
        quote = pr.text
        keepers: tuple[tuple[str, str], ...] = ()
        conf = 0.75
        initial: Judgement
        if not pr.active:
            initial, kind = "reject", "resolved"
            why = "resolved within the last year; not a current problem"
        elif "history" in kinds:
            initial, kind = "reject", "history"
            why = "a past event recorded as a situation, not a current problem"
        elif "noise" in kinds and (years or 0) >= 1:
            initial, kind, conf = "reject", "noise", 0.9
            why = f"an acute pregnancy event still marked active{since}: a record artefact"
        elif "sdoh" in kinds:
            domains = ("general", "social")
            if is_sdoh_need(pr):
                initial, kind = "reject", "sdoh-need"
                why = (
                    "a social circumstance rather than a medical diagnosis; it belongs in "
                    "the social plan"
                )
                keepers = (
                    (
                        "social-worker",
                        "a live psychosocial need that the care plan must "
                        "address, whatever its coding",
                    ),
                    ("care-coordinator", "affects how the plan can be delivered"),
                )
            else:
                initial, kind = "reject", "sdoh-context"
                why = "social context, not a need or a medical problem"
        elif "acute" in kinds and (c.days_before(pr.onset) or 0) > 180:
            initial, kind = "reject", "stale"
            why = f"an acute, self-limiting event still marked active{since}"
            if "cardiac-arrest" in groups:
                keepers = (
                    (
                        "cardiologist",
                        "a survived cardiac arrest keeps arrhythmia risk "
                        "relevant to rate-slowing and QT-prolonging drugs",
                    ),
                )
        elif "prediabetes" in groups and diabetes:
            initial, kind = "reject", "superseded"
            why = "superseded by the recorded diagnosis of diabetes"
        elif "obesity" in groups and bmi is not None and bmi.value is not None and bmi.value < 30:
            initial, kind = "reject", "contradicted"
            why = f"the latest body mass index is {_fmt(bmi.value)}, below the obesity threshold"
            quote = _obs_text(bmi)
            keepers = (
                (
                    "dietitian",
                    "still overweight; weight management matters for the "
                    "cardiometabolic conditions",
                ),
            )
        elif not groups:
            initial, kind, conf = "accept", "unrecognised", 0.55
            domains = ("general",)
            why = "recorded as active; not covered by our knowledge tables, kept for review"
        else:
            initial, kind = "accept", "chronic"
            treated = _treated(c, groups)
            conf = 0.85 if treated or pr.verification == "confirmed" else 0.7
            why = "active, clinically meaningful condition" + (
                "; current treatment confirms it" if treated else ""
            )
        out.append(
            ProblemCase(
                pid,
                pr.text,
                (pr.ref,),
                initial,
                why,
                kind,
                domains or ("general",),
                quote,
                conf,
                keepers,
            )
        )
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


def _treated(c: _Case, groups: Iterable[str]) -> bool:
    return any(c.has(s) for g in groups for s in _TREATS.get(g, ()))


# ----------------------------------------------------------------------- rule families


def _prob_ids(probs: Iterable[Problem]) -> tuple[str, ...]:
    return tuple(f"prob-{rid(p.ref)}" for p in probs)


def _polypharmacy(c: _Case, o: Output) -> None:
    n = len(c.meds)
    if n < 5:
        return
    label = "Hyperpolypharmacy" if n >= 10 else "Polypharmacy"
    pid = o.problem(
        "prob-polypharmacy",
        f"{label} ({n} active medicines)",
        c.meds,
        f"{n} active medicines; threshold 5 (10 for hyperpolypharmacy)",
        ("medication",),
        _names(c.meds),
        0.85,
    )
    strong = 0.15 if n >= 10 else 0.0
    pts = [
        _pt(
            "pharmacist",
            "support",
            f"{n} active medicines ({_names(c.meds)}): a structured review finds interactions, "
            f"duplicates and drugs without a current indication.",
            c.meds,
            ("EB-MM-001", "EB-MM-003"),
            0.65 + strong,
        ),
        _pt(
            "gp",
            "support",
            f"With {n} regular medicines the treatment burden itself is a risk; a review aligns "
            "the list with current priorities.",
            c.meds,
            ("EB-MM-003", "EB-MM-001"),
            0.55,
        ),
        _pt(
            "care-coordinator",
            "attack",
            "One more appointment adds to the treatment burden; it should be combined with an "
            "existing visit.",
            c.meds[:1],
            ("EB-MM-003",),
            0.25,
        ),
    ]
    if c.older:
        pts.append(
            _pt(
                "geriatrician",
                "support",
                f"In {_age_phrase(c)} polypharmacy predicts falls, confusion and "
                "admissions; deprescribing is part of good care.",
                c.meds,
                ("EB-MM-001", "EB-MM-002"),
                0.6,
            )
        )
    o.proposals.append(
        Proposal(
            "opt-medication-review",
            "Structured medication review",
            "medication",
            f"Review all {n} active medicines for indication, dose, interactions and burden.",
            refs(c.meds),
            (pid,),
            tuple(pts),
            MEDICATION_REVIEW,
            None,
            1,
        )
    )


def _benzodiazepines(c: _Case, o: Output) -> None:
    dementia = c.active("dementia")
    epilepsy = c.active("epilepsy")
    opioids = c.with_spec("class:opioid")
    for m in (*c.with_spec("class:benzodiazepine"), *c.with_spec("class:z-drug")):
        if not (c.older or dementia or opioids):
            continue
        name = m.drugs[0]
        cls = "benzodiazepine" if "benzodiazepine" in m.classes else "sedative hypnotic"
        context = f" with {dementia[0].text}" if dementia else ""
        pid = o.problem(
            f"prob-pim-{name}",
            f"Potentially inappropriate medication: {name} ({cls})"
            + (" in an older adult" if c.older else ""),
            (m, *dementia),
            f"{cls} in {_age_phrase(c)}{context}",
            ("medication", "cognition", "falls"),
            m.text,
            0.85,
        )
        o.high_risk += 1
        yrs = _years(m.authored, c.p.as_of)
        long_term = f" for {yrs} years" if yrs and yrs >= 1 else ""
        pts = [
            _pt(
                "pharmacist",
                "support",
                f"{m.text} is a {cls} taken{long_term} by {_age_phrase(c)}{context}: it causes "
                "sedation and worsens cognition, and raises the risk of falls and fractures; "
                "the Beers criteria advise avoiding it.",
                (m, *dementia),
                ("EB-MEDSAFE-001", "EB-COG-001"),
                0.8 if dementia else 0.72,
            ),
            _pt(
                "nurse",
                "support",
                f"Unsteadiness at night on {name} makes falls at home more likely.",
                (m,),
                ("EB-MEDSAFE-009", "EB-FALLS-004"),
                0.6,
            ),
            _pt(
                "geriatrician",
                "support",
                f"Stopping {name} is one of the few changes that improves cognition and "
                "reduces falls in older people.",
                (m, *dementia),
                ("EB-MEDSAFE-001", "EB-MEDSAFE-009"),
                0.65,
            ),
            _pt(
                "pharmacist",
                "support",
                "A gradual taper (about a quarter of the dose every two weeks, slower towards "
                "the end) limits withdrawal and rebound symptoms.",
                (m,),
                ("EB-MEDSAFE-002",),
                0.62,
            ),
            _pt(
                "pharmacist",
                "attack",
                f"After {f'{yrs} years of use' if long_term else 'long-term use'}, stopping "
                f"{name} abruptly risks "
                "withdrawal: rebound anxiety, insomnia and seizures.",
                (m,),
                ("EB-MEDSAFE-002",),
                0.55,
            ),
        ]
        if dementia:
            pts.append(
                _pt(
                    "psychiatrist",
                    "support",
                    f"Benzodiazepines worsen memory and can trigger delirium in "
                    f"{dementia[0].text}; anxiety and sleep are better managed "
                    "without them.",
                    (m, *dementia),
                    ("EB-COG-001", "EB-MEDSAFE-001"),
                    0.65,
                )
            )
        if epilepsy:
            pts.append(
                _pt(
                    "gp",
                    "attack",
                    f"{m.text} may be part of seizure control for {epilepsy[0].text}: "
                    "withdrawal could provoke seizures, so any taper needs neurology "
                    "input.",
                    (m, *epilepsy),
                    ("EB-MEDSAFE-002",),
                    0.6,
                )
            )
        else:
            pts.append(
                _pt(
                    "gp",
                    "support",
                    f"No current indication in the record justifies long-term {name}.",
                    (m,),
                    ("EB-MEDSAFE-001",),
                    0.5,
                )
            )
        if opioids:
            pts.append(
                _pt(
                    "pharmacist",
                    "support",
                    f"Combined with {_names(opioids)} it risks respiratory depression.",
                    (m, *opioids),
                    ("EB-DDI-007",),
                    0.8,
                )
            )
        o.proposals.append(
            Proposal(
                f"opt-taper-{name}",
                f"Gradually taper and stop {name}",
                "medication",
                f"Plan a slow supervised taper of {m.text}, with support for sleep and anxiety.",
                (m.ref,),
                (pid,),
                tuple(pts),
                None,
                m.ref,
                3,
            )
        )


def _anticholinergics(c: _Case, o: Output) -> None:
    dementia = c.active("dementia")
    rhinitis = c.active("allergic-rhinitis")
    for m in c.with_spec("class:strong-anticholinergic"):
        if not (c.older or dementia):
            continue
        name = (
            m.drugs[0]
            if len(m.drugs) == 1
            else next(d for d in m.drugs if "strong-anticholinergic" in _classes_of(d))
        )
        sedating = "sedating-antihistamine" in _classes_of(name)
        cls = (
            "first-generation sedating antihistamine"
            if sedating
            else "strongly anticholinergic drug"
        )
        pid = o.problem(
            f"prob-pim-{name}",
            f"Potentially inappropriate medication: {name} ({cls})",
            (m, *dementia),
            f"{cls} in {_age_phrase(c)}",
            ("medication", "cognition"),
            m.text,
            0.85,
        )
        o.high_risk += 1
        pts = [
            _pt(
                "pharmacist",
                "support",
                f"{m.text} is a {cls}: anticholinergic effects (confusion, constipation, "
                f"urinary retention) and sedation in {_age_phrase(c)}; the Beers criteria "
                "advise avoiding it.",
                (m, *dementia),
                ("EB-MEDSAFE-003", "EB-MEDSAFE-004"),
                0.75,
            ),
            _pt(
                "nurse",
                "support",
                f"Drowsiness from {name} adds to the risk of falls.",
                (m,),
                ("EB-MEDSAFE-009", "EB-FALLS-004"),
                0.5,
            ),
            _pt(
                "gp",
                "attack",
                f"Symptoms {name} treats"
                + (f" ({rhinitis[0].text})" if rhinitis else "")
                + " may return; a non-sedating alternative must be in place first.",
                (m, *rhinitis),
                ("EB-MEDSAFE-003",),
                0.35,
            ),
        ]
        if dementia:
            pts.append(
                _pt(
                    "psychiatrist",
                    "support",
                    f"Anticholinergic load accelerates cognitive decline in {dementia[0].text}.",
                    (m, *dementia),
                    ("EB-COG-001", "EB-MEDSAFE-004"),
                    0.7,
                )
            )
            pts.append(
                _pt(
                    "geriatrician",
                    "support",
                    f"Removing {name} lowers anticholinergic burden and delirium risk.",
                    (m, *dementia),
                    ("EB-MEDSAFE-004",),
                    0.65,
                )
            )
        o.proposals.append(
            Proposal(
                f"opt-stop-{name}",
                f"Stop {name} and use a non-sedating alternative",
                "medication",
                f"Replace {m.text} with a non-anticholinergic option.",
                (m.ref,),
                (pid,),
                tuple(pts),
                None,
                m.ref,
                2,
            )
        )


def _classes_of(name: str) -> tuple[str, ...]:
    return drug(name).classes


def _nsaids(c: _Case, o: Output) -> None:
    ckd = (*c.active("ckd"),)
    hf = c.active("heart-failure")
    htn = c.active("hypertension")
    oa = c.active("osteoarthritis")
    egfr = c.egfr()
    sbp = c.latest_obs((LOINC_SBP,))
    for m in c.with_spec("class:nsaid"):
        name = m.drugs[0]
        reasons: list[str] = []
        pts: list[Point] = []
        if c.older:
            reasons.append("chronic use in an older adult")
            pts.append(
                _pt(
                    "pharmacist",
                    "support",
                    f"{m.text} taken regularly by {_age_phrase(c)}: risk of stomach "
                    "bleeding and kidney injury; the Beers criteria advise avoiding "
                    "chronic use.",
                    (m,),
                    ("EB-MEDSAFE-006",),
                    0.62,
                )
            )
        low_egfr = egfr is not None and egfr.value is not None and egfr.value < 60
        if ckd or low_egfr:
            reasons.append("kidney disease")
            facts: tuple[Cited, ...] = (m, *ckd, *((egfr,) if low_egfr and egfr else ()))
            what = ckd[0].text if ckd else f"eGFR {_fmt(egfr.value if egfr else None)}"
            pts.append(
                _pt(
                    "nephrologist",
                    "support",
                    f"{name} with {what}: NSAIDs reduce kidney blood flow and speed "
                    "the loss of kidney function.",
                    facts,
                    ("EB-MEDSAFE-007", "EB-CKD-005"),
                    0.8,
                )
            )
            pts.append(
                _pt(
                    "pharmacist",
                    "support",
                    f"{name} is nephrotoxic; with {what} it should be avoided.",
                    facts,
                    ("EB-CKD-005", "EB-MEDSAFE-007"),
                    0.7,
                )
            )
        if hf:
            reasons.append("heart failure")
            pts.append(
                _pt(
                    "cardiologist",
                    "support",
                    f"{name} causes fluid retention and can tip {hf[0].text} into decompensation.",
                    (m, *hf),
                    ("EB-CV-009", "EB-MEDSAFE-007"),
                    0.8,
                )
            )
        if htn and sbp is not None and sbp.value is not None and sbp.value >= 140:
            reasons.append("uncontrolled blood pressure")
            pts.append(
                _pt(
                    "gp",
                    "support",
                    f"NSAIDs raise blood pressure; the latest systolic reading is "
                    f"{_fmt(sbp.value)} mmHg with {htn[0].text}.",
                    (m, *htn, sbp),
                    ("EB-CV-001", "EB-MEDSAFE-006"),
                    0.55,
                )
            )
        ras = (*c.with_spec("class:acei"), *c.with_spec("class:arb"))
        diur = (*c.with_spec("class:thiazide"), *c.with_spec("class:loop-diuretic"))
        if ras and diur:
            reasons.append(f"{ras[0].drugs[0]} and {diur[0].drugs[0]}")
            o.problem(
                f"prob-ddi-{ras[0].drugs[0]}-{diur[0].drugs[0]}-{name}",
                f"Potential drug interaction: {ras[0].drugs[0]} + {diur[0].drugs[0]} + {name}",
                (ras[0], diur[0], m),
                "RAS blocker, diuretic and NSAID together risk acute kidney injury",
                ("medication", "renal"),
                f"{ras[0].text}; {diur[0].text}; {m.text}",
                0.85,
            )
            pts.append(
                _pt(
                    "pharmacist",
                    "support",
                    f"{m.text} with {ras[0].text} and {diur[0].text}: this triple "
                    "combination causes acute kidney injury, especially when unwell "
                    "or dehydrated.",
                    (m, ras[0], diur[0]),
                    ("EB-DDI-008",),
                    0.75,
                )
            )
            pts.append(
                _pt(
                    "nephrologist",
                    "support",
                    "Stopping the NSAID removes the avoidable part of the kidney risk.",
                    (m, ras[0], diur[0]),
                    ("EB-DDI-008", "EB-CKD-005"),
                    0.6,
                )
            )
        if not reasons:
            continue
        pid = o.problem(
            f"prob-pim-{name}",
            f"Potentially inappropriate medication: {name} (NSAID) with " + ", ".join(reasons),
            (m, *ckd, *hf),
            "NSAID with " + ", ".join(reasons),
            ("medication", "renal"),
            m.text,
        )
        o.high_risk += 1
        pain = oa[0].text if oa else "chronic pain"
        pts.append(
            _pt(
                "physiotherapist",
                "attack",
                f"Pain from {pain} may worsen without {name}; alternatives are less "
                "effective for some people and function could decline.",
                (m, *oa),
                ("EB-PAIN-001",),
                0.42,
            )
        )
        pts.append(
            _pt(
                "physiotherapist",
                "support",
                f"Therapeutic exercise and weight management are first-line for "
                f"{pain} and can replace the NSAID; a topical NSAID is an alternative.",
                (m, *oa),
                ("EB-PAIN-001",),
                0.5,
            )
        )
        add_or_merge(
            o,
            Proposal(
                f"opt-stop-{name}",
                f"Stop {name} and switch to safer pain relief",
                "medication",
                f"Stop {m.text}; manage pain with exercise, topical treatment and short courses of "
                "simple analgesia.",
                (m.ref,),
                (pid,),
                tuple(pts),
                None,
                m.ref,
                2,
            ),
        )


def _names_p(probs: Sequence[Problem]) -> str:
    return ", ".join(p.text for p in probs)


def _pick(m: MedFact, spec: str) -> str:
    kind, _, name = spec.partition(":")
    if kind == "drug":
        return name
    return next((d for d in m.drugs if name in _classes_of(d)), m.drugs[0])


def _missing_therapy(c: _Case, o: Output) -> None:
    diabetes = c.active("diabetes")
    ckd = c.active("ckd")
    dkd = c.active("diabetic-kidney")
    htn = c.active("hypertension")
    uacr = c.latest_obs(LOINC_UACR)
    egfr = c.egfr()
    potassium = c.latest_obs(LOINC_POTASSIUM)
    very_old = c.age is not None and c.age >= 85
    albuminuric = bool(dkd) or (uacr is not None and uacr.value is not None and uacr.value >= 30)
    if (
        diabetes
        and (ckd or dkd)
        and (htn or albuminuric)
        and not (c.has("class:acei") or c.has("class:arb"))
    ):
        kidney = (*dkd, *[p for p in ckd if p not in dkd])
        facts: tuple[Cited, ...] = (*kidney, *diabetes[:1], *htn[:1]) + ((uacr,) if uacr else ())
        pts = [
            _pt(
                "nephrologist",
                "support",
                f"{_names_p(kidney)} with {diabetes[0].text}"
                + (f" and {htn[0].text}" if htn else "")
                + (f"; urine albumin-creatinine ratio {_fmt(uacr.value)}" if uacr else "")
                + ": an ACE inhibitor or ARB slows kidney decline and is not prescribed.",
                facts,
                ("EB-CKD-001",),
                0.8,
            ),
            _pt(
                "gp",
                "support",
                "Kidney protection and blood pressure control in one step; no ACE inhibitor or "
                "ARB is on the medication list.",
                facts,
                ("EB-CKD-001", "EB-CV-001"),
                0.6,
            ),
            _pt(
                "pharmacist",
                "attack",
                "Starting an ACE inhibitor or ARB can raise potassium and creatinine"
                + (f"; latest potassium is {_fmt(potassium.value)}" if potassium else "")
                + ".",
                (*kidney, *((potassium,) if potassium else ())),
                ("EB-CKD-002",),
                0.6 if potassium and (potassium.value or 0) > 5.0 else 0.45,
            ),
            _pt(
                "nurse",
                "support",
                "Recheck potassium and creatinine two to four weeks after starting; that "
                "monitoring makes the start safe.",
                (*kidney,),
                ("EB-CKD-002",),
                0.5,
            ),
        ]
        if very_old:
            pts.append(
                _pt(
                    "geriatrician",
                    "attack",
                    "At very advanced age, dizziness and kidney injury from a new "
                    "antihypertensive may outweigh long-term kidney benefit.",
                    (),
                    ("EB-MM-002",),
                    0.45,
                )
            )
        o.proposals.append(
            Proposal(
                "opt-start-acei-arb",
                "Start an ACE inhibitor or ARB for diabetic kidney disease",
                "medication",
                "Kidney-protective RAS blockade, titrated with potassium and creatinine checks.",
                refs(facts),
                _prob_ids(kidney),
                tuple(pts),
                None,
                None,
                2,
            )
        )
    if (
        diabetes
        and (ckd or dkd)
        and not c.has("class:sglt2i")
        and (egfr is None or egfr.value is None or egfr.value >= 20)
    ):
        kidney = (*dkd, *[p for p in ckd if p not in dkd])
        facts = (*kidney, *diabetes[:1]) + ((egfr,) if egfr else ())
        uti = c.active("uti-recurrent")
        pts = [
            _pt(
                "nephrologist",
                "support",
                f"Type 2 diabetes with {_names_p(kidney)}"
                + (f" and eGFR {_fmt(egfr.value)}" if egfr else "")
                + ": an SGLT2 inhibitor lowers the risk of kidney failure and heart failure.",
                facts,
                ("EB-CKD-003",),
                0.65,
            ),
            _pt(
                "endocrinologist",
                "support",
                "Adds glucose lowering with little hypoglycaemia risk.",
                facts,
                ("EB-CKD-003", "EB-DM-002"),
                0.5,
            ),
            _pt(
                "pharmacist",
                "attack",
                "Genital infections and volume depletion, more so with a diuretic; sick-day "
                "rules must be taught."
                + (" Recurrent urinary infections are recorded." if uti else ""),
                (*kidney, *uti, *c.with_spec("class:thiazide")),
                ("EB-CKD-005",),
                0.5 if uti else 0.4,
            ),
        ]
        o.proposals.append(
            Proposal(
                "opt-start-sglt2i",
                "Consider an SGLT2 inhibitor for diabetes with kidney disease",
                "medication",
                "Kidney and heart protection in type 2 diabetes with CKD.",
                refs(facts),
                _prob_ids(kidney),
                tuple(pts),
                None,
                None,
                1,
            )
        )
    athero = (*c.active("stroke"), *c.active("chd"))
    if athero and not c.has("class:statin"):
        ev = ("EB-CV-003",) if c.active("stroke") else ("EB-CV-004",)
        facts = (*athero, *c.active("hyperlipidemia"))
        pts = [
            _pt(
                "cardiologist",
                "support",
                f"{_names_p(athero)} without a statin: secondary prevention lowers the risk of "
                "another stroke or heart attack.",
                facts,
                (*ev, "EB-DM-004"),
                0.75,
            ),
            _pt(
                "gp",
                "support",
                "No statin is on the medication list despite vascular disease.",
                facts,
                ev,
                0.55,
            ),
        ]
        if very_old:
            pts.append(
                _pt(
                    "geriatrician",
                    "attack",
                    "The time to benefit of a statin (years) may exceed life "
                    f"expectancy for {_age_phrase(c)}.",
                    (),
                    ("EB-MM-002",),
                    0.5,
                )
            )
        o.proposals.append(
            Proposal(
                "opt-start-statin",
                "Start a statin for secondary prevention",
                "medication",
                "Statin after vascular events.",
                refs(facts),
                _prob_ids(athero),
                tuple(pts),
                None,
                None,
                2,
            )
        )
    af = c.active("af")
    if af and not c.has("class:anticoagulant"):
        fallsish = (*c.ever("fracture"), *c.active("dementia"))
        pts = [
            _pt(
                "cardiologist",
                "support",
                f"{af[0].text} without an anticoagulant: high stroke risk"
                + (f" at {_age_phrase(c)}" if c.older else "")
                + ".",
                af,
                ("EB-CV-005",),
                0.78,
            ),
            _pt(
                "nurse",
                "attack",
                "Bleeding after a fall is a real concern on an anticoagulant.",
                (*af, *fallsish),
                ("EB-CV-007",),
                0.45 if fallsish else 0.3,
            ),
            _pt(
                "cardiologist",
                "support",
                "Falls alone are not a reason to withhold anticoagulation: the stroke benefit "
                "usually outweighs the bleeding risk.",
                af,
                ("EB-CV-007",),
                0.55,
            ),
        ]
        o.proposals.append(
            Proposal(
                "opt-start-anticoagulant",
                "Start oral anticoagulation for atrial fibrillation",
                "medication",
                "Stroke prevention in AF.",
                refs(af),
                _prob_ids(af),
                tuple(pts),
                None,
                None,
                2,
            )
        )
    osteo = c.active("osteoporosis")
    if osteo and not c.has("class:bisphosphonate"):
        pts = [
            _pt(
                "geriatrician",
                "support",
                f"{osteo[0].text} without bone-protecting treatment; a bisphosphonate reduces "
                "fractures.",
                osteo,
                ("EB-BONE-001",),
                0.7,
            ),
            _pt(
                "pharmacist",
                "support",
                "Check calcium and vitamin D intake alongside.",
                osteo,
                ("EB-BONE-001",),
                0.45,
            ),
        ]
        if egfr is not None and egfr.value is not None and egfr.value < 35:
            pts.append(
                _pt(
                    "pharmacist",
                    "attack",
                    f"Oral bisphosphonates are unsuitable at eGFR {_fmt(egfr.value)}.",
                    (*osteo, egfr),
                    ("EB-RENAL-004",),
                    0.6,
                )
            )
        o.proposals.append(
            Proposal(
                "opt-start-bone-protection",
                "Start bone-protecting treatment",
                "medication",
                "Fracture prevention in osteoporosis.",
                refs(osteo),
                _prob_ids(osteo),
                tuple(pts),
                None,
                None,
                1,
            )
        )
    # Bisphosphonate duration is the criterion deprescribe-bisphosphonate-duration (counted
    # from the first order of the ingredient, not the latest repeat).


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


def _blood_pressure(c: _Case, o: Output) -> None:
    """Raised blood pressure read from every reading in the last year (issue 13 item 3): how
    many readings, how many raised, every antihypertensive named; a severe reading (180
    systolic or 110 diastolic and above) is acted on, not deferred for confirmation."""
    htn = c.active("hypertension")
    bpf = c.bp
    if not htn or bpf is None:
        return
    if bpf.systolic < 140 and bpf.diastolic < 90:
        return
    bp = f"{_fmt(bpf.systolic)}/{_fmt(bpf.diastolic)} mmHg"
    readings = c.series_refs(bpf)
    facts: tuple[Cited | str, ...] = (*htn, *readings)
    drugs = tuple(dict.fromkeys(m for k in _BP_LOWERING for m in c.with_spec(k)))
    treatment = _names(drugs)
    count = (
        f"{bpf.raised} of {bpf.readings} readings in the last year raised"
        if bpf.readings > 1
        else "one reading in the last year"
    )
    pts = [
        _pt(
            "gp",
            "support",
            f"Latest blood pressure {bp} ({count}) with {htn[0].text} on "
            f"{treatment or 'no antihypertensive'}: above target; adjust treatment.",
            (*facts, *drugs),
            ("EB-CV-001",),
            0.7 if bpf.severe else 0.62,
        ),
    ]
    if bpf.severe:
        pts.append(
            _pt(
                "nurse",
                "support",
                f"A reading of {bp} is severe: treat now and recheck within days rather than "
                "waiting for home readings.",
                facts,
                ("EB-CV-001", "EB-CV-002"),
                0.65,
            )
        )
    elif bpf.readings <= 1 or bpf.raised <= 1:
        pts.append(
            _pt(
                "nurse",
                "support",
                f"Only {'one raised reading' if bpf.raised <= 1 else 'one reading'} ({bp}) in the "
                "last year: confirm with home or ambulatory measurement before changing treatment.",
                facts,
                ("EB-CV-002",),
                0.5,
            )
        )
    if c.with_spec("class:nsaid"):
        pts.append(
            _pt(
                "pharmacist",
                "support",
                f"{_names(c.with_spec('class:nsaid'))} raises blood pressure; stopping it "
                "is the first step.",
                (*c.with_spec("class:nsaid"), *readings[-1:]),
                ("EB-MEDSAFE-006",),
                0.5,
            )
        )
    if c.age is not None and c.age >= 80 and not bpf.severe:
        pts.append(
            _pt(
                "geriatrician",
                "attack",
                f"For {_age_phrase(c)} intensifying treatment risks orthostatic "
                "hypotension and falls; a less strict, individualised target is "
                "reasonable.",
                facts,
                ("EB-CV-001", "EB-MM-002"),
                0.55 if c.age >= 90 else 0.45,
            )
        )
    o.proposals.append(
        Proposal(
            "opt-review-bp",
            f"Review blood pressure treatment (latest {bp})",
            "immediate-safety" if bpf.severe else "medication",
            f"{count.capitalize()}; adjust antihypertensive treatment"
            + (" now." if bpf.severe else " after confirming raised readings."),
            refs(facts),
            _prob_ids(htn),
            tuple(pts),
            None,
            None,
            3 if bpf.severe else 1,
            "safety" if bpf.severe else "review",
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


def _falls(c: _Case, o: Output) -> str | None:
    if not c.older:
        return None
    fall_facts = c.social("fall")
    fractures = c.ever("fracture")
    osteo = c.active("osteoporosis")
    dementia = c.active("dementia")
    frids = tuple(m for m in c.meds if any(k in m.classes for k in _FRID))
    anticoag = c.with_spec("class:anticoagulant")
    factors = [
        bool(fall_facts),
        bool(fractures),
        bool(osteo),
        bool(dementia),
        bool(frids),
        c.age is not None and c.age >= 80,
        bool(c.active("stroke")),
    ]
    if sum(factors) < 1 or (sum(factors) < 2 and not fall_facts):
        return None
    cited = refs(fall_facts, fractures, osteo, dementia, frids, c.active("stroke"))
    parts = [
        t
        for t, on in (
            ("falls recorded", fall_facts),
            ("previous fractures", fractures),
            ("osteoporosis", osteo),
            ("dementia", dementia),
            ("fall-risk medicines: " + ", ".join(m.drugs[0] for m in frids), frids),
            (
                f"age {c.age}" if (c.age or 0) < 90 else "age 90 or over",
                c.age is not None and c.age >= 80,
            ),
            ("previous stroke", c.active("stroke")),
        )
        if on
    ]
    pid = o.problem(
        "prob-fall-risk",
        "Fall risk",
        cited,
        "; ".join(parts),
        ("falls", "function"),
        "; ".join(parts),
        0.8,
    )
    alone = c.social("alone", "no caregiver", "no carer")
    pts = [
        _pt(
            "physiotherapist",
            "support",
            f"Risk factors for falls ({'; '.join(parts)}): a multifactorial assessment with "
            "strength and balance training prevents falls in older people.",
            cited,
            ("EB-FALLS-001", "EB-FALLS-002"),
            0.7,
        ),
        _pt(
            "nurse",
            "support",
            "A falls assessment checks gait, vision, footwear, continence and night-time "
            "risks at home.",
            cited,
            ("EB-FALLS-002",),
            0.55,
        ),
        _pt(
            "physiotherapist",
            "support",
            "A home exercise programme can continue between supervised sessions.",
            cited,
            ("EB-FALLS-001",),
            0.4,
        ),
    ]
    if osteo or fractures:
        pts.append(
            _pt(
                "geriatrician",
                "support",
                f"With {'osteoporosis' if osteo else 'previous fractures'} a fall is "
                "likely to cause a fracture.",
                (*osteo, *fractures),
                ("EB-FALLS-002",),
                0.6,
            )
        )
    if anticoag:
        pts.append(
            _pt(
                "cardiologist",
                "support",
                f"On {_names(anticoag)} a fall can cause serious bleeding; preventing "
                "falls is safer than stopping anticoagulation.",
                anticoag,
                ("EB-CV-007", "EB-FALLS-002"),
                0.5,
            )
        )
    if dementia:
        mmse = c.latest_obs(LOINC_MMSE)
        pts.append(
            _pt(
                "occupational-therapist",
                "attack",
                f"{dementia[0].text}"
                + (f" (MMSE {_fmt(mmse.value)})" if mmse else "")
                + " limits learning and following an exercise programme; sessions "
                "must be supervised.",
                (*dementia, *((mmse,) if mmse else ())),
                ("EB-FALLS-001",),
                0.4,
            )
        )
    if alone:
        pts.append(
            _pt(
                "social-worker",
                "attack",
                "No carer is recorded at home to help with exercises or to accompany "
                "sessions: feasibility is doubtful without support.",
                alone,
                ("EB-SOC-004",),
                0.4,
            )
        )
    if c.age is not None and c.age >= 90:
        pts.append(
            _pt(
                "geriatrician",
                "attack",
                f"For {_age_phrase(c)} exercise tolerance is limited; the programme "
                "must be short and adapted.",
                (),
                ("EB-MM-002",),
                0.3,
            )
        )
    o.proposals.append(
        Proposal(
            "opt-falls-prevention",
            "Falls risk assessment and strength and balance programme",
            "rehabilitation",
            "Multifactorial falls assessment with supervised strength and balance exercise.",
            cited,
            (pid,),
            tuple(pts),
            None,
            None,
            2,
        )
    )
    if dementia or alone or fall_facts or fractures:
        pts2 = [
            _pt(
                "occupational-therapist",
                "support",
                "A home hazard assessment (lighting, rugs, bathroom rails, stairs) reduces "
                "falls for people at high risk.",
                cited,
                ("EB-FALLS-003",),
                0.62,
            ),
            _pt(
                "care-coordinator",
                "attack",
                "Adds a home visit to the schedule; waiting times may delay it.",
                cited[:1],
                ("EB-MM-003",),
                0.25,
            ),
        ]
        if dementia:
            pts2.append(
                _pt(
                    "geriatrician",
                    "support",
                    f"With {dementia[0].text} the home must compensate for what memory "
                    "no longer can.",
                    dementia,
                    ("EB-FALLS-003", "EB-COG-002"),
                    0.5,
                )
            )
        o.proposals.append(
            Proposal(
                "opt-home-safety",
                "Home safety assessment by occupational therapy",
                "rehabilitation",
                "Occupational therapy home hazard assessment and adaptations.",
                cited,
                (pid,),
                tuple(pts2),
                None,
                None,
                1,
            )
        )
    return pid


def _cognition(c: _Case, o: Output) -> None:
    dementia = c.active("dementia")
    if not dementia:
        return
    mmse = c.latest_obs(LOINC_MMSE)
    mm = f" (latest MMSE {_fmt(mmse.value)})" if mmse else ""
    facts: tuple[Cited, ...] = (
        *dementia,
        *((mmse,) if mmse else ()),
        *c.with_spec("class:cholinesterase-inhibitor"),
    )
    pids = _prob_ids(dementia)
    pts = [
        _pt(
            "geriatrician",
            "support",
            f"{dementia[0].text}{mm}: a structured review of cognition, function, behaviour "
            "and medicines keeps the plan matched to the stage of disease.",
            facts,
            ("EB-COG-002", "EB-COG-001"),
            0.62,
        ),
        _pt(
            "psychiatrist",
            "support",
            "Screen for depression and distress, which are common and treatable in dementia.",
            dementia,
            ("EB-COG-002", "EB-MOOD-002"),
            0.5,
        ),
        _pt(
            "occupational-therapist",
            "support",
            "Assess daily activities and the support needed to stay safely at home.",
            dementia,
            ("EB-COG-002",),
            0.5,
        ),
    ]
    o.proposals.append(
        Proposal(
            "opt-dementia-review",
            "Structured dementia review with a named care coordinator",
            "follow-up",
            "Review cognition, function, behaviour, medicines and care needs.",
            refs(facts),
            pids,
            tuple(pts),
            None,
            None,
            1,
        )
    )
    carer = c.social("caregiver", "carer")
    alone = c.social("alone")
    pts2 = [
        _pt(
            "social-worker",
            "support",
            f"Living with {dementia[0].text} depends on a carer; a carer's needs assessment, "
            "education and respite keep care at home sustainable.",
            (*dementia, *carer, *alone),
            ("EB-COG-003", "EB-SOC-004"),
            0.62,
        ),
        _pt(
            "care-coordinator",
            "support",
            "A named contact coordinates the appointments this plan creates.",
            dementia,
            ("EB-COG-002", "EB-MM-003"),
            0.5,
        ),
    ]
    if alone:
        pts2.append(
            _pt(
                "social-worker",
                "support",
                "Lives alone: without a carer the risks at home rise quickly.",
                alone,
                ("EB-SOC-003",),
                0.6,
            )
        )
    if not carer and not alone:
        pts2.append(
            _pt(
                "gp",
                "attack",
                "The record does not say who the carer is; the referral must first "
                "establish whether one exists.",
                dementia,
                ("EB-COG-003",),
                0.3,
            )
        )
    o.proposals.append(
        Proposal(
            "opt-carer-support",
            "Carer needs assessment and support",
            "caregiver-support",
            "Assess the carer's needs; education, respite and community support.",
            refs(dementia, carer, alone),
            pids,
            tuple(pts2),
            None,
            None,
            1,
        )
    )


def _mood(c: _Case, o: Output, base: Sequence[ProblemCase]) -> None:
    depression = c.active("depression")
    stress: tuple[Problem | SocialFact, ...] = (
        *(
            pr
            for pr, gs in c.problems
            if pr.active and "sdoh-need" in gs and "stress" in pr.text.lower()
        ),
        *(f for f in c.p.social if f.kind == "stress"),
    )
    if depression:
        pts = (
            _pt(
                "psychiatrist",
                "support",
                f"{depression[0].text}: measure symptoms (PHQ-9) and review treatment "
                "response within weeks, not months.",
                depression,
                ("EB-MOOD-001",),
                0.65,
            ),
            _pt(
                "gp",
                "support",
                "Follow-up also screens for suicide risk and adherence.",
                depression,
                ("EB-MOOD-001", "EB-MOOD-002"),
                0.5,
            ),
        )
        o.proposals.append(
            Proposal(
                "opt-depression-followup",
                "Depression follow-up with a PHQ-9 score",
                "mental-health",
                "Structured follow-up of depression.",
                refs(depression),
                _prob_ids(depression),
                pts,
                (LOINC_URL, "44261-6", "PHQ-9 total score"),
                None,
                1,
            )
        )
    if stress:
        pids = tuple(b.id for b in base if any(s.ref in b.refs for s in stress))
        pts = (
            _pt(
                "psychiatrist",
                "support",
                f"{stress[0].text} is recorded as current: screen for depression and anxiety "
                "and offer psychological support.",
                stress,
                ("EB-MOOD-002",),
                0.55,
            ),
            _pt(
                "social-worker",
                "support",
                "Stress usually has social causes that can be addressed directly.",
                stress,
                ("EB-SOC-001",),
                0.5,
            ),
        )
        o.proposals.append(
            Proposal(
                "opt-psychosocial-support",
                "Screen for depression and offer psychosocial support",
                "mental-health",
                "Mood screening and psychosocial support.",
                refs(stress),
                pids,
                pts,
                None,
                None,
                1,
            )
        )


def _social(c: _Case, o: Output, base: Sequence[ProblemCase]) -> None:
    needs: tuple[Problem | SocialFact, ...] = tuple(
        pr for pr, gs in c.problems if pr.active and "sdoh-need" in gs and is_sdoh_need(pr)
    )
    needs += tuple(f for f in c.p.social if f.kind in NEED_KINDS)
    facts: tuple[str, ...] = ()
    abuse = tuple(
        x
        for x in needs
        if "abuse" in x.text.lower()
        or getattr(x, "kind", "") in ("intimate_partner_abuse", "violence_in_environment")
    )
    if abuse:
        pids = tuple(b.id for b in base if any(a.ref in b.refs for a in abuse))
        pts = (
            _pt(
                "social-worker",
                "support",
                f"{abuse[0].text} is recorded as current: a confidential safety assessment "
                "and referral to specialist support are needed.",
                abuse,
                ("EB-SOC-002",),
                0.8,
            ),
            _pt(
                "gp",
                "support",
                "Ask privately and document a safety plan.",
                abuse,
                ("EB-SOC-002",),
                0.55,
            ),
            _pt(
                "care-coordinator",
                "attack",
                "Contact must be arranged safely; a letter or call could alert the abuser.",
                abuse,
                ("EB-SOC-002",),
                0.35,
            ),
        )
        o.proposals.append(
            Proposal(
                "opt-safety-assessment",
                "Confidential safety assessment and referral",
                "immediate-safety",
                "Safety planning for intimate partner abuse.",
                refs(abuse),
                pids,
                pts,
                None,
                None,
                3,
            )
        )
    if needs or facts:
        items = [x.text for x in needs]
        pids = tuple(b.id for b in base if any(n.ref in b.refs for n in needs))
        need_pts = [
            _pt(
                "social-worker",
                "support",
                f"Recorded social needs ({'; '.join(items[:4])}) shape what care is "
                "feasible; link to community resources.",
                (*needs, *facts),
                ("EB-SOC-001", "EB-SOC-003"),
                0.6,
            ),
            _pt(
                "care-coordinator",
                "support",
                "Social circumstances decide whether appointments and medicines actually happen.",
                (*needs, *facts),
                ("EB-SOC-001",),
                0.45,
            ),
        ]
        o.proposals.append(
            Proposal(
                "opt-social-work",
                "Social work assessment of social needs",
                "referral",
                "Assess and address recorded social needs.",
                refs(needs, facts),
                pids,
                tuple(need_pts),
                None,
                None,
                1,
            )
        )


def _copd(c: _Case, o: Output) -> None:
    copd = c.active("copd")
    if not copd:
        return
    inhalers = tuple(dict.fromkeys(c.with_spec("class:inhaler")))
    dementia = c.active("dementia")
    # Inhaler technique only where an inhaler is prescribed (no claims about absent drugs);
    # a COPD diagnosis with no inhaler is an omission (criterion start-inhaler-copd).
    pts = [
        _pt(
            "physiotherapist",
            "support",
            f"{copd[0].text}: pulmonary rehabilitation improves breathlessness and exercise "
            "capacity.",
            copd,
            ("EB-RESP-001",),
            0.6,
        ),
        _pt(
            "care-coordinator",
            "attack",
            "A rehabilitation course means many visits; transport may be a barrier.",
            copd,
            ("EB-MM-003",),
            0.3,
        ),
    ]
    if inhalers:
        pts.append(
            _pt(
                "nurse",
                "support",
                f"Check inhaler technique for {_names(inhalers)}; poor technique is common and "
                "fixable.",
                (*copd, *inhalers),
                ("EB-RESP-001",),
                0.55,
            )
        )
    if dementia and inhalers:
        pts.append(
            _pt(
                "occupational-therapist",
                "attack",
                f"{dementia[0].text} makes inhaler technique hard to learn; a simpler "
                "device may be needed.",
                (*copd, *dementia),
                ("EB-RESP-001",),
                0.35,
            )
        )
    o.proposals.append(
        Proposal(
            "opt-copd-rehab",
            (
                "Inhaler technique review and pulmonary rehabilitation"
                if inhalers
                else "Pulmonary rehabilitation"
            ),
            "rehabilitation",
            "COPD self-management and rehabilitation.",
            refs(copd, inhalers),
            _prob_ids(copd),
            tuple(pts),
            None,
            None,
            1,
        )
    )


def _nephrology(c: _Case, o: Output) -> None:
    egfr = c.egfr()
    if egfr is None or egfr.value is None or egfr.value >= 30:
        return
    ckd = c.active("ckd")
    pid = o.problem(
        "prob-low-egfr",
        f"Severely reduced kidney function (eGFR {_fmt(egfr.value)})",
        (egfr, *ckd),
        "eGFR below 30",
        ("renal",),
        _obs_text(egfr),
        0.8,
    )
    pts = [
        _pt(
            "nephrologist",
            "support",
            f"eGFR {_fmt(egfr.value)} {egfr.unit}: below 30 needs specialist care for "
            "complications and planning.",
            (egfr, *ckd),
            ("EB-RENAL-006",),
            0.75,
        ),
        _pt(
            "gp",
            "support",
            "Repeat the test to confirm, then refer.",
            (egfr,),
            ("EB-RENAL-006", "EB-CKD-004"),
            0.5,
        ),
    ]
    cancer = c.active("cancer")
    if cancer or (c.age is not None and c.age >= 90):
        pts.append(
            _pt(
                "geriatrician",
                "attack",
                "Competing priorities"
                + (f" ({_names_p(cancer[:1])})" if cancer else "")
                + " may limit the benefit of kidney replacement planning; discuss goals "
                "first.",
                cancer,
                ("EB-MM-002",),
                0.4,
            )
        )
    o.proposals.append(
        Proposal(
            "opt-refer-nephrology",
            "Refer to nephrology",
            "referral",
            "Specialist kidney care for eGFR below 30.",
            refs((egfr,), ckd),
            (pid, *_prob_ids(ckd)),
            tuple(pts),
            None,
            None,
            2,
        )
    )


# ------------------------------------------------------------------------- complexity


def _complexity(
    c: _Case, base: Sequence[ProblemCase], out: Output
) -> tuple[Complexity, int, tuple[tuple[str, int], ...], tuple[str, ...]]:
    """Score = multimorbidity (0-3) + polypharmacy (0-2) + age (0-2) + cognition (0/2)
    + falls (0/1) + psychosocial (0-2) + safety findings (0-2).
    Levels: 0-2 low, 3-5 moderate, 6-8 high, 9+ very high."""
    chronic = [p for p in base if p.initial == "accept"]
    n = len(chronic)
    mm = 0 if n <= 2 else 1 if n <= 5 else 2 if n <= 8 else 3
    nm = len(c.meds)
    pp = 2 if nm >= 10 else 1 if nm >= 5 else 0
    ag = 0 if c.age is None or c.age < 65 else 1 if c.age < 85 else 2
    mmse = c.latest_obs(LOINC_MMSE)
    cog = 2 if c.active("dementia") or (mmse and (mmse.value or 30) < 24) else 0
    fall = 1 if c.social("fall") or c.ever("fracture") else 0
    needs = sum(1 for p in base if p.kind == "sdoh-need") + sum(
        1 for f in c.p.social if f.kind in NEED_KINDS
    )
    ps = 0 if needs == 0 else 1 if needs < 3 else 2
    sf = 0 if out.high_risk == 0 else 1 if out.high_risk < 3 else 2
    breakdown = (
        ("multimorbidity", mm),
        ("polypharmacy", pp),
        ("age", ag),
        ("cognition", cog),
        ("falls", fall),
        ("psychosocial", ps),
        ("safety findings", sf),
    )
    score = sum(v for _, v in breakdown)
    level: Complexity = (
        "low" if score <= 2 else "moderate" if score <= 5 else "high" if score <= 8 else "very high"
    )
    dims = []
    if n:
        dims.append(f"multimorbidity ({n} active conditions)")
    if pp:
        dims.append(f"polypharmacy ({nm} active medicines)")
    if sf:
        dims.append(f"medication safety ({out.high_risk} high-risk findings)")
    egfr = c.egfr()
    if (egfr is not None and (egfr.value or 100) < 60) or c.active("ckd"):
        dims.append("kidney function")
    if c.active("diabetes"):
        dims.append("glycaemic control")
    if c.has("class:anticoagulant"):
        dims.append("bleeding versus thrombosis")
    if cog:
        dims.append("cognition")
    if any(p.id == "prob-fall-risk" for p in out.problems):
        dims.append("falls and fractures")
    if ps:
        dims.append("psychosocial needs")
    if c.active("depression"):
        dims.append("mood")
    return level, score, breakdown, tuple(dims)


# ------------------------------------------------------------------------------ entry


def _legacy_priority(p: Proposal) -> Priority:
    """Priority of an activity proposed by a rule function (criteria state theirs)."""
    if p.category == "immediate-safety" or (p.category == "medication" and p.urgency >= 3):
        return "safety"
    if p.id.startswith("opt-start-"):
        return "omission"
    if p.category == "monitoring":
        return "monitoring"
    return "review"


@lru_cache(maxsize=64)
def analyse(profile: PatientProfile) -> Analysis:
    """The whole deterministic case analysis for one profile (cached per profile value)."""
    c = _Case(profile)
    base = _record_problems(c)
    o = Output()
    _polypharmacy(c, o)
    _benzodiazepines(c, o)
    _anticholinergics(c, o)
    _nsaids(c, o)
    _missing_therapy(c, o)
    _blood_pressure(c, o)
    _falls(c, o)
    _cognition(c, o)
    _mood(c, o, base)
    _social(c, o, base)
    _copd(c, o)
    _nephrology(c, o)
    # Criteria after the rule functions: where both propose an activity, the rule's wording
    # (often more specific) leads and the points are united in one option.
    fired = apply_criteria(CRITERIA, c, o)
    # Rule functions and criteria may propose the same activity: one option, points united.
    merged = Output(o.problems, [], o.high_risk)
    for prop in o.proposals:
        add_or_merge(merged, prop)
    o = merged
    level, score, breakdown, dims = _complexity(c, base, o)
    problems = (*base, *sorted(o.problems, key=lambda p: p.id))
    known = {p.id for p in problems}
    proposals = tuple(
        sorted(
            (
                replace(
                    p,
                    problem_ids=tuple(x for x in p.problem_ids if x in known),
                    priority=p.priority if p.criteria else _legacy_priority(p),
                )
                for p in o.proposals
            ),
            key=lambda p: (CATEGORY_ORDER.index(p.category), -p.urgency, p.id),
        )
    )
    weights: dict[str, float] = {a.role: 0.0 for a in POOL}
    for prop in proposals:
        for pt in prop.points:
            if pt.role in weights:
                boost = 1.5 if prop.category == "immediate-safety" else 1.0
                weights[pt.role] += pt.tau * boost
    for pc in problems:
        if pc.initial == "accept":
            for a in POOL:
                if a.role != "gp" and set(pc.domains) & set(a.expertise):
                    weights[a.role] += 0.2
    role_weights = tuple(
        sorted(
            ((r, round(w, 4)) for r, w in weights.items()),
            key=lambda rw: (-rw[1], ROLE_BY_NAME[rw[0]].order),
        )
    )
    terms: list[str] = []
    if c.older:
        terms += ["older adults", "elderly"]
    for m in c.meds:
        terms += list(m.drugs) + [CLASS_LABELS[k] for k in m.classes]
    for pc in problems:
        if pc.initial == "accept":
            terms.append(pc.display)
    for prop in proposals:
        terms.append(prop.title)
    for s in profile.social:
        terms.append(s.kind.replace("_", " "))
    facts_text = [(m.ref, m.text) for m in c.meds] + [(p.ref, p.text) for p in profile.problems]
    facts_text += [(ob.ref, _obs_text(ob)) for ob in profile.observations]
    facts_text += [(s.ref, s.text) for s in profile.social]
    return Analysis(
        c.age,
        level,
        score,
        breakdown,
        dims,
        problems,
        proposals,
        role_weights,
        tuple(dict.fromkeys(terms)),
        tuple(facts_text),
        fired,
    )
