"""The net under the criteria for reports and orders: what the record asked for and never closed.

A released DiagnosticReport still to follow (``reports_orders.to_follow``) becomes "Follow up the
<report> of <date>: "<conclusion>"", the conclusion quoted as written (cut at a whole word, never
reworded); an order whose due day has passed with nothing to answer it
(``reports_orders.outstanding``) becomes "Chase <test> ordered <date>". A report or order a line
of the plan already cites is left to that line. Each line states its claim (``claims``) and is
said only when the checker holds it against the record. Runs after the criteria and the rule
functions (``rules.analyse``); pure, no I/O.
"""

from __future__ import annotations

from datetime import date

from service.record.profile import Order, Report

from .analysis import Output, Proposal, rid
from .claims import Claim, OrderOutstanding, ReportToFollow, check
from .criteria.interpret import day_words
from .registry import Case
from .reports_orders import outstanding, quote, to_follow
from .rule_points import make_point, rule_option

__all__ = ["CHASE", "FOLLOW_UP", "follow_reports_and_orders"]

# The ids the net's lines carry as their criteria (timeframes.yaml gives each its window).
FOLLOW_UP = "net-report-follow-up"
CHASE = "net-order-chase"


def follow_reports_and_orders(c: Case, o: Output) -> None:
    """Add a line for each report still to follow and each order outstanding on the plan day."""
    p = c.p
    cited = _cited(o)
    for r in p.reports:
        why = to_follow(r, p, p.plan_day)
        if why is not None and r.ref not in cited and _said(o, FOLLOW_UP, ReportToFollow(r.ref), c):
            o.proposals.append(_follow_up(r, why))
    for x in p.orders:
        due = outstanding(x, p, p.plan_day)
        if due is not None and x.ref not in cited and _said(o, CHASE, OrderOutstanding(x.ref), c):
            o.proposals.append(_chase(x, due))


def _cited(o: Output) -> frozenset[str]:
    """Every fact a line of the plan so far rests on (its own and its points')."""
    return frozenset(
        ref for p in o.proposals for ref in (*p.refs, *(f for pt in p.points for f in pt.facts))
    )


def _said(o: Output, net: str, claim: Claim, c: Case) -> bool:
    """Hold ``claim`` against the record; count it, and name it when withheld."""
    o.claims_checked += 1
    if check(claim, c.p, c.p.plan_day) is None:
        return True
    o.withheld.append(f"{net}:{claim.kind}")
    return False


def _name(text: str, fallback: str) -> str:
    """A name as it reads inside a sentence: "Chest X-ray" -> "chest X-ray" ("ECG" stays)."""
    text = " ".join(text.split()) or fallback
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _follow_up(r: Report, why: str) -> Proposal:
    spec = rule_option("follow-up-report")
    day = r.day
    assert day is not None  # to_follow holds only for a dated report
    name = _name(r.text, "report")
    said = r.conclusion or "; ".join(c.display for c in r.conclusion_codes if c.display)
    title = f"Follow up the {name} of {day_words(day)}"
    title += f': "{quote(said)}"' if said else " (no conclusion written)"
    description = (
        f"The {name} of {day_words(day)} {why}; no order in the record names it. Read the "
        "whole report, tell the patient the result and act on it or record why not."
    )
    return Proposal(
        f"{spec.id}-{rid(r.ref)}",
        title,
        spec.category,
        description,
        (r.ref,),
        (),
        (make_point("reports.follow-up", (r.ref,), name=name, day=day_words(day), why=why),),
        urgency=spec.urgency,
        priority=spec.priority,
        criteria=(FOLLOW_UP,),
        urgency_class=spec.urgency_class,
        action="review",
    )


def _chase(x: Order, due: date) -> Proposal:
    spec = rule_option("chase-order")
    name = " ".join(x.text.split()) or "The test"
    written = f"ordered {day_words(x.authored)}" if x.authored else f"due {day_words(due)}"
    title = f"Chase {_name(name, 'the test')} {written}"
    description = (
        f"{name}, {written}, was due by {day_words(due)}; no report or result in the record "
        "answers it. Find out whether it was done, and get the result or order it again."
    )
    point = make_point("orders.chase", (x.ref,), name=name, written=written, due=day_words(due))
    return Proposal(
        f"{spec.id}-{rid(x.ref)}",
        title,
        spec.category,
        description,
        (x.ref,),
        (),
        (point,),
        urgency=spec.urgency,
        priority=spec.priority,
        criteria=(CHASE,),
        urgency_class=spec.urgency_class,
        action="check",
    )
