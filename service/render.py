"""Renders a plan as text a care planner can read in a terminal. Presentation only, no reasoning.

``render_summary`` is the default: at most eight ranked lines (``service.text.summary``).
``render_plan`` is the detailed view: every activity shows the roles for and against, the
surviving arguments with their strengths (tau, calibrated tau~, propagated sigma), the evidence
and the patient facts cited, and the score with why it cleared or missed the threshold (CANOE
4.5 (i)-(iv)); each argument with its id so a reader can contest it, and each clash with its
winner and the adjudicator's reason. No patient identifiers are printed: the patient appears as
their FHIR reference.
"""

from __future__ import annotations

from collections.abc import Mapping

from inference.protocol import EvidenceDoc
from service.core import CATEGORY_ORDER, Evaluation, NodeScore
from service.core.model import Deliberation, Option
from service.text.summary import Summary, coverage_detail, summary_text

__all__ = ["render_plan", "render_summary"]

_CATEGORY_TITLES = {c: c.replace("-", " ").capitalize() for c in CATEGORY_ORDER}


def render_summary(
    plan: Deliberation, evaluation: Evaluation, summary: Summary | None = None
) -> str:
    """The clinician summary (no FHIR ids, no strengths notation); ``summary``: the one the
    plan's written answer was built with, where there is one (else it is computed here)."""
    return summary_text(plan, evaluation, summary)


def render_plan(
    plan: Deliberation, ev: Evaluation, evidence: Mapping[str, EvidenceDoc] | None = None
) -> str:
    """The full view (``canoe plan --detail``): header, problems, included activities, the
    options left out, then the synthesis, what is missing, unusable facts, coverage and the
    contestations."""
    sections = (
        _header(plan),
        _problems(plan, ev),
        _included(plan, ev, evidence or {}),
        _left_out(plan, ev),
        _tail(plan),
    )
    return "\n".join(line for section in sections for line in section)


def _header(plan: Deliberation) -> list[str]:
    p = plan.parameters
    return [
        f"CARE PLAN {plan.plan_id} v{plan.version} for {plan.patient_ref}",
        f"complexity {plan.meta.complexity or '?'}; panel: "
        + ", ".join(role for role, _ in plan.meta.panel)
        + f"; backend {plan.meta.backend}; evidence base {plan.meta.evidence_version}",
        f"parameters: delta={p.delta} beta={p.beta} threshold={p.threshold} band=±{p.band}",
        "",
    ]


def _problems(plan: Deliberation, ev: Evaluation) -> list[str]:
    out = ["PROBLEMS"]
    problems = {pr.id: pr for pr in plan.problems}
    for r in ev.problems:
        pr = problems[r.problem_id]
        counts = {v: sum(1 for x in pr.votes if x.vote == v) for v in ("KEEP", "REFUSE", "NEUTRAL")}
        mark = {"accept": "+", "reject": "-", None: "?"}[r.decision]
        out.append(
            f"  [{mark}] {pr.display}  ({r.path.replace('_', ' ')}, decided by {r.decided_by}; "
            f"KEEP {counts['KEEP']} / REFUSE {counts['REFUSE']} / NEUTRAL {counts['NEUTRAL']}; "
            f"attending initially {pr.initial})"
        )
        if pr.arbitration_rationale:
            out.append(f"        arbitration: {pr.arbitration_rationale}")
    return [*out, ""]


def _included(plan: Deliberation, ev: Evaluation, evidence: Mapping[str, EvidenceDoc]) -> list[str]:
    options = {o.id: o for o in plan.options}
    out = ["ACTIVITIES (included)"]
    current = None
    for oid in ev.plan:
        o = options[oid]
        group = (
            f"{o.priority} priority" if o.priority else _CATEGORY_TITLES.get(o.category, o.category)
        )
        if group != current:
            current = group
            out.append(f"  == {group.capitalize()} ==")
        out.extend(_option_block(o, ev, evidence, plan.parameters.threshold))
    if not ev.plan:
        out.append("  (none cleared the threshold)")
    return [*out, ""]


def _left_out(plan: Deliberation, ev: Evaluation) -> list[str]:
    options = {o.id: o for o in plan.options}
    out = ["NOT INCLUDED"]
    for result in ev.options:
        if result.decision != "exclude":
            continue
        o = options[result.option_id]
        why = (
            "excluded by a human decision"
            if result.decided_by == "human"
            else f"score {result.score:.3f}; {result.reason}"
            if result.reason  # excluded by the plan's selection, whatever the score
            else f"score {result.score:.3f} <= threshold {plan.parameters.threshold}"
        )
        flag = "  [BORDERLINE: awaiting human decision]" if result.borderline else ""
        out.append(f"  - {o.title}: {why}{flag}")
        against = [a for a in o.arguments if a.stance == "attack" and a.status != "rejected"]
        if against:
            top = max(
                against,
                key=lambda a: _sigma(result.nodes[a.id]) if a.id in result.nodes else 0.0,
            )
            out.append(f"      strongest objection ({top.role}): {top.text}")
    return [*out, ""]


def _tail(plan: Deliberation) -> list[str]:
    m = plan.meta
    out: list[str] = []
    if m.synthesis:
        out += ["SUMMARY", "  " + m.synthesis, ""]
    if m.missing:
        out += ["MISSING CONTRIBUTIONS (the plan was made without them)"]
        out += [f"  - {x}" for x in m.missing] + [""]
    if m.unused_facts:
        out += ["FACTS THE PANEL COULD NOT USE", *(f"  - {u}" for u in m.unused_facts), ""]
    if m.coverage is not None:
        out.append("COVERAGE (what the plan checked and what it could not)")
        out += [f"  - {line}" for line in coverage_detail(m.coverage)] + [""]
    if plan.contestations:
        out.append("CONTESTATIONS")
        out += [
            f"  - {c.at} {c.actor} {c.action} {c.target}: {c.reason}" for c in plan.contestations
        ]
        out.append("")
    return out


def _option_block(
    o: Option, ev: Evaluation, evidence: Mapping[str, EvidenceDoc], threshold: float
) -> list[str]:
    r = ev.option(o.id)
    lines = []
    why = (
        "included by a human decision"
        if r.decided_by == "human"
        else f"score {r.score:.3f} > threshold {threshold}"
    )
    flag = "  [BORDERLINE: awaiting human decision]" if r.borderline else ""
    lines.append(f"  * {o.title}  — {why}{flag}")
    if o.description:
        lines.append(f"      {o.description}")
    live = [a for a in o.arguments if a.status != "rejected"]
    pro = sorted({a.role for a in live if a.stance == "support"})
    con = sorted({a.role for a in live if a.stance == "attack"})
    lines.append(f"      for: {', '.join(pro) or '—'}   against: {', '.join(con) or '—'}")
    for a in sorted(live, key=lambda a: (a.stance != "support", -_sigma(r.nodes[a.id]), a.id)):
        n = r.nodes[a.id]
        sign = "+" if a.stance == "support" else "-"
        pinned = " (accepted by human)" if a.status == "accepted" else ""
        lines.append(
            f"      {sign} [{a.role}] {a.text}  "
            f"(tau {n.tau:.2f} -> tau~ {n.tau_calibrated:.2f} -> sigma {_sigma(n):.2f}){pinned}"
        )
        lines.append(f"          id: {a.id}")
        cites = [
            f"{e} {evidence[e].source} ({evidence[e].year})" if e in evidence else e
            for e in a.evidence
        ]
        if cites:
            lines.append(f"          evidence: {'; '.join(cites)}")
        if a.facts:
            lines.append(f"          facts: {', '.join(a.facts)}")
    for c in o.clashes:
        won = c.winner or "nobody"
        reason = f": {c.reason}" if c.reason else ""
        lines.append(f"      clash {c.support} vs {c.attack}, won by {won}{reason}")
    return lines


def _sigma(n: NodeScore) -> float:
    """The propagated strength of an argument the renderer shows; only rejected arguments lack one,
    and the renderer never shows those (the evaluation puts every other argument in the graph)."""
    if n.sigma is None:
        raise ValueError(f"argument {n.id} has no propagated strength; was it rejected?")
    return n.sigma
