"""A deliberation and its evaluation as FHIR R4: a Bundle with CarePlan, Provenance and Devices.

``plan_bundle`` writes one plan version: the CarePlan (a machine ``proposal`` awaiting review,
labelled AI-asserted per the HL7 AI Transparency IG, with an AI confidence on every activity),
its Provenance (the service and every role agent as Devices, the patient's resources the
arguments cite as ``source``, the previous CarePlan version as ``revision`` and the human actors
after a contestation), and a Binary carrying the complete ``canoe.deliberation/1`` document.
``deliberation_from_bundle`` reads that Binary back: ``d == deliberation_from_bundle(
plan_bundle(d, ...))``. The argument graph is also readable from the CarePlan's own extensions
(``graph_from_careplan``), so a reviewer needs neither the Binary nor this service.

Bundle type is ``collection``: the result is a set of related resources handed to the caller,
not an instruction to a server (``transaction`` would make this service dictate the EHR's writes
and client-assigned ids; ``document`` needs a Composition and attestation semantics we do not
offer). Our resources carry ``fullUrl`` under the canonical base (``base``: the deployment's,
default ``DEFAULT_BASE``; rendered under the default and rebased at the end); the patient's
resources are referenced as the EHR sent them (``Type/id``). No clock here: ``recorded`` is
passed in. This module must not call a model or the store.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from typing import Any, Final

from fhir_mapping._detected import at_source, detected_issues, issue_coding, issue_refs
from fhir_mapping.definitions import (
    AI_CONFIDENCE,
    AIAST,
    CANOE_BASE,
    DEFAULT_BASE,
    DELIBERATION_CONTENT_TYPE,
    ext_url,
    rebase,
)
from service.core import from_document, to_document
from service.core.evaluation import Evaluation, OptionResult
from service.core.memo import CONTESTATION_MEMO, PrefixMemo
from service.core.model import Argument, Contestation, Deliberation, Option
from service.errors import BundleError, DocumentError, Issue
from service.jsonio import canonical_json
from service.text.patient import PatientVersion, patient_version
from service.text.summary import Summary, coverage_detail, coverage_lines, summarise, summary_text
from service.text.words import ranking_label, timeframe_words

__all__ = [
    "KNOWLEDGE_SYSTEM",
    "SERVICE_DEVICE_NAME",
    "SITE_KNOWLEDGE_SYSTEM",
    "at_source",
    "careplan_id",
    "careplan_of",
    "deliberation_from_bundle",
    "graph_from_careplan",
    "issue_coding",
    "patient_of",
    "plan_bundle",
    "service_version_default",
]

SERVICE_DEVICE_NAME: Final = "canoe care-plan service"
_PARTICIPANT = "http://terminology.hl7.org/CodeSystem/provenance-participant-type"
_DATA_OPERATION = "http://terminology.hl7.org/CodeSystem/v3-DataOperation"
_SNOMED = "http://snomed.info/sct"
_COMMUNICATION_CATEGORY = "http://terminology.hl7.org/CodeSystem/communication-category"
_REF = re.compile(r"^[A-Z][A-Za-z]+/[A-Za-z0-9\-.]{1,64}$")
_ID = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")
# Identifier systems of the knowledge a plan was made with (values: content hashes).
KNOWLEDGE_SYSTEM: Final = f"{CANOE_BASE}/knowledge"
SITE_KNOWLEDGE_SYSTEM: Final = f"{CANOE_BASE}/knowledge-site"
CRITERION_SYSTEM: Final = f"{CANOE_BASE}/criterion"

# detail.kind by the option's category (the core's CATEGORY_ORDER names); anything else is a
# ServiceRequest, the most general request an EHR can act on.
_KIND: Final[dict[str, str]] = {
    "medication": "MedicationRequest",
    "follow-up": "Appointment",
    "caregiver-support": "CommunicationRequest",
}

# detail.kind of an activity on a medicine recorded as taken, not prescribed here (named by its
# MedicationStatement): advice to the patient, since no prescription of ours is changed.
_MEDICINE_KIND: Final[dict[str, str]] = {"MedicationStatement": "CommunicationRequest"}


@functools.cache  # a metadata lookup scans site-packages: once per process, not per plan
def service_version_default() -> str:
    try:
        return metadata.version("canoe-careplan")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def careplan_id(plan_id: str, version: int) -> str:
    return f"{plan_id}-v{version}"


# --------------------------------------------------------------------------- small builders


def _ext(name: str, value_key: str, value: object) -> dict[str, object]:
    return {"url": ext_url(name), value_key: value}


def _part(url: str, value_key: str, value: object) -> dict[str, object]:
    return {"url": url, value_key: value}


def _complex(name: str, parts: Iterable[dict[str, object] | None]) -> dict[str, object]:
    return {"url": ext_url(name), "extension": [p for p in parts if p is not None]}


def _opt_str(url: str, value: str) -> dict[str, object] | None:
    # FHIR strings may not be empty: an absent value is an absent element.
    return _part(url, "valueString", value) if value else None


def _ref(reference: str) -> dict[str, str]:
    return {"reference": reference}


def _entry(resource: Mapping[str, Any]) -> dict[str, object]:
    return {
        "fullUrl": f"{CANOE_BASE}/{resource['resourceType']}/{resource['id']}",
        "resource": resource,
    }


def _short_hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:12]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:30] or "agent"


def _fmt(x: float) -> str:
    return f"{x:.3f}"


# --------------------------------------------------------------------------- devices


def _roles(d: Deliberation) -> list[str]:
    """Every agent role that contributed, panel order first, then order of appearance."""
    seen: dict[str, None] = {}
    for role, _focus in d.meta.panel:
        seen.setdefault(role, None)
    for p in d.problems:
        for v in p.votes:
            seen.setdefault(v.role, None)
    for o in d.options:
        for a in o.arguments:
            if a.origin == "agent":
                seen.setdefault(a.role, None)
    return list(seen)


def _device(
    device_id: str,
    names: Sequence[tuple[str, str]],
    kind: str,
    versions: Sequence[tuple[str, str]],
    note: str,
) -> dict[str, object]:
    dev: dict[str, object] = {
        "resourceType": "Device",
        "id": device_id,
        "status": "active",
        "deviceName": [{"name": n, "type": t} for n, t in names if n],
        "type": {"text": kind},
        "version": [{"type": {"text": t}, "value": v} for t, v in versions if v],
    }
    if note:
        dev["note"] = [{"text": note}]
    return dev


def _service_device(service_version: str) -> dict[str, object]:
    # Content-addressed id: a Device resource never changes meaning once an EHR stored it.
    return _device(
        f"canoe-service-{_short_hash(service_version)}",
        [(SERVICE_DEVICE_NAME, "user-friendly-name")],
        "clinical decision support software",
        [("software", service_version)],
        "",
    )


def _agent_device(role: str, d: Deliberation, service_version: str) -> dict[str, object]:
    backend, kb = d.meta.backend, d.meta.evidence_version
    focus = next((f for r, f in d.meta.panel if r == role), "")
    return _device(
        f"canoe-agent-{_slug(role)}-{_short_hash(role, backend, kb, service_version)}",
        [(f"{role} agent", "user-friendly-name"), (backend, "model-name")],
        f"AI role agent: {role}",
        [("model", backend), ("knowledge-base", kb), ("software", service_version)],
        f"Focus: {focus}" if focus else "",
    )


# --------------------------------------------------------------------------- the graph


def _argument_ext(a: Argument, option: Option, res: OptionResult) -> dict[str, object]:
    node = res.nodes.get(a.id)
    return _complex(
        "argument",
        [
            _part("id", "valueString", a.id),
            _part("option", "valueString", option.id),
            _part("role", "valueString", a.role),
            _part("stance", "valueCode", a.stance),
            _opt_str("text", a.text),
            _part("origin", "valueCode", a.origin),
            _part("status", "valueCode", a.status),
            _part("tauSource", "valueCode", a.tau_source),
            *(_part("evidence", "valueString", e) for e in a.evidence),
            *(_part("fact", "valueReference", _ref(f)) for f in a.facts),
            _part("tau", "valueDecimal", a.tau),
            _part("tauCalibrated", "valueDecimal", node.tau_calibrated if node else a.tau),
            _part("sigma", "valueDecimal", node.sigma) if node and node.sigma is not None else None,
        ],
    )


def _explanation(res: OptionResult, d: Deliberation) -> str:
    t = d.parameters.threshold
    f = _fmt(res.score)
    if res.decided_by == "human":
        why = f"{res.decision}d by a human decision (score F = {f})"
    elif res.reason:  # excluded by the plan's selection, whatever the score
        why = f"F = {f}; not included: {res.reason}"
    elif not res.converged:
        why = (
            f"propagation did not converge in {res.iterations} iterations (last F = {f}): "
            "not included by score; a human must adjudicate"
        )
    elif res.decision == "include":
        why = f"F = {f} > threshold {t}: included by score"
    else:
        why = f"F = {f} <= threshold {t}: not included by score"
    if res.borderline and res.converged:
        why += f"; within {d.parameters.band} of 0.5: flagged for human adjudication"
    return why


def _option_exts(option: Option, res: OptionResult, d: Deliberation) -> list[dict[str, object]]:
    code = option.code
    evaluation = _complex(
        "option-evaluation",
        [
            _part("optionId", "valueString", option.id),
            _part("title", "valueString", option.title),
            _part("category", "valueString", option.category),
            _opt_str("description", option.description),
            _part("code", "valueCoding", _coding(code)) if code else None,
            _part("medication", "valueReference", _ref(option.medication_ref))
            if option.medication_ref
            else None,
            *(_part("problem", "valueString", p) for p in option.problem_ids),
            _part("score", "valueDecimal", res.score),
            _part("threshold", "valueDecimal", d.parameters.threshold),
            _part("decision", "valueCode", res.decision),
            _part("decidedBy", "valueCode", res.decided_by),
            _part("borderline", "valueBoolean", res.borderline),
            _part("converged", "valueBoolean", res.converged),
            _part("iterations", "valueInteger", res.iterations),
            _part("explanation", "valueString", _explanation(res, d)),
        ],
    )
    out = [evaluation]
    out += [_argument_ext(a, option, res) for a in option.arguments]
    out += [
        _complex(
            "argument-relation",
            [
                _part("option", "valueString", option.id),
                _part("source", "valueString", e.source),
                _part("target", "valueString", e.target),
                _part("relation", "valueCode", e.relation),
            ],
        )
        for e in option.edges
    ]
    out += [
        _complex(
            "clash",
            [
                _part("option", "valueString", option.id),
                _part("support", "valueString", c.support),
                _part("attack", "valueString", c.attack),
                _part("winner", "valueCode", c.winner) if c.winner else None,
            ],
        )
        for c in option.clashes
    ]
    return out


def _coding(code: tuple[str, str, str]) -> dict[str, str]:
    system, value, display = code
    c = {"system": system, "code": value}
    if display:
        c["display"] = display
    return c


# --------------------------------------------------------------------------- the CarePlan


def _activity(
    option: Option, res: OptionResult, d: Deliberation, issues: Sequence[Mapping[str, Any]]
) -> dict[str, object]:
    concept: dict[str, object] = {"text": option.title}
    if option.code:
        concept["coding"] = [_coding(option.code)]
    kind = (
        _MEDICINE_KIND.get(option.medication_ref.split("/", 1)[0], "MedicationRequest")
        if option.medication_ref
        else _KIND.get(option.category, "ServiceRequest")
    )
    detail: dict[str, object] = {"kind": kind, "code": concept, "status": "not-started"}
    reasons = [
        r
        for p in d.problems
        if p.id in option.problem_ids
        for r in p.refs
        if r.split("/", 1)[0] in ("Condition", "Observation")
    ]
    if reasons:
        detail["reasonReference"] = [_ref(r) for r in dict.fromkeys(reasons)]
    if option.timeframe is not None:
        # when to act, in the words every view uses ("within 3 days")
        detail["scheduledString"] = timeframe_words(option.timeframe)
    if option.description:
        detail["description"] = option.description
    if option.medication_ref:
        detail["extension"] = [
            _ext("activity-medication", "valueReference", _ref(option.medication_ref))
        ]
        if option.medication_ref.split("/", 1)[0] in ("Medication", "Substance"):
            detail["productReference"] = _ref(option.medication_ref)
    return {
        "extension": [
            {"url": AI_CONFIDENCE, "valueDecimal": res.score},
            *_option_exts(option, res, d),
            # The safety findings this activity answers; CarePlan.activity has no element that
            # admits a DetectedIssue (detail.reasonReference does not), so an extension links it.
            *(_ext("detected-issue", "valueReference", r) for r in issue_refs(issues)),
        ],
        "detail": detail,
    }


def _problem_ext(d: Deliberation, ev: Evaluation) -> list[dict[str, object]]:
    out = []
    for p in d.problems:
        r = ev.problem(p.id)
        counts = {k: sum(1 for v in p.votes if v.vote == k) for k in ("KEEP", "REFUSE", "NEUTRAL")}
        out.append(
            _complex(
                "problem-reconciliation",
                [
                    _part("problemId", "valueString", p.id),
                    _part("display", "valueString", p.display or p.id),
                    *(_part("condition", "valueReference", _ref(x)) for x in p.refs),
                    _part("initial", "valueCode", p.initial),
                    _part("keep", "valueInteger", counts["KEEP"]),
                    _part("refuse", "valueInteger", counts["REFUSE"]),
                    _part("neutral", "valueInteger", counts["NEUTRAL"]),
                    _part("path", "valueCode", r.path),
                    _part("decision", "valueCode", r.decision) if r.decision else None,
                    _part("decidedBy", "valueCode", r.decided_by),
                ],
            )
        )
    return out


def _contestation_ext(c: Contestation) -> dict[str, object]:
    return _complex(
        "contestation",
        [
            _part("task", "valueString", c.id),
            _part("action", "valueCode", c.action),
            _part("target", "valueString", c.target),
            _part("actor", "valueReference", _ref(c.actor)),
            _part("at", "valueDateTime", c.at),
            _opt_str("reason", c.reason),
        ],
    )


# A plan's versions share their contestation records, and every version's CarePlan ends with
# all of them: each extension is written once in its final form (placed at its source, under
# the deployment's base) and reused, so the n-th contestation of a plan costs what the first
# did. Kept while what the final form depends on stays the same: the plan's sources and the base.
def _final_contestation(c: Contestation, d: Deliberation, base: str) -> dict[str, object]:
    return rebase(at_source(_contestation_ext(c), d), base)


_FINAL_CONTESTATIONS: PrefixMemo[Contestation, dict[str, object]] = PrefixMemo(
    _final_contestation, size=CONTESTATION_MEMO
)


def _contestation_exts(d: Deliberation, base: str) -> list[dict[str, object]]:
    context = (d.meta.sources, d.meta.source_base, base)
    return _FINAL_CONTESTATIONS(d.contestations, d, base, context=context)


def _narrative(d: Deliberation, ev: Evaluation, s: Summary) -> str:
    """The clinician summary as XHTML: at most eight ranked activities, each with its reason,
    key patient fact and proposers (``service.text.summary``); the full reasoning is in the
    extensions and the deliberation document."""
    e = html.escape
    parts = [
        '<div xmlns="http://www.w3.org/1999/xhtml">',
        f"<h3>Proposed care plan, version {d.version}: machine proposal awaiting clinician "
        "review</h3>",
    ]
    if s.lines:
        parts.append(f"<p>{e(ranking_label())}.</p>")
        parts.append("<ol>")
        for line in s.lines:
            tag = f" [{e(line.label)}]" if line.label else ""
            fact = f" Key fact: {e(line.fact)}." if line.fact else ""
            flag = " <i>Borderline: needs your decision.</i>" if line.borderline else ""
            who = e(", ".join(line.proposed_by) or "a clinician's decision")
            parts.append(
                f"<li><b>{e(line.action)}</b>{tag}: {e(line.reason)}{fact} "
                f"Proposed by {who}.{flag}</li>"
            )
        parts.append("</ol>")
        if s.more:
            parts.append(f"<p>{s.more} more activities in the full plan.</p>")
    else:
        parts.append("<p>No intervention cleared the inclusion threshold.</p>")
    if s.awaiting:
        parts.append(
            "<p><b>Awaiting your decision</b> (borderline, not included): "
            + e("; ".join(s.awaiting))
            + "</p>"
        )
    left = [o.title for o in d.options if o.id not in ev.plan and o.title not in s.awaiting]
    if left:
        parts.append("<p><b>Considered and not included:</b> " + e("; ".join(left)) + "</p>")
    if d.contestations:
        parts.append("<p><b>Changed by clinicians:</b> " + str(len(d.contestations)) + "</p>")
    if d.meta.coverage is not None:
        lines = coverage_lines(d.meta.coverage)
        parts.append("<p><b>Coverage:</b> " + "<br/>".join(e(x) for x in lines) + "</p>")
    parts.append("</div>")
    return "".join(parts)


def _notes(d: Deliberation, ev: Evaluation, recorded: str) -> list[dict[str, object]]:
    texts: list[str] = []
    if d.meta.synthesis:
        texts.append(d.meta.synthesis)
    texts += [f"Missing contribution: {m}" for m in d.meta.missing]
    texts += [f"Not considered: {u}" for u in d.meta.unused_facts]
    if d.meta.coverage is not None:
        lines = coverage_detail(d.meta.coverage)
        texts.append(
            "Coverage (what the plan checked and could not):\n" + "\n".join(f"- {x}" for x in lines)
        )
    texts += [
        f"Borderline, needs human adjudication: {o.title}"
        for o in d.options
        if ev.option(o.id).borderline and ev.option(o.id).decided_by != "human"
    ]
    # R4's Annotation.authorReference admits no Device, so the service signs its notes by name;
    # the CarePlan's author and the Provenance's agent still reference the Device itself.
    return [{"authorString": SERVICE_DEVICE_NAME, "time": recorded, "text": t} for t in texts]


def _careplan(
    d: Deliberation,
    ev: Evaluation,
    *,
    recorded: str,
    author: str,
    binary_id: str,
    previous_version: int | None,
    issues: Mapping[str, Sequence[Mapping[str, Any]]],
    summary: Summary,
) -> dict[str, object]:
    cid = careplan_id(d.plan_id, d.version)
    options = {o.id: o for o in d.options}
    addresses = [
        r
        for p in d.problems
        if ev.problem(p.id).decision == "accept"
        for r in p.refs
        if r.startswith("Condition/")
    ]
    extension: list[dict[str, object]] = [
        _ext("deliberation", "valueReference", _ref(f"Binary/{binary_id}"))
    ]
    for o in d.options:
        if o.id not in ev.plan:
            extension += _option_exts(o, ev.option(o.id), d)
    extension += _problem_ext(d, ev)  # then the contestations (``_contestation_exts``)
    cp: dict[str, object] = {
        "resourceType": "CarePlan",
        "id": cid,
        "meta": {"versionId": str(d.version), "security": [dict(AIAST)]},
        "text": {"status": "generated", "div": _narrative(d, ev, summary)},
        "description": summary_text(d, ev, summary),
        "extension": extension,
        # draft + proposal: a complete machine proposal that no clinician has adopted yet; the
        # EHR moves it to active when a clinician does.
        "status": "draft",
        "intent": "proposal",
        "category": [
            {
                "coding": [{"system": _SNOMED, "code": "734163000", "display": "Care plan"}],
                "text": "Multidisciplinary care plan",
            }
        ],
        "title": "Multidisciplinary care plan proposal",
        "subject": _ref(d.patient_ref),
        "created": recorded,
        "author": _ref(author),
    }
    if previous_version is not None:
        cp["replaces"] = [_ref(f"CarePlan/{careplan_id(d.plan_id, previous_version)}")]
    if addresses:
        cp["addresses"] = [_ref(r) for r in dict.fromkeys(addresses)]
    every_issue = [i for o in d.options for i in issues.get(o.id, ())]
    if every_issue:
        cp["supportingInfo"] = issue_refs(every_issue)
    cp["activity"] = [
        _activity(options[oid], ev.option(oid), d, issues.get(oid, ())) for oid in ev.plan
    ]
    if not cp["activity"]:
        del cp["activity"]
    notes = _notes(d, ev, recorded)
    if notes:
        cp["note"] = notes
    return cp


# --------------------------------------------------------------------------- Provenance


def _cited(d: Deliberation) -> list[str]:
    """Every patient resource the deliberation rests on, first-seen order."""
    refs: dict[str, None] = {d.patient_ref: None}
    for p in d.problems:
        refs.update(dict.fromkeys(p.refs))
    for o in d.options:
        refs.update(dict.fromkeys(o.refs))
        if o.medication_ref:
            refs[o.medication_ref] = None
        for a in o.arguments:
            refs.update(dict.fromkeys(a.facts))
    return [r for r in refs if _REF.match(r)]


def _participant(code: str, display: str) -> dict[str, object]:
    return {"coding": [{"system": _PARTICIPANT, "code": code, "display": display}]}


def _provenance(
    d: Deliberation,
    *,
    recorded: str,
    service: Mapping[str, Any],
    agents: Sequence[tuple[str, Mapping[str, Any]]],
    binary_id: str,
    tasks: Sequence[Mapping[str, Any]],
    previous_version: int | None,
) -> dict[str, object]:
    cid = careplan_id(d.plan_id, d.version)
    contested = previous_version is not None
    people = list(
        dict.fromkeys(
            t["requester"]["reference"]
            for t in tasks
            if isinstance(t.get("requester"), Mapping) and t["requester"].get("reference")
        )
    )
    agent: list[dict[str, object]] = [
        {
            "type": _participant("assembler", "Assembler")
            if contested
            else _participant("author", "Author"),
            "role": [{"text": "care-plan service"}],
            "who": _ref(f"Device/{service['id']}"),
        }
    ]
    agent += [
        {
            "type": _participant("informant", "Informant"),
            "role": [{"text": role}],
            "who": _ref(f"Device/{dev['id']}"),
            "onBehalfOf": _ref(f"Device/{service['id']}"),
        }
        for role, dev in agents
    ]
    agent += [
        {
            "type": _participant("author", "Author"),
            "role": [{"text": "contesting clinician"}],
            "who": _ref(p),
        }
        for p in people
    ]
    entity: list[dict[str, object]] = [{"role": "source", "what": _ref(r)} for r in _cited(d)]
    if previous_version is not None:
        prev = careplan_id(d.plan_id, previous_version)
        entity.append(
            {"role": "revision", "what": _ref(f"CarePlan/{prev}/_history/{previous_version}")}
        )
    entity += [{"role": "source", "what": _ref(f"Task/{t['id']}")} for t in tasks]
    entity += _knowledge_entities(d)
    reasons = [r for r in dict.fromkeys(_task_reason(t) for t in tasks) if r]
    out: dict[str, object] = {
        "resourceType": "Provenance",
        "id": f"{cid}-provenance",
        "target": [
            _ref(f"CarePlan/{cid}/_history/{d.version}"),
            _ref(f"Binary/{binary_id}"),
            _ref(f"Communication/{cid}-patient"),
        ],
        "recorded": recorded,
        "activity": {
            "coding": [
                {"system": _DATA_OPERATION, "code": "UPDATE", "display": "revise"}
                if contested
                else {"system": _DATA_OPERATION, "code": "CREATE", "display": "create"}
            ],
            "text": "contestation applied, plan recomputed" if contested else "care plan generated",
        },
        "agent": agent,
        "entity": entity,
    }
    if reasons:
        # Why the planners contested: their own words, as the Tasks gave them.
        out["reason"] = [{"text": r} for r in reasons]
    return out


def _knowledge_entities(d: Deliberation) -> list[dict[str, object]]:
    """The rules the plan was made with, as sources an auditor can match: the shipped
    knowledge (version, content hash) and the site overlay (label, content hash), if any."""
    k = d.meta.knowledge
    if k is None:
        return []
    out: list[dict[str, object]] = [
        {
            "role": "source",
            "what": {
                "identifier": {"system": KNOWLEDGE_SYSTEM, "value": k.content_hash},
                "display": f"shipped knowledge {k.version}",
            },
        }
    ]
    if k.site_hash:
        out.append(
            {
                "role": "source",
                "what": {
                    "identifier": {"system": SITE_KNOWLEDGE_SYSTEM, "value": k.site_hash},
                    "display": f"site knowledge overlay {k.site_version}",
                },
            }
        )
    # Each shipped criterion the site retired is a rule the plan was not made with: a removal,
    # with the site's reason, so an auditor sees which checks this site does not run, and why.
    retired = d.meta.coverage.retired if d.meta.coverage is not None else ()
    out += [
        {
            "role": "removal",
            "what": {
                "identifier": {"system": CRITERION_SYSTEM, "value": r.criterion},
                "display": f"retired by site knowledge {k.site_version}: {r.reason}",
            },
        }
        for r in retired
    ]
    return out


def _task_reason(task: Mapping[str, Any]) -> str:
    rc = task.get("reasonCode")
    text = rc.get("text") if isinstance(rc, Mapping) else None
    return text if isinstance(text, str) else ""


# --------------------------------------------------------------------------- the patient version


def _patient_narrative(pv: PatientVersion) -> str:
    e = html.escape
    parts = ['<div xmlns="http://www.w3.org/1999/xhtml">', f"<h3>{e(pv.title)}</h3>"]
    parts.append(f"<p>{e(pv.intro)}</p>")
    if pv.sections and pv.ranked:
        parts.append(f"<p>{e(ranking_label())}.</p>")
    for s in pv.sections:
        parts.append(f"<p><b>{e(s.heading)}</b></p><ul>")
        parts += [f"<li>{e(line)}</li>" for line in s.lines]
        parts.append("</ul>")
    parts.append("</div>")
    return "".join(parts)


def _communication(
    d: Deliberation, ev: Evaluation, *, recorded: str, author: str
) -> dict[str, object]:
    """The patient version as a Communication to the patient, based on this CarePlan version.

    A Communication, not a second CarePlan (an EHR would show two plans and the patient's
    would duplicate the activities a clinician acts on) nor a DocumentReference (a document
    filed in the record, with attachment and authorship semantics for a finished note): it is
    one message for the patient, ``basedOn`` the plan it words. ``preparation``: like the
    CarePlan it is a machine proposal; the EHR sends it once a clinician adopts the plan.
    """
    cid = careplan_id(d.plan_id, d.version)
    pv = patient_version(d, ev)
    return {
        "resourceType": "Communication",
        "id": f"{cid}-patient",
        "meta": {"versionId": str(d.version), "security": [dict(AIAST)]},
        "text": {"status": "generated", "div": _patient_narrative(pv)},
        "basedOn": [_ref(f"CarePlan/{cid}")],
        "status": "preparation",
        "category": [
            {
                "coding": [
                    {
                        "system": _COMMUNICATION_CATEGORY,
                        "code": "instruction",
                        "display": "Instruction",
                    }
                ],
                "text": "Patient version of the care plan",
            }
        ],
        "subject": _ref(d.patient_ref),
        "topic": {"text": pv.title},
        "recipient": [_ref(d.patient_ref)],
        "sender": _ref(author),
        "payload": [{"contentString": pv.text()}],
        "note": [{"authorString": SERVICE_DEVICE_NAME, "time": recorded, "text": _PATIENT_NOTE}],
    }


_PATIENT_NOTE = (
    "Machine-written from the activities this care plan version includes; review it with the "
    "plan before it is sent."
)


def patient_of(bundle: Mapping[str, Any]) -> dict[str, Any]:
    """The patient version (the Communication) of a plan Bundle."""
    for e in bundle.get("entry", []) if isinstance(bundle, Mapping) else []:
        r = e.get("resource") if isinstance(e, Mapping) else None
        if isinstance(r, dict) and r.get("resourceType") == "Communication":
            return r
    msg = "the plan Bundle holds no patient version (Communication)"
    raise BundleError(msg, issues=(Issue("error", "not-found", msg, ("Bundle.entry",)),))


# --------------------------------------------------------------------------- the Bundle


def plan_bundle(
    plan: Deliberation,
    ev: Evaluation,
    *,
    recorded: str,
    service_version: str | None = None,
    tasks: Sequence[Mapping[str, Any]] = (),
    previous_version: int | None = None,
    base: str = DEFAULT_BASE,
    document: Mapping[str, Any] | None = None,
    summary: Summary | None = None,
    document_json: bytes | None = None,
) -> dict[str, object]:
    """The FHIR Bundle (type ``collection``) for plan version ``plan.version``, every project URL
    under the canonical ``base``.

    Entries: CarePlan, Provenance, the deliberation Binary, the service Device, one Device per
    role agent, the DetectedIssues, the patient version (a Communication), then ``tasks`` (the
    contestation Tasks, as given) when there are any.
    ``previous_version`` marks this version as a contestation result: CarePlan.replaces, a
    ``revision`` entity and the Tasks' requesters as Provenance agents.
    ``document`` (``to_document(plan, ev)``), ``summary`` (``summarise(plan, ev)``) and
    ``document_json`` (``canonical_json(document)``): given by a caller that has them already,
    so none is built twice for one plan.
    """
    if not _ID.match(careplan_id(plan.plan_id, plan.version) + "-deliberation"):
        raise ValueError(f"plan id {plan.plan_id!r} does not make a valid FHIR id")
    version = service_version or service_version_default()
    cid = careplan_id(plan.plan_id, plan.version)
    binary_id = f"{cid}-deliberation"
    service = _service_device(version)
    agents = [(role, _agent_device(role, plan, version)) for role in _roles(plan)]
    doc = document if document is not None else to_document(plan, ev)
    binary = {
        "resourceType": "Binary",
        "id": binary_id,
        "meta": {"security": [dict(AIAST)]},
        "contentType": DELIBERATION_CONTENT_TYPE,
        "securityContext": _ref(plan.patient_ref),
        "data": base64.b64encode(
            document_json if document_json is not None else canonical_json(doc)
        ).decode("ascii"),
    }
    author = f"Device/{service['id']}"
    issues = detected_issues(plan, careplan_id=cid, author=author, recorded=recorded)
    careplan = _careplan(
        plan,
        ev,
        recorded=recorded,
        author=author,
        binary_id=binary_id,
        previous_version=previous_version,
        issues=issues,
        summary=summary if summary is not None else summarise(plan, ev),
    )
    provenance = _provenance(
        plan,
        recorded=recorded,
        service=service,
        agents=agents,
        binary_id=binary_id,
        tasks=tasks,
        previous_version=previous_version,
    )
    resources: list[Mapping[str, Any]] = [careplan, provenance, binary, service]
    resources += [dev for _role, dev in agents]
    resources += [i for o in plan.options for i in issues.get(o.id, ())]
    resources.append(_communication(plan, ev, recorded=recorded, author=author))
    resources += list(tasks)
    out: dict[str, object] = {
        "resourceType": "Bundle",
        "id": f"{cid}-bundle",
        "type": "collection",
        "timestamp": recorded,
        "entry": [_entry(r) for r in at_source(resources, plan)],
    }
    whole = rebase(out, base)
    extension = whole["entry"][0]["resource"]["extension"]  # type: ignore[index]
    extension += _contestation_exts(plan, base)
    return whole


# --------------------------------------------------------------------------- reading back


def careplan_of(bundle: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
    """(entry index, CarePlan) of the one CarePlan in a plan Bundle."""
    if not isinstance(bundle, Mapping) or bundle.get("resourceType") != "Bundle":
        raise BundleError(
            "not a FHIR Bundle",
            issues=(Issue("error", "structure", "not a FHIR Bundle", ("Bundle",)),),
        )
    entries = bundle.get("entry")
    found = [
        (i, e["resource"])
        for i, e in enumerate(entries if isinstance(entries, list) else [])
        if isinstance(e, Mapping)
        and isinstance(e.get("resource"), Mapping)
        and e["resource"].get("resourceType") == "CarePlan"
    ]
    if len(found) != 1:
        msg = f"a plan Bundle holds exactly one CarePlan, this one holds {len(found)}"
        raise BundleError(msg, issues=(Issue("error", "structure", msg, ("Bundle.entry",)),))
    return found[0][0], dict(found[0][1])


def deliberation_from_bundle(bundle: Mapping[str, Any], base: str = DEFAULT_BASE) -> Deliberation:
    """The exact deliberation a plan Bundle was written from (via its deliberation Binary);
    ``base``: the canonical base the Bundle was written under."""
    bundle = rebase(bundle, DEFAULT_BASE, from_base=base)
    i, cp = careplan_of(bundle)
    url = ext_url("deliberation")
    refs = [
        x.get("valueReference", {}).get("reference", "")
        for x in cp.get("extension", [])
        if isinstance(x, Mapping) and x.get("url") == url
    ]
    where = f"Bundle.entry[{i}].resource.extension"
    if len(refs) != 1 or not refs[0].startswith("Binary/"):
        msg = "the CarePlan names no deliberation Binary"
        raise DocumentError(msg, issues=(Issue("error", "required", msg, (where,)),))
    binary_id = refs[0].split("/", 1)[1]
    for k, e in enumerate(bundle.get("entry", [])):
        res = e.get("resource") if isinstance(e, Mapping) else None
        if (
            isinstance(res, Mapping)
            and res.get("resourceType") == "Binary"
            and res.get("id") == binary_id
        ):
            at = f"Bundle.entry[{k}].resource.data"
            if res.get("contentType") != DELIBERATION_CONTENT_TYPE:
                msg = f"Binary {binary_id} is not a {DELIBERATION_CONTENT_TYPE}"
                raise DocumentError(msg, issues=(Issue("error", "invalid", msg, (at,)),))
            try:
                doc = json.loads(base64.b64decode(str(res.get("data", "")), validate=True))
            except (binascii.Error, ValueError) as exc:
                msg = f"Binary {binary_id} does not hold a JSON document"
                raise DocumentError(msg, issues=(Issue("error", "invalid", msg, (at,)),)) from exc
            d = from_document(doc)
            version = str(cp.get("meta", {}).get("versionId", ""))
            if version != str(d.version) or cp.get("id") != careplan_id(d.plan_id, d.version):
                msg = "the deliberation document does not belong to this CarePlan version"
                raise DocumentError(msg, issues=(Issue("error", "conflict", msg, (at,)),))
            return d
    msg = f"the deliberation Binary {binary_id} is not in the Bundle"
    raise DocumentError(msg, issues=(Issue("error", "not-found", msg, (where,)),))


def _parts(ext: Mapping[str, Any]) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for p in ext.get("extension", []):
        value = next(v for k, v in p.items() if k.startswith("value"))
        if isinstance(value, Mapping) and "reference" in value:
            value = value["reference"]
        out.setdefault(p["url"], []).append(value)
    return out


def graph_from_careplan(
    careplan: Mapping[str, Any], base: str = DEFAULT_BASE
) -> dict[str, dict[str, Any]]:
    """The argument graph read from the CarePlan's extensions alone (no Binary, no service);
    ``base``: the canonical base the CarePlan was written under.

    ``{option_id: {"evaluation": {...}, "arguments": [{...}], "relations": [...], "clashes":
    [...], "activity": index or None}}``; single-valued parts are plain values, repeating ones
    (evidence, fact, problem) lists.
    """
    careplan = rebase(careplan, DEFAULT_BASE, from_base=base)
    repeating = {"evidence", "fact", "problem", "condition"}

    def flat(ext: Mapping[str, Any]) -> dict[str, Any]:
        return {k: (v if k in repeating else v[0]) for k, v in _parts(ext).items()}

    graph: dict[str, dict[str, Any]] = {}

    def take(exts: Iterable[Mapping[str, Any]], activity: int | None) -> None:
        for x in exts:
            url = x.get("url")
            if url == ext_url("option-evaluation"):
                ev = flat(x)
                g = graph.setdefault(
                    ev["optionId"], {"arguments": [], "relations": [], "clashes": []}
                )
                g["evaluation"], g["activity"] = ev, activity
            elif url in (ext_url("argument"), ext_url("argument-relation"), ext_url("clash")):
                v = flat(x)
                g = graph.setdefault(v["option"], {"arguments": [], "relations": [], "clashes": []})
                key = {ext_url("argument"): "arguments", ext_url("argument-relation"): "relations"}
                g[key.get(url, "clashes")].append(v)

    for k, act in enumerate(careplan.get("activity", [])):
        take(act.get("extension", []), k)
    take(careplan.get("extension", []), None)
    return graph
