"""The project's FHIR conformance resources: one base URL, its CodeSystems and extensions.

Every project-owned URL is built from a canonical base here and nowhere else. The extensions and
CodeSystems are *specified* once in this module (``EXTENSIONS``, ``CODE_SYSTEMS``); the JSON
files beside it are those specifications rendered as R4 StructureDefinition / CodeSystem
resources under ``DEFAULT_BASE``, committed so an EHR or a reviewer can load them without running
our code. A test re-renders them and fails if the committed files drift from the specification.
This module only describes; it builds no CarePlan and reads no Task.

``DEFAULT_BASE`` (also ``CANOE_BASE``) sits under ``example.org``, a domain reserved for
documentation (RFC 2606). A deployment publishes the definitions under its own base (the
service's ``CANOE_FHIR_BASE`` setting, handed in by the caller: this package reads no settings):
``rebase`` moves a rendered resource, Bundle or card from one base to another, and
``package_files`` renders the whole set, ValueSets included, as a FHIR package for that base.
The mapping code renders under ``DEFAULT_BASE`` and rebases at its edges, so the specifications
stay constants.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Final, Literal, TypeVar
from urllib.parse import urlsplit

from ._snapshot import extension_snapshot

__all__ = [
    "AIAST",
    "AI_CONFIDENCE",
    "CANOE_BASE",
    "CODE_SYSTEMS",
    "CS_ACTION",
    "CS_INPUT",
    "CS_OVERRIDE_REASON",
    "DEFAULT_BASE",
    "DEFINITIONS_VERSION",
    "DELIBERATION_CONTENT_TYPE",
    "EXTENSIONS",
    "IG_DEPENDENCIES",
    "PACKAGE_NAME",
    "CodeSystemSpec",
    "ExtensionSpec",
    "Part",
    "check_base",
    "definition_files",
    "ext_url",
    "load_definition",
    "package_files",
    "rebase",
    "render_code_system",
    "render_structure_definition",
    "render_value_set",
]

DEFAULT_BASE: Final = "https://canoe.example.org/fhir"
CANOE_BASE: Final = DEFAULT_BASE  # what the mapping renders under; ``rebase`` moves it
CS_ACTION: Final = f"{CANOE_BASE}/CodeSystem/contestation-action"
CS_INPUT: Final = f"{CANOE_BASE}/CodeSystem/contestation-input"
CS_OVERRIDE_REASON: Final = f"{CANOE_BASE}/CodeSystem/cds-override-reason"
DELIBERATION_CONTENT_TYPE: Final = "application/vnd.canoe.deliberation+json"

# HL7 AI Transparency IG: the security label for AI-asserted data, and its confidence extension.
AIAST: Final = {
    "system": "http://terminology.hl7.org/CodeSystem/v3-ObservationValue",
    "code": "AIAST",
    "display": "Artificial Intelligence asserted",
}
AI_CONFIDENCE: Final = "http://hl7.org/fhir/uv/aitransparency/StructureDefinition/AIconfidence"

FHIR_VERSION: Final = "4.0.1"
# Every FHIR package whose definitions the plans and the definitions use, by its canonical
# base: the package.json dependencies, so a validator loads them (the R4 core, and the AI
# Transparency IG for AIconfidence).
IG_DEPENDENCIES: Final[dict[str, tuple[str, str]]] = {
    "http://hl7.org/fhir": ("hl7.fhir.r4.core", FHIR_VERSION),
    "http://hl7.org/fhir/uv/aitransparency": ("hl7.fhir.uv.aitransparency", "1.0.0-ballot"),
}

DEFINITIONS_VERSION: Final = "1.0.0"
PACKAGE_NAME: Final = "canoe.careplan.definitions"
ValueType = Literal[
    "string", "code", "decimal", "boolean", "integer", "dateTime", "Reference", "Coding"
]


@dataclass(frozen=True, slots=True)
class Part:
    """One sub-extension of a complex extension: ``url`` is its short name."""

    url: str
    type: ValueType
    min: int = 0
    max: str = "1"
    short: str = ""


@dataclass(frozen=True, slots=True)
class ExtensionSpec:
    """A simple extension has ``value``; a complex one has ``parts`` (never both)."""

    id: str
    title: str
    description: str
    contexts: tuple[str, ...]
    value: ValueType | None = None
    parts: tuple[Part, ...] = ()
    targets: tuple[str, ...] = ()  # allowed Reference targets of a simple Reference extension


def ext_url(ext_id: str, base: str = DEFAULT_BASE) -> str:
    return f"{base}/StructureDefinition/{ext_id}"


def check_base(base: str) -> str:
    """``base`` as a canonical base (no trailing ``/``); ValueError when it cannot be one: an
    absolute http(s) URL with a host and no query or fragment."""
    base = base.strip().rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"a FHIR canonical base must be an absolute http(s) URL, not {base!r}")
    if parts.query or parts.fragment or " " in base:
        raise ValueError(f"a FHIR canonical base has no query, fragment or spaces: {base!r}")
    return base


J = TypeVar("J")


def rebase(value: J, base: str, *, from_base: str = DEFAULT_BASE) -> J:
    """A copy of the JSON ``value`` with every project URL under ``from_base`` (extension and
    CodeSystem URLs, ``fullUrl``s, references) moved under ``base``. Only strings that *start*
    with ``from_base/`` change, so patient data and other systems' URLs are never touched.
    ``value`` itself is returned when the two bases are the same."""
    if base == from_base:
        return value
    old = from_base + "/"

    def walk(value: object) -> object:
        if isinstance(value, str):
            return base + "/" + value[len(old) :] if value.startswith(old) else value
        if isinstance(value, Mapping):
            return {k: walk(x) for k, x in value.items()}
        if isinstance(value, list | tuple):
            return [walk(x) for x in value]
        return value

    return walk(value)  # type: ignore[return-value]


_GRAPH_CONTEXTS = ("CarePlan", "CarePlan.activity")

EXTENSIONS: Final[dict[str, ExtensionSpec]] = {
    s.id: s
    for s in (
        ExtensionSpec(
            "deliberation",
            "Deliberation document",
            "The Binary holding the complete canoe.deliberation/1 document this resource was "
            "computed from: every argument, edge, clash, vote and contestation, so the reasoning "
            "can be recomputed and audited from the FHIR alone.",
            ("CarePlan",),
            value="Reference",
            targets=("Binary",),
        ),
        ExtensionSpec(
            "option-evaluation",
            "Option evaluation",
            "How one candidate intervention was decided: its A-QBAF score F (the option node's "
            "final strength), the decision and who made it, and why. On a CarePlan.activity it "
            "describes that activity's option; on the CarePlan it describes an option that was "
            "NOT selected.",
            _GRAPH_CONTEXTS,
            parts=(
                Part("optionId", "string", 1, short="Option id in the deliberation"),
                Part("title", "string", 1),
                Part("category", "string", 1),
                Part("description", "string"),
                Part("code", "Coding", short="Standard code of the intervention, if any"),
                Part("medication", "Reference", short="Medication resource it is about"),
                Part("problem", "string", max="*", short="Problem ids the option addresses"),
                Part("score", "decimal", 1, short="F(o) = sigma of the option node, in [0,1]"),
                Part("threshold", "decimal", 1, short="Inclusion cut: included when F > it"),
                Part("decision", "code", 1, short="include | exclude"),
                Part("decidedBy", "code", 1, short="score | human | problems | incompatibility"),
                Part("borderline", "boolean", 1, short="|F - 0.5| within the band: adjudicate"),
                Part("converged", "boolean", 1),
                Part("iterations", "integer", 1),
                Part(
                    "explanation",
                    "string",
                    1,
                    short="Why it cleared or missed the threshold, or what excluded it",
                ),
            ),
        ),
        ExtensionSpec(
            "argument",
            "Argument",
            "One argument of the panel (or a human) for or against an option, with its "
            "intrinsic strength tau, its arena-calibrated strength tau~ and its final strength "
            "sigma after propagation.",
            _GRAPH_CONTEXTS,
            parts=(
                Part("id", "string", 1),
                Part("option", "string", 1, short="Option id the argument is about"),
                Part("role", "string", 1, short="Professional role, or 'human'"),
                Part("stance", "code", 1, short="support | attack (towards the option)"),
                Part("text", "string", 1),
                Part("origin", "code", 1, short="agent | human"),
                Part("status", "code", 1, short="active | accepted | rejected"),
                Part("tauSource", "code", 1, short="model | human: who set tau"),
                Part("evidence", "string", max="*", short="Evidence-base document id"),
                Part("fact", "Reference", max="*", short="Patient resource the argument cites"),
                Part("tau", "decimal", 1, short="Intrinsic strength in [0,1]"),
                Part("tauCalibrated", "decimal", 1, short="tau~ after the arena, in [0,1]"),
                Part("sigma", "decimal", short="Final strength; absent when rejected"),
            ),
        ),
        ExtensionSpec(
            "argument-relation",
            "Argument relation",
            "An edge of an option's argument graph: source supports or attacks target (the "
            "option or another argument).",
            _GRAPH_CONTEXTS,
            parts=(
                Part("option", "string", 1),
                Part("source", "string", 1),
                Part("target", "string", 1),
                Part("relation", "code", 1, short="support | attack"),
            ),
        ),
        ExtensionSpec(
            "clash",
            "Arena clash",
            "A near-tied supporter/attacker pair the adjudicator judged, and the winning side.",
            _GRAPH_CONTEXTS,
            parts=(
                Part("option", "string", 1),
                Part("support", "string", 1),
                Part("attack", "string", 1),
                Part("winner", "code", short="support | attack; absent: no usable verdict"),
            ),
        ),
        ExtensionSpec(
            "problem-reconciliation",
            "Problem reconciliation",
            "How a candidate problem was kept or refused by the panel: the router path and the "
            "decision, and who made it (consensus, fallback to the attending, arbitration, a "
            "human, or pending).",
            ("CarePlan",),
            parts=(
                Part("problemId", "string", 1),
                Part("display", "string", 1),
                Part("condition", "Reference", max="*", short="The patient's resources for it"),
                Part("initial", "code", 1, short="The attending's judgement: accept | reject"),
                Part("keep", "integer", 1, short="KEEP votes"),
                Part("refuse", "integer", 1, short="REFUSE votes"),
                Part("neutral", "integer", 1, short="NEUTRAL votes"),
                Part("path", "code", 1, short="strong_consensus | weak_consensus | conflict"),
                Part("decision", "code", short="accept | reject; absent while pending"),
                Part("decidedBy", "code", 1),
            ),
        ),
        ExtensionSpec(
            "contestation",
            "Contestation",
            "One human action applied to the deliberation (a completed contestation Task).",
            ("CarePlan",),
            parts=(
                Part("task", "string", 1, short="The Task id"),
                Part("action", "code", 1, short="accept | reject | edit | add | decide"),
                Part("target", "string", 1, short="Argument, option or problem id"),
                Part("actor", "Reference", 1),
                Part("at", "dateTime", 1),
                Part("reason", "string"),
            ),
        ),
        ExtensionSpec(
            "activity-medication",
            "Medication the activity is about",
            "The patient's MedicationRequest (or Medication) this activity reviews, changes or "
            "stops, or the MedicationStatement of a medicine recorded as taken but not "
            "prescribed here. CarePlan.activity.detail.productReference only admits "
            "Medication/Substance, so a MedicationRequest or MedicationStatement is named here.",
            ("CarePlan.activity.detail",),
            value="Reference",
            targets=("MedicationRequest", "MedicationStatement", "Medication"),
        ),
        ExtensionSpec(
            "detected-issue",
            "Safety finding the activity answers",
            "A DetectedIssue (drug interaction, drug-disease caution, dose, duplicate therapy, "
            "drug level) that this activity answers. CarePlan.activity has no element that "
            "admits a DetectedIssue, so the activity names it here; the CarePlan also lists "
            "every DetectedIssue in supportingInfo.",
            ("CarePlan.activity",),
            value="Reference",
            targets=("DetectedIssue",),
        ),
        ExtensionSpec(
            "source-reference",
            "Reference to the source system's record",
            "True: this reference names a resource of the patient's record as the system that "
            "sent it named it, whose FHIR base the service was not told. It does not resolve "
            "inside the Bundle nor at the service; resolve it at the sending system (the "
            "reference's identifier and display, where the source had them, help).",
            ("Reference",),
            value="boolean",
        ),
        ExtensionSpec(
            "original-authored-on",
            "authoredOn as sent",
            "The authoredOn this Task was sent with, kept because it was later than the time the "
            "service wrote the Task (the sender's clock ahead of the service's). authoredOn "
            "then holds the time of writing, so that it is never later than lastModified.",
            ("Task",),
            value="dateTime",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class CodeSystemSpec:
    id: str
    url: str
    title: str
    description: str
    concepts: tuple[tuple[str, str, str], ...]  # (code, display, definition)


CODE_SYSTEMS: Final[dict[str, CodeSystemSpec]] = {
    s.id: s
    for s in (
        CodeSystemSpec(
            "contestation-action",
            CS_ACTION,
            "Contestation actions",
            "What a care planner asks of a deliberation in a contestation Task (Task.code).",
            (
                ("accept", "Accept argument", "Pin an argument: it stays in the graph as is."),
                ("reject", "Reject argument", "Remove an argument and its edges from the graph."),
                (
                    "edit",
                    "Edit argument",
                    "Change an argument's text, evidence, relations or strength.",
                ),
                ("add", "Add argument", "Add a human's argument, with a strength, to an option."),
                (
                    "decide",
                    "Decide",
                    "A human's final include/exclude on an option or accept/reject on a problem.",
                ),
            ),
        ),
        CodeSystemSpec(
            "contestation-input",
            CS_INPUT,
            "Contestation Task inputs",
            "The kinds of Task.input a contestation Task carries (Task.input.type).",
            (
                ("target", "Target", "valueString: the argument, option or problem id acted on."),
                ("text", "Text", "valueString: the argument's (new) text."),
                ("stance", "Stance", "valueCode: support | attack, towards the option."),
                ("strength", "Strength", "valueDecimal in [0,1]: the argument's (new) tau."),
                ("role", "Role", "valueString: the role an added argument speaks for."),
                (
                    "evidence",
                    "Evidence",
                    "valueString: an evidence-base document id; repeat for several. On edit, "
                    "the given list replaces the argument's evidence.",
                ),
                (
                    "fact",
                    "Patient fact",
                    "valueReference: a patient resource (Type/id) an added argument cites.",
                ),
                (
                    "relation-add",
                    "Add relation",
                    "valueString '<source> <support|attack> <target>', or '<support|attack> "
                    "<target>' with the Task's argument as source.",
                ),
                (
                    "relation-remove",
                    "Remove relation",
                    "valueString, same form as relation-add: the edge to remove.",
                ),
                (
                    "decision",
                    "Decision",
                    "valueCode: include | exclude (option) or accept | reject (problem).",
                ),
            ),
        ),
        CodeSystemSpec(
            "cds-override-reason",
            CS_OVERRIDE_REASON,
            "CDS card override reasons",
            "Why a clinician goes ahead with an order a CDS Hooks card advised against "
            "(card.overrideReasons; feedback overrideReason.reason). An override with a reason "
            "becomes a contestation Task (decide: exclude) on the care plan.",
            (
                (
                    "benefit-outweighs-risk",
                    "Benefit outweighs the risk for this patient",
                    "The clinician judges that, for this patient, the benefit of the order "
                    "outweighs the risk the panel named.",
                ),
                (
                    "risk-mitigated",
                    "Risk mitigated: short course with monitoring arranged",
                    "The risk is accepted because the course is short and monitoring is arranged.",
                ),
                (
                    "specialist-advised",
                    "Advised or agreed by the treating specialist",
                    "The order was advised or agreed by the specialist treating the patient.",
                ),
                (
                    "record-inaccurate",
                    "The record the panel relied on is wrong or out of date",
                    "The patient record the panel argued from is wrong or out of date.",
                ),
            ),
        ),
    )
}


def render_structure_definition(spec: ExtensionSpec, base: str = DEFAULT_BASE) -> dict[str, object]:
    """The R4 StructureDefinition for an extension specification: its differential, and the
    snapshot built from it over the R4 core Extension (``_snapshot``)."""
    url = ext_url(spec.id, base)
    root = "Extension"
    elements: list[dict[str, object]] = [
        {"id": root, "path": root, "short": spec.title, "definition": spec.description}
    ]
    if spec.parts:
        elements.append({"id": f"{root}.extension", "path": f"{root}.extension", "min": 1})
        for p in spec.parts:
            sid = f"{root}.extension:{p.url}"
            elements += [
                {
                    "id": sid,
                    "path": f"{root}.extension",
                    "sliceName": p.url,
                    "short": p.short or p.url,
                    "definition": p.short or p.url,
                    "min": p.min,
                    "max": p.max,
                },
                {"id": f"{sid}.extension", "path": f"{root}.extension.extension", "max": "0"},
                {"id": f"{sid}.url", "path": f"{root}.extension.url", "fixedUri": p.url},
                {
                    "id": f"{sid}.value[x]",
                    "path": f"{root}.extension.value[x]",
                    "min": 1,
                    "type": [_type(p.type, ())],
                },
            ]
        elements.append({"id": f"{root}.url", "path": f"{root}.url", "fixedUri": url})
        elements.append({"id": f"{root}.value[x]", "path": f"{root}.value[x]", "max": "0"})
    else:
        assert spec.value is not None
        elements.append({"id": f"{root}.extension", "path": f"{root}.extension", "max": "0"})
        elements.append({"id": f"{root}.url", "path": f"{root}.url", "fixedUri": url})
        elements.append(
            {
                "id": f"{root}.value[x]",
                "path": f"{root}.value[x]",
                "min": 1,
                "type": [_type(spec.value, spec.targets)],
            }
        )
    return {
        "resourceType": "StructureDefinition",
        "id": spec.id,
        "url": url,
        "version": DEFINITIONS_VERSION,
        "name": "".join(w.capitalize() for w in spec.id.split("-")),
        "title": spec.title,
        "status": "draft",
        "description": spec.description,
        "fhirVersion": FHIR_VERSION,
        "kind": "complex-type",
        "abstract": False,
        "context": [{"type": "element", "expression": c} for c in spec.contexts],
        "type": "Extension",
        "baseDefinition": "http://hl7.org/fhir/StructureDefinition/Extension",
        "derivation": "constraint",
        "snapshot": {"element": extension_snapshot(elements)},
        "differential": {"element": elements},
    }


def _type(code: str, targets: tuple[str, ...]) -> dict[str, object]:
    t: dict[str, object] = {"code": code}
    if targets:
        t["targetProfile"] = [f"http://hl7.org/fhir/StructureDefinition/{x}" for x in targets]
    return t


def render_code_system(spec: CodeSystemSpec, base: str = DEFAULT_BASE) -> dict[str, object]:
    return {
        "resourceType": "CodeSystem",
        "id": spec.id,
        "url": rebase(spec.url, base),
        "version": DEFINITIONS_VERSION,
        "name": "".join(w.capitalize() for w in spec.id.split("-")),
        "title": spec.title,
        "status": "draft",
        "description": spec.description,
        "caseSensitive": True,
        "content": "complete",
        "count": len(spec.concepts),
        "concept": [{"code": c, "display": d, "definition": x} for c, d, x in spec.concepts],
        "valueSet": f"{base}/ValueSet/{spec.id}",
    }


def render_value_set(spec: CodeSystemSpec, base: str = DEFAULT_BASE) -> dict[str, object]:
    """The ValueSet of every code of one of our CodeSystems (what a binding names)."""
    return {
        "resourceType": "ValueSet",
        "id": spec.id,
        "url": f"{base}/ValueSet/{spec.id}",
        "version": DEFINITIONS_VERSION,
        "name": "".join(w.capitalize() for w in spec.id.split("-")),
        "title": spec.title,
        "status": "draft",
        "description": f"All codes of the CodeSystem {spec.title}.",
        "immutable": True,
        "compose": {"include": [{"system": rebase(spec.url, base)}]},
    }


def definition_files(base: str = DEFAULT_BASE) -> dict[str, dict[str, object]]:
    """File name -> resource, for every CodeSystem (with its all-codes ValueSet) and extension
    this module specifies (the files committed beside it, under ``DEFAULT_BASE``)."""
    out: dict[str, dict[str, object]] = {}
    for cs in CODE_SYSTEMS.values():
        out[f"CodeSystem-{cs.id}.json"] = render_code_system(cs, base)
        out[f"ValueSet-{cs.id}.json"] = render_value_set(cs, base)
    for ext in EXTENSIONS.values():
        out[f"StructureDefinition-{ext.id}.json"] = render_structure_definition(ext, base)
    return out


def package_files(
    base: str,
    *,
    name: str = PACKAGE_NAME,
    version: str = DEFINITIONS_VERSION,
    extra: Mapping[str, dict[str, object]] | None = None,
) -> dict[str, dict[str, object]]:
    """A FHIR NPM package of every definition under ``base``: file name -> JSON, for the
    ``package/`` folder. Holds ``package.json`` (name, version, fhirVersions, canonical, the
    packages of ``IG_DEPENDENCIES``), ``.index.json`` (index-version 2) and one file per
    StructureDefinition, CodeSystem and ValueSet; then ``extra`` (resources rendered under
    ``base`` by the caller, such as the knowledge's ValueSets and PlanDefinitions), which keep
    their own versions."""
    base = check_base(base)
    files = definition_files(base)
    for res in files.values():
        res["version"] = version
    clash = sorted(set(files) & set(extra or {}))
    if clash:
        raise ValueError(f"extra resources would replace definitions: {', '.join(clash)}")
    files.update(extra or {})
    index = [
        {
            "filename": fn,
            "resourceType": res["resourceType"],
            "id": res["id"],
            "url": res["url"],
            "version": res["version"],
            **(
                {"kind": res["kind"], "type": res["type"]}
                if res["resourceType"] == "StructureDefinition"
                else {}
            ),
        }
        for fn, res in sorted(files.items())
    ]
    manifest: dict[str, object] = {
        "name": name,
        "version": version,
        "description": "CANOE care-plan service: argument-graph extensions and contestation "
        "terminology, and the knowledge's value sets and criteria",
        "fhirVersions": [FHIR_VERSION],
        "type": "fhir.ig",
        "canonical": base,
        "url": base,
        "dependencies": dict(IG_DEPENDENCIES.values()),
        "license": "CC0-1.0",
    }
    return {
        "package.json": manifest,
        ".index.json": {"index-version": 2, "files": index},
        **files,
    }


@cache
def _definition_text(file_name: str) -> str:
    return resources.files(__name__).joinpath(file_name).read_text(encoding="utf-8")


def load_definition(file_name: str) -> dict[str, object]:
    """A committed definition resource, read from the package data (a fresh copy each call)."""
    loaded: dict[str, object] = json.loads(_definition_text(file_name))
    return loaded


def _write_all() -> None:  # pragma: no cover - run by hand after changing a specification
    from pathlib import Path

    here = Path(__file__).parent
    for name, res in definition_files().items():
        (here / name).write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n", "utf-8")
