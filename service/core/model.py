"""The deliberation as data: what the panel said, what the humans changed. Frozen, FHIR-free.

A ``Deliberation`` holds only *inputs* of the reasoning (votes, arguments with their intrinsic
strength ``tau``, edges, clash outcomes, contestations). Everything derived (``tau~``, ``sigma``,
option scores, router paths, decisions by score) is computed by ``service.core.evaluate`` and
never stored here, so a stored deliberation can always be recomputed and audited.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "ACTION_KINDS",
    "TIMEFRAMES",
    "ActionKind",
    "Argument",
    "Clash",
    "Contestation",
    "Coverage",
    "CoverageFamily",
    "CoverageGap",
    "Deliberation",
    "Edge",
    "Finding",
    "KnowledgeStamp",
    "Meta",
    "Option",
    "Parameters",
    "PatientWording",
    "Problem",
    "SiteRetirement",
    "SourceRecord",
    "Timeframe",
    "Vote",
]

Stance = Literal["support", "attack"]
VoteValue = Literal["KEEP", "REFUSE", "NEUTRAL"]
Judgement = Literal["accept", "reject"]
OptionDecision = Literal["include", "exclude"]
ArgumentStatus = Literal["active", "accepted", "rejected"]
Action = Literal["accept", "reject", "edit", "add", "decide"]
# What an activity does and when: start a medicine, stop one today (a harm now) or at the next
# review, switch it for another, raise or lower its dose, hold it, restart it, end a course on
# its date, taper it step by step (a medicine that must not be stopped suddenly), check a test,
# refer, teach, or review.
ActionKind = Literal[
    "start",
    "stop-now",
    "stop-at-review",
    "switch",
    "raise",
    "lower",
    "hold",
    "restart",
    "end-course",
    "taper",
    "check",
    "refer",
    "teach",
    "review",
]
ACTION_KINDS: tuple[str, ...] = ActionKind.__args__  # type: ignore[attr-defined]
# When an activity should happen, soonest first: the same day, within 72 hours, within 7 days,
# within 4 weeks, at the next review. The plan is ranked by it before anything else.
Timeframe = Literal["now", "72h", "7d", "4w", "next-review"]
TIMEFRAMES: tuple[str, ...] = Timeframe.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Parameters:
    """Documented defaults. ``delta`` (clash threshold, CANOE eq. 7) and ``beta`` (calibration
    step, eq. 8): CANOE names both but states no values, and CAMP has neither; 0.2 and 0.15 are
    this project's choices, not tuned against any data set (an earlier note put them down to the
    authors' arena code, which this project has not seen). ``delta`` is compared on exact
    decimals (``arena.is_near_tie``). ``threshold`` the inclusion cut (F > threshold); ``band``:
    |F - 0.5| <= band is flagged borderline."""

    delta: float = 0.2
    beta: float = 0.15
    threshold: float = 0.5
    band: float = 0.05
    tolerance: float = 1e-12
    max_iterations: int = 10_000


@dataclass(frozen=True, slots=True)
class Argument:
    id: str
    role: str  # professional role, or "human" for a planner's added argument
    stance: Stance  # towards the option
    text: str
    evidence: tuple[str, ...]  # evidence-base document ids
    facts: tuple[str, ...]  # FHIR references (Condition/..., MedicationRequest/...) it cites
    tau: float  # intrinsic strength in [0, 1]
    origin: Literal["agent", "human"] = "agent"
    status: ArgumentStatus = "active"  # rejected arguments stay on record, out of the graph
    # "human" once a planner set the strength (an added argument or an edited tau): such an
    # argument takes part in no arena clash, since the human, not the adjudicator, weighed it.
    tau_source: Literal["model", "human"] = "model"


@dataclass(frozen=True, slots=True)
class Edge:
    """``source`` supports/attacks ``target``; target is the option id or another argument id."""

    source: str
    target: str
    relation: Stance


@dataclass(frozen=True, slots=True)
class Clash:
    """A near-tied opposing pair sent to the adjudicator. ``winner`` None = no usable verdict."""

    support: str
    attack: str
    winner: Stance | None
    # The adjudicator's stated reason (which rule decided, or why none did). Context for the
    # reader; the calibration uses only ``winner``.
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    """A safety finding an option answers, as the knowledge criterion that found it stated it:
    ``kind`` is the criterion's kind (``drug-drug``, ``drug-disease``, ``dose-ceiling``...),
    ``severity`` its harm severity (critical, major, moderate, minor), ``criterion`` its id."""

    kind: str
    severity: str
    criterion: str


@dataclass(frozen=True, slots=True)
class Option:
    id: str
    title: str
    category: str
    description: str
    arguments: tuple[Argument, ...] = ()
    edges: tuple[Edge, ...] = ()  # includes every argument -> option edge
    clashes: tuple[Clash, ...] = ()
    refs: tuple[str, ...] = ()
    problem_ids: tuple[str, ...] = ()
    code: tuple[str, str, str] | None = None  # (system, code, display)
    medication_ref: str | None = None
    human_decision: OptionDecision | None = None
    # Clinical priority class ("safety", "omission", "monitoring", "review"; PRIORITY_ORDER in
    # ``service.core.evaluation``): orders the plan before the score. None in documents written
    # before it existed; those keep the category order.
    priority: str | None = None
    # The safety findings behind the option, carried from the criteria that proposed it (empty
    # in documents written before they were kept, and for options no criterion proposed).
    findings: tuple[Finding, ...] = ()
    # How soon to act ("resolve-first", "urgent", "soon", "routine"; URGENCY_ORDER in
    # ``service.core.evaluation``): orders the plan before the priority class. None in
    # documents written before it existed; those keep the priority order.
    urgency_class: str | None = None
    # Concern codes the option's own design already answers (a gradual taper answers
    # "abrupt-withdrawal"), by which an objection raising one lost its clash. Empty in
    # documents written before they were kept.
    answers: tuple[str, ...] = ()
    # The clinical problem (a condition group id of the knowledge) the option treats together
    # with other options: the clinician summary shows them on one line. None when the knowledge
    # groups it with nothing, and in documents written before it existed.
    treats: str | None = None
    # What the activity does to the patient's care and when (``ACTION_KINDS``: "stop-now",
    # "taper", "switch"...), stated by the knowledge: the clinician and the patient wording both
    # read it, so they cannot disagree. None in documents written before it existed.
    action: str | None = None
    # When to act (``TIMEFRAMES``), stated by the knowledge: ranks the plan before anything
    # else and is said in words in every view. None in documents written before it existed.
    timeframe: str | None = None
    # The harm the activity averts, severity x likelihood as the knowledge scores it: ranks
    # the activities of one timeframe. None in documents written before it existed.
    harm: float | None = None
    # An action of the transition after a hospital stay (follow-up, reconciliation, a test due
    # after a change in hospital): ranks before the reviews of standing medicines that are not
    # for today. False in documents written before it existed.
    transition: bool = False


@dataclass(frozen=True, slots=True)
class Vote:
    role: str
    vote: VoteValue
    confidence: float
    quote: str
    rationale: str


@dataclass(frozen=True, slots=True)
class Problem:
    id: str
    display: str
    initial: Judgement  # the attending's y0
    votes: tuple[Vote, ...] = ()
    refs: tuple[str, ...] = ()
    arbitration: Judgement | None = None  # only on the conflict path; a model's verdict
    arbitration_rationale: str = ""
    human_decision: Judgement | None = None


@dataclass(frozen=True, slots=True)
class Contestation:
    """One applied human action. ``at`` is supplied by the caller (the core has no clock)."""

    id: str  # the Task id: applying the same id twice is a no-op
    action: Action
    target: str  # argument, option or problem id
    actor: str  # e.g. "Practitioner/123"
    at: str  # ISO 8601 timestamp
    reason: str = ""
    payload: Mapping[str, object] = field(default_factory=dict)


# "unaddressed": a presenting problem no line of the plan addresses (named in the plan too).
GapKind = Literal["out-of-scope", "unrecognised", "missing-fact", "uncovered", "unaddressed"]


@dataclass(frozen=True, slots=True)
class CoverageFamily:
    """One family of checks (interactions, kidney dosing...): whether it ran for this patient,
    and why not when it did not (``why``: no criteria of it in the knowledge, a fact missing)."""

    key: str
    label: str
    ran: bool
    why: str = ""
    # Not run because the site's knowledge retired every criterion of it: the statement names it.
    site_emptied: bool = False


@dataclass(frozen=True, slots=True)
class CoverageGap:
    """Something the plan could not check. ``label`` is the short name the summary prints,
    ``check`` what a human should check instead; ``refs`` the record facts behind it."""

    kind: GapKind
    key: str
    label: str
    check: str
    high_risk: bool
    refs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SiteRetirement:
    """A shipped criterion a site's knowledge does not use, and the site's reason."""

    criterion: str
    reason: str


@dataclass(frozen=True, slots=True)
class Coverage:
    """What a plan checked and what it could not: silence is not safety. Computed once from
    the record and the knowledge at plan time and kept with the deliberation."""

    knowledge_version: str
    population: str  # what the knowledge was built and validated for, in words
    families: tuple[CoverageFamily, ...] = ()
    gaps: tuple[CoverageGap, ...] = ()
    # The claims about the record that the plan's findings rested on and were checked against
    # it, and those the checker withheld ("<criterion id>:<claim kind>"): a finding whose
    # claim the record does not bear out is not said. 0 and empty in older documents.
    claims_checked: int = 0
    withheld: tuple[str, ...] = ()
    # The shipped criteria the site's knowledge retired, each with the site's reason.
    retired: tuple[SiteRetirement, ...] = ()

    @property
    def high_risk(self) -> bool:
        """A high-risk check could not run (the CDS card rises to ``warning``)."""
        return any(g.high_risk for g in self.gaps)


@dataclass(frozen=True, slots=True)
class PatientWording:
    """How the patient version tells one activity: plain words rendered at plan time from the
    activity's structured data and the knowledge's patient templates. ``section`` is one of
    ``service.text.patient.SECTIONS``; ``watch`` an optional line for "what to watch for"."""

    option_id: str
    section: str
    text: str
    watch: str = ""


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """Where one resource of the patient's record lives in the system that sent it: ``ref`` is
    the ``Type/id`` the deliberation cites, ``url`` its absolute RESTful URL when the source
    named one (a ``fullUrl`` or the source's base), ``identifier`` its first business identifier
    (system, value) and ``display`` a short name, where the source had them."""

    ref: str
    url: str = ""
    identifier: tuple[str, str] | None = None
    display: str = ""


@dataclass(frozen=True, slots=True)
class KnowledgeStamp:
    """Which rules made a plan: the shipped knowledge's version and content hash, and the site
    overlay's label and content hash ("" when no site overlay was loaded). Hashes are
    ``sha256:<hex>`` over the files' names and bytes, so an auditor can hash a copy of the
    folders and compare."""

    version: str
    content_hash: str
    site_version: str = ""
    site_hash: str = ""


@dataclass(frozen=True, slots=True)
class Meta:
    """Non-derived context kept with the deliberation for the trail and the narrative."""

    backend: str = ""
    evidence_version: str = ""
    complexity: str = ""
    dimensions: tuple[str, ...] = ()
    panel: tuple[tuple[str, str], ...] = ()  # (role, focus)
    missing: tuple[str, ...] = ()  # contributions that failed and are absent, in words
    unused_facts: tuple[str, ...] = ()  # facts the profile could not use, in words
    synthesis: str = ""
    created: str = ""  # ISO timestamp of version 1
    # (reference, words): each cited patient fact with its value and date, for the clinician
    # summary, which never shows the reference itself.
    facts: tuple[tuple[str, str], ...] = ()
    # (full name, display name): the record's long official medicine names and the ingredient
    # and strength the summary shows in their place (``service.text.summary.display_names``);
    # the detailed view keeps the full names. Empty in documents written before it existed.
    names: tuple[tuple[str, str], ...] = ()
    # What the plan checked and could not (None in documents written before it existed).
    coverage: Coverage | None = None
    # Where the cited resources of the patient's record live (absent in older documents: their
    # references stay as the caller sent them).
    sources: tuple[SourceRecord, ...] = ()
    # The FHIR base of the system that sent the record (the CDS Hooks ``fhirServer``, or the
    # gRPC caller's ``source_base``), "" when unknown.
    source_base: str = ""
    # The knowledge the plan was made with (None in documents written before it was recorded).
    knowledge: KnowledgeStamp | None = None
    # Who the plan is for and how current the record is, in words made at plan time
    # (``service.text.summary.patient_words``): the summary's first line. "" in older documents.
    patient: str = ""
    # The patient's wording of each activity (none in documents written before it existed:
    # those activities get the generic wording).
    patient_wordings: tuple[PatientWording, ...] = ()


@dataclass(frozen=True, slots=True)
class Deliberation:
    plan_id: str
    version: int
    patient_ref: str
    parameters: Parameters
    problems: tuple[Problem, ...]
    options: tuple[Option, ...]
    contestations: tuple[Contestation, ...] = ()
    meta: Meta = field(default_factory=Meta)
