"""Safety findings as FHIR R4 DetectedIssue resources, and references that resolve at the source.

Private to ``fhir_mapping``; ``careplan`` calls it. ``detected_issues`` writes one DetectedIssue
per option and kind of safety finding the option carries (``Option.findings``, carried from the
knowledge criterion that found it): the v3 ActCode detected-issue code of its kind, a severity
from the criterion's harm severity, the implicated MedicationRequests and Conditions, the other
facts as evidence, and a mitigation per clinician contestation of the option (the latest
``MAX_MITIGATIONS``: the whole trail is in the Provenance and Tasks of each version, and a plan
version's size must not grow with its history). Kinds without a detected-issue code (an
omission, a monitoring reminder) write none.

``at_source`` points every reference to the patient's record at the system that holds it: the
resource's own RESTful ``fullUrl``, else under the source's base, else (base unknown) kept as
the caller sent it and marked with the ``source-reference`` extension, with the identifier and
display the source had. References to what this service writes are left relative: they resolve
inside the Bundle (or, for an earlier plan version, at the service). No clock, model or store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeVar, cast

from fhir_mapping._refs import relative_ref
from fhir_mapping.definitions import ext_url
from service.core.model import Contestation, Deliberation, Finding, Option, SourceRecord
from service.work import checkpoint

__all__ = [
    "ISSUE_CODES",
    "OWN_TYPES",
    "at_source",
    "detected_issues",
    "issue_id",
    "issue_refs",
    "source_url",
]

_ACT_CODE: Final = "http://terminology.hl7.org/CodeSystem/v3-ActCode"

# Criterion kind -> (v3 ActCode detected-issue code, its display, the kind in our words).
ISSUE_CODES: Final[dict[str, tuple[str, str, str]]] = {
    "drug-drug": ("DRG", "Drug Interaction Alert", "Drug interaction"),
    "drug-disease": ("COND", "Condition Alert", "Drug-disease caution"),
    "drug-age": ("AGE", "Age Alert", "Drug unsuited to the patient's age"),
    "drug-pregnancy": ("PREG", "Pregnancy Alert", "Drug unsuited in pregnancy"),
    "drug-lactation": ("LACT", "Lactation Alert", "Drug unsuited while breastfeeding"),
    "duplicate-class": ("DUPTHPCLS", "Duplicate Therapeutic Class Alert", "Duplicate therapy"),
    "dose-ceiling": ("DOSEH", "High Dose Alert", "Dose above the limit"),
    "renal-dose": ("DOSECOND", "dosage-condition alert", "Dose unsuited to kidney function"),
    "drug-level": ("LAB", "Lab Alert", "Drug level out of range"),
}

# The knowledge's harm severity -> DetectedIssue.severity (high | moderate | low).
_SEVERITY: Final = {"critical": "high", "major": "high", "moderate": "moderate", "minor": "low"}
_RANK: Final = ("critical", "major", "moderate", "minor")

# Resource types this service writes: references to them stay relative (inside the Bundle).
OWN_TYPES: Final = frozenset(
    {"CarePlan", "Provenance", "Binary", "Device", "DetectedIssue", "Task", "Communication"}
)
# DetectedIssue.implicated admits any resource (R4): a medicine recorded as taken, not
# prescribed here, is implicated by its MedicationStatement.
_IMPLICATED: Final = frozenset(
    {"MedicationRequest", "MedicationStatement", "Condition", "Medication"}
)
_AUTHORS: Final = frozenset({"Practitioner", "PractitionerRole"})


def issue_coding(kinds: Iterable[str]) -> dict[str, str] | None:
    """The v3 ActCode detected-issue Coding of the first coded kind of ``kinds``, else None."""
    for kind in kinds:
        if kind in ISSUE_CODES:
            code, display, _words = ISSUE_CODES[kind]
            return {"system": _ACT_CODE, "code": code, "display": display}
    return None


def issue_id(careplan_id: str, option_id: str, kind: str) -> str:
    digest = hashlib.sha256(f"{option_id}\x1f{kind}".encode()).hexdigest()[:12]
    return f"{careplan_id}-issue-{digest}"


def _type(ref: str) -> str:
    return ref.split("/", 1)[0]


def _by_kind(option: Option) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in option.findings:
        if f.kind in ISSUE_CODES:
            out.setdefault(f.kind, []).append(f)
    return out


def _touching(d: Deliberation, option: Option) -> list[Contestation]:
    targets = {option.id, *(a.id for a in option.arguments)}
    return [c for c in d.contestations if c.target in targets]


# The most mitigations one DetectedIssue lists: the latest contestations of its option.
MAX_MITIGATIONS: Final = 5


def _mitigation(c: Contestation, option: Option) -> dict[str, object]:
    words = {
        "accept": "accepted an argument about",
        "reject": "rejected an argument about",
        "edit": "changed the strength of an argument about",
        "add": "added an argument about",
        "decide": "decided on",
    }[c.action]
    text = f"A clinician {words} {option.title}"
    if c.reason:
        text += f": {c.reason}"
    out: dict[str, object] = {"action": {"text": text}, "date": c.at}
    if _type(relative_ref(c.actor) or c.actor) in _AUTHORS:
        out["author"] = {"reference": c.actor}
    return out


def _issue(
    d: Deliberation,
    option: Option,
    kind: str,
    findings: list[Finding],
    *,
    careplan_id: str,
    author: str,
    identified: str,
) -> dict[str, object]:
    code, display, words = ISSUE_CODES[kind]
    worst = min((f.severity for f in findings), key=lambda s: _RANK.index(s) if s in _RANK else 9)
    cited = [*option.refs, *([option.medication_ref] if option.medication_ref else [])]
    implicated = [r for r in dict.fromkeys(cited) if _type(r) in _IMPLICATED]
    named = set(implicated)  # an option may cite thousands of orders
    facts = [
        r
        for r in dict.fromkeys(
            [*option.refs, *(f for a in option.arguments if a.stance == "support" for f in a.facts)]
        )
        if r not in named and r != d.patient_ref and "/" in r
    ]
    detail = f"{words}: {option.title}."
    if option.description:
        detail += f" {option.description}"
    issue: dict[str, object] = {
        "resourceType": "DetectedIssue",
        "id": issue_id(careplan_id, option.id, kind),
        "status": "final",
        "code": {
            "coding": [{"system": _ACT_CODE, "code": code, "display": display}],
            "text": words,
        },
        "severity": _SEVERITY.get(worst, "moderate"),
        "patient": {"reference": d.patient_ref},
        "identifiedDateTime": identified,
        "author": {"reference": author},
        "detail": detail,
    }
    if implicated:
        issue["implicated"] = [{"reference": r} for r in implicated]
    evidence: dict[str, object] = {
        "code": [{"text": f"knowledge criterion {f.criterion}"} for f in findings]
    }
    if facts:
        evidence["detail"] = [{"reference": r} for r in facts]
    issue["evidence"] = [evidence]
    touching = _touching(d, option)
    mitigations = [_mitigation(c, option) for c in touching[-MAX_MITIGATIONS:]]
    if mitigations:
        issue["mitigation"] = mitigations
    return issue


def detected_issues(
    plan: Deliberation, *, careplan_id: str, author: str, recorded: str
) -> dict[str, list[dict[str, object]]]:
    """Option id -> its DetectedIssues (options with no coded safety finding are absent)."""
    identified = plan.meta.created or recorded
    out: dict[str, list[dict[str, object]]] = {}
    for o in plan.options:
        for kind, findings in _by_kind(o).items():
            out.setdefault(o.id, []).append(
                _issue(
                    plan,
                    o,
                    kind,
                    findings,
                    careplan_id=careplan_id,
                    author=author,
                    identified=identified,
                )
            )
    return out


# --------------------------------------------------------------------------- references

J = TypeVar("J")


def source_url(ref: str, plan: Deliberation) -> str | None:
    """The absolute URL at the source of the record's ``Type/id``, None when unknown."""
    return _url(ref, {s.ref: s for s in plan.meta.sources}, plan.meta.source_base)


def _url(ref: str, sources: Mapping[str, SourceRecord], base: str) -> str | None:
    src = sources.get(ref)
    if src is not None and src.url:
        return src.url
    return f"{base.rstrip('/')}/{ref}" if base else None


def _source_ref(
    ref: Mapping[str, Any], sources: Mapping[str, SourceRecord], base: str
) -> dict[str, Any]:
    target = str(ref["reference"])
    out = dict(ref)
    url = _url(target, sources, base)
    if url is not None:
        out["reference"] = url
        return out
    src = sources.get(target)
    out["extension"] = [
        *out.get("extension", ()),
        {"url": ext_url("source-reference"), "valueBoolean": True},
    ]
    if src is not None and src.identifier is not None and "identifier" not in out:
        out["identifier"] = {"system": src.identifier[0], "value": src.identifier[1]}
    if src is not None and src.display and "display" not in out:
        out["display"] = src.display
    return out


def _record_ref(value: Mapping[str, Any]) -> bool:
    ref = value.get("reference")
    if not isinstance(ref, str) or ref.startswith(("#", "urn:", "http://", "https://")):
        return False
    parts = ref.split("/")
    return len(parts) == 2 and parts[0] not in OWN_TYPES and parts[0][:1].isupper()


_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def at_source(value: J, plan: Deliberation) -> J:
    """A copy of the JSON ``value`` whose references to the patient's record point at the
    system that holds it (see the module docstring); the rest is unchanged."""

    sources = {s.ref: s for s in plan.meta.sources}
    base = plan.meta.source_base

    # A plan Bundle for a large record holds some 10^5 objects, half of them a lone
    # ``{"reference": ...}``: those are rewritten without a walk, scalars (by exact type: what
    # the plan writes) are copied without a call, a plain dict or list is known by its type
    # before the slower ABC check, and only an object with a reference is examined.
    def walk(value: object) -> object:
        kind = type(value)
        if kind is dict or (kind is not list and isinstance(value, Mapping)):
            obj = cast(Mapping[str, Any], value)
            if len(obj) == 1 and type(obj.get("reference")) is str:
                return _source_ref(obj, sources, base) if _record_ref(obj) else dict(obj)
            checkpoint()
            out = {k: x if type(x) in _SCALARS else walk(x) for k, x in obj.items()}
            if "reference" in out and _record_ref(out):
                return _source_ref(out, sources, base)
            return out
        if kind is list or isinstance(value, list | tuple):
            return [x if type(x) in _SCALARS else walk(x) for x in cast(list[object], value)]
        return value

    return walk(value)  # type: ignore[return-value]


def issue_refs(issues: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    return [{"reference": f"DetectedIssue/{i['id']}"} for i in issues]
