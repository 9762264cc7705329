"""The one semantic interface every model-backed step goes through.

Two real implementations sit behind it: ``inference.embedded.EmbeddedExperts`` (deterministic
clinical knowledge, the default) and ``inference.triton.TritonExperts`` (LLMs on Triton). A
scripted fake for unit tests implements it too. The pipeline builds one typed request per step
(``Assess``, ``Consult``, ... each a ``Step[R]`` naming its result type ``R``) and hands it to
``Experts.run``; it never knows which backend answers. Requests and results are frozen
dataclasses, no FHIR types.

A backend may raise only errors from ``service.errors``: ``StepFailed`` when one call's answer is
unusable (the pipeline records that contribution as missing), ``BackendTimeout`` when a call
passes its deadline, ``BackendUnavailable`` when the backend cannot be reached at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar, get_args, runtime_checkable

from service.core.evaluation import CATEGORY_ORDER
from service.core.model import ActionKind, Finding, Stance, Timeframe
from service.record.profile import PatientProfile

__all__ = [
    "CALL_KINDS",
    "STEP_KINDS",
    "STEP_TYPES",
    "STRENGTH_DIMENSIONS",
    "Adjudicate",
    "Arbitrate",
    "Arbitration",
    "ArgumentDraft",
    "ArgumentScore",
    "AssemblePanel",
    "Assess",
    "Assessment",
    "CallContext",
    "CallKind",
    "CandidateOption",
    "CandidateProblem",
    "ClashVerdict",
    "Consult",
    "Consultation",
    "EvidenceDoc",
    "Experts",
    "KnownOption",
    "Locale",
    "ModelCall",
    "PanelMember",
    "Priority",
    "ProblemVote",
    "Relate",
    "Relation",
    "Score",
    "Severity",
    "Stance",
    "Step",
    "StepKind",
    "Synthesize",
    "UrgencyClass",
    "UsageRecorder",
]

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)  # a step answering X also answers X | None

Complexity = Literal["low", "moderate", "high", "very high"]
Judgement = Literal["accept", "reject"]
VoteValue = Literal["KEEP", "REFUSE", "NEUTRAL"]
# Clinical priority class of a candidate activity (the plan is ranked by clinical priority):
# immediate safety first, then high-value omissions, then monitoring, then routine review.
Priority = Literal["safety", "omission", "monitoring", "review"]
# How soon to act on a candidate activity (``service.core.evaluation.URGENCY_ORDER``): data that
# contradict each other settled first, then urgent harm, then what to act on soon, then routine
# prevention and review. Orders the plan before the priority class.
UrgencyClass = Literal["resolve-first", "urgent", "soon", "routine"]
# Where the plan is read (``CANOE_LOCALE``): the risk tools a clinician there uses.
Locale = Literal["uk", "us"]
# Severity of the harm an argument or evidence statement is about (the clash comparator's
# "preventing a severe, likely harm beats convenience" rule reads it).
Severity = Literal["severe", "moderate", "minor"]
StepKind = Literal[
    "assess", "panel", "consult", "score", "relate", "adjudicate", "arbitrate", "synthesize"
]
# Every step kind, in pipeline order (the one list; backends and settings iterate it).
STEP_KINDS: tuple[StepKind, ...] = get_args(StepKind)
# Model calls made outside the pipeline: the evaluation harness's judge (``inference.judge``).
# No pipeline backend answers it and ``STEP_KINDS`` leaves it out; only the Triton client sends it.
EvalKind = Literal["judge"]
CallKind = StepKind | EvalKind
CALL_KINDS: tuple[str, ...] = (*STEP_KINDS, *get_args(EvalKind))

# Plan categories in the order the CarePlan lists them (CANOE 4.5); the core owns the order.
CATEGORIES: tuple[str, ...] = CATEGORY_ORDER


@dataclass(frozen=True, slots=True)
class EvidenceDoc:
    """One guideline statement of the local evidence base (our own words)."""

    id: str
    topic: str
    statement: str
    grade: str  # e.g. "A", "B", "C", "expert consensus"
    source: str  # title of the guideline it paraphrases
    year: int
    tags: tuple[str, ...] = ()
    harm: Severity | None = None  # severity of the harm the statement names, where it names one


@dataclass(frozen=True, slots=True)
class CandidateProblem:
    id: str  # stable within a plan, e.g. "prob-<condition id>" or "prob-fall-risk"
    display: str
    refs: tuple[str, ...]  # FHIR references of the facts behind it (Condition/..., ...)
    initial: Judgement  # the attending's y0
    rationale: str


@dataclass(frozen=True, slots=True)
class CandidateOption:
    id: str  # stable, e.g. "opt-taper-diazepam"
    title: str
    category: str  # one of CATEGORIES
    description: str
    refs: tuple[str, ...] = ()  # facts it is about (e.g. the MedicationRequest to stop)
    problem_ids: tuple[str, ...] = ()  # the candidate problems it addresses
    code: tuple[str, str, str] | None = None  # (system, code, display) where a standard one exists
    medication_ref: str | None = None  # MedicationRequest/<id> when the activity is about one
    priority: Priority = "review"  # clinical priority class, orders the plan before the score
    urgency_class: UrgencyClass | None = None  # None: the backend does not say (ranks "soon")
    # Concern codes (see ``ArgumentDraft.concern``) the option's own design already answers,
    # e.g. a gradual taper answers "abrupt-withdrawal": an objection raising one loses its clash.
    answers: tuple[str, ...] = ()
    # The safety findings behind the option, from the knowledge criteria that proposed it.
    findings: tuple[Finding, ...] = ()
    # The condition group the option treats together with others (one summary line per
    # problem); None where the knowledge groups it with nothing.
    treats: str | None = None
    # What the activity does and when (``service.core.model.ACTION_KINDS``); None where the
    # backend does not say (a model's option takes the knowledge's, by id).
    action: ActionKind | None = None
    # When to act (``service.core.model.TIMEFRAMES``), the harm it averts (severity x
    # likelihood) and whether it is a transition action after a hospital stay: they rank the
    # plan. None / False where the backend does not say (a model's option takes the
    # knowledge's, by id).
    timeframe: Timeframe | None = None
    harm: float | None = None
    transition: bool = False


@dataclass(frozen=True, slots=True)
class KnownOption:
    """What the knowledge itself states about an option it proposes: the safety findings of the
    criteria behind it and how soon to act. A model's answer states neither, so an option a
    model proposes under the same id takes them from here."""

    findings: tuple[Finding, ...] = ()
    urgency_class: UrgencyClass | None = None
    treats: str | None = None
    action: ActionKind | None = None
    timeframe: Timeframe | None = None
    harm: float | None = None
    transition: bool = False


@dataclass(frozen=True, slots=True)
class Assessment:
    """Attending assessment (CAMP stage 1 + CANOE module 1)."""

    complexity: Complexity
    dimensions: tuple[str, ...]  # key clinical dimensions of the case
    problems: tuple[CandidateProblem, ...]
    options: tuple[CandidateOption, ...]


@dataclass(frozen=True, slots=True)
class PanelMember:
    role: str  # e.g. "pharmacist", "nurse", "gp", "psychiatrist", "physiotherapist", ...
    focus: str  # case-specific focus directive
    expertise: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProblemVote:
    problem_id: str
    role: str
    vote: VoteValue
    confidence: float  # [0, 1]
    quote: str  # evidence quoted from the record
    rationale: str


@dataclass(frozen=True, slots=True)
class ArgumentDraft:
    """One argument as a role agent writes it. Its strength ``tau`` is not the author's: the
    scoring step (``Score``) sets it from five dimensions; ``None`` until then."""

    id: str  # unique within the plan, e.g. "arg-pharmacist-opt-taper-diazepam-1"
    option_id: str
    role: str
    stance: Stance
    text: str
    evidence: tuple[str, ...]  # EvidenceDoc ids
    facts: tuple[str, ...]  # FHIR references of the patient facts it cites
    tau: float | None = None  # intrinsic strength in [0, 1], set by the scoring step
    # Typed attributes the clash comparator reads (never the text), all optional:
    harm: Severity | None = None  # severity of the harm it is about (prevented or caused)
    concern: str = ""  # controlled code of the specific risk it raises, e.g. "abrupt-withdrawal"
    generic: bool = False  # rests on a population-level statement, no fact about this patient


@dataclass(frozen=True, slots=True)
class Consultation:
    """What one panel member answers: its votes (one per candidate problem) and its arguments."""

    votes: tuple[ProblemVote, ...]
    arguments: tuple[ArgumentDraft, ...]


# CANOE §4.3 scores an argument's intrinsic strength "along several dimensions: clinical
# appropriateness, factual consistency with the retrieved evidence, specificity to the patient's
# circumstances, transparency of the reasoning chain, and practical feasibility in the community
# setting". The paper names the five and says tau lies in [0, 1]; it states no scale per
# dimension and no way to combine them: each dimension here is in [0, 1] and tau is their
# unweighted mean at two decimals (``ArgumentScore.tau``), this project's choice.
STRENGTH_DIMENSIONS: tuple[str, ...] = (
    "appropriateness",
    "consistency",
    "specificity",
    "transparency",
    "feasibility",
)
_TAU_STEP = Decimal("0.01")


@dataclass(frozen=True, slots=True)
class ArgumentScore:
    """One argument's five strength dimensions (``STRENGTH_DIMENSIONS``), each in [0, 1]."""

    argument_id: str
    appropriateness: float  # clinically appropriate for this patient
    consistency: float  # consistent with the retrieved evidence it cites
    specificity: float  # specific to this patient's circumstances
    transparency: float  # its reasoning chain can be followed from fact to conclusion
    feasibility: float  # practical in the community setting

    @property
    def dimensions(self) -> tuple[float, ...]:
        return tuple(float(getattr(self, d)) for d in STRENGTH_DIMENSIONS)

    @property
    def tau(self) -> float:
        """The mean of the five dimensions, rounded half up to two decimals, computed in
        decimal so that equal inputs give the same tau whatever their binary rounding."""
        values = [Decimal(repr(v)) for v in self.dimensions]
        if any(not Decimal(0) <= v <= Decimal(1) for v in values):
            raise ValueError(f"argument {self.argument_id}: a strength dimension outside [0, 1]")
        mean = sum(values, Decimal(0)) / len(values)
        return float(mean.quantize(_TAU_STEP, rounding=ROUND_HALF_UP))


@dataclass(frozen=True, slots=True)
class Relation:
    """An argument-to-argument edge inside one option's graph."""

    source: str
    target: str
    relation: Stance


@dataclass(frozen=True, slots=True)
class ClashVerdict:
    support_id: str
    attack_id: str
    winner: Literal["support", "attack"] | None  # None: adjudication failed, counts for nobody
    rationale: str


@dataclass(frozen=True, slots=True)
class Arbitration:
    problem_id: str
    decision: Judgement
    rationale: str


@dataclass(frozen=True, slots=True)
class ModelCall:
    """Accounting for one backend call (embedded calls report zero tokens)."""

    step: CallKind
    model: str
    input_tokens: int
    output_tokens: int
    latency_ms: float
    ok: bool
    error: str = ""


class UsageRecorder(Protocol):
    def record(self, call: ModelCall) -> None: ...


@dataclass(slots=True)
class CallContext:
    """Per-plan context passed to every call: where to record usage and how long a call may take."""

    recorder: UsageRecorder | None = None
    deadline_s: float = 30.0
    labels: dict[str, str] = field(default_factory=dict)


# -- the steps: one request type per model-backed step -------------------------------------------


@dataclass(frozen=True, slots=True)
class Step(Generic[R_co]):
    """One model-backed step as a typed request; ``R_co`` is what answering it gives.

    Backends dispatch on the request's type (a table from type to handler, see
    ``EmbeddedExperts`` and ``TritonExperts``); wrappers (tracing, fault injection, accounting)
    see only ``kind`` and ``role`` and pass the request on unchanged.
    """

    kind: ClassVar[StepKind]

    @property
    def role(self) -> str:
        """The panel role answering this step ("" for the attending's and shared steps)."""
        return ""


@dataclass(frozen=True, slots=True)
class Assess(Step[Assessment]):
    kind: ClassVar[StepKind] = "assess"
    profile: PatientProfile
    evidence: tuple[EvidenceDoc, ...]


@dataclass(frozen=True, slots=True)
class AssemblePanel(Step[tuple[PanelMember, ...]]):
    kind: ClassVar[StepKind] = "panel"
    profile: PatientProfile
    assessment: Assessment


@dataclass(frozen=True, slots=True)
class Consult(Step[Consultation]):
    """One panel member's whole contribution in one call (CAMP's per-specialist call): a vote
    on every candidate problem and arguments on every candidate option it has a view on.
    A failed call loses both: the pipeline records that member's votes and arguments missing.
    The arguments come unscored: their strength is the scoring step's (``Score``)."""

    kind: ClassVar[StepKind] = "consult"
    profile: PatientProfile
    member: PanelMember
    problems: tuple[CandidateProblem, ...]
    options: tuple[CandidateOption, ...]
    evidence: tuple[EvidenceDoc, ...]

    @property
    def role(self) -> str:
        return self.member.role


@dataclass(frozen=True, slots=True)
class Score(Step[tuple[ArgumentScore, ...]]):
    """The intrinsic strength of every argument on one option in one call (CANOE Alg. 1 l. 13,
    a scoring step apart from the arguments' authors): one ``ArgumentScore`` per argument.
    A failed call scores none of them: the pipeline records the option's arguments missing."""

    kind: ClassVar[StepKind] = "score"
    profile: PatientProfile
    option: CandidateOption
    arguments: tuple[ArgumentDraft, ...]
    evidence: tuple[EvidenceDoc, ...]


@dataclass(frozen=True, slots=True)
class Relate(Step[tuple[Relation, ...]]):
    """Argument-to-argument relations for every option of the plan in one call: each relation
    joins two arguments on the same option (``arguments`` holds every option's arguments)."""

    kind: ClassVar[StepKind] = "relate"
    profile: PatientProfile
    options: tuple[CandidateOption, ...]
    arguments: tuple[ArgumentDraft, ...]


@dataclass(frozen=True, slots=True)
class Adjudicate(Step[tuple[ClashVerdict, ...]]):
    """The near-tied (support, attack) pairs of one option in one call; each pair is judged on
    its own and answered by one verdict naming it (a pair left unanswered counts for nobody)."""

    kind: ClassVar[StepKind] = "adjudicate"
    profile: PatientProfile
    option: CandidateOption
    pairs: tuple[tuple[ArgumentDraft, ArgumentDraft], ...]
    evidence: tuple[EvidenceDoc, ...]


@dataclass(frozen=True, slots=True)
class Arbitrate(Step[Arbitration]):
    kind: ClassVar[StepKind] = "arbitrate"
    profile: PatientProfile
    problem: CandidateProblem
    votes: tuple[ProblemVote, ...]


@dataclass(frozen=True, slots=True)
class Synthesize(Step[str]):
    kind: ClassVar[StepKind] = "synthesize"
    profile: PatientProfile
    included: tuple[tuple[CandidateOption, float], ...]
    excluded: tuple[tuple[CandidateOption, float], ...]


# The request type of every step kind, in pipeline order.
STEP_TYPES: tuple[type[Step[Any]], ...] = (
    Assess,
    AssemblePanel,
    Consult,
    Score,
    Relate,
    Adjudicate,
    Arbitrate,
    Synthesize,
)


@runtime_checkable
class Experts(Protocol):
    """Every model-backed step of the pipeline behind one method: ``run`` answers one step
    request with one model call (httpx's one-method transport is the model). Wrappers
    implement ``run`` once instead of repeating every step's signature."""

    name: str  # e.g. "embedded-experts/1.0" or "triton:medgemma-4b"

    async def is_ready(self) -> bool: ...

    async def run(self, step: Step[R], ctx: CallContext) -> R: ...

    async def aclose(self) -> None: ...
