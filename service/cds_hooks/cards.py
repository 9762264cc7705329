"""From a deliberation document to CDS Hooks cards: what the panel found, said for a clinician.

``summary_card`` (patient-view): the plan's top activities, the options left for a human to
decide, what the plan checked and could not (its coverage statement), a warning when the panel
included an immediate-safety option or when a high-risk check could not run (an out-of-scope
patient, an unrecognised medicine, a missing fact that disables a dose or safety check; see
``inference/knowledge/data/scope.yaml``), and a link to the full, contestable plan.
``order_findings`` + ``order_card`` (order-select / order-sign): a
draft MedicationRequest "should not go ahead" when an *included* option (F > threshold) of a
safety or medication category is about that draft (``medication_ref`` or ``refs``) and its
action kind stops, holds, lowers, tapers or switches it (a review only with a coded safety
finding; never read from the option's words, except in documents older than action kinds); the
card names the roles and their arguments, suggests removing the
draft (and a safer alternative when the panel included one), and offers override reasons.

Every value from data (the record, a draft order, the knowledge and a site's overlay) enters a
card through ``markdown``: escaped in ``detail``, stripped to plain text in ``summary``,
suggestion labels and action descriptions; the only links are built here from ``review_url``.

Cards carry deterministic UUIDs (from plan, version and what they are about), and each comes
with a ``CardRecord`` so feedback can find the plan and the options behind it. Pure: no I/O,
no clock. A card reads a ``CardPlan``: built from the typed deliberation and evaluation where
the caller has them (``card_plan``: the plan it just wrote, ``service.versions``), and from a
stored ``canoe.deliberation/1`` document only where that is all there is
(``card_plan_of_document``; the card functions accept such a document as well).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from fhir_mapping.careplan import issue_coding
from fhir_mapping.definitions import CODE_SYSTEMS, CS_OVERRIDE_REASON
from service.cds_hooks.markdown import escape, plain
from service.core import CATEGORY_ORDER, Evaluation, evaluate, from_document
from service.core.model import Deliberation
from service.errors import DocumentError
from service.text.summary import Summary, coverage_detail, coverage_lines, summarise
from service.text.words import ranking_label

__all__ = [
    "CARD_NAMESPACE",
    "OVERRIDE_REASONS",
    "OVERRIDE_SYSTEM",
    "CardArgument",
    "CardOption",
    "CardPlan",
    "CardRecord",
    "Finding",
    "card_id_for",
    "card_plan",
    "card_plan_of_document",
    "order_card",
    "order_findings",
    "summary_card",
]

CARD_NAMESPACE: Final = uuid.UUID("6f1d0d4e-7a43-5b7e-9c1e-3a2f1c0b9e55")
SOURCE_LABEL: Final = "Canoe care-plan panel"
# The reasons a clinician may give, from the committed CodeSystem (one specification).
OVERRIDE_SYSTEM: Final = CS_OVERRIDE_REASON
OVERRIDE_REASONS: Final = tuple(
    (code, display) for code, display, _ in CODE_SYSTEMS["cds-override-reason"].concepts
)
SAFETY_CATEGORIES: Final = frozenset({"immediate-safety", "medication", "medications"})
# The action kinds of an option that mean "this order should not go ahead" as it stands; a
# "review" says so only when it rests on a coded safety finding (an interaction, a drug-disease
# or dose problem: a DetectedIssue).
AGAINST_ACTIONS: Final = frozenset(
    {"stop-now", "stop-at-review", "switch", "lower", "hold", "taper", "end-course"}
)
# A supporting argument this strong makes an uncoded finding's card critical.
STRONG_SUPPORT: Final = 0.8
# Documents written before options carried an action kind: what the title or description must
# say to mean the same (read only where the option has no action).
_AGAINST: Final = re.compile(
    r"\b(stop|stopping|avoid|avoiding|discontinu\w*|deprescrib\w*|switch\w*|replace\w*|"
    r"withhold\w*|withdraw\w*|cease|do not (start|give|prescribe|use)|don't|not (start|"
    r"prescribe|use)|contraindicat\w*|instead|reduce|taper)\b",
    re.IGNORECASE,
)
SUMMARY_MAX: Final = 140  # the specification's limit for card.summary
TOP_ACTIVITIES: Final = 5

CardIndicator = Literal["critical", "warning", "info"]  # the CDS Hooks card indicator
_INDICATOR_RANK: Final[tuple[CardIndicator, ...]] = ("critical", "warning", "info")
# A finding's harm severity (the knowledge criterion's, as the DetectedIssue carries it) -> the
# indicator of a card that says the order should not go ahead.
_KIND_INDICATOR: Final[dict[str, CardIndicator]] = {
    "critical": "critical",
    "major": "critical",
    "moderate": "warning",
    "minor": "info",
}
_HARM_RANK: Final = ("critical", "major", "moderate", "minor")


@dataclass(frozen=True, slots=True)
class CardRecord:
    """What feedback on a card needs: the plan version it came from and the options behind it.
    ``user_ref`` is the hook's context.userId: the person a contestation is attributed to."""

    card_id: str
    tenant: str
    service_id: str
    plan_id: str
    version: int
    patient_ref: str
    user_ref: str
    kind: Literal["summary", "order"]
    option_ids: tuple[str, ...] = ()
    draft_ref: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    """One included option that argues against a draft order. ``kind`` and ``harm``: its
    worst coded safety finding (``Option.findings``: criterion kind and harm severity), when it
    carries one; the card's topic and indicator come from them."""

    draft_ref: str
    option: CardOption
    severity: CardIndicator
    kind: str | None = None
    harm: str | None = None

    @property
    def option_id(self) -> str:
        return self.option.id


@dataclass(frozen=True, slots=True)
class CardArgument:
    """An argument a card shows (one not rejected): who made it, on which side, how strong it
    came out (``sigma``, None when not scored), its words and its evidence."""

    role: str
    stance: str
    sigma: float | None
    text: str
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CardOption:
    """What a card reads of one option: its words, the evaluation's verdict, what it is about,
    its action kind, timeframe and coded findings ((criterion kind, harm severity)) as the
    knowledge stated them, and its arguments not rejected."""

    id: str
    title: str
    category: str
    description: str = ""
    included: bool = False
    score: float | None = None
    borderline: bool = False
    medication_ref: str | None = None
    refs: tuple[str, ...] = ()
    action: str | None = None
    timeframe: str | None = None
    urgency_class: str | None = None
    findings: tuple[tuple[str, str], ...] = ()
    code: tuple[str, str, str] | None = None  # (system, code, display)
    arguments: tuple[CardArgument, ...] = ()


@dataclass(frozen=True, slots=True)
class CardPlan:
    """What a card reads of one plan version. ``deliberation`` and ``summary``: the typed plan
    and its clinician summary (None for a document that is not a complete deliberation: then
    the card lists the activities itself and says nothing of coverage)."""

    options: tuple[CardOption, ...]
    threshold: float
    panel: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    deliberation: Deliberation | None = None
    summary: Summary | None = None


def card_plan(
    plan: Deliberation, evaluation: Evaluation, summary: Summary | None = None
) -> CardPlan:
    """The card's view of a typed plan and its evaluation (``summary``: its clinician summary,
    written from them when not given)."""
    options = []
    for o, r in zip(plan.options, evaluation.options, strict=True):
        arguments = tuple(
            CardArgument(a.role, a.stance, r.nodes[a.id].sigma, a.text, a.evidence)
            for a in o.arguments
            if a.status != "rejected"
        )
        options.append(
            CardOption(
                id=o.id,
                title=o.title,
                category=o.category,
                description=o.description,
                included=r.decision == "include",
                score=r.score,
                borderline=r.borderline,
                medication_ref=o.medication_ref,
                refs=o.refs,
                action=o.action,
                timeframe=o.timeframe,
                urgency_class=o.urgency_class,
                findings=tuple((f.kind, f.severity) for f in o.findings),
                code=o.code,
                arguments=arguments,
            )
        )
    return CardPlan(
        tuple(options),
        float(plan.parameters.threshold),
        tuple(role for role, _focus in plan.meta.panel),
        tuple(plan.meta.missing),
        plan,
        summary if summary is not None else summarise(plan, evaluation),
    )


def card_plan_of_document(document: Mapping[str, Any]) -> CardPlan:
    """The card's view of a stored ``canoe.deliberation/1`` document (plain JSON)."""
    meta = document.get("meta") or {}
    d = _deliberation(document)
    return CardPlan(
        tuple(_option_of(o) for o in document.get("options") or () if isinstance(o, Mapping)),
        float((document.get("parameters") or {}).get("threshold", 0.5)),
        tuple(str(p.get("role")) for p in meta.get("panel") or ()),
        tuple(str(m) for m in meta.get("missing") or ()),
        d,
        summarise(d, evaluate(d)) if d is not None else None,
    )


def _as_plan(plan: CardPlan | Mapping[str, Any]) -> CardPlan:
    return plan if isinstance(plan, CardPlan) else card_plan_of_document(plan)


def _option_of(option: Mapping[str, Any]) -> CardOption:
    code = option.get("code")
    return CardOption(
        id=str(option.get("id")),
        title=str(option.get("title", "")),
        category=str(option.get("category", "")),
        description=str(option.get("description") or ""),
        included=option.get("decision") == "include",
        score=_number(option.get("score")),
        borderline=bool(option.get("borderline")),
        medication_ref=option.get("medication_ref"),
        refs=tuple(option.get("refs") or ()),
        action=option.get("action"),
        timeframe=option.get("timeframe"),
        urgency_class=option.get("urgency_class"),
        findings=tuple(
            (str(f.get("kind")), str(f.get("severity")))
            for f in option.get("findings") or ()
            if isinstance(f, Mapping)
        ),
        code=(str(code.get("system")), str(code.get("code") or ""), str(code.get("display") or ""))
        if isinstance(code, Mapping)
        else None,
        arguments=tuple(
            CardArgument(
                str(n.get("role", "?")),
                str(n.get("stance")),
                _number(n.get("sigma")),
                str(n.get("text", "")),
                tuple(str(e) for e in n.get("evidence") or ()),
            )
            for n in option.get("nodes") or ()
            if isinstance(n, Mapping)
            and n.get("kind") == "argument"
            and n.get("status") != "rejected"
        ),
    )


def _number(x: object) -> float | None:
    try:
        return float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _card_uuid(*parts: object) -> str:
    return str(uuid.uuid5(CARD_NAMESPACE, "|".join(str(p) for p in parts)))


def _clip(text: str, limit: int = SUMMARY_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _about(option: CardOption, ref: str) -> bool:
    return option.medication_ref == ref or ref in option.refs


def _says_against(option: CardOption, ref: str) -> bool:
    """The option's action kind says the draft should not go ahead as it stands."""
    if option.action is not None:
        return option.action in AGAINST_ACTIONS or (
            option.action == "review" and bool(_coded_findings([option]))
        )
    # An option *about* the draft (medication_ref) may say so in its description; one that only
    # lists it among its refs (a medication review) must say it in its title.
    text = option.title
    if option.medication_ref == ref:
        text += f" {option.description}"
    return bool(_AGAINST.search(text))


def _urgent(option: CardOption) -> bool:
    """The activity is to be done today (timeframe ``now``); a document written before
    timeframes: its urgency class is resolve first or urgent."""
    if option.timeframe is not None:
        return option.timeframe == "now"
    return option.urgency_class in ("resolve-first", "urgent")


def _coded_findings(options: Sequence[CardOption]) -> list[tuple[str, str]]:
    """(kind, harm severity) of every finding of ``options`` that has a detected-issue code,
    worst harm first; equal harm keeps the order of ``options`` and of their findings."""
    found = [
        (kind, harm)
        for o in options
        for kind, harm in o.findings
        if issue_coding([kind]) is not None
    ]
    return sorted(found, key=lambda kh: _rank(kh[1], _HARM_RANK))


def _rank(value: str, order: Sequence[str]) -> int:
    return order.index(value) if value in order else len(order)


def _severity(option: CardOption) -> tuple[CardIndicator, str | None, str | None]:
    """The card indicator for one option, with the kind and harm of its worst coded finding.

    With a coded finding the indicator is its harm's (a drug-drug interaction of critical harm
    is ``critical``, a minor one ``info``); an immediate-safety or urgent option is never below
    ``critical``, since the summary puts it first. Without one, a strong supporting argument
    (sigma >= 0.8) makes it ``critical``."""
    floor: CardIndicator = (
        "critical" if option.category == "immediate-safety" or _urgent(option) else "info"
    )
    coded = _coded_findings([option])
    if coded:
        kind, harm = coded[0]
        return _higher(_KIND_INDICATOR.get(harm, "warning"), floor), kind, harm
    strong = any(
        a.stance == "support" and (a.sigma or 0.0) >= STRONG_SUPPORT for a in option.arguments
    )
    return _higher("critical" if strong else "warning", floor), None, None


def _higher(first: CardIndicator, second: CardIndicator) -> CardIndicator:
    return min(first, second, key=lambda i: _INDICATOR_RANK.index(i))


def order_findings(plan: CardPlan | Mapping[str, Any], draft_refs: Sequence[str]) -> list[Finding]:
    """Every included safety/medication option that says a draft order should not go ahead
    (``plan``: ``card_plan`` of the typed plan, or a stored document)."""
    options = _as_plan(plan).options
    out: list[Finding] = []
    for ref in draft_refs:
        for option in options:
            if (
                option.included
                and option.category in SAFETY_CATEGORIES
                and _about(option, ref)
                and _says_against(option, ref)
            ):
                indicator, kind, harm = _severity(option)
                out.append(Finding(ref, option, indicator, kind, harm))
    return out


def _fmt(x: object) -> str:
    try:
        return f"{float(x):.2f}"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "n/a"


def _argument_lines(option: CardOption, stance: str) -> list[str]:
    args = sorted(
        (a for a in option.arguments if a.stance == stance), key=lambda a: -(a.sigma or 0.0)
    )
    lines = []
    for a in args:
        evidence = escape(", ".join(a.evidence))
        cite = f" _\\[{evidence}\\]_" if evidence else ""
        lines.append(
            f"- **{escape(a.role)}** (strength {_fmt(a.sigma)}): {escape(_clip(a.text, 400))}{cite}"
        )
    return lines


def _items(texts: Sequence[str]) -> list[str]:
    """A bullet list of data, escaped; an empty value is left out (a bare "-" under a line
    would make that line a heading)."""
    return [f"- {escape(t)}" for t in texts if escape(t)]


def _roles(option: CardOption, stance: str) -> list[str]:
    """The roles on one side, escaped for ``detail``."""
    return sorted({escape(a.role) for a in option.arguments if a.stance == stance})


def _link(review_url: str, plan_id: str, version: int) -> dict[str, Any]:
    # A SMART link: the review app is launched in the EHR's context (user and patient), so it
    # can attribute contestations; appContext only names the plan, never patient data.
    return {
        "label": "Review and contest the full care plan",
        "url": review_url,
        "type": "smart",
        "appContext": json.dumps({"planId": plan_id, "version": version}, sort_keys=True),
    }


def _source(review_url: str, options: Sequence[CardOption] = ()) -> dict[str, Any]:
    """The card's source; its ``topic`` is the detected-issue code (v3 ActCode, as the plan's
    DetectedIssue carries it) of the worst-harm coded safety finding of ``options`` (the first
    such among equals): naproxen on warfarin is a drug interaction before it is an age alert."""
    out: dict[str, Any] = {"label": SOURCE_LABEL, "url": review_url}
    topic = issue_coding(kind for kind, _harm in _coded_findings(options))
    if topic is not None:
        out["topic"] = topic
    return out


def _panel(plan: CardPlan) -> str:
    roles = [escape(role) for role in plan.panel]
    return ", ".join(roles) if roles else "n/a"


def _drug_text(draft: Mapping[str, Any] | None, ref: str) -> str:
    if draft is None:
        return ref
    concept = draft.get("medicationCodeableConcept") or {}
    text = concept.get("text") or next(
        (c.get("display") for c in concept.get("coding") or () if c.get("display")), None
    )
    return str(text or ref)


def order_card(
    findings: Sequence[Finding],
    *,
    plan: CardPlan | Mapping[str, Any],
    draft: Mapping[str, Any] | None,
    review_url: str,
    record: CardRecord,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """One card for one draft order and every finding against it (strongest first).
    ``plan``: ``card_plan`` of the typed plan the findings came from, or a stored document."""
    view = _as_plan(plan)
    ordered = sorted(findings, key=lambda f: -(f.option.score or 0.0))
    top = ordered[0]
    severity = min((f.severity for f in ordered), key=lambda i: _INDICATOR_RANK.index(i))
    drug = _drug_text(draft, top.draft_ref)
    thr = view.threshold
    detail: list[str] = [
        f"The care-plan panel ({_panel(view)}) deliberated about the draft order "
        f"**{escape(drug)}** against the patient's record and found it should not go ahead as "
        "written.",
    ]
    for f in ordered:
        o = f.option
        detail += [
            "",
            f"**{escape(o.title)}** ({escape(o.category)}; "
            f"score {_fmt(o.score)}, "
            f"included because above {thr:.2f})",
        ]
        if o.description:
            detail.append(escape(_clip(o.description, 600)))
        pro = _argument_lines(o, "support")
        con = _argument_lines(o, "attack")
        if pro:
            detail += ["", f"For ({', '.join(_roles(o, 'support'))}):", *pro]
        if con:
            detail += ["", f"Against ({', '.join(_roles(o, 'attack'))}):", *con]
    if notes:
        detail += ["", "**Made without**", *_items(notes)]
    detail += [
        "",
        "If you go ahead, choose an override reason: it is recorded against the care plan as "
        "your decision, with your name, and the plan is recomputed.",
    ]
    suggestions = [
        {
            "label": _clip(plain(f"Remove the draft order for {drug}"), 80),
            "uuid": _card_uuid(record.card_id, "remove"),
            "isRecommended": True,
            "actions": [
                {
                    "type": "delete",
                    "description": _clip(plain(f"Remove the draft order for {drug}"), 140),
                    "resourceId": top.draft_ref,
                }
            ],
        }
    ]
    alt = _alternative(view, top.draft_ref, draft, record)
    if alt is not None:
        suggestions.append(alt)
    summary = _clip(plain(f"{drug}: {top.option.title or 'the panel advises against this order'}"))
    return {
        "uuid": record.card_id,
        "summary": summary,
        "indicator": severity,
        "detail": "\n".join(detail),
        "source": _source(review_url, [f.option for f in ordered]),
        "suggestions": suggestions,
        "selectionBehavior": "at-most-one",
        "overrideReasons": [
            {"system": OVERRIDE_SYSTEM, "code": c, "display": d} for c, d in OVERRIDE_REASONS
        ],
        "links": [_link(review_url, record.plan_id, record.version)],
    }


def _alternative(
    plan: CardPlan,
    draft_ref: str,
    draft: Mapping[str, Any] | None,
    record: CardRecord,
) -> dict[str, Any] | None:
    """A safer alternative the panel *included*: an option about the same draft that carries a
    medication code and does not itself say stop (e.g. "use paracetamol instead" with RxNorm)."""
    for option in plan.options:
        code = option.code
        if not (option.included and _about(option, draft_ref) and code is not None):
            continue
        if _says_against(option, draft_ref):
            continue  # the finding itself (its code is the drug to stop), not an alternative
        system, value, shown = code
        if system != "http://www.nlm.nih.gov/research/umls/rxnorm":
            continue
        display = shown or option.title
        resource: dict[str, Any] = {
            "resourceType": "MedicationRequest",
            "status": "draft",
            "intent": "proposal",
            "medicationCodeableConcept": {
                "coding": [{"system": system, "code": value, "display": display}],
                "text": display,
            },
            "subject": {"reference": record.patient_ref},
        }
        if draft is not None and isinstance(draft.get("encounter"), Mapping):
            resource["encounter"] = dict(draft["encounter"])
        return {
            "label": _clip(plain(f"Use {display} instead"), 80),
            "uuid": _card_uuid(record.card_id, "alternative", option.id),
            "actions": [
                {
                    "type": "delete",
                    "description": "Remove the draft order",
                    "resourceId": draft_ref,
                },
                {
                    "type": "create",
                    "description": _clip(plain(f"Propose {display}"), 140),
                    "resource": resource,
                },
            ],
        }
    return None


def _order(option: CardOption) -> tuple[int, float]:
    cat = option.category
    rank = CATEGORY_ORDER.index(cat) if cat in CATEGORY_ORDER else len(CATEGORY_ORDER)
    return rank, -(option.score or 0.0)


def _deliberation(document: Mapping[str, Any]) -> Deliberation | None:
    """The document as a deliberation, or None when it is not a complete one (then the card
    lists the activities itself and says nothing of coverage)."""
    try:
        return from_document(document)
    except DocumentError:
        return None


def ranked_lines(summary: Summary) -> list[str]:
    """The clinician summary's ranked lines (``service.text.summary``). Each already starts
    "1. ...": a Markdown ordered list as it stands (a "- " before it rendered as a numbered
    item inside a bullet in the CDS Hooks sandbox)."""
    return [_ranked(line.rank, line.text()) for line in summary.lines]


def _ranked(rank: int, text: str) -> str:
    """A ranked line with its words escaped and its "N. " kept as the list marker."""
    mark = f"{rank}. "
    return mark + escape(text.removeprefix(mark))


def summary_card(
    plan: CardPlan | Mapping[str, Any],
    *,
    review_url: str,
    record: CardRecord,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The patient-view card: top activities, borderline options, safety warning, link.

    ``plan``: ``card_plan`` of the typed plan and its clinician summary where the caller has
    them (the plan it just wrote); a stored document otherwise."""
    view = _as_plan(plan)
    options = view.options
    included = sorted((o for o in options if o.included), key=_order)
    borderline = [o for o in options if o.borderline]
    # What the summary marks urgent is never on an ``info`` card (an older document without
    # urgency classes: its immediate-safety activities).
    safety = [o for o in included if o.category == "immediate-safety" or _urgent(o)]
    lines: list[str] = [
        f"A panel of {_panel(view)} deliberated on this patient's record: "
        f"{len(included)} of {len(options)} candidate interventions cleared the "
        f"{view.threshold:.2f} threshold.",
    ]
    d = view.deliberation
    ranked = ranked_lines(view.summary) if view.summary is not None else None
    if ranked:
        lines += ["", f"**{escape(ranking_label())}**", *ranked]
    if safety and ranked is None:
        lines += ["", "**Safety: the panel found an issue that needs attention now**"]
        for o in safety:
            lines.append(
                f"- **{escape(o.title)}** (score {_fmt(o.score)}; for: "
                f"{', '.join(_roles(o, 'support')) or 'none'}; against: "
                f"{', '.join(_roles(o, 'attack')) or 'none'})"
            )
    top = [o for o in included if o not in safety][:TOP_ACTIVITIES]
    if top and ranked is None:
        lines += ["", "**Top activities**"]
        for o in top:
            lines.append(f"- {escape(o.title)} ({escape(o.category)}, score {_fmt(o.score)})")
    if borderline:
        lines += ["", "**Awaiting a human decision** (score too close to call)"]
        for o in borderline:
            lines.append(f"- {escape(o.title)} (score {_fmt(o.score)})")
    missing = view.missing
    if notes or missing:
        lines += ["", "**Made without**", *_items((*notes, *missing))]
    coverage = d.meta.coverage if d is not None else None
    if coverage is not None:
        lines += ["", "**What was checked**", *(escape(x) for x in coverage_lines(coverage))]
        lines += ["", "**Coverage in detail**"]
        lines += [f"- {escape(x)}" for x in coverage_detail(coverage)]
    # A high-risk check could not run: the plan's silence there is not safety, and the
    # summary says so whatever else leads it.
    unchecked = (
        next(g for g in coverage.gaps if g.high_risk)
        if coverage is not None and coverage.high_risk
        else None
    )
    if safety:
        lead = min(safety, key=lambda o: not _urgent(o))  # stable: the first urgent one
        kind = "urgent" if _urgent(lead) else "safety issue"
        summary = f"Care plan: {kind}: {lead.title}"
        if unchecked is not None:
            summary += f"; not checked: {unchecked.label}"
        indicator = "warning"
    elif unchecked is not None:
        summary = f"Care plan: {len(included)} activities; not checked: {unchecked.label}"
        indicator = "warning"
    else:
        summary = f"Care plan: {len(included)} activities"
        if borderline:
            summary += f", {len(borderline)} awaiting your decision"
        indicator = "info"
    return {
        "uuid": record.card_id,
        "summary": _clip(plain(summary)),
        "indicator": indicator,
        "detail": "\n".join(lines),
        "source": _source(review_url, safety),
        "links": [_link(review_url, record.plan_id, record.version)],
    }


def card_id_for(plan_id: str, version: int, kind: str, about: str = "") -> str:
    return _card_uuid(plan_id, version, kind, about)
