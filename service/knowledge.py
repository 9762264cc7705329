"""Tools for the people who govern the knowledge: check a folder, explain a criterion on one
patient, publish value sets and criteria as FHIR.

``check`` validates a site folder (or, with ``full``, a complete criteria folder) exactly as
start-up does and lists what differs from the shipped set. ``explain`` says which parts of a
criterion's trigger hold for a patient and which do not, each in plain words, and whether an
exception excuses it. ``fhir_definitions`` turns the drug classes and condition groups into
ValueSet specifications and each criterion into a rule specification for
``fhir_mapping.knowledge``. The trigger is worded here once (``describe``), for both. Reads
files only where a path is handed in; decides nothing clinical.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from fhir_mapping.knowledge import (
    CodeGroup,
    RuleSpec,
    ValueSetSpec,
    render_activity_definition,
    render_plan_definition,
    render_value_set,
)
from inference.knowledge.conditions import CONDITION_GROUPS, GROUPS_BY_KEY
from inference.knowledge.criteria import CriteriaFile, Criterion, KnowledgeError, load
from inference.knowledge.criteria.interpret import _match
from inference.knowledge.criteria.schema import NUMERIC_PARTS, PointUse, Trigger
from inference.knowledge.drugs import CLASS_LABELS, DRUGS
from inference.knowledge.facts import Facts
from inference.knowledge.site import Change, Knowledge, load_site, shipped
from inference.knowledge.taken import with_taken
from service.criteria_fhirpath import to_fhirpath
from service.errors import InputError
from service.record.profile import PatientProfile
from service.record.vocabulary import ICD10, RXNORM, SNOMED

__all__ = [
    "PartResult",
    "check",
    "criteria_schema",
    "describe",
    "explain",
    "explain_text",
    "fhir_definitions",
    "knowledge_files",
]

_SPEC_WORDS = {"drug": "{}", "class": "a medicine of the class {}", "flag": "a medicine that is {}"}
_OPS = {"<": "below", "<=": "at most", ">": "above", ">=": "at least"}


# ------------------------------------------------------------------------------------ words


def _spec(spec: str) -> str:
    kind, _, name = spec.partition(":")
    return _SPEC_WORDS[kind].format(CLASS_LABELS.get(name, name))


def _groups(keys: tuple[str, ...]) -> str:
    return " or ".join(GROUPS_BY_KEY[k].label if k in GROUPS_BY_KEY else k for k in keys)


def _value(x: object, params: Mapping[str, float]) -> str:
    if isinstance(x, str) and x in params:
        return f"{params[x]:g} ({x})"
    return str(x)


def _part_words(
    field: str, value: object, params: Mapping[str, float], ops: Mapping[str, str]
) -> str:
    """One trigger part in plain words; a param name shows its value."""
    if field == "drugs":
        return "takes " + " and ".join(_spec(s) for s in value)  # type: ignore[attr-defined]
    if field == "absent_drugs":
        return "takes no " + " nor ".join(_spec(s) for s in value)  # type: ignore[attr-defined]
    if field == "any_conditions":
        return "has an active problem: " + _groups(value)  # type: ignore[arg-type]
    if field == "absent_conditions":
        return "has no active problem: " + _groups(value)  # type: ignore[arg-type]
    if field == "ever_conditions":
        return "has ever had: " + _groups(value)  # type: ignore[arg-type]
    if field in ("age_min", "age_max"):
        return f"aged {_OPS[ops[field]]} {_value(value, params)} years"
    if field in NUMERIC_PARTS:
        return f"{NUMERIC_PARTS[field]} {_OPS[ops[field]]} {_value(value, params)}"
    if field == "labs":
        return " and ".join(
            f"{lab.quantity} {_OPS[lab.op]} {_value(lab.param, params)}"
            for lab in value  # type: ignore[attr-defined]
        )
    if field == "vaccine":
        v = value  # a VaccineDue
        window = f" within {_value(v.within_days, params)} days" if v.within_days else ""  # type: ignore[attr-defined]
        return f"{v.vaccine} not given{window} (CVX {', '.join(v.cvx)})"  # type: ignore[attr-defined]
    if isinstance(value, bool):
        return field.replace("_", " ") + ("" if value else ": no")
    if hasattr(value, "model_dump"):
        inner = value.model_dump(exclude_defaults=True)
        shown = ", ".join(f"{k.replace('_', ' ')} {_value(v, params)}" for k, v in inner.items())
        return f"{field.replace('_', ' ')} ({shown})"
    if isinstance(value, tuple):
        return f"{field.replace('_', ' ')}: {', '.join(str(v) for v in value)}"
    return f"{field.replace('_', ' ')} {_value(value, params)}"


def _parts(t: Trigger) -> Iterator[tuple[str, object]]:
    """The trigger's given parts, in schema order (defaults left out)."""
    for field in Trigger.model_fields:
        value = getattr(t, field)
        if field in ("any_of", "none_of", "ops"):
            continue
        if value != Trigger.model_fields[field].default:
            yield field, value


def describe(trigger: Trigger, params: Mapping[str, float]) -> str:
    """The whole trigger in plain words: every part, then its alternatives and negations."""
    words = [_part_words(f, v, params, trigger.ops) for f, v in _parts(trigger)]
    if trigger.any_of:
        words.append(
            "and either " + " or ".join(f"({describe(a, params)})" for a in trigger.any_of)
        )
    words += [f"and not ({describe(n, params)})" for n in trigger.none_of]
    return "; ".join(words) or "always"


# ------------------------------------------------------------------------------------ check


@dataclass(frozen=True, slots=True)
class CheckReport:
    knowledge: Knowledge
    changes: tuple[Change, ...]


def _diff_full(criteria: tuple[Criterion, ...], base: Knowledge) -> tuple[Change, ...]:
    ours = {c.id: c for c in base.criteria}
    theirs = {c.id: c for c in criteria}
    out = [Change("retired", cid, "not in the folder", "") for cid in ours if cid not in theirs]
    for cid, c in theirs.items():
        old = ours.get(cid)
        if old is None:
            out.append(Change("added", cid, f"{c.kind}: {c.option.id}", ""))
        elif old != c:
            fields = [f for f in Criterion.model_fields if getattr(old, f) != getattr(c, f)]
            out.append(Change("params", cid, "changed: " + ", ".join(fields), ""))
    return tuple(out)


def check(folder: Path, *, full: bool = False) -> CheckReport:
    """Validate ``folder`` as start-up would (a site overlay, or with ``full`` a complete
    criteria folder) and list what differs from the shipped set. InputError names the file,
    the path in it and the problem."""
    base = shipped()
    try:
        if full:
            criteria = load(folder)
            return CheckReport(Knowledge(criteria, base.stamp), _diff_full(criteria, base))
        k = load_site(folder, base)
    except KnowledgeError as exc:
        raise InputError(f"{folder}: {exc}") from None
    return CheckReport(k, k.changes)


# ---------------------------------------------------------------------------------- explain


@dataclass(frozen=True, slots=True)
class PartResult:
    """One part of a criterion's trigger (or an exception) on one patient."""

    part: str  # the field, or "exceptions[i]"
    words: str
    holds: bool
    facts: tuple[str, ...] = ()  # what it bound (medicines, the problem, lab results), in words


def _bound(t: Trigger, f: Facts, params: dict[str, float]) -> tuple[bool, tuple[str, ...]]:
    got = next(_match(t, f, params), None)
    if got is None:
        return False, ()
    facts = [f"{k} = {m.text}" for k, m in got.meds.items()]
    if got.cond is not None:
        facts.append(f"cond = {got.cond.text}")
    facts += [f"{q} = {o.display} {o.value:g} {o.unit}".strip() for q, o in got.labs.items()]
    return True, tuple(facts)


def explain(criterion: Criterion, profile: PatientProfile) -> tuple[PartResult, ...]:
    """Each trigger part alone (a part that reads the bound medicine ``a`` keeps the trigger's
    ``drugs``), then the whole trigger, then each exception against it."""
    f = Facts(with_taken(profile))
    t, params = criterion.trigger, dict(criterion.params)
    out = []
    for field, value in _parts(t):
        alone = {field: value}
        if t.drugs and field != "drugs":
            alone["drugs"] = t.drugs
        if field in NUMERIC_PARTS:
            alone["ops"] = {field: t.ops[field]}
        holds, facts = _bound(Trigger.model_validate(alone), f, params)
        out.append(PartResult(field, _part_words(field, value, params, t.ops), holds, facts))
    for name, alts in (("any_of", t.any_of), ("none_of", t.none_of)):
        for i, alt in enumerate(alts):
            holds, facts = _bound(alt, f, params)
            out.append(PartResult(f"{name}[{i}]", describe(alt, params), holds, facts))
    bindings = list(_match(t, f, params))
    out.append(PartResult("trigger", describe(t, params), bool(bindings)))
    for i, ex in enumerate(criterion.exceptions):
        excuses = any(
            next(_match(ex, f, params, b if not ex.drugs else None), None) is not None
            for b in bindings
        )
        out.append(PartResult(f"exceptions[{i}]", describe(ex, params), excuses))
    return tuple(out)


def explain_text(criterion: Criterion, results: tuple[PartResult, ...]) -> str:
    """The explanation as lines: each part with holds / does not hold, its words and facts."""
    trigger = next(r for r in results if r.part == "trigger")
    excused = [r for r in results if r.part.startswith("exceptions") and r.holds]
    fires = trigger.holds and not excused
    lines = [f"{criterion.id} ({criterion.source} {criterion.source_id}, {criterion.year})"]
    for r in results:
        mark = "holds" if r.holds else "does not hold"
        if r.part.startswith("exceptions"):
            mark = "excuses it" if r.holds else "does not apply"
        lines.append(f"  {r.part}: {mark}: {r.words}")
        lines += [f"      {fact}" for fact in r.facts]
    verdict = "FIRES" if fires else ("excused" if trigger.holds else "does not fire")
    lines.append(f"verdict: {verdict}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------- FHIR


_PLACEHOLDER = re.compile(r"\{([a-z_]+)(?:\.([a-z_0-9]+))?\}")


def _template(text: str, params: Mapping[str, float]) -> str:
    """A criterion's text template for readers of the definition: params as their values,
    patient facts as [name]."""

    def one(match: re.Match[str]) -> str:
        if match.group(1) == "param" and match.group(2) in params:
            return f"{params[match.group(2)]:g}"
        return f"[{match.group(1)}]"

    return _PLACEHOLDER.sub(one, text)


def _value_set_ids(t: Trigger) -> list[str]:
    ids: list[str] = []
    for spec in (*t.drugs, *t.absent_drugs):
        kind, _, name = spec.partition(":")
        if kind == "class":
            ids.append(f"drug-class-{name}")
    for key in (*t.any_conditions, *t.absent_conditions, *t.ever_conditions):
        ids.append(f"condition-{key}")
    for sub in (*t.any_of, *t.none_of):
        ids += _value_set_ids(sub)
    return ids


def _rule(c: Criterion, published: set[str]) -> RuleSpec:
    p = c.params
    sets = [*_value_set_ids(c.trigger), *(i for ex in c.exceptions for i in _value_set_ids(ex))]
    return RuleSpec(
        id=c.id,
        title=_template(c.option.title, p),
        description=(
            f"A {c.kind} criterion after {c.source} {c.source_id} ({c.year}): "
            + _template(c.option.description, p)
        ),
        version=c.version,
        status=c.status,
        citation=f"{c.source} {c.source_id} ({c.year})",
        trigger=describe(c.trigger, p),
        exceptions=tuple(describe(ex, p) for ex in c.exceptions),
        trigger_fhirpath=to_fhirpath(c.trigger, dict(p)),
        exceptions_fhirpath=tuple(to_fhirpath(ex, dict(p)) for ex in c.exceptions),
        action_title=_template(c.option.title, p),
        action_description=_template(c.option.description, p),
        priority=c.priority,
        category=c.category,
        value_sets=tuple(i for i in dict.fromkeys(sets) if i in published),
    )


def _drug_class_sets(version: str) -> list[ValueSetSpec]:
    out = []
    for key, label in sorted(CLASS_LABELS.items()):
        codes = sorted({code for d in DRUGS if key in d.classes for code in d.rxnorm})
        if codes:
            out.append(
                ValueSetSpec(
                    f"drug-class-{key}",
                    f"Drug class: {label}",
                    f"RxNorm ingredient and clinical drug codes of the medicines the criteria "
                    f"count as {label} ('class:{key}').",
                    version,
                    (CodeGroup(RXNORM, tuple(codes)),),
                )
            )
    return out


def _condition_sets(version: str) -> list[ValueSetSpec]:
    out = []
    for g in CONDITION_GROUPS:
        groups = (CodeGroup(SNOMED, g.snomed), CodeGroup(ICD10, g.icd10))
        if not any(x.codes for x in groups):
            continue
        out.append(
            ValueSetSpec(
                f"condition-{g.key}",
                f"Condition group: {g.label}",
                f"SNOMED CT concepts and ICD-10-CM codes of the problems the criteria count as "
                f"{g.label} ('{g.key}'). An ICD-10-CM code listed here also stands for the "
                f"codes under it (I50 covers I50.22). Checked against: {g.source}.",
                version,
                groups,
            )
        )
    return out


def fhir_definitions(
    knowledge: Knowledge | None = None,
) -> tuple[list[ValueSetSpec], list[RuleSpec]]:
    """Value sets (drug classes with codes, condition groups) and one rule per criterion."""
    k = knowledge or shipped()
    version = k.stamp.version
    sets = [*_drug_class_sets(version), *_condition_sets(version)]
    ids = {s.id for s in sets}
    return sets, [_rule(c, ids) for c in k.criteria]


def knowledge_files(base: str, knowledge: Knowledge | None = None) -> dict[str, dict[str, object]]:
    """File name -> resource under ``base``: a ValueSet per drug class and condition group, a
    PlanDefinition and an ActivityDefinition per criterion."""
    sets, rules = fhir_definitions(knowledge)
    out = {f"ValueSet-{s.id}.json": render_value_set(s, base) for s in sets}
    for r in rules:
        out[f"PlanDefinition-{r.id}.json"] = render_plan_definition(r, base)
        out[f"ActivityDefinition-{r.id}-action.json"] = render_activity_definition(r, base)
    return out


def criteria_schema() -> str:
    """The JSON Schema of a criteria file, generated from the pydantic model, for editors
    (committed as docs/criteria.schema.json; a test keeps it current)."""
    schema = CriteriaFile.model_json_schema()
    # A point may be a reusable one by id (``data/points.yaml``), resolved before validation.
    schema["$defs"]["PointUse"] = PointUse.model_json_schema()
    points = schema["$defs"]["Criterion"]["properties"]["points"]
    points["items"] = {"anyOf": [points["items"], {"$ref": "#/$defs/PointUse"}]}
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "CANOE criteria file"
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
