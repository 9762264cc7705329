"""What the review pages show, computed from stored versions: rows, the argument graph, diffs.

Pure presentation over ``Deliberation`` + ``Evaluation`` (recomputed from the stored document,
bit-identical to what the service issued): the ranked activities, each activity's arguments with
strengths in plain words and its graph laid out for SVG, and the diff between two versions
(scores moved, decisions flipped, and the contestations that made them). No I/O, no templates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from inference.evidence import EvidenceBase
from service.core import Evaluation, OptionResult
from service.core.model import Argument, Contestation, Deliberation, Option
from service.record.profile import years_between

__all__ = [
    "ArgumentRow",
    "Change",
    "Diff",
    "Graph",
    "OptionRow",
    "PatientBanner",
    "argument_rows",
    "describe_target",
    "diff",
    "graph",
    "human_time",
    "option_rows",
    "patient_banner",
    "strength_words",
]

EPS = 1e-9


def strength_words(strength: float | None) -> str:
    """A strength in [0, 1] in words, for readers who do not think in decimals."""
    if strength is None:
        return "out of the graph"
    for bound, word in ((0.2, "very weak"), (0.4, "weak"), (0.6, "moderate"), (0.8, "strong")):
        if strength < bound:
            return word
    return "very strong"


@dataclass(frozen=True, slots=True)
class PatientBanner:
    """Who the plan is for: the header of every page of a plan."""

    ref: str  # "Patient/<id>"
    name: str  # "" when the plan was stored without it
    sex: str  # "female", "male", "other", "unknown" or ""
    age: int | None
    birth_date: str

    @property
    def words(self) -> str:
        """``Ana Souza · female · 78 years (born 1947-03-02)``; the reference when nothing
        else is known."""
        parts = [self.name or self.ref]
        if self.sex:
            parts.append("sex unknown" if self.sex == "unknown" else self.sex)
        if self.age is not None:
            parts.append(f"{self.age} years (born {self.birth_date})")
        elif not self.birth_date and self.name:
            parts.append("age unknown")
        return " · ".join(parts)


def patient_banner(ref: str, stored: Mapping[str, Any] | None, today: date) -> PatientBanner:
    """The banner from what version 1 stored of the patient (``patient_header``), the age on
    ``today`` (the day the plan was made); plans stored before the service kept it show the
    reference alone."""
    raw = stored if isinstance(stored, Mapping) else {}
    born = str(raw.get("birth_date") or "")
    try:
        age: int | None = years_between(date.fromisoformat(born), today) if born else None
    except ValueError:
        age, born = None, ""
    if age is not None and age < 0:
        age = None
    return PatientBanner(ref, str(raw.get("name") or ""), str(raw.get("sex") or ""), age, born)


@dataclass(frozen=True, slots=True)
class OptionRow:
    option: Option
    result: OptionResult
    rank: int
    supporters: int
    attackers: int

    @property
    def state(self) -> str:
        """included / borderline / excluded, for grouping; borderline only while no human
        decided it."""
        r = self.result
        if r.borderline and r.decided_by == "score":
            return "borderline"
        return "included" if r.decision == "include" else "excluded"


def option_rows(plan: Deliberation, ev: Evaluation) -> list[OptionRow]:
    """Every option, ranked: the plan order first, then the rest by score down."""
    results = {r.option_id: r for r in ev.options}
    order = list(ev.plan) + sorted(
        (o.id for o in plan.options if o.id not in ev.plan),
        key=lambda i: (-results[i].score, i),
    )
    options = {o.id: o for o in plan.options}
    rows = []
    for rank, oid in enumerate(order, 1):
        o = options[oid]
        live = [a for a in o.arguments if a.status != "rejected"]
        rows.append(
            OptionRow(
                o,
                results[oid],
                rank,
                sum(1 for a in live if a.stance == "support"),
                sum(1 for a in live if a.stance == "attack"),
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class ArgumentRow:
    argument: Argument
    label: str  # "S1", "A2": short name used in the graph and the forms
    tau: float
    tau_calibrated: float
    sigma: float | None
    evidence: tuple[dict[str, str], ...]
    facts: tuple[dict[str, str], ...]
    clashes: tuple[str, ...]  # one sentence per clash it took part in

    @property
    def plain(self) -> str:
        a = self
        words = f"Given {a.tau:.2f} ({strength_words(a.tau)})"
        if a.sigma is None:
            return words + "; rejected by a reviewer, so it no longer counts."
        if abs(a.tau_calibrated - a.tau) > EPS:
            moved = "raised" if a.tau_calibrated > a.tau else "lowered"
            words += f"; the arena {moved} it to {a.tau_calibrated:.2f}"
        else:
            words += "; unchanged by the arena"
        return words + f"; final strength {a.sigma:.2f} ({strength_words(a.sigma)})."


def argument_rows(
    option: Option,
    result: OptionResult,
    facts: Mapping[str, Mapping[str, str]],
    evidence: EvidenceBase | None,
    clash_reasons: Sequence[str] = (),
) -> list[ArgumentRow]:
    labels = labels_of(option)
    clash_text: dict[str, list[str]] = {}
    for i, c in enumerate(option.clashes):
        s, a = labels.get(c.support, c.support), labels.get(c.attack, c.attack)
        if c.winner is None:
            sentence = f"{s} against {a}: no usable verdict, counts for nobody"
        else:
            won = s if c.winner == "support" else a
            sentence = f"{s} against {a}: {won} judged more compelling"
        if i < len(clash_reasons) and clash_reasons[i]:
            sentence += f" ({clash_reasons[i]})"
        for end in (c.support, c.attack):
            clash_text.setdefault(end, []).append(sentence)
    rows = []
    for arg in sorted(option.arguments, key=lambda x: (x.stance != "support", labels[x.id])):
        node = result.nodes[arg.id]
        docs = []
        for eid in arg.evidence:
            doc = evidence.by_id(eid) if evidence is not None else None
            if doc is None:
                docs.append({"id": eid, "source": "not in the evidence base", "year": ""})
            else:
                docs.append(
                    {
                        "id": eid,
                        "source": doc.source,
                        "year": str(doc.year),
                        "grade": doc.grade,
                        "statement": doc.statement,
                    }
                )
        cited = tuple(
            dict(facts[f]) | {"ref": f}
            if f in facts
            else {"ref": f, "name": f, "value": "", "date": "", "kind": ""}
            for f in arg.facts
        )
        rows.append(
            ArgumentRow(
                arg,
                labels[arg.id],
                node.tau,
                node.tau_calibrated,
                node.sigma,
                tuple(docs),
                cited,
                tuple(clash_text.get(arg.id, ())),
            )
        )
    return rows


def labels_of(option: Option) -> dict[str, str]:
    """S1, S2... for supporters and A1, A2... for attackers, in the option's order."""
    out: dict[str, str] = {}
    n = {"support": 0, "attack": 0}
    for a in option.arguments:
        n[a.stance] += 1
        out[a.id] = ("S" if a.stance == "support" else "A") + str(n[a.stance])
    return out


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    label: str
    x: float
    y: float
    kind: str  # option / support / attack
    status: str
    sigma: float | None
    role: str


@dataclass(frozen=True, slots=True)
class Line:
    """An edge drawn from (x1, y1) to the border of its target (x2, y2), through the control
    point (cx, cy) when curved. ``relation``: support / attack / clash / out (an end rejected)."""

    x1: float
    y1: float
    x2: float
    y2: float
    relation: str
    title: str
    curved: bool = False
    cx: float = 0.0
    cy: float = 0.0


@dataclass(frozen=True, slots=True)
class Graph:
    width: int
    height: int
    nodes: tuple[Node, ...]
    lines: tuple[Line, ...]


_W, _COL_S, _COL_A, _TOP, _ROW = 560, 105, 455, 150, 76
_HALF = {"option": (110.0, 22.0), "support": (95.0, 22.0), "attack": (95.0, 22.0)}


def _border(fx: float, fy: float, n: Node) -> tuple[float, float]:
    """Where the segment from (fx, fy) to the centre of ``n`` enters its box: arrows end there,
    not under the box."""
    hw, hh = _HALF[n.kind]
    dx, dy = n.x - fx, n.y - fy
    if dx == 0 and dy == 0:
        return n.x, n.y
    t = min(hw / abs(dx) if dx else float("inf"), hh / abs(dy) if dy else float("inf"))
    return n.x - dx * t, n.y - dy * t


def _line(s: Node, t: Node, relation: str, title: str, *, curved: bool) -> Line:
    if not curved:
        x2, y2 = _border(s.x, s.y, t)
        return Line(s.x, s.y, x2, y2, relation, title)
    # Bend argument-to-argument edges away from the straight path, perpendicular to it.
    mx, my = (s.x + t.x) / 2, (s.y + t.y) / 2
    dx, dy = t.x - s.x, t.y - s.y
    length = max((dx * dx + dy * dy) ** 0.5, 1.0)
    cx, cy = mx - dy / length * 40, my + dx / length * 40
    x2, y2 = _border(cx, cy, t)
    return Line(s.x, s.y, x2, y2, relation, title, curved=True, cx=cx, cy=cy)


def graph(option: Option, result: OptionResult) -> Graph:
    """The option on top, supporters in a left column, attackers in a right one; edges to the
    option straight, argument-to-argument edges curved, clashes dotted, edges of rejected
    arguments grey."""
    labels = labels_of(option)
    nodes: dict[str, Node] = {
        option.id: Node(option.id, "Activity", _W / 2, 50, "option", "active", result.score, "")
    }
    rows = {"support": 0, "attack": 0}
    for a in option.arguments:
        x = _COL_S if a.stance == "support" else _COL_A
        y = _TOP + rows[a.stance] * _ROW
        rows[a.stance] += 1
        nodes[a.id] = Node(
            a.id, labels[a.id], x, y, a.stance, a.status, result.nodes[a.id].sigma, a.role
        )
    lines: list[Line] = []
    for e in option.edges:
        s, t = nodes.get(e.source), nodes.get(e.target)
        if s is None or t is None:
            continue
        verb = "supports" if e.relation == "support" else "attacks"
        out = "rejected" in (s.status, t.status)
        title = f"{s.label} {verb} {t.label}" + (" (rejected, no longer counts)" if out else "")
        lines.append(_line(s, t, "out" if out else e.relation, title, curved=t.kind != "option"))
    for c in option.clashes:
        s, t = nodes.get(c.support), nodes.get(c.attack)
        if s is None or t is None:
            continue
        won = {"support": s.label, "attack": t.label, None: "nobody"}[c.winner]
        lines.append(
            Line(s.x, s.y, t.x, t.y, "clash", f"clash {s.label} against {t.label}: won by {won}")
        )
    height = _TOP + max(rows.values(), default=0) * _ROW + 10
    return Graph(_W, max(height, 220), tuple(nodes.values()), tuple(lines))


# ------------------------------------------------------------------ diffs


@dataclass(frozen=True, slots=True)
class Change:
    id: str
    title: str
    before: float
    after: float
    decision_before: str
    decision_after: str

    @property
    def flipped(self) -> bool:
        return self.decision_before != self.decision_after

    @property
    def moved(self) -> float:
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class Diff:
    older: int
    newer: int
    options: tuple[Change, ...]
    problems: tuple[tuple[str, str, str], ...]  # (display, before, after)
    why: tuple[dict[str, Any], ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not self.options and not self.problems


def describe_target(target: str, plan: Deliberation) -> str:
    """An argument, activity or problem in words, by label and text, not by id."""
    for o in plan.options:
        if o.id == target:
            return repr(o.title)
        for a in o.arguments:
            if a.id == target:
                return f"{labels_of(o)[a.id]} of {o.title!r} ({a.role}: {_short(a.text)})"
    for pr in plan.problems:
        if pr.id == target:
            return f"problem {pr.display!r}"
    return target


def describe(contestation: Contestation, plan: Deliberation) -> str:
    """One contestation in words, naming arguments and options by text, not ids."""
    p = contestation.payload
    what = describe_target(contestation.target, plan)
    verb = {
        "accept": "accepted",
        "reject": "rejected",
        "edit": "edited",
        "add": "added",
        "decide": "decided",
    }[contestation.action]
    if contestation.action == "decide":
        return f"{verb} {what}: {p.get('decision') or 'cleared'}"
    if contestation.action == "add":
        return f"added an argument to {what}"
    return f"{verb} {what}"


def _short(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def diff(old: tuple[Deliberation, Evaluation], new: tuple[Deliberation, Evaluation]) -> Diff:
    (d0, e0), (d1, e1) = old, new
    before = {r.option_id: r for r in e0.options}
    titles = {o.id: o.title for o in d1.options}
    changes = []
    for r in e1.options:
        b = before.get(r.option_id)
        if b is None:
            continue
        if abs(b.score - r.score) > EPS or b.decision != r.decision:
            changes.append(
                Change(r.option_id, titles[r.option_id], b.score, r.score, b.decision, r.decision)
            )
    changes.sort(key=lambda c: (not c.flipped, -abs(c.moved)))
    pb = {p.problem_id: p for p in e0.problems}
    displays = {p.id: p.display for p in d1.problems}
    problems = tuple(
        (
            displays[p.problem_id],
            str(pb[p.problem_id].decision or "pending"),
            str(p.decision or "pending"),
        )
        for p in e1.problems
        if p.problem_id in pb and pb[p.problem_id].decision != p.decision
    )
    lo, hi = (d0, d1) if d0.version <= d1.version else (d1, d0)
    seen = {c.id for c in lo.contestations}
    why = tuple(
        {"actor": c.actor, "at": c.at, "what": describe(c, hi), "reason": c.reason}
        for c in hi.contestations
        if c.id not in seen
    )
    return Diff(d0.version, d1.version, tuple(changes), problems, why)


def human_time(stamp: str) -> str:
    """An ISO 8601 instant as a reader says it, in UTC: ``30 Nov 2026, 09:00 UTC``. A stamp
    that does not parse is shown as it is.

    >>> human_time("2026-11-30T10:00:00+01:00")
    '30 Nov 2026, 09:00 UTC'
    """
    try:
        when = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return stamp
    if when.tzinfo is None:
        return f"{when.day} {when:%b %Y, %H:%M}"
    when = when.astimezone(UTC)
    return f"{when.day} {when:%b %Y, %H:%M} UTC"
