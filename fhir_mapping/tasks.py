"""Contestation as FHIR Task: read Tasks into core actions, and apply them to a plan Bundle.

``parse_tasks`` accepts one Task or a Bundle of Tasks (``transaction`` or ``collection``; a
``batch`` is refused because its entries would be independent, while contestations apply in
order, all or none). Every refusal is a ``TaskError`` whose issues name the offending element
as FHIRPath (``Bundle.entry[1].resource.input[0].valueDecimal``) with a code from the FHIR
IssueType value set; a Task on an older CarePlan version raises ``StaleVersionError``.
Applying them and writing the new version (atomically, with the evaluation and synthesis
written again, a contestation Provenance and the Tasks marked ``completed``) is
``service.versions.write_version``, the one write step under every transport.

Task shape (codes from ``definitions.CS_ACTION`` / ``CS_INPUT``): status ``requested``, intent
``order``, ``code`` the action, ``focus`` ``CarePlan/<plan>-v<N>``, ``for`` the Patient,
``requester`` a Practitioner(Role), ``authoredOn``, optional ``reasonCode``/``note``, and typed
``input``s. No clock and no store here: times come from the Tasks and the caller. A Task is never
written with an ``authoredOn`` later than the time it is written (its ``lastModified``): a
sender's clock ahead of ours is clamped to that time, and the time sent kept in the
``original-authored-on`` extension.

``base`` is the deployment's canonical base (``CANOE_FHIR_BASE``, handed in by the service):
Tasks may name our CodeSystems under it or under ``DEFAULT_BASE``, and what this module writes
is under it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import ValidationError

from fhir_mapping._detected import source_url
from fhir_mapping._refs import relative_ref
from fhir_mapping.definitions import (
    CANOE_BASE,
    CS_ACTION,
    CS_INPUT,
    DEFAULT_BASE,
    ext_url,
    rebase,
)
from fhir_mapping.outcome import operation_outcome
from fhir_mapping.r4 import Task
from service.core import (
    AcceptArgument,
    AddArgument,
    ContestAction,
    DecideOption,
    DecideProblem,
    EditArgument,
    RejectArgument,
)
from service.core.model import Argument, Deliberation, Edge, Stance
from service.errors import Issue, LimitError, StaleVersionError, TaskError
from service.jsonio import load_json_object
from service.work import checkpoint

__all__ = [
    "ORIGINAL_AUTHORED_ON",
    "ParsedTask",
    "not_after",
    "parse_tasks",
    "refusal_bundle",
    "rejected_tasks",
    "remap_core_error",
    "task_difference",
    "task_outcomes",
]

ACTIONS: Final = ("accept", "reject", "edit", "add", "decide")
ORIGINAL_AUTHORED_ON: Final = ext_url("original-authored-on")
_FOCUS = re.compile(r"^CarePlan/(?P<plan>[A-Za-z0-9\-.]+)-v(?P<version>\d+)(/_history/\d+)?$")

# Per action: inputs it requires, inputs it also admits. Everything else is refused, so a
# planner never believes a field took effect when it did not.
_REQUIRED: Final[dict[str, frozenset[str]]] = {
    "accept": frozenset({"target"}),
    "reject": frozenset({"target"}),
    "edit": frozenset({"target"}),
    "add": frozenset({"target", "text", "stance", "strength"}),
    "decide": frozenset({"target", "decision"}),
}
_ALLOWED: Final[dict[str, frozenset[str]]] = {
    "accept": frozenset(),
    "reject": frozenset(),
    "edit": frozenset({"text", "strength", "evidence", "relation-add", "relation-remove"}),
    "add": frozenset({"role", "evidence", "fact", "relation-add"}),
    "decide": frozenset(),
}
_REPEATING: Final = frozenset({"evidence", "fact", "relation-add", "relation-remove"})
_VALUE_TYPES: Final[dict[str, tuple[str, ...]]] = {
    "target": ("valueString", "valueId"),
    "text": ("valueString", "valueMarkdown"),
    "stance": ("valueCode",),
    "strength": ("valueDecimal",),
    "role": ("valueString",),
    "evidence": ("valueString",),
    "fact": ("valueReference",),
    "relation-add": ("valueString",),
    "relation-remove": ("valueString",),
    "decision": ("valueCode",),
}


@dataclass(frozen=True, slots=True)
class ParsedTask:
    """One Task read into a core action. ``path`` is the Task's FHIRPath in the request
    (``Task`` or ``Bundle.entry[i].resource``); ``fields`` maps the core action's field names
    (``argument_id``, ``tau``, ``add_relations[0]``...) to the Task element that gave them, so a
    refusal by the core still names the Task element."""

    task_id: str
    action: ContestAction
    actor: str
    at: str
    reason: str
    resource: Mapping[str, Any]
    path: str = "Task"
    fields: Mapping[str, str] = field(default_factory=dict)


class _Issues:
    def __init__(self) -> None:
        self.items: list[Issue] = []

    def add(self, code: str, where: str, message: str) -> None:
        self.items.append(Issue("error", code, message, (where,)))


def _load(raw: bytes | str | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    return load_json_object(
        raw, what="the contestation (a Task or a Bundle of Tasks)", error=TaskError
    )


def _task_entries(obj: Mapping[str, Any], max_tasks: int | None = None) -> list[tuple[str, Any]]:
    """(FHIRPath, resource) per Task; refuses anything that is not a Task or Bundle of Tasks,
    and a Bundle of more than ``max_tasks`` entries (LimitError, before any validation)."""
    kind = obj.get("resourceType")
    if kind == "Task":
        return [("Task", obj)]
    if kind != "Bundle":
        msg = f"expected a Task or a Bundle of Tasks, got resourceType {kind!r}"
        raise TaskError(msg, issues=(Issue("error", "structure", msg, ("resourceType",)),))
    if obj.get("type") not in ("transaction", "collection"):
        msg = (
            f"Bundle.type {obj.get('type')!r} is not supported: contestation Tasks apply in "
            "order, all or none (use 'transaction' or 'collection')"
        )
        raise TaskError(msg, issues=(Issue("error", "not-supported", msg, ("Bundle.type",)),))
    entries = obj.get("entry")
    if not isinstance(entries, list) or not entries:
        msg = "the Bundle holds no Task"
        raise TaskError(msg, issues=(Issue("error", "required", msg, ("Bundle.entry",)),))
    if max_tasks is not None and len(entries) > max_tasks:
        msg = (
            f"the Bundle holds {len(entries)} entries; at most {max_tasks} Tasks are applied "
            "per request (CANOE_MAX_TASKS_PER_REQUEST)"
        )
        raise LimitError(msg, issues=(Issue("error", "too-costly", msg, ("Bundle.entry",)),))
    issues = _Issues()
    out: list[tuple[str, Any]] = []
    for i, e in enumerate(entries):
        where = f"Bundle.entry[{i}].resource"
        res = e.get("resource") if isinstance(e, Mapping) else None
        if not isinstance(res, Mapping):
            issues.add("required", where, f"{where} is missing")
        elif res.get("resourceType") != "Task":
            issues.add("structure", where, f"{where} is a {res.get('resourceType')!r}, not a Task")
        else:
            out.append((where, res))
    if issues.items:
        raise TaskError(issues.items[0].diagnostics, issues=tuple(issues.items))
    return out


def _fhirpath(base: str, loc: Sequence[object]) -> str:
    path = base
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _model_issues(res: Mapping[str, Any], where: str, issues: _Issues) -> bool:
    """Structural validation against the R4 Task model; False if it failed."""
    try:
        Task.model_validate(dict(res))
    except ValidationError as exc:
        for err in exc.errors():
            kind = str(err.get("type", ""))
            code = (
                "required"
                if "missing" in kind
                else "value"
                if kind.startswith("value")
                else "structure"
            )
            path = _fhirpath(where, [p for p in err.get("loc", ()) if p != "resourceType"])
            issues.add(code, path, f"{path}: {err.get('msg', 'invalid')}")
        return False
    return True


def _reference(res: Mapping[str, Any], name: str) -> str | None:
    value = res.get(name)
    if isinstance(value, Mapping) and isinstance(value.get("reference"), str):
        ref: str = value["reference"]
        return ref.removeprefix(f"{CANOE_BASE}/")
    return None


def _code(concept: object, system: str) -> str | None:
    if not isinstance(concept, Mapping):
        return None
    for c in concept.get("coding") or ():
        if isinstance(c, Mapping) and c.get("system") == system and isinstance(c.get("code"), str):
            code: str = c["code"]
            return code
    return None


def _parse_relation(text: str, self_id: str) -> Edge | None:
    words = text.split()
    rel: dict[str, Stance] = {
        "support": "support",
        "supports": "support",
        "attack": "attack",
        "attacks": "attack",
    }
    if len(words) == 2 and words[0] in rel:
        return Edge(self_id, words[1], rel[words[0]])
    if len(words) == 3 and words[1] in rel:
        return Edge(words[0], words[2], rel[words[1]])
    return None


class _Plan:
    """What a Task may name: the plan's ids, plus arguments added by earlier Tasks."""

    def __init__(self, d: Deliberation) -> None:
        self.options = {o.id for o in d.options}
        self.problems = {p.id for p in d.problems}
        self.argument_option = {a.id: o.id for o in d.options for a in o.arguments}

    def add(self, argument_id: str, option_id: str) -> None:
        self.argument_option[argument_id] = option_id


def _one_task(
    res: Mapping[str, Any],
    where: str,
    *,
    plan: Deliberation,
    careplan_id_now: str,
    known: _Plan,
    issues: _Issues,
) -> ParsedTask | None:
    """One Task: its envelope, its inputs grouped by kind, then the action it asks for."""
    before = len(issues.items)
    if not _model_issues(res, where, issues):
        return None
    action = _envelope(res, where, plan, careplan_id_now, issues)
    inputs = _inputs(res, where, issues)
    if action is None or len(issues.items) > before:
        return None
    by_kind = _group_inputs(action, inputs, where, issues)
    if len(issues.items) > before:
        return None
    task = _TaskInputs(where, by_kind, known, issues, task_id=str(res.get("id")))
    built = _BUILDERS[action](task, action)
    if built is None or len(issues.items) > before:
        return None
    return ParsedTask(
        task_id=str(res["id"]),
        action=built,
        actor=str(_reference(res, "requester")),
        at=str(res["authoredOn"]),
        reason="; ".join(_reasons(res)),
        resource=res,
        path=where,
        fields=task.fields,
    )


def _envelope(
    res: Mapping[str, Any], where: str, plan: Deliberation, careplan_id_now: str, issues: _Issues
) -> str | None:
    """Checks id, status, intent, code, focus, for, requester and authoredOn; the action code."""
    task_id = res.get("id")
    if not isinstance(task_id, str) or not task_id:
        issues.add(
            "required", f"{where}.id", "a contestation Task needs an id (it makes it idempotent)"
        )
    if res.get("status") != "requested":
        issues.add(
            "value",
            f"{where}.status",
            f"Task.status must be 'requested', got {res.get('status')!r}",
        )
    if res.get("intent") != "order":
        issues.add(
            "value", f"{where}.intent", f"Task.intent must be 'order', got {res.get('intent')!r}"
        )

    action = _code(res.get("code"), CS_ACTION)
    if res.get("code") is None:
        issues.add("required", f"{where}.code", f"Task.code is required (a code from {CS_ACTION})")
    elif action not in ACTIONS:
        issues.add(
            "code-invalid",
            f"{where}.code",
            f"Task.code needs one of {', '.join(ACTIONS)} from {CS_ACTION}",
        )
        action = None

    _check_focus(res, where, plan, careplan_id_now, issues)

    subject = _reference(res, "for")
    if subject is None:
        issues.add("required", f"{where}.for", "Task.for must reference the Patient")
    elif subject not in (plan.patient_ref, source_url(plan.patient_ref, plan)):
        issues.add("business-rule", f"{where}.for", "Task.for is not the patient of this CarePlan")

    actor = _reference(res, "requester")
    if actor is None:
        issues.add(
            "required", f"{where}.requester", "Task.requester must reference the Practitioner"
        )
    elif not (relative_ref(actor) or actor).startswith(("Practitioner/", "PractitionerRole/")):
        issues.add(
            "invalid",
            f"{where}.requester",
            "Task.requester must be a Practitioner or PractitionerRole",
        )

    at = res.get("authoredOn")
    if not isinstance(at, str) or not at:
        issues.add(
            "required",
            f"{where}.authoredOn",
            "Task.authoredOn is required (when the planner acted)",
        )
    return action


def _check_focus(
    res: Mapping[str, Any], where: str, plan: Deliberation, careplan_id_now: str, issues: _Issues
) -> None:
    """Task.focus must be the current version of the CarePlan; an older one is a stale contest."""
    focus = _reference(res, "focus")
    if focus is None:
        issues.add("required", f"{where}.focus", "Task.focus must reference the CarePlan contested")
        return
    if focus.removesuffix(f"/_history/{plan.version}") == f"CarePlan/{careplan_id_now}":
        return
    m = _FOCUS.match(focus)
    if m and m.group("plan") == plan.plan_id:
        msg = (
            f"{where}.focus names version {m.group('version')} of the plan; the current "
            f"version is {plan.version}: fetch it and contest that"
        )
        raise StaleVersionError(
            msg,
            current_version=plan.version,
            issues=(Issue("error", "conflict", msg, (f"{where}.focus",)),),
        )
    issues.add(
        "not-found",
        f"{where}.focus",
        f"Task.focus {focus!r} is not the CarePlan being contested",
    )


def _reasons(res: Mapping[str, Any]) -> list[str]:
    """Why the planner acted: reasonCode text (or its first display), then each note."""
    reasons: list[str] = []
    rc = res.get("reasonCode")
    if isinstance(rc, Mapping):
        text = rc.get("text") or next(
            (
                c.get("display")
                for c in rc.get("coding") or ()
                if isinstance(c, Mapping) and c.get("display")
            ),
            None,
        )
        if text:
            reasons.append(str(text))
    reasons += [
        str(n["text"]) for n in res.get("note") or () if isinstance(n, Mapping) and n.get("text")
    ]
    return reasons


def _inputs(res: Mapping[str, Any], where: str, issues: _Issues) -> list[tuple[str, Any, str]]:
    """Task.input as (kind, value, FHIRPath of the value), each value of its kind's type."""
    inputs: list[tuple[str, Any, str]] = []
    for j, inp in enumerate(res.get("input") or ()):
        at_in = f"{where}.input[{j}]"
        kind = _code(inp.get("type"), CS_INPUT)
        if kind not in _VALUE_TYPES:
            issues.add(
                "code-invalid", f"{at_in}.type", f"{at_in}.type needs a code from {CS_INPUT}"
            )
            continue
        keys = [k for k in inp if k.startswith("value")]
        key = keys[0] if keys else ""
        if key not in _VALUE_TYPES[kind]:
            want = " or ".join(_VALUE_TYPES[kind])
            issues.add(
                "value", f"{at_in}.{key}" if key else at_in, f"a '{kind}' input carries {want}"
            )
            continue
        value = inp[key]
        if key == "valueReference":
            value = value.get("reference") if isinstance(value, Mapping) else None
            if not isinstance(value, str):
                issues.add("value", f"{at_in}.{key}", f"a '{kind}' input needs a literal reference")
                continue
        inputs.append((kind, value, f"{at_in}.{key}"))
    return inputs


def _group_inputs(
    action: str, inputs: Sequence[tuple[str, Any, str]], where: str, issues: _Issues
) -> dict[str, list[tuple[Any, str]]]:
    """Inputs by kind: only kinds the action takes, one of each unless it repeats, all required."""
    by_kind: dict[str, list[tuple[Any, str]]] = {}
    for kind, value, path in inputs:
        if kind not in _REQUIRED[action] | _ALLOWED[action]:
            issues.add(
                "not-supported",
                path.rsplit(".", 1)[0],
                f"a '{action}' Task takes no '{kind}' input",
            )
            continue
        if kind in by_kind and kind not in _REPEATING:
            issues.add("structure", path.rsplit(".", 1)[0], f"more than one '{kind}' input")
            continue
        by_kind.setdefault(kind, []).append((value, path))
    for kind in sorted(_REQUIRED[action] - by_kind.keys()):
        issues.add("required", f"{where}.input", f"a '{action}' Task needs a '{kind}' input")
    return by_kind


class _TaskInputs:
    """One Task's grouped inputs while its action is built; ``fields`` maps the core's field
    names to the FHIRPath they came from, so a refusal by the core names the Task's element."""

    def __init__(
        self,
        where: str,
        by_kind: dict[str, list[tuple[Any, str]]],
        known: _Plan,
        issues: _Issues,
        *,
        task_id: str,
    ) -> None:
        self.where, self.by_kind, self.known, self.issues = where, by_kind, known, issues
        self.task_id = task_id
        self.target, self.target_at = by_kind["target"][0]
        self.fields: dict[str, str] = {
            "task_id": f"{where}.id",
            "actor": f"{where}.requester",
            "at": f"{where}.authoredOn",
        }

    def one(self, kind: str) -> tuple[Any, str] | None:
        got = self.by_kind.get(kind)
        return got[0] if got else None

    def strength(self) -> float | None:
        strength = self.one("strength")
        if strength is None:
            return None
        v, p = strength
        self.fields["tau"] = self.fields["argument.tau"] = p
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
            self.issues.add("value", p, f"strength must be a number in [0, 1], got {v!r}")
            return None
        return float(v)

    def relations(
        self, kind: str, self_id: str, option_id: str | None, core_field: str
    ) -> tuple[Edge, ...]:
        out: list[Edge] = []
        for m, (v, p) in enumerate(self.by_kind.get(kind, ())):
            edge = _parse_relation(str(v), self_id)
            if edge is None:
                self.issues.add("value", p, f"'{v}' is not '<source> <support|attack> <target>'")
                continue
            for end in (edge.source, edge.target):
                if end != self_id and self.known.argument_option.get(end) != option_id:
                    self.issues.add(
                        "not-found", p, f"{end!r} is not an argument of option {option_id!r}"
                    )
            self.fields[f"{core_field}[{m}]"] = p
            out.append(edge)
        return tuple(out)


def _build_on_argument(task: _TaskInputs, action: str) -> ContestAction | None:
    """accept, reject or edit an argument of the plan."""
    tau = task.strength()
    target = task.target
    task.fields["argument_id"] = task.target_at
    option_id = task.known.argument_option.get(target)
    if option_id is None:
        task.issues.add("not-found", task.target_at, f"no argument {target!r} in this plan")
        return None
    if action == "accept":
        return AcceptArgument(target)
    if action == "reject":
        return RejectArgument(target)
    text = task.one("text")
    if text:
        task.fields["text"] = text[1]
    ev = task.by_kind.get("evidence")
    if ev:
        task.fields["evidence"] = ev[0][1]
    return EditArgument(
        target,
        text=str(text[0]) if text else None,
        evidence=tuple(str(v) for v, _ in ev) if ev else None,
        tau=tau,
        add_relations=task.relations("relation-add", target, option_id, "add_relations"),
        remove_relations=task.relations("relation-remove", target, option_id, "remove_relations"),
    )


def _build_add(task: _TaskInputs, action: str) -> ContestAction | None:
    """add a human argument to an option."""
    tau = task.strength()
    target, target_at, by_kind = task.target, task.target_at, task.by_kind
    task.fields["option_id"] = target_at
    stance_v, stance_at = by_kind["stance"][0]
    task.fields["argument.stance"] = stance_at
    task.fields["argument.id"] = f"{task.where}.id"
    if target not in task.known.options:
        task.issues.add("not-found", target_at, f"no option {target!r} in this plan")
    if stance_v not in ("support", "attack"):
        task.issues.add(
            "code-invalid", stance_at, f"stance must be support or attack, got {stance_v!r}"
        )
    new_id = f"human-{task.task_id}"
    role = task.one("role")
    argument = Argument(
        id=new_id,
        role=str(role[0]) if role else "human",
        stance=stance_v,
        text=str(by_kind["text"][0][0]),
        evidence=tuple(str(v) for v, _ in by_kind.get("evidence", ())),
        facts=tuple(str(v) for v, _ in by_kind.get("fact", ())),
        tau=tau if tau is not None else 0.0,
        origin="human",
        tau_source="human",
    )
    if target in task.known.options:
        task.known.add(new_id, target)
    rels = task.relations("relation-add", new_id, target, "relations")
    return AddArgument(target, argument, rels)


def _build_decide(task: _TaskInputs, action: str) -> ContestAction | None:
    """decide an option (include/exclude) or a problem (accept/reject)."""
    task.strength()
    target, target_at = task.target, task.target_at
    task.fields["option_id"] = task.fields["problem_id"] = target_at
    decision, decision_at = task.by_kind["decision"][0]
    task.fields["decision"] = decision_at
    if target in task.known.options:
        if decision not in ("include", "exclude"):
            task.issues.add(
                "value",
                decision_at,
                f"an option's decision is include or exclude, got {decision!r}",
            )
        return DecideOption(target, decision)
    if target in task.known.problems:
        if decision not in ("accept", "reject"):
            task.issues.add(
                "value",
                decision_at,
                f"a problem's decision is accept or reject, got {decision!r}",
            )
        return DecideProblem(target, decision)
    task.issues.add("not-found", target_at, f"no option or problem {target!r} in this plan")
    return None


_BUILDERS: dict[str, Callable[[_TaskInputs, str], ContestAction | None]] = {
    "accept": _build_on_argument,
    "reject": _build_on_argument,
    "edit": _build_on_argument,
    "add": _build_add,
    "decide": _build_decide,
}


def parse_tasks(
    raw: bytes | str | Mapping[str, Any],
    *,
    plan: Deliberation,
    careplan_id: str,
    base: str = DEFAULT_BASE,
    max_tasks: int | None = None,
) -> tuple[ParsedTask, ...]:
    """The contestation Tasks in ``raw``, in order, checked against ``plan``. The parsed
    resources are under ``DEFAULT_BASE`` whatever ``base`` the Tasks were written under.

    Raises ``TaskError`` listing every problem found (one Issue each), ``StaleVersionError``
    when a Task's focus is another version of this plan, and ``LimitError`` for a Bundle of
    more than ``max_tasks`` entries.
    """
    entries = _task_entries(rebase(_load(raw), DEFAULT_BASE, from_base=base), max_tasks)
    issues = _Issues()
    known = _Plan(plan)
    seen: set[str] = set()
    out: list[ParsedTask] = []
    for where, res in entries:
        checkpoint()
        tid = res.get("id")
        if isinstance(tid, str) and tid in seen:
            issues.add("duplicate", f"{where}.id", f"Task id {tid!r} appears twice in the Bundle")
            continue
        if isinstance(tid, str):
            seen.add(tid)
        parsed = _one_task(
            res, where, plan=plan, careplan_id_now=careplan_id, known=known, issues=issues
        )
        if parsed is not None:
            out.append(parsed)
    if issues.items:
        first = issues.items[0]
        more = f" (and {len(issues.items) - 1} more)" if len(issues.items) > 1 else ""
        raise TaskError(f"{first.diagnostics}{more}", issues=tuple(issues.items))
    return tuple(out)


def _core_path(task: ParsedTask, expression: str) -> str:
    """The Task element behind a core field path such as ``add_relations[0].source``."""
    best = ""
    for key in task.fields:
        if (expression == key or expression.startswith((key + ".", key + "["))) and len(key) > len(
            best
        ):
            best = key
    return task.fields[best] if best else task.path


def remap_core_error(err: TaskError, tasks: Sequence[ParsedTask]) -> TaskError:
    """A core refusal from ``apply_all`` over ``tasks`` (expressions like
    ``actions[1].add_relations[0].source``) re-addressed to the Task elements that gave them
    (``Bundle.entry[1].resource.input[2].valueString``)."""
    issues: list[Issue] = []
    for issue in err.issues:
        paths: list[str] = []
        for x in issue.expression:
            m = re.match(r"^actions\[(\d+)\]\.?(.*)$", x)
            paths.append(_core_path(tasks[int(m.group(1))], m.group(2)) if m else x)
        issues.append(Issue(issue.severity, issue.code, issue.diagnostics, tuple(paths)))
    return TaskError(err.message, issues=tuple(issues))


# The elements that carry a Task's decision. A Task id sent again with one of them changed is
# another decision under a used id: refused by name, never dropped in silence as a replay.
_DECISION: Final = ("code", "input", "reasonCode")


def task_difference(
    sent: ParsedTask, applied: Mapping[str, Any], *, base: str = DEFAULT_BASE
) -> tuple[str, ...]:
    """The FHIRPaths (in the caller's request) of the decision elements where ``sent`` differs
    from the Task ``applied`` under its id before (as stored, under ``base``); () when none."""
    resource = rebase(dict(sent.resource), base)
    return tuple(f"{sent.path}.{k}" for k in _DECISION if resource.get(k) != applied.get(k))


def _earliest(stamp: str) -> datetime | None:
    """The earliest instant a FHIR date or dateTime of any precision can name (UTC when it
    names no offset); None when it is neither."""
    padded = stamp + {4: "-01-01", 7: "-01"}.get(len(stamp), "")
    try:
        at = datetime.fromisoformat(padded)
    except ValueError:
        return None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def not_after(authored: str, written: str) -> str:
    """``authored``, unless it is later than ``written``: then ``written``. A Task cannot
    have been authored after the service wrote it, whatever the sender's clock said."""
    sent, at = _earliest(authored), _earliest(written)
    return written if sent is not None and at is not None and sent > at else authored


def _clamp_authored(res: dict[str, Any], at: str) -> None:
    """``res.authoredOn`` no later than ``at``; a later one is kept in its own extension."""
    sent = res.get("authoredOn")
    if not isinstance(sent, str) or not_after(sent, at) == sent:
        return
    res["authoredOn"] = at
    others = [
        e
        for e in res.get("extension") or ()
        if not (isinstance(e, Mapping) and e.get("url") == ORIGINAL_AUTHORED_ON)
    ]
    res["extension"] = [*others, {"url": ORIGINAL_AUTHORED_ON, "valueDateTime": sent}]


def task_outcomes(
    tasks: Sequence[ParsedTask] | Sequence[Mapping[str, Any]],
    *,
    status: Literal["completed", "rejected"],
    reason: str = "",
    careplan_ref: str | None = None,
    at: str | None = None,
) -> list[dict[str, Any]]:
    """The Tasks as they stand after the attempt: ``status`` set, ``statusReason`` when
    rejected, an ``output`` naming the new CarePlan version when completed, ``lastModified``
    when ``at`` is given (and then ``authoredOn`` no later than it)."""
    out: list[dict[str, Any]] = []
    for t in tasks:
        res = dict(t.resource if isinstance(t, ParsedTask) else t)
        res["status"] = status
        if at:
            res["lastModified"] = at
            _clamp_authored(res, at)
        if status == "rejected" and reason:
            res["statusReason"] = {"text": reason}
        if status == "completed" and careplan_ref:
            res["output"] = [
                {
                    "type": {"text": "resulting CarePlan version"},
                    "valueReference": {"reference": careplan_ref},
                }
            ]
        out.append(res)
    return out


def rejected_tasks(
    raw: bytes | str | Mapping[str, Any], reason: str, *, at: str | None = None
) -> list[dict[str, Any]]:
    """Whatever Task resources ``raw`` holds, marked ``rejected`` with ``reason`` (for a
    transport answering a refused contestation); [] when nothing Task-like can be read."""
    try:
        obj = _load(raw)
    except TaskError:
        return []
    if obj.get("resourceType") == "Task":
        found: list[Mapping[str, Any]] = [obj]
    else:
        found = [
            e["resource"]
            for e in obj.get("entry") or ()
            if isinstance(e, Mapping)
            and isinstance(e.get("resource"), Mapping)
            and e["resource"].get("resourceType") == "Task"
        ]
    return task_outcomes(found, status="rejected", reason=reason, at=at)


def refusal_bundle(
    raw: bytes | str | Mapping[str, Any],
    err: BaseException,
    *,
    at: str | None = None,
    base: str = DEFAULT_BASE,
) -> dict[str, Any]:
    """What a refused contestation answers: a ``collection`` Bundle with the OperationOutcome
    first, then every Task ``raw`` holds, marked ``rejected`` with the reason."""
    oo = operation_outcome(err)
    reason = "; ".join(str(i.get("diagnostics", "")) for i in oo["issue"]) or "refused"
    entries: list[dict[str, Any]] = [{"resource": oo}]
    entries += [
        {"fullUrl": f"{CANOE_BASE}/Task/{t['id']}", "resource": t}
        if t.get("id")
        else {"resource": t}
        for t in rejected_tasks(raw, reason, at=at)
    ]
    out: dict[str, Any] = {"resourceType": "Bundle", "type": "collection", "entry": entries}
    if at:
        out["timestamp"] = at
    return rebase(out, base)
