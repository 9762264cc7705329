"""Embedded expert backend: every ``Experts`` step answered by deterministic clinical rules.

The default backend when no Triton is configured. All clinical content comes from
``inference.knowledge`` (tables + rule functions) applied to the patient's own facts; this
module only maps that analysis onto the protocol's steps and records a zero-token ``ModelCall``
per step. Same profile in, identical answers out. No I/O, no randomness, no patient data in
errors.

Documented rules:

* Complexity floor: the analysis's level, raised by severe conditions present (``SEVERE_GROUPS``
  in ``inference.knowledge.roles``, eGFR < 30 counting as one) and a recent (within a year)
  overdose: 2 make it at least moderate, 3 high, 4 or more very high.
* Panel by domain, then by complexity: the GP, then every role a domain present requires
  (``DOMAIN_ROLES``: cardiology for heart failure, AF or CHD; physiotherapy for COPD; oncology
  for an active cancer; addiction psychiatry after an overdose; and here the pharmacist when a
  medication criterion fires or >= 5 medicines are active, the geriatrician at >= 75, the
  nephrologist at eGFR < 30), then roles by relevance weight until the configured size
  (defaults; see ``inference.panel_sizes``: low and moderate 3 (CAMP's k = 3), high 4 (5 when a
  fifth role has relevance weight >= 1.0), very high 6 (7 likewise)) is reached. The configured
  size is a floor: a needed role is never cut to fit it. The GP and the needed roles are the
  panel's required roles (``required_roles``); every panel is checked against the size band and
  the required roles (``inference.panel_sizes.panel_faults``) before it is returned.
* Argument strength tau, scored apart (the scoring step, ``_score``; CANOE §4.3, Alg. 1
  l. 13): the mean of CANOE's five dimensions, each counted once from one table
  (``inference.knowledge.strength``, values in ``data/parameters.yaml``; the paper names the
  dimensions, which fact measures each is ours): appropriateness is the severity of the harm
  avoided or benefit gained; consistency with the retrieved evidence the best grade of the
  retrieved statements the argument cites (0 for none); specificity the directness of the
  patient fact to the option; transparency how plainly the record states that fact (both 0 for
  an objection that cites no fact of this record); feasibility the table's one value, the
  knowledge stating none. (Until 2026-12 the evidence grade was counted twice and the lack of
  evidence or facts came off in ad-hoc steps of 0.1 and 0.05.)
* One stance per role per option: a role's points on one option are weighed into one argument,
  the stance of its strongest point (a tie goes to the objection), with that point's text and
  the facts and evidence of every point of that stance.
* Clash adjudication: ``inference.adjudication.compare``, a documented comparator over typed
  attributes (answered by design, recent abnormal fact, severe harm, evidence grade), no winner
  (``None``) when no rule separates the pair. A point's concern and an option's ``answers`` are
  stated by the knowledge; a point's harm is its own, else the worst its evidence names.
* Relations (``_relate``): between arguments of different roles on one option, through the
  themes the knowledge states for the points they speak with (``data/themes.yaml``); an
  argument that states no knowledge point (a model's) has none, so relates to nothing here.
* Priority class of each option (``_priority``): the more urgent of the class the knowledge
  states (the criterion's option's, else the criterion's) and the one its category and urgency
  imply: safety for an immediate-safety activity or a drug to change for a harm (urgency >= 2),
  monitoring for the monitoring category, review otherwise. Urgency class (``_urgency_class``):
  the one the knowledge states, else urgent for an immediate-safety activity or a drug to stop
  at the highest urgency, routine for a review, soon for the rest. The generic structured medication
  review is proposed only when some active medicine is covered by no specific action.
* Arbitration weighs vote quality, not counts: weight = confidence x quality, with quality 1.0
  when the quote is a fact found in the record (1.2 if that fact is a confirmed, coded Condition),
  0.5 for an unverifiable quote, 0.3 for none; NEUTRAL weighs 0. Accept when KEEP weight exceeds
  REFUSE weight by more than 0.05, reject when the reverse, otherwise the attending's ``y0``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from inference.adjudication import FactStatus, compare, fact_status
from inference.knowledge import ROLE_BY_NAME, Analysis, analyse
from inference.knowledge.actions import action_kind, medicine_withdrawal_risk, taper_title
from inference.knowledge.changelog import changelog
from inference.knowledge.conditions import classify
from inference.knowledge.criteria import Criterion
from inference.knowledge.criteria.interpret import VERIFY_PREFIX
from inference.knowledge.problem_groups import treats
from inference.knowledge.roles import DOMAIN_ROLES, SEVERE_GROUPS
from inference.knowledge.rules import CRITERIA, Point, Proposal
from inference.knowledge.strength import best_grade, dimensions
from inference.knowledge.themes import answers, supports
from inference.knowledge.timeframes import (
    critical_finding,
    harm_score,
    is_transition,
    timeframe_of,
)
from inference.panel_sizes import DEFAULT_PANEL_SIZES, PanelSizes, panel_faults
from inference.panel_sizes import panel_sizes as validated_sizes
from inference.protocol import (
    Adjudicate,
    Arbitrate,
    Arbitration,
    ArgumentDraft,
    ArgumentScore,
    AssemblePanel,
    Assess,
    Assessment,
    CallContext,
    CandidateOption,
    CandidateProblem,
    ClashVerdict,
    Complexity,
    Consult,
    Consultation,
    EvidenceDoc,
    KnownOption,
    Locale,
    ModelCall,
    PanelMember,
    Priority,
    ProblemVote,
    Relate,
    Relation,
    Score,
    Severity,
    Stance,
    Step,
    StepKind,
    Synthesize,
    UrgencyClass,
)
from service.core.arbitration import Grounding, VoteArgument, arbitrate
from service.core.evaluation import PRIORITY_ORDER
from service.core.model import ActionKind, Finding, Timeframe
from service.errors import BackendTimeout, CanoeError, StepFailed
from service.record.profile import PatientProfile
from service.record.vocabulary import LOINC_GROUPS, SNOMED

__all__ = ["KB_VERSION", "PANEL_SIZES", "EmbeddedExperts", "required_roles"]

# The knowledge version, from the change log (the one place it is stated).
KB_VERSION = changelog().version
# The default sizes, by complexity: (base, extended).
PANEL_SIZES: dict[str, tuple[int, int]] = {c: (b, e) for c, b, e in DEFAULT_PANEL_SIZES}
T = TypeVar("T")
R = TypeVar("R")
_COMPLEXITY: tuple[Complexity, ...] = ("low", "moderate", "high", "very high")
_SEVERITY_RANK: dict[str, int] = {"minor": 1, "moderate": 2, "severe": 3}
# A drug overdose: SNOMED CT 55680006 "Drug overdose"; ICD-10-CM T40 (poisoning by narcotics)
# and T42 (poisoning by antiepileptic, sedative-hypnotic drugs).
_OVERDOSE_SNOMED = frozenset({"55680006"})
_OVERDOSE_ICD10 = ("T40", "T42")
# Every loaded criterion by id: a proposal names the criteria that made it.
_CRITERIA_BY_ID: dict[str, Criterion] = {c.id: c for c in CRITERIA}
# How points on one option relate through their themes (``data/themes.yaml``): (theme of the
# source, theme of the target) for a same-stance support and for an answer across stances.
_SUPPORTS = supports()
_ANSWERS = answers()


class EmbeddedExperts:
    """Deterministic clinical rules behind the ``Experts`` protocol."""

    def __init__(
        self,
        kb_version: str = KB_VERSION,
        *,
        panel_sizes: PanelSizes | dict[str, tuple[int, int]] = DEFAULT_PANEL_SIZES,
        locale: Locale = "uk",
    ) -> None:
        """``panel_sizes``: complexity -> (base, extended); ``ValueError`` when a size is below 1
        or shrinks as complexity grows."""
        self.name = f"embedded-experts/{kb_version}"
        self.locale: Locale = locale
        sizes = (
            panel_sizes if isinstance(panel_sizes, dict) else {c: (b, e) for c, b, e in panel_sizes}
        )
        self.sizes: PanelSizes = validated_sizes(sizes)
        self.panel_sizes: dict[str, tuple[int, int]] = {c: (b, e) for c, b, e in self.sizes}

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

    async def run(self, step: Step[R], ctx: CallContext) -> R:
        """Answer one step request with the rule function its type maps to (``_HANDLERS``)."""
        handler = _HANDLERS.get(type(step))
        if handler is None:
            raise StepFailed(f"embedded experts cannot answer a {type(step).__name__} request")
        result = await self._call(step.kind, ctx, lambda: handler(self, step))
        return cast(R, result)  # the table pairs each request type with its result's handler

    def _assess(self, s: Assess) -> Assessment:
        return _assess(analyse(s.profile, self.locale), s.profile)

    def _assemble_panel(self, s: AssemblePanel) -> tuple[PanelMember, ...]:
        complexity = s.assessment.complexity
        a = analyse(s.profile, self.locale)
        panel = _panel(a, self.panel_sizes[complexity], s.profile)
        required = ("gp", *_needed_roles(a, s.profile))
        faults = panel_faults([m.role for m in panel], complexity, self.sizes, required)
        if faults:
            raise StepFailed("embedded panel: " + "; ".join(faults))
        return panel

    def _consult(self, s: Consult) -> Consultation:
        a = analyse(s.profile, self.locale)
        return Consultation(
            votes=_votes(a, s.member, s.problems),
            arguments=_argue(
                a, s.member, s.options, s.evidence, s.profile.ref, fact_status(s.profile)
            ),
        )

    def _score(self, s: Score) -> tuple[ArgumentScore, ...]:
        return _score(analyse(s.profile, self.locale), s)

    def _relate(self, s: Relate) -> tuple[Relation, ...]:
        stated = _stated_themes(analyse(s.profile, self.locale))
        return tuple(r for o in s.options for r in _relate(o, s.arguments, stated))

    def _adjudicate(self, s: Adjudicate) -> tuple[ClashVerdict, ...]:
        grades = {d.id: d.grade for d in s.evidence}
        status = fact_status(s.profile)
        return tuple(compare(s.option, sup, att, grades, status) for sup, att in s.pairs)

    def _arbitrate(self, s: Arbitrate) -> Arbitration:
        return _arbitrate(s.profile, s.problem, s.votes)

    def _synthesize(self, s: Synthesize) -> str:
        return _synthesize(analyse(s.profile, self.locale), s.included, s.excluded)


# Request type -> handler: the dispatch table of ``EmbeddedExperts.run``.
_HANDLERS: dict[type[Step[Any]], Callable[[EmbeddedExperts, Any], object]] = {
    Assess: EmbeddedExperts._assess,
    AssemblePanel: EmbeddedExperts._assemble_panel,
    Consult: EmbeddedExperts._consult,
    Score: EmbeddedExperts._score,
    Relate: EmbeddedExperts._relate,
    Adjudicate: EmbeddedExperts._adjudicate,
    Arbitrate: EmbeddedExperts._arbitrate,
    Synthesize: EmbeddedExperts._synthesize,
}


# ---------------------------------------------------------------------- step logic


def _assess(a: Analysis, profile: PatientProfile) -> Assessment:
    problems = tuple(
        CandidateProblem(p.id, p.display, p.refs, p.initial, p.rationale) for p in a.problems
    )
    options = tuple(
        CandidateOption(
            p.id,
            title,
            p.category,
            p.description,
            p.refs,
            p.problem_ids,
            p.code,
            p.medication_ref,
            _priority(p),
            _urgency_class(p),
            p.answers,
            _findings(p),
            treats(p.id),
            kind,
            *_timing(p, profile, kind),
        )
        for p in _specific_first(a.proposals)
        for kind, title in (_action(p, profile),)
    )
    return Assessment(_complexity(a, profile), a.dimensions, problems, options)


def _action(p: Proposal, profile: PatientProfile) -> tuple[ActionKind, str]:
    """What the proposal does and its clinician title: the kind the knowledge states for it,
    else the one its id and urgency say; a stop of a medicine that must not be stopped
    suddenly becomes a taper, titled so (``inference.knowledge.actions``)."""
    kind = action_kind(p.id, _urgency_class(p), p.action or None)
    title = p.title
    if kind in ("stop-now", "stop-at-review"):
        risk = medicine_withdrawal_risk(profile, p.medication_ref)
        if risk is not None:
            kind, title = "taper", taper_title(p.title, risk[0])
    critical = critical_finding(profile, _cited(p))
    if critical is not None:
        title = f"{critical.first_step}: {title}"
    return kind, title


def _cited(p: Proposal) -> tuple[str, ...]:
    """Every fact a proposal rests on: its own and its points'."""
    return tuple(dict.fromkeys((*p.refs, *(f for pt in p.points for f in pt.facts))))


def _timing(
    p: Proposal, profile: PatientProfile, kind: ActionKind
) -> tuple[Timeframe, float, bool]:
    """When to act, the harm averted and whether it is a transition action, as the knowledge
    states them (``inference.knowledge.timeframes``): a critical value among the facts the
    proposal rests on makes it today."""
    findings = _findings(p)
    timeframe = timeframe_of(
        option_id=p.id,
        criteria=p.criteria,
        kinds=[f.kind for f in findings],
        urgency_class=_urgency_class(p),
        action=kind,
        priority=_priority(p),
        critical=critical_finding(profile, _cited(p)) is not None,
    )
    harm = harm_score(((f.kind, f.severity) for f in findings), _priority(p))
    return timeframe, harm, is_transition(p.criteria)


def known_options(profile: PatientProfile) -> dict[str, KnownOption]:
    """What the knowledge states about every option it proposes for ``profile``, by id: the
    findings of its criteria and its urgency class."""
    return {
        p.id: KnownOption(_findings(p), _urgency_class(p), treats(p.id), kind, *timing)
        for p in analyse(profile).proposals
        for kind in (_action(p, profile)[0],)
        for timing in (_timing(p, profile, kind),)
    }


def _findings(p: Proposal) -> tuple[Finding, ...]:
    """What the criteria that proposed ``p`` found: each one's kind and harm severity, as the
    knowledge states them (a rule function's proposal names no criterion, so has none). A
    request to verify a dose that is not stated found nothing yet: it says "dose not stated:
    verify" as the routine review it is, never "dose above the limit"."""
    if p.id.startswith(VERIFY_PREFIX):
        return ()
    return tuple(
        Finding(c.kind, c.factors.severity, c.id)
        for cid in p.criteria
        for c in (_CRITERIA_BY_ID.get(cid),)
        if c is not None
    )


def _priority(p: Proposal) -> Priority:
    """The clinical priority class of a proposal: the more urgent of the class the knowledge
    states for it and the class its category and urgency imply (a proposal that a rule function
    and a criterion both made must not lose the rule's "stop this drug" urgency to a default)."""
    return min(p.priority, _implied_priority(p), key=PRIORITY_ORDER.index)


def _urgency_class(p: Proposal) -> UrgencyClass:
    """How soon to act: what the knowledge stated (a criterion, a rule function that knows it
    from the facts), else from the priority class: an immediate-safety activity or a drug to
    stop at the highest urgency is urgent, other safety items, omissions and monitoring are
    acted on soon, a review is routine."""
    stated = p.urgency_class
    if stated in ("resolve-first", "urgent", "soon", "routine"):
        return cast(UrgencyClass, stated)
    priority = _priority(p)
    if priority == "safety" and (p.category == "immediate-safety" or p.urgency >= 3):
        return "urgent"
    return "routine" if priority == "review" else "soon"


def _implied_priority(p: Proposal) -> Priority:
    if p.category == "immediate-safety":
        return "safety"
    if p.category == "monitoring":
        return "monitoring"
    if p.medication_ref is not None and p.urgency >= 2:
        return "safety"  # a drug to stop, switch, reduce or review for a harm it does
    return "review"


def _specific_first(proposals: Sequence[Proposal]) -> tuple[Proposal, ...]:
    """Drop the generic medication review when specific actions cover every medicine it
    reviews: the review is for the medicines no specific action looks at."""
    covered = {
        r
        for p in proposals
        if p.id != "opt-medication-review" and p.medication_ref is not None
        for r in (p.medication_ref, *p.refs)
    }
    return tuple(
        p for p in proposals if p.id != "opt-medication-review" or not set(p.refs) <= covered
    )


def _recent_overdose(profile: PatientProfile) -> bool:
    for p in profile.problems:
        dated = p.onset is not None and (profile.as_of - p.onset).days <= 365
        coded = any(
            (c.system == SNOMED and c.code in _OVERDOSE_SNOMED)
            or c.code.startswith(_OVERDOSE_ICD10)
            for c in p.codes
        )
        if coded and dated:
            return True
    return False


def _groups(profile: PatientProfile) -> set[str]:
    return {g for p in profile.problems if p.active for g in classify(p)}


def _egfr_below_30(profile: PatientProfile) -> bool:
    o = profile.latest_of(LOINC_GROUPS["egfr"])
    return o is not None and o.value is not None and o.value < 30


def _complexity(a: Analysis, profile: PatientProfile) -> Complexity:
    """The analysis's level, raised by severe conditions and a recent overdose (floor)."""
    severe = len(_groups(profile) & SEVERE_GROUPS) + _egfr_below_30(profile)
    severe += _recent_overdose(profile)
    floor = 0 if severe < 2 else min(3, severe - 1)
    return _COMPLEXITY[max(_COMPLEXITY.index(a.complexity), floor)]


# Recent-event criteria (criteria/events.json) that bring their specialist onto the panel.
_OVERDOSE_EVENTS = frozenset({"event-overdose-recent", "event-overdose-sedative"})
_CHEMOTHERAPY_EVENT = "event-chemotherapy-started"


def _needed_roles(a: Analysis, profile: PatientProfile) -> list[str]:
    """Roles the domains of the record require, in pool order (see the module docstring)."""
    groups = _groups(profile)
    if _recent_overdose(profile) or set(a.fired) & _OVERDOSE_EVENTS:
        groups.add("overdose")  # also an emergency or detoxification stay seen as an Encounter
    if _CHEMOTHERAPY_EVENT in a.fired:
        groups.add("cancer")  # chemotherapy started recently: oncology on the panel
    need = {role for role, keys in DOMAIN_ROLES if groups & set(keys)}
    medication_criterion = any(
        p.medication_ref is not None or p.category == "medication" for p in a.proposals
    )
    if medication_criterion or len(profile.active_medications) >= 5:
        need.add("pharmacist")
    if profile.age is not None and profile.age >= 75:
        need.add("geriatrician")
    if _egfr_below_30(profile):
        need.add("nephrologist")
    return sorted(need - {"gp"}, key=lambda r: ROLE_BY_NAME[r].order)


def required_roles(profile: PatientProfile, locale: Locale = "uk") -> tuple[str, ...]:
    """The roles every panel for this record must hold, on any backend: the GP, then the roles
    its domains require (``_needed_roles``), in pool order."""
    return ("gp", *_needed_roles(analyse(profile, locale), profile))


def _panel(a: Analysis, sizes: tuple[int, int], profile: PatientProfile) -> tuple[PanelMember, ...]:
    # A size larger than the role pool yields the whole pool (slicing stops at its end).
    lo, hi = sizes
    ranked = [r for r, _ in a.role_weights if r != "gp"]
    weights = dict(a.role_weights)
    size = lo
    if hi > lo and len(ranked) >= hi - 1 and weights[ranked[hi - 2]] >= 1.0:
        size = hi
    needed = _needed_roles(a, profile)
    rest = [r for r in ranked if r not in needed]
    roles = ["gp", *needed, *rest[: max(0, size - 1 - len(needed))]]
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
    """The point's own preferred documents among those passed, in the point's order. Never a
    document the point does not name: a nearest word match is not evidence for the claim, and
    retrieval (``EvidenceBase.retrieve``) always passes the documents the points name."""
    ids = {d.id for d in passed}
    return tuple(e for e in pt.evidence if e in ids)


def _strongest(a: Analysis, role: str, option_id: str) -> tuple[int, Point] | None:
    """The role's strongest point on the option, with its 1-based place among the option's
    points (a tie goes to the objection, then to the earlier point); None when the role makes
    none. Its stance is the role's argument's, its factors the argument's strength."""
    prop = a.proposal(option_id)
    if prop is None:
        return None
    mine = [(n, pt) for n, pt in enumerate(prop.points, 1) if pt.role == role]
    if not mine:
        return None
    return max(mine, key=lambda np: (np[1].tau, np[1].stance == "attack", -np[0]))


def _about_patient(pt: Point) -> bool:
    """False for an objection that cites no fact of this record (true of every patient)."""
    return pt.stance == "support" or bool(pt.facts)


def _argue(
    a: Analysis,
    member: PanelMember,
    options: Sequence[CandidateOption],
    evidence: Sequence[EvidenceDoc],
    patient_ref: str,
    status: Mapping[str, FactStatus] | None = None,
) -> tuple[ArgumentDraft, ...]:
    """One argument per role and option, unscored (the scoring step, ``_score``, weighs it).
    Its stance is that of the role's strongest point (``_strongest``), its evidence and facts
    those of all the role's points of that stance; its text is the most specific of them: a
    point that rests on a recent event or a recent abnormal finding of this patient (the clash
    comparator's rule 2, ``inference.adjudication``) speaks for the role before a stronger but
    general one, whose facts then follow (a merged review leads with the recent thrombolysis,
    not the standing interaction it also settles)."""
    status = status or {}

    def specific(pt: Point) -> bool:
        return bool(getattr(pt, "recent", False)) or any(
            status[f].recent_abnormal for f in pt.facts if f in status
        )

    docs = {d.id: d for d in evidence}
    out: list[ArgumentDraft] = []
    for opt in options:
        best = _strongest(a, member.role, opt.id)
        prop = a.proposal(opt.id)
        if best is None or prop is None:
            continue
        n, pt = best
        stance = pt.stance
        same = [p for p in prop.points if p.role == member.role and p.stance == stance]
        lead = pt
        if not specific(pt):
            lead = max((p for p in same if specific(p)), key=lambda p: p.tau, default=pt)
        ev = tuple(dict.fromkeys(e for p in (lead, pt, *same) for e in _cite(p, evidence)))
        facts = tuple(dict.fromkeys(f for p in (lead, pt, *same) for f in p.facts))
        # the harm a knowledge point states, else the worst its evidence statements name
        harm: Severity | None = getattr(pt, "harm", None)
        for e in () if harm is not None else ev:
            h = docs[e].harm if e in docs else None
            if h is not None and (harm is None or _SEVERITY_RANK[h] > _SEVERITY_RANK[harm]):
                harm = h
        out.append(
            ArgumentDraft(
                f"arg-{member.role}-{opt.id}-{n}",
                opt.id,
                member.role,
                stance,
                lead.text,
                ev,
                # a point about the person as a whole (age, frailty) cites the Patient
                facts or (patient_ref,),
                harm=harm,
                concern=pt.concern or "",
                generic=bool(getattr(pt, "generic", not facts)),
            )
        )
    return tuple(out)


def _score(a: Analysis, s: Score) -> tuple[ArgumentScore, ...]:
    """Each argument's five strength dimensions from the table (``inference.knowledge.strength``),
    each counted once: appropriateness, specificity and transparency from the factors of the
    point that speaks for the argument's role (``_strongest``), consistency from the best grade
    of the retrieved evidence the argument cites, feasibility the table's one value. An
    argument no knowledge point stands behind (a model's) is left unscored."""
    grades = {d.id: d.grade for d in s.evidence}
    out = []
    for g in s.arguments:
        best = _strongest(a, g.role, g.option_id)
        pt = best[1] if best is not None else None
        if pt is None or pt.factors is None or pt.stance != g.stance:
            continue
        grade = best_grade(grades[e] for e in g.evidence if e in grades)
        dims = dimensions(pt.factors, grade, about_patient=_about_patient(pt))
        out.append(ArgumentScore(g.id, *dims))
    return tuple(out)


def _stated_themes(a: Analysis) -> dict[tuple[str, str, str], frozenset[str]]:
    """(option id, role, text) -> the themes the knowledge states for the point an argument
    speaks with (``_argue`` takes an argument's text from one point): an argument is known by
    the point it states, never read for keywords; a model-written argument matches none."""
    out: dict[tuple[str, str, str], frozenset[str]] = {}
    for p in a.proposals:
        for pt in p.points:
            key = (p.id, pt.role, pt.text)
            out[key] = out.get(key, frozenset()) | frozenset(pt.themes or ())
    return out


def _relate(
    option: CandidateOption,
    arguments: Sequence[ArgumentDraft],
    stated: Mapping[tuple[str, str, str], frozenset[str]],
) -> tuple[Relation, ...]:
    """Relations between the arguments on ``option`` through their points' stated themes
    (``data/themes.yaml``): a support where one's theme ``supports`` a theme of a same-stance
    argument that lacks it, an attack where one's theme ``answers`` a theme of an argument of
    the other stance. Two arguments of one role and stance are never related."""
    args = [x for x in arguments if x.option_id == option.id]
    th = {x.id: stated.get((x.option_id, x.role, x.text), frozenset()) for x in args}
    edges: dict[tuple[str, str], Stance] = {}
    for s in args:
        for t in args:
            if s.id == t.id or (s.role == t.role and s.stance == t.stance):
                continue
            rel: Stance | None = None
            if s.stance == t.stance and any(
                x in th[s.id] and y in th[t.id] and x not in th[t.id] for x, y in _SUPPORTS
            ):
                rel = "support"
            elif s.stance != t.stance and any(x in th[s.id] and y in th[t.id] for x, y in _ANSWERS):
                rel = "attack"
            if rel and (t.id, s.id) not in edges:
                edges[(s.id, t.id)] = rel
    return tuple(Relation(s, t, r) for (s, t), r in sorted(edges.items()))


def _arbitrate(
    profile: PatientProfile, problem: CandidateProblem, votes: Sequence[ProblemVote]
) -> Arbitration:
    """CAMP eq. 7 (``service.core.arbitration``): each vote weighed as an argument, by its
    confidence and where its quote stands against this record."""
    a = analyse(profile)
    texts = {t for _, t in a.fact_texts}
    confirmed = {
        p.text
        for p in profile.problems
        if p.verification == "confirmed" and p.recognised and p.codes
    }
    pc = a.problem(problem.id)
    initial = pc.initial if pc else problem.initial
    verdict = arbitrate(
        (
            VoteArgument(v.role, v.vote, v.confidence, _grounding(v.quote, texts, confirmed))
            for v in votes
        ),
        initial,
    )
    return Arbitration(problem.id, verdict.decision, verdict.rationale())


def _grounding(quote: str, texts: set[str], confirmed: set[str]) -> Grounding:
    """Where a vote's quote stands: in the record and naming a confirmed, coded condition; in
    the record; not found in it; or absent."""
    quote = quote.strip()
    if not quote:
        return "none"
    if not any(quote in t or t in quote for t in texts if t):
        return "unverified"
    return "confirmed" if any(c and c in quote for c in confirmed) else "recorded"


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
    # the plan's own order: priority class, then score
    classes = ("safety", "omission", "monitoring", "review")
    ordered = sorted(included, key=lambda oc: (classes.index(oc[0].priority), -oc[1], oc[0].id))
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
