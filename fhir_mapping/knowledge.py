"""The knowledge published as FHIR R4: value sets as ValueSet, criteria as PlanDefinition with an
ActivityDefinition for the action, in the CPG-on-FHIR shape as far as it fits.

The caller hands in plain specifications (``ValueSetSpec``, ``RuleSpec``), already worded; this
module only renders them under a canonical base. Each applicability condition of a
PlanDefinition (``action.condition``: the trigger, then "not" each exception) is a
``text/fhirpath`` Expression: its ``expression`` the condition in FHIRPath where the knowledge
could write it (evaluated with the patient's record Bundle as focus and ``%asOf`` the day the
record is read on), else ``{}`` (the empty collection: unknown, so no engine finds the rule
applicable on its say) (``NOT_EXECUTABLE``); its
``description`` the rule in plain words either way. No knowledge is read here and nothing is
decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "NOT_EXECUTABLE",
    "CodeGroup",
    "RuleSpec",
    "ValueSetSpec",
    "render_activity_definition",
    "render_plan_definition",
    "render_value_set",
]

# FHIR R4 RequestPriority: our priority classes mapped onto it (safety first).
_REQUEST_PRIORITY: Final[dict[str, str]] = {
    "safety": "urgent",
    "omission": "routine",
    "monitoring": "routine",
    "review": "routine",
}
_PLAN_TYPE: Final = {
    "coding": [
        {
            "system": "http://terminology.hl7.org/CodeSystem/plan-definition-type",
            "code": "eca-rule",
            "display": "ECA Rule",
        }
    ]
}


@dataclass(frozen=True, slots=True)
class CodeGroup:
    """Codes of one system a value set includes (each code as given, no hierarchy)."""

    system: str
    codes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ValueSetSpec:
    id: str
    title: str
    description: str
    version: str
    groups: tuple[CodeGroup, ...]


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """One criterion as a rule: ``trigger``/``exceptions`` in plain words, ``citation`` the
    source it follows, ``value_sets`` the ids of the value sets its trigger reads;
    ``trigger_fhirpath``/``exceptions_fhirpath`` the same in FHIRPath (None: not writable)."""

    id: str
    title: str
    description: str
    version: str
    status: Literal["draft", "active", "retired"]
    citation: str
    trigger: str
    exceptions: tuple[str, ...]
    action_title: str
    action_description: str
    priority: str  # safety | omission | monitoring | review
    category: str
    value_sets: tuple[str, ...] = ()
    trigger_fhirpath: str | None = None
    exceptions_fhirpath: tuple[str | None, ...] = ()


def _name(ident: str) -> str:
    return "".join(w.capitalize() for w in ident.replace("_", "-").split("-") if w)


def render_value_set(spec: ValueSetSpec, base: str) -> dict[str, object]:
    return {
        "resourceType": "ValueSet",
        "id": spec.id,
        "url": f"{base}/ValueSet/{spec.id}",
        "version": spec.version,
        "name": _name(spec.id),
        "title": spec.title,
        "status": "active",
        "description": spec.description,
        "compose": {
            "include": [
                {"system": g.system, "concept": [{"code": c} for c in g.codes]}
                for g in spec.groups
                if g.codes
            ]
        },
    }


def _activity_id(rule_id: str) -> str:
    return f"{rule_id}-action"


def render_activity_definition(spec: RuleSpec, base: str) -> dict[str, object]:
    """The action of one rule, as a definition an EHR could order from."""
    return {
        "resourceType": "ActivityDefinition",
        "id": _activity_id(spec.id),
        "url": f"{base}/ActivityDefinition/{_activity_id(spec.id)}",
        "version": spec.version,
        "name": _name(_activity_id(spec.id)),
        "title": spec.action_title,
        "status": spec.status,
        "description": spec.action_description,
        "kind": "ServiceRequest",
        "intent": "proposal",
        "priority": _REQUEST_PRIORITY[spec.priority],
        "topic": [{"text": spec.category}],
    }


# The expression of a condition not written in FHIRPath: the empty collection, which FHIRPath
# reads as unknown, so another engine never finds the rule applicable on that condition's say.
NOT_EXECUTABLE: Final = "{}"


def _condition(words: str, fhirpath: str | None) -> dict[str, object]:
    return {
        "kind": "applicability",
        "expression": {
            "description": words,
            "language": "text/fhirpath",
            "expression": NOT_EXECUTABLE if fhirpath is None else fhirpath,
        },
    }


def render_plan_definition(spec: RuleSpec, base: str) -> dict[str, object]:
    """One rule in the CPG-on-FHIR shape: its trigger and exceptions as plain-language
    applicability conditions, its action (by definition) with priority, its source cited."""
    exceptions = spec.exceptions_fhirpath or (None,) * len(spec.exceptions)
    conditions = [_condition(spec.trigger, spec.trigger_fhirpath)]
    conditions += [
        _condition(f"not: {text}", None if fp is None else f"({fp}).not()")
        for text, fp in zip(spec.exceptions, exceptions, strict=True)
    ]
    action: dict[str, object] = {
        "title": spec.action_title,
        "description": spec.action_description,
        "priority": _REQUEST_PRIORITY[spec.priority],
        "code": [{"text": spec.priority}],
        "condition": conditions,
        "definitionCanonical": f"{base}/ActivityDefinition/{_activity_id(spec.id)}",
    }
    related: list[dict[str, object]] = [{"type": "citation", "citation": spec.citation}]
    related += [
        {"type": "depends-on", "resource": f"{base}/ValueSet/{vs}"} for vs in spec.value_sets
    ]
    return {
        "resourceType": "PlanDefinition",
        "id": spec.id,
        "url": f"{base}/PlanDefinition/{spec.id}",
        "version": spec.version,
        "name": _name(spec.id),
        "title": spec.title,
        "type": _PLAN_TYPE,
        "status": spec.status,
        "description": spec.description,
        "topic": [{"text": spec.category}],
        "relatedArtifact": related,
        "action": [action],
    }
