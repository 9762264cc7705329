"""The plan line for a medicine the patient does not take: "Discuss <medicine>: recorded as not
taken".

For each active request that ``adherence.not_taken`` finds recorded as not taken, one line
quotes what the record says (cut at a whole word, never reworded) and asks why, so that the
barrier is addressed or the prescription settled; the interaction and duplicate checks have not
treated the medicine as taken (their claim fails). Where a line of the plan already acts on the
medicine (a stop, a dose change), that line says it instead, so one medicine keeps one
instruction: a decision about a medicine must start from whether it is taken. Runs after the
criteria and the rule functions (``rules.analyse``); pure, no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from .adherence import NotTaken, not_taken
from .analysis import Output, Proposal, rid
from .criteria.interpret import day_words
from .facts import Facts
from .reports_orders import quote
from .rule_points import make_point, rule_option

__all__ = ["NOT_TAKEN", "note_not_taken"]

# The id the line carries as its criterion.
NOT_TAKEN = "net-not-taken"


def note_not_taken(f: Facts, o: Output) -> None:
    """Say, for each active medicine recorded as not taken, that it is: on the line that acts
    on it, else on a line of its own."""
    seen: set[str] = set()
    for m in f.p.medications:
        why = not_taken(m, f.p)
        if why is None or m.text in seen:
            continue
        seen.add(m.text)
        acting = [i for i, p in enumerate(o.proposals) if p.medication_ref == m.ref]
        for i in acting:  # every copy an activity id merges later says it
            o.proposals[i] = _stated_on(o.proposals[i], m.text, why)
        if not acting:
            o.proposals.append(_line(m.text, why))


def _recorded(name: str, why: NotTaken) -> str:
    when = f" on {day_words(why.day)}" if why.day is not None else ""
    said = f'{name} is recorded as not taken{when} ("{quote(why.words)}")'
    return said[:1].upper() + said[1:]


def _stated_on(p: Proposal, name: str, why: NotTaken) -> Proposal:
    said = f"{_recorded(name, why)}: confirm what is taken before acting."
    cited = tuple(dict.fromkeys((*p.refs, why.source)))
    return replace(p, description=f"{p.description} {said}".strip(), refs=cited)


def _line(name: str, why: NotTaken) -> Proposal:
    spec = rule_option("not-taken")
    when = f" on {day_words(why.day)}" if why.day is not None else ""
    title = f"Discuss {name}: recorded as not taken{when}"
    description = (
        f"{_recorded(name, why)}; the interaction and duplicate checks did not treat it as "
        "taken. Ask why (side effects, beliefs, cost, access), then address the reason or stop "
        "the prescription, so the list shows what is taken."
    )
    cited = tuple(dict.fromkeys((why.medicine, why.source)))
    return Proposal(
        f"{spec.id}-{rid(why.medicine)}",
        title,
        spec.category,
        description,
        cited,
        (),
        (make_point("adherence.not-taken", cited, name=name, when=when),),
        medication_ref=why.medicine,
        urgency=spec.urgency,
        priority=spec.priority,
        criteria=(NOT_TAKEN,),
        urgency_class=spec.urgency_class,
        action="review",
    )
