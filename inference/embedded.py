"""Embedded expert backend: every ``Experts`` step answered by deterministic clinical rules.

The default backend when no Triton is configured. All clinical content comes from
``inference.knowledge`` (tables + rule functions) applied to the patient's own facts; this
module only maps that analysis onto the protocol's steps and records a zero-token ``ModelCall``
per step. Same profile in, identical answers out. No I/O, no randomness, no patient data in
errors.

Documented rules:

* Panel size by complexity (defaults; configurable, see ``inference.panel_sizes``): low 2,
  moderate 3, high 4 (5 when a fifth role has relevance weight >= 1.0), very high 6 (7
  likewise). The GP is always on the panel; other roles are ranked by the relevance weight the
  analysis gives them (their argument strengths plus their expertise over accepted problems),
  ties by pool order.
* Clash adjudication, first criterion that separates the two arguments wins: (1) patient-specific
  safety evidence (a safety theme and at least one cited patient fact), (2) best evidence grade
  cited (A > B > C > expert consensus), (3) specificity (number of cited patient facts),
  (4) role relevance to the option's category, (5) higher tau; a full tie goes to the attack
  (first, do no harm).
* Arbitration weighs vote quality, not counts: weight = confidence x quality, with quality 1.0
  when the quote is a fact found in the record (1.2 if that fact is a confirmed, coded Condition),
  0.5 for an unverifiable quote, 0.3 for none; NEUTRAL weighs 0. Accept when KEEP weight exceeds
  REFUSE weight by more than 0.05, reject when the reverse, otherwise the attending's ``y0``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from inference.evidence import tokenize
from inference.knowledge import CATEGORY_RELEVANCE, ROLE_BY_NAME, Analysis, analyse
from inference.knowledge.rules import Point
from inference.panel_sizes import DEFAULT_PANEL_SIZES, PanelSizes
from inference.panel_sizes import panel_sizes as validated_sizes
from inference.protocol import (
    Arbitration,
    ArgumentDraft,
    Assessment,
    CallContext,
    CandidateOption,
    CandidateProblem,
    ClashVerdict,
    EvidenceDoc,
    Judgement,
    ModelCall,
    PanelMember,
    ProblemVote,
    Relation,
    Stance,
    StepKind,
)
from service.core.profile import PatientProfile
from service.errors import BackendTimeout, CanoeError, StepFailed

__all__ = ["KB_VERSION", "PANEL_SIZES", "EmbeddedExperts", "themes"]

KB_VERSION = "2026.11-2"
# The default sizes, by complexity: (base, extended).
PANEL_SIZES: dict[str, tuple[int, int]] = {c: (b, e) for c, b, e in DEFAULT_PANEL_SIZES}
_GRADE_RANK = {"A": 3, "B": 2, "C": 1}
T = TypeVar("T")

# Themes read from argument text; they drive argument-to-argument relations and the safety
# criterion of clash adjudication. Keyword tables, not free inference.
_THEMES: dict[str, tuple[str, ...]] = {
    "sedation": ("sedat", "drowsi"),
    "falls": ("fall",),
    "anticholinergic": ("anticholinergic",),
    "cognition": ("cognit", "confusion", "delirium", "memory"),
    "bleeding": ("bleed",),
    "withdrawal": ("withdrawal", "rebound"),
    "taper": ("taper",),
    "burden": ("burden", "appointment", "home visit", "many visits", "waiting"),
    "limit-burden": ("combine the test", "limit the burden"),
    "no-carer": ("no carer", "lives alone"),
    "home-programme": ("home exercise programme",),
    "hyperkalaemia": ("potassium",),
    "recheck": ("recheck potassium",),
    "pain": ("pain from",),
    "alternative": ("first-line for", "topical nsaid"),
    "thrombosis": ("thrombosis", "coronary and stroke events"),
    "single-therapy": ("alone usually protects",),
    "rate": ("heart rate rise",),
    "level-check": ("digoxin level",),
    "fall-bleed": ("bleeding after a fall",),
    "oac-falls": ("falls alone are not a reason",),
    "kidney": ("kidney", "egfr", "nephrotoxic"),
    "toxicity": (
        "toxicity",
        "accumulate",
        "hypoglyc",
        "hyperkal",
        "respiratory depression",
        "acute kidney injury",
        "myopathy",
        "muscle damage",
        "bradycardia",
        "seizure",
    ),
}
_SAFETY = frozenset(
    {
        "sedation",
        "falls",
        "anticholinergic",
        "cognition",
        "bleeding",
        "withdrawal",
        "hyperkalaemia",
        "toxicity",
        "kidney",
        "fall-bleed",
    }
)
# (theme of source, theme of target, relation) for arguments on the same option.
_CORROBORATE = (
    ("sedation", "falls"),
    ("anticholinergic", "cognition"),
    ("bleeding", "falls"),
    ("kidney", "toxicity"),
)
_REBUT = (
    ("taper", "withdrawal"),
    ("limit-burden", "burden"),
    ("recheck", "hyperkalaemia"),
    ("alternative", "pain"),
    ("single-therapy", "thrombosis"),
    ("level-check", "rate"),
    ("oac-falls", "fall-bleed"),
    ("no-carer", "home-programme"),
)


def themes(text: str) -> frozenset[str]:
    low = text.lower()
    return frozenset(t for t, words in _THEMES.items() if any(w in low for w in words))


class EmbeddedExperts:
    """Deterministic clinical rules behind the ``Experts`` protocol."""

    def __init__(
        self,
        kb_version: str = KB_VERSION,
        *,
        panel_sizes: PanelSizes | dict[str, tuple[int, int]] = DEFAULT_PANEL_SIZES,
    ) -> None:
        """``panel_sizes``: complexity -> (base, extended); ``ValueError`` when a size is below 1
        or shrinks as complexity grows."""
        self.name = f"embedded-experts/{kb_version}"
        sizes = (
            panel_sizes if isinstance(panel_sizes, dict) else {c: (b, e) for c, b, e in panel_sizes}
        )
        self.panel_sizes: dict[str, tuple[int, int]] = {
            c: (b, e) for c, b, e in validated_sizes(sizes)
        }

    async def is_ready(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None

    # ------------------------------------------------------------------ accounting

    async def _call(self, step: StepKind, ctx: CallContext, fn: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            result = fn()
        except CanoeError as exc:
            self._record(ctx, step, start, False, type(exc).__name__)
            raise
        except Exception as exc:  # a rule bug must surface as the protocol's error
            self._record(ctx, step, start, False, type(exc).__name__)
            raise StepFailed(f"embedded {step} step failed: {type(exc).__name__}") from exc
        elapsed = time.perf_counter() - start
        if elapsed > ctx.deadline_s:
            self._record(ctx, step, start, False, "deadline")
            raise BackendTimeout(f"embedded {step} step took {elapsed:.3f}s")
        self._record(ctx, step, start, True, "")
        return result

    def _record(self, ctx: CallContext, step: StepKind, start: float, ok: bool, err: str) -> None:
        if ctx.recorder is not None:
            ms = (time.perf_counter() - start) * 1000.0
            ctx.recorder.record(ModelCall(step, self.name, 0, 0, ms, ok, err))

    # ----------------------------------------------------------------------- steps

    async def assess(
        self, profile: PatientProfile, evidence: Sequence[EvidenceDoc], ctx: CallContext
    ) -> Assessment:
        return await self._call("assess", ctx, lambda: _assess(analyse(profile)))

    async def assemble_panel(
        self, profile: PatientProfile, assessment: Assessment, ctx: CallContext
    ) -> tuple[PanelMember, ...]:
        sizes = self.panel_sizes[assessment.complexity]
        return await self._call("panel", ctx, lambda: _panel(analyse(profile), sizes))

    async def vote(
        self,
        profile: PatientProfile,
        member: PanelMember,
        problems: Sequence[CandidateProblem],
        ctx: CallContext,
    ) -> tuple[ProblemVote, ...]:
        return await self._call("vote", ctx, lambda: _votes(analyse(profile), member, problems))

    async def argue(
        self,
        profile: PatientProfile,
        member: PanelMember,
        options: Sequence[CandidateOption],
        evidence: Sequence[EvidenceDoc],
        ctx: CallContext,
    ) -> tuple[ArgumentDraft, ...]:
        return await self._call(
            "argue", ctx, lambda: _argue(analyse(profile), member, options, evidence, profile.ref)
        )

    async def relate(
        self,
        profile: PatientProfile,
        option: CandidateOption,
        arguments: Sequence[ArgumentDraft],
        ctx: CallContext,
    ) -> tuple[Relation, ...]:
        return await self._call("relate", ctx, lambda: _relate(option, arguments))

    async def adjudicate(
        self,
        profile: PatientProfile,
        option: CandidateOption,
        support: ArgumentDraft,
        attack: ArgumentDraft,
        evidence: Sequence[EvidenceDoc],
        ctx: CallContext,
    ) -> ClashVerdict:
        return await self._call(
            "adjudicate", ctx, lambda: _adjudicate(profile, option, support, attack, evidence)
        )

    async def arbitrate(
        self,
        profile: PatientProfile,
        problem: CandidateProblem,
        votes: Sequence[ProblemVote],
        ctx: CallContext,
    ) -> Arbitration:
        return await self._call("arbitrate", ctx, lambda: _arbitrate(profile, problem, votes))

    async def synthesize(
        self,
        profile: PatientProfile,
        included: Sequence[tuple[CandidateOption, float]],
        excluded: Sequence[tuple[CandidateOption, float]],
        ctx: CallContext,
    ) -> str:
        return await self._call(
            "synthesize", ctx, lambda: _synthesize(analyse(profile), included, excluded)
        )


# ---------------------------------------------------------------------- step logic


def _assess(a: Analysis) -> Assessment:
    problems = tuple(
        CandidateProblem(p.id, p.display, p.refs, p.initial, p.rationale) for p in a.problems
    )
    options = tuple(
        CandidateOption(
            p.id,
            p.title,
            p.category,
            p.description,
            p.refs,
            p.problem_ids,
            p.code,
            p.medication_ref,
            p.priority,
        )
        for p in a.proposals
    )
    return Assessment(a.complexity, a.dimensions, problems, options)


def _panel(a: Analysis, sizes: tuple[int, int]) -> tuple[PanelMember, ...]:
    # A size larger than the role pool yields the whole pool (slicing stops at its end).
    lo, hi = sizes
    ranked = [r for r, _ in a.role_weights if r != "gp"]
    weights = dict(a.role_weights)
    size = lo
    if hi > lo and len(ranked) >= hi - 1 and weights[ranked[hi - 2]] >= 1.0:
        size = hi
    roles = ["gp", *ranked[: size - 1]]
    return tuple(_member(role, a) for role in roles)


def _member(role: str, a: Analysis) -> PanelMember:
    prof = ROLE_BY_NAME[role]
    mine = [(pr, pt) for pr in a.proposals for pt in pr.points if pt.role == role]
    topics = list(dict.fromkeys(pr.title for pr, _ in mine))[:4]
    probs = [
        p.display
        for p in a.problems
        if p.initial == "accept" and set(p.domains) & set(prof.expertise)
    ][:4]
    parts = [f"As {prof.title} ({prof.style}), focus on"]
    if topics:
        parts.append("; ".join(topics))
    if probs:
        parts.append(("in the light of " if topics else "") + ", ".join(probs))
    if not topics and not probs:
        parts.append("the overall balance of benefit and burden")
    parts.append(f"Priorities: {', '.join(prof.priorities)}.")
    focus = " ".join(parts[:2]) + (f" {parts[2]}" if len(parts) > 3 else "") + ". " + parts[-1]
    return PanelMember(role, focus.replace("..", "."), prof.expertise)


def _votes(
    a: Analysis, member: PanelMember, problems: Sequence[CandidateProblem]
) -> tuple[ProblemVote, ...]:
    prof = ROLE_BY_NAME.get(member.role)
    expertise = set(prof.expertise if prof else member.expertise)
    out = []
    for cp in problems:
        pc = a.problem(cp.id)
        if pc is None:
            out.append(
                ProblemVote(
                    cp.id,
                    member.role,
                    "NEUTRAL",
                    0.5,
                    cp.display,
                    "not a problem this panel's knowledge covers",
                )
            )
            continue
        keep = dict(pc.keepers).get(member.role)
        if keep is not None:
            out.append(ProblemVote(pc.id, member.role, "KEEP", 0.6, pc.quote, keep))
        elif not expertise & set(pc.domains):
            out.append(
                ProblemVote(
                    pc.id, member.role, "NEUTRAL", 0.5, pc.quote, f"outside {member.role} expertise"
                )
            )
        elif pc.initial == "accept":
            out.append(
                ProblemVote(pc.id, member.role, "KEEP", pc.confidence, pc.quote, pc.rationale)
            )
        else:
            out.append(
                ProblemVote(pc.id, member.role, "REFUSE", pc.confidence, pc.quote, pc.rationale)
            )
    return tuple(out)


def _cite(pt: Point, passed: Sequence[EvidenceDoc]) -> tuple[str, ...]:
    """The point's preferred documents among those passed; failing that, the passed document
    sharing most words with the argument (at least three), first in retrieval order; else
    none. Never an id that was not passed."""
    ids = [d.id for d in passed]
    chosen = [e for e in pt.evidence if e in ids]
    if chosen:
        return tuple(chosen)
    words = set(tokenize(pt.text))
    best: tuple[int, int] = (2, -1)
    for i, d in enumerate(passed):
        n = len(words & set(tokenize(d.statement + " " + " ".join(d.tags))))
        if n > best[0]:
            best = (n, i)
    return (passed[best[1]].id,) if best[1] >= 0 else ()


def _argue(
    a: Analysis,
    member: PanelMember,
    options: Sequence[CandidateOption],
    evidence: Sequence[EvidenceDoc],
    patient_ref: str,
) -> tuple[ArgumentDraft, ...]:
    grades = {d.id: d.grade for d in evidence}
    out: list[ArgumentDraft] = []
    for opt in options:
        prop = a.proposal(opt.id)
        if prop is None:
            continue
        n = 0
        for pt in prop.points:
            if pt.role != member.role:
                continue
            n += 1
            ev = _cite(pt, evidence)
            tau = pt.tau
            if not ev:
                tau -= 0.1  # unsupported by retrieved evidence
            elif any(grades.get(e) == "A" for e in ev):
                tau += 0.05
            if not pt.facts:
                tau -= 0.05
            tau = round(min(0.95, max(0.05, tau)), 3)
            out.append(
                ArgumentDraft(
                    f"arg-{member.role}-{opt.id}-{n}",
                    opt.id,
                    member.role,
                    pt.stance,
                    pt.text,
                    ev,
                    # a point about the person as a whole (age, frailty) cites the Patient
                    pt.facts or (patient_ref,),
                    tau,
                )
            )
    return tuple(out)


def _relate(option: CandidateOption, arguments: Sequence[ArgumentDraft]) -> tuple[Relation, ...]:
    args = [x for x in arguments if x.option_id == option.id]
    th = {x.id: themes(x.text) for x in args}
    edges: dict[tuple[str, str], Stance] = {}
    for s in args:
        for t in args:
            if s.id == t.id or (s.role == t.role and s.stance == t.stance):
                continue
            rel: Stance | None = None
            if s.stance == t.stance and any(
                x in th[s.id] and y in th[t.id] and x not in th[t.id] for x, y in _CORROBORATE
            ):
                rel = "support"
            elif s.stance != t.stance and any(x in th[s.id] and y in th[t.id] for x, y in _REBUT):
                rel = "attack"
            if rel and (t.id, s.id) not in edges:
                edges[(s.id, t.id)] = rel
    return tuple(Relation(s, t, r) for (s, t), r in sorted(edges.items()))


def _known_refs(profile: PatientProfile) -> set[str]:
    # One generator per fact kind keeps each element typed (a mixed tuple would join to object).
    return {
        *(x.ref for x in profile.problems),
        *(x.ref for x in profile.medications),
        *(x.ref for x in profile.observations),
        *(x.ref for x in profile.social),
        *(x.ref for x in profile.allergies),
        *(x.ref for x in profile.encounters),
        *profile.source_refs,
    }


def _adjudicate(
    profile: PatientProfile,
    option: CandidateOption,
    support: ArgumentDraft,
    attack: ArgumentDraft,
    evidence: Sequence[EvidenceDoc],
) -> ClashVerdict:
    known = _known_refs(profile)
    grades = {d.id: _GRADE_RANK.get(d.grade, 0) for d in evidence}

    def key(x: ArgumentDraft) -> tuple[int, int, int, int, float]:
        facts = sum(1 for f in x.facts if f in known)
        safety = int(bool(themes(x.text) & _SAFETY) and facts > 0)
        grade = max((grades.get(e, 0) for e in x.evidence), default=0)
        rel = CATEGORY_RELEVANCE.get(x.role, {}).get(option.category, 0)
        return safety, grade, facts, rel, x.tau

    ks, ka = key(support), key(attack)
    names = (
        "patient-specific safety evidence",
        "evidence grade",
        "number of cited facts",
        "role relevance",
        "intrinsic strength",
    )
    for i, name in enumerate(names):
        if ks[i] != ka[i]:
            winner: Stance = "support" if ks[i] > ka[i] else "attack"
            return ClashVerdict(
                support.id,
                attack.id,
                winner,
                f"decided on {name}: support {ks[i]} vs attack {ka[i]}",
            )
    return ClashVerdict(
        support.id,
        attack.id,
        "attack",
        "no criterion separates them; the precautionary side (attack) wins",
    )


def _arbitrate(
    profile: PatientProfile, problem: CandidateProblem, votes: Sequence[ProblemVote]
) -> Arbitration:
    a = analyse(profile)
    texts = {t for _, t in a.fact_texts}
    confirmed = {
        p.text
        for p in profile.problems
        if p.verification == "confirmed" and p.recognised and p.codes
    }
    pc = a.problem(problem.id)
    initial = pc.initial if pc else problem.initial
    keep = refuse = 0.0
    best: dict[str, tuple[float, str]] = {}
    for v in sorted(votes, key=lambda v: (v.role, v.vote)):
        if v.vote == "NEUTRAL":
            continue
        quote = v.quote.strip()
        if quote and any(quote in t or t in quote for t in texts if t):
            quality = 1.2 if any(c and c in quote for c in confirmed) else 1.0
        else:
            quality = 0.5 if quote else 0.3
        w = max(0.0, min(1.0, v.confidence)) * quality
        if v.vote == "KEEP":
            keep += w
        else:
            refuse += w
        if w > best.get(v.vote, (-1.0, ""))[0]:
            best[v.vote] = (w, v.role)
    summary = ", ".join(f"{k} led by {r} ({w:.2f})" for k, (w, r) in sorted(best.items()))
    decision: Judgement
    if keep - refuse > 0.05:
        decision = "accept"
    elif refuse - keep > 0.05:
        decision = "reject"
    else:
        decision = initial
    rationale = f"weighted KEEP {keep:.2f} vs REFUSE {refuse:.2f} ({summary}); " + (
        "the attending's initial judgement decides the near-tie"
        if abs(keep - refuse) <= 0.05
        else f"{decision} on argument quality"
    )
    return Arbitration(problem.id, decision, rationale)


def _synthesize(
    a: Analysis,
    included: Sequence[tuple[CandidateOption, float]],
    excluded: Sequence[tuple[CandidateOption, float]],
) -> str:
    if not included:
        return (
            "The panel found no intervention that cleared the inclusion threshold; "
            f"{len(excluded)} options were considered and are listed for review."
        )
    ordered = sorted(included, key=lambda oc: (-oc[1], oc[0].id))
    parts = [
        f"Care plan for a case of {a.complexity} complexity"
        + (f" ({', '.join(a.dimensions[:4])})" if a.dimensions else "")
        + "."
    ]
    top = []
    for opt, score in ordered[:3]:
        prop = a.proposal(opt.id)
        why = ""
        if prop:
            sup = sorted(
                (p for p in prop.points if p.stance == "support"), key=lambda p: (-p.tau, p.role)
            )
            if sup:
                text = sup[0].text.rstrip(".")
                why = ": " + (text if len(text) <= 200 else text[:197].rsplit(" ", 1)[0] + "...")
        top.append(f"{opt.title} (score {score:.2f}){why}")
    parts.append("Highest priority: " + "; ".join(top) + ".")
    if len(ordered) > 3:
        parts.append("Also included: " + ", ".join(o.title for o, _ in ordered[3:]) + ".")
    if excluded:
        parts.append(
            "Not included after deliberation: "
            + ", ".join(f"{o.title} ({s:.2f})" for o, s in excluded[:5])
            + "."
        )
    return " ".join(parts)
