"""Human contestation (CANOE 4.4) as pure functions on the deliberation: ``apply(d, action, ...)``.

Actions: accept (pin an argument; also reinstates a rejected one), reject (the argument stays on
record with status "rejected" and is out of the graph with its edges and clashes), edit (text,
evidence, strength, relations), add (a human argument with its strength; the argument -> option
edge follows its stance), decide (a human's final include/exclude on an option, accept/reject on a
problem; None clears it).

Every applied action returns a new ``Deliberation`` with ``version + 1`` and a ``Contestation``
appended (who, when, why, and the action's fields as a JSON-ready payload). Options the action
does not touch are shared with the old version, which lets ``evaluate(..., previous=...)`` skip
them. A task id already recorded is a no-op (the same Task applied twice). ``apply_all`` applies
a bundle atomically with ONE version increment for the whole bundle. Nothing here reads a clock:
``at`` comes from the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from service.core.model import (
    Action,
    Argument,
    ArgumentStatus,
    Contestation,
    Deliberation,
    Edge,
    Judgement,
    Option,
    OptionDecision,
    Problem,
)
from service.errors import Issue, TaskError

__all__ = [
    "AcceptArgument",
    "AddArgument",
    "ContestAction",
    "DecideOption",
    "DecideProblem",
    "EditArgument",
    "RejectArgument",
    "apply",
    "apply_all",
]


@dataclass(frozen=True, slots=True)
class AcceptArgument:
    argument_id: str


@dataclass(frozen=True, slots=True)
class RejectArgument:
    argument_id: str


@dataclass(frozen=True, slots=True)
class EditArgument:
    """Only the given fields change; an edited tau makes the strength human-set (no clashes).
    Relations must have the argument at one end and another argument of the option at the other
    (the argument -> option edge follows the stance and cannot be edited)."""

    argument_id: str
    text: str | None = None
    evidence: tuple[str, ...] | None = None
    tau: float | None = None
    add_relations: tuple[Edge, ...] = ()
    remove_relations: tuple[Edge, ...] = ()


@dataclass(frozen=True, slots=True)
class AddArgument:
    """Stored with ``origin="human"``, ``tau_source="human"``, ``status="active"``."""

    option_id: str
    argument: Argument
    relations: tuple[Edge, ...] = ()


@dataclass(frozen=True, slots=True)
class DecideOption:
    option_id: str
    decision: OptionDecision | None


@dataclass(frozen=True, slots=True)
class DecideProblem:
    problem_id: str
    decision: Judgement | None


ContestAction = (
    AcceptArgument | RejectArgument | EditArgument | AddArgument | DecideOption | DecideProblem
)


def _fail(code: str, field: str, message: str) -> TaskError:
    return TaskError(message, issues=(Issue("error", code, message, (field,)),))


def edge_dict(edge: Edge) -> dict[str, object]:
    """An edge, JSON-ready (the document's and the contest record's shape)."""
    return {"source": edge.source, "target": edge.target, "relation": edge.relation}


def argument_dict(argument: Argument) -> dict[str, object]:
    """An argument's stored fields, JSON-ready (also the document's node input fields)."""
    return {
        "id": argument.id,
        "role": argument.role,
        "stance": argument.stance,
        "text": argument.text,
        "evidence": list(argument.evidence),
        "facts": list(argument.facts),
        "tau": argument.tau,
        "origin": argument.origin,
        "status": argument.status,
        "tau_source": argument.tau_source,
    }


def _find_argument(d: Deliberation, argument_id: str) -> tuple[int, int]:
    for i, o in enumerate(d.options):
        for j, a in enumerate(o.arguments):
            if a.id == argument_id:
                return i, j
    raise _fail("not-found", "argument_id", f"no argument {argument_id!r} in this deliberation")


def _find_option(d: Deliberation, option_id: str) -> int:
    for i, o in enumerate(d.options):
        if o.id == option_id:
            return i
    raise _fail("not-found", "option_id", f"no option {option_id!r} in this deliberation")


def _check_tau(tau: object, field: str) -> float:
    if isinstance(tau, bool) or not isinstance(tau, int | float) or not 0.0 <= tau <= 1.0:
        raise _fail("value", field, f"{field} must be a number in [0, 1], got {tau!r}")
    return float(tau)


def _check_relations(
    option: Option, arg_id: str, relations: Sequence[Edge], field: str, *, existing: set[Edge]
) -> None:
    """Each relation joins ``arg_id`` and another argument of ``option`` and is new."""
    ids = {a.id for a in option.arguments} | {arg_id}
    seen = set(existing)
    for k, e in enumerate(relations):
        where = f"{field}[{k}]"
        if not isinstance(e, Edge):
            raise _fail("invalid", where, f"{where} is not an Edge")
        if e.relation not in ("support", "attack"):
            raise _fail(
                "value",
                f"{where}.relation",
                f"{where}.relation {e.relation!r} is not support/attack",
            )
        if arg_id not in (e.source, e.target):
            raise _fail("invalid", where, f"{where} does not involve argument {arg_id!r}")
        if e.source == e.target:
            raise _fail("invalid", where, f"{where} joins {arg_id!r} to itself")
        if e.target == option.id or e.source == option.id:
            raise _fail(
                "invalid",
                f"{where}.target",
                f"{where}: the argument -> option edge follows the stance",
            )
        for end in ("source", "target"):
            if getattr(e, end) not in ids:
                raise _fail(
                    "not-found",
                    f"{where}.{end}",
                    f"{where}.{end} {getattr(e, end)!r} is not an argument of option {option.id!r}",
                )
        if e in seen:
            raise _fail("invalid", where, f"{where} already exists")
        seen.add(e)


def _replace_option(d: Deliberation, i: int, option: Option) -> Deliberation:
    return replace(d, options=(*d.options[:i], option, *d.options[i + 1 :]))


def _replace_argument(
    d: Deliberation, i: int, j: int, arg: Argument, **option_changes: object
) -> Deliberation:
    o = d.options[i]
    args = (*o.arguments[:j], arg, *o.arguments[j + 1 :])
    return _replace_option(d, i, replace(o, arguments=args, **option_changes))  # type: ignore[arg-type]


_Step = tuple[Deliberation, Action, str, dict[str, object]]


def _step(d: Deliberation, action: ContestAction) -> _Step:
    """The changed deliberation (same version), and the record's action, target and payload."""
    apply_one = _STEPS.get(type(action))
    if apply_one is None:
        raise _fail("not-supported", "action", f"unknown contest action {type(action).__name__}")
    return apply_one(d, action)


def _accept_or_reject(d: Deliberation, action: AcceptArgument | RejectArgument) -> _Step:
    i, j = _find_argument(d, action.argument_id)
    arg = d.options[i].arguments[j]
    status: ArgumentStatus = "accepted" if isinstance(action, AcceptArgument) else "rejected"
    payload: dict[str, object] = {"option_id": d.options[i].id, "previous_status": arg.status}
    verb: Action = "accept" if status == "accepted" else "reject"
    return _replace_argument(d, i, j, replace(arg, status=status)), verb, arg.id, payload


def _edit(d: Deliberation, action: EditArgument) -> _Step:
    i, j = _find_argument(d, action.argument_id)
    option, arg = d.options[i], d.options[i].arguments[j]
    changes: dict[str, object] = {}
    if action.text is not None:
        if not isinstance(action.text, str):
            raise _fail("value", "text", "text must be a string")
        changes["text"] = action.text
    if action.evidence is not None:
        if not all(isinstance(x, str) for x in action.evidence):
            raise _fail("value", "evidence", "evidence must be document ids (strings)")
        changes["evidence"] = tuple(action.evidence)
    if action.tau is not None:
        changes["tau"] = _check_tau(action.tau, "tau")
        changes["tau_source"] = "human"
    edges = list(option.edges)
    for k, e in enumerate(action.remove_relations):
        where = f"remove_relations[{k}]"
        if e not in edges:
            raise _fail("not-found", where, f"{where} is not an edge of option {option.id!r}")
        if arg.id not in (e.source, e.target) or option.id in (e.source, e.target):
            raise _fail(
                "invalid", where, f"{where} is not a relation of {arg.id!r} to another argument"
            )
        edges.remove(e)
    _check_relations(option, arg.id, action.add_relations, "add_relations", existing=set(edges))
    edges.extend(action.add_relations)
    if not changes and not action.add_relations and not action.remove_relations:
        raise _fail("invalid", "argument_id", "the edit changes nothing")
    payload = {
        "option_id": option.id,
        "text": action.text,
        "evidence": None if action.evidence is None else list(action.evidence),
        "tau": changes.get("tau"),
        "previous_tau": arg.tau if "tau" in changes else None,
        "add_relations": [edge_dict(e) for e in action.add_relations],
        "remove_relations": [edge_dict(e) for e in action.remove_relations],
    }
    new_arg = replace(arg, **changes)  # type: ignore[arg-type]
    return _replace_argument(d, i, j, new_arg, edges=tuple(edges)), "edit", arg.id, payload


def _add(d: Deliberation, action: AddArgument) -> _Step:
    i = _find_option(d, action.option_id)
    option, arg = d.options[i], action.argument
    if not isinstance(arg, Argument):
        raise _fail("invalid", "argument", "argument must be an Argument")
    if not arg.id or not isinstance(arg.id, str):
        raise _fail("required", "argument.id", "argument.id is required")
    taken = {o.id for o in d.options} | {a.id for o in d.options for a in o.arguments}
    if arg.id in taken:
        raise _fail("invalid", "argument.id", f"argument.id {arg.id!r} is already used")
    if arg.stance not in ("support", "attack"):
        raise _fail(
            "value", "argument.stance", f"argument.stance {arg.stance!r} is not support/attack"
        )
    tau = _check_tau(arg.tau, "argument.tau")
    stored = replace(arg, tau=tau, origin="human", status="active", tau_source="human")
    probe = replace(option, arguments=(*option.arguments, stored))
    _check_relations(probe, arg.id, action.relations, "relations", existing=set(option.edges))
    new_option = replace(
        option,
        arguments=probe.arguments,
        edges=(*option.edges, Edge(arg.id, option.id, arg.stance), *action.relations),
    )
    payload: dict[str, object] = {
        "option_id": option.id,
        "argument": argument_dict(stored),
        "relations": [edge_dict(e) for e in action.relations],
    }
    return _replace_option(d, i, new_option), "add", option.id, payload


def _decide_option(d: Deliberation, action: DecideOption) -> _Step:
    i = _find_option(d, action.option_id)
    if action.decision not in ("include", "exclude", None):
        raise _fail("value", "decision", f"decision {action.decision!r} is not include/exclude")
    option = d.options[i]
    payload: dict[str, object] = {
        "on": "option",
        "decision": action.decision,
        "previous": option.human_decision,
    }
    new = replace(option, human_decision=action.decision)
    return _replace_option(d, i, new), "decide", option.id, payload


def _decide_problem(d: Deliberation, action: DecideProblem) -> _Step:
    if action.decision not in ("accept", "reject", None):
        raise _fail("value", "decision", f"decision {action.decision!r} is not accept/reject")
    for i, p in enumerate(d.problems):
        if p.id == action.problem_id:
            payload: dict[str, object] = {
                "on": "problem",
                "decision": action.decision,
                "previous": p.human_decision,
            }
            new_p: Problem = replace(p, human_decision=action.decision)
            problems = (*d.problems[:i], new_p, *d.problems[i + 1 :])
            return replace(d, problems=problems), "decide", p.id, payload
    raise _fail("not-found", "problem_id", f"no problem {action.problem_id!r} in this deliberation")


# One function per action; exact types, so a subclass is not silently treated as its base.
_STEPS: dict[type, Callable[[Deliberation, Any], _Step]] = {
    AcceptArgument: _accept_or_reject,
    RejectArgument: _accept_or_reject,
    EditArgument: _edit,
    AddArgument: _add,
    DecideOption: _decide_option,
    DecideProblem: _decide_problem,
}


def _record(
    d: Deliberation, action: ContestAction, task_id: str, actor: str, at: str, reason: str
) -> Deliberation:
    if not task_id or not isinstance(task_id, str):
        raise _fail("required", "task_id", "task_id is required")
    if not actor or not isinstance(actor, str):
        raise _fail("required", "actor", "actor is required")
    if not at or not isinstance(at, str):
        raise _fail("required", "at", "at (the time of the action) is required")
    changed, verb, target, payload = _step(d, action)
    c = Contestation(task_id, verb, target, actor, at, reason, payload)
    return replace(changed, contestations=(*changed.contestations, c))


def apply(
    deliberation: Deliberation,
    action: ContestAction,
    *,
    task_id: str,
    actor: str,
    at: str,
    reason: str = "",
) -> Deliberation:
    """One action -> a new version. A ``task_id`` already applied returns ``deliberation``
    unchanged.

    Raises ``TaskError`` (Issue code "not-found" for unknown ids, "value" for out-of-range values,
    "invalid" otherwise) naming the offending field in the issue expression.
    """
    if any(c.id == task_id for c in deliberation.contestations):
        return deliberation
    new = _record(deliberation, action, task_id, actor, at, reason)
    return replace(new, version=deliberation.version + 1)


def apply_all(
    deliberation: Deliberation,
    actions: Iterable[tuple[ContestAction, str, str, str, str]],
) -> Deliberation:
    """Apply ``(action, task_id, actor, at, reason)`` tuples in order, all or none, as ONE new
    version (each action still gets its own contestation record). Already-applied task ids are
    skipped; if every action is skipped, ``deliberation`` is returned unchanged. On error nothing
    is applied and the TaskError's expression is prefixed with the action's index
    (``actions[2].tau``)."""
    cur = deliberation
    done: set[str] = {c.id for c in deliberation.contestations}
    for k, (action, task_id, actor, at, reason) in enumerate(actions):
        if task_id in done:
            continue
        try:
            cur = _record(cur, action, task_id, actor, at, reason)
        except TaskError as exc:
            issues = tuple(
                Issue(
                    i.severity,
                    i.code,
                    i.diagnostics,
                    tuple(f"actions[{k}].{x}" for x in i.expression),
                )
                for i in exc.issues
            )
            raise TaskError(f"actions[{k}]: {exc.message}", issues=issues) from exc
        done.add(task_id)
    if cur is deliberation:
        return deliberation
    return replace(cur, version=deliberation.version + 1)
