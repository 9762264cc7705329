"""The plan's synthesis (CANOE 4.5, eq. 14): a short narrative written from the deliberation as it
stands, its live arguments and its scores, so that every version says what that version decided.

The embedded backend writes it with this function at plan time and after every contestation
(deterministic: the same deliberation gives the same words); a model backend writes its own at
plan time and again after a contestation that changed an included option
(``included_outline`` says which). The text names the activities in plan order (the order the
CarePlan lists them), each of the first three with its score and its strongest live supporting
argument (a rejected argument is never quoted), then the rest of the plan and what was not
included, with its score and, where the selection excluded it, why.

Pure: frozen data in, text out; no I/O.
"""

from __future__ import annotations

from service.core.evaluation import Evaluation, OptionResult
from service.core.model import Argument, Deliberation, Option

__all__ = ["HIGHEST", "REASON_CHARS", "included_outline", "synthesise"]

HIGHEST = 3  # activities named with their score and reason
REASON_CHARS = 200  # a reason longer than this is cut at a word
_EXCLUDED_NAMED = 5  # options not included that the text names


def synthesise(d: Deliberation, ev: Evaluation) -> str:
    """The synthesis of ``d`` as evaluated in ``ev``."""
    by_id = {o.id: o for o in d.options}
    included = [by_id[i] for i in ev.plan]
    excluded = [(by_id[r.option_id], r) for r in ev.options if r.decision == "exclude"]
    if not included:
        return (
            "The plan includes no intervention; "
            f"{len(excluded)} options were considered and are listed for review."
        )
    m = d.meta
    parts = [
        f"Care plan for a case of {m.complexity or 'unstated'} complexity"
        + (f" ({', '.join(m.dimensions[:4])})" if m.dimensions else "")
        + "."
    ]
    top = [_named(o, ev.option(o.id)) for o in included[:HIGHEST]]
    parts.append("Highest priority: " + "; ".join(top) + ".")
    if len(included) > HIGHEST:
        parts.append("Also included: " + ", ".join(o.title for o in included[HIGHEST:]) + ".")
    if excluded:
        parts.append(
            "Not included after deliberation: "
            + ", ".join(_left_out(o, r) for o, r in excluded[:_EXCLUDED_NAMED])
            + "."
        )
    return " ".join(parts)


def included_outline(ev: Evaluation) -> tuple[tuple[str, str], ...]:
    """What a model's synthesis was written from: the included options in plan order with their
    scores as the text shows them. A contestation that leaves it unchanged leaves a model's
    narrative true; one that changes it asks for a new one."""
    return tuple((i, f"{ev.option(i).score:.2f}") for i in ev.plan)


def _named(o: Option, r: OptionResult) -> str:
    why = _reason(o, r)
    return f"{o.title} (score {r.score:.2f})" + (f": {why}" if why else "")


def _left_out(o: Option, r: OptionResult) -> str:
    if r.decided_by == "incompatibility":
        return (
            f"{o.title} ({r.score:.2f}; an incompatible action on the same medicine ranks higher)"
        )
    if r.decided_by == "problems":
        return f"{o.title} ({r.score:.2f}; the problems it treats were rejected)"
    return f"{o.title} ({r.score:.2f})"


def _reason(o: Option, r: OptionResult) -> str:
    """The strongest live supporting argument's text: by final strength, then intrinsic
    strength, role and id."""
    live = [a for a in o.arguments if a.stance == "support" and a.status != "rejected"]
    if not live:
        return ""
    best = min(live, key=lambda a: _rank(a, r))
    text = best.text.strip().rstrip(".")
    if len(text) <= REASON_CHARS:
        return text
    return text[: REASON_CHARS - 3].rsplit(" ", 1)[0] + "..."


def _rank(a: Argument, r: OptionResult) -> tuple[float, float, str, str]:
    node = r.nodes.get(a.id)
    sigma = node.sigma if node is not None and node.sigma is not None else a.tau
    return (-sigma, -a.tau, a.role, a.id)
