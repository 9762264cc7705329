"""Ranking by clinical priority, the clash reason in canoe.deliberation/1, and the clinician
summary, on hand-built deliberations."""

from __future__ import annotations

import json
from dataclasses import replace

from service.core import evaluate, from_document, plan_order, recompute_document, to_document
from service.core.model import Clash, Meta
from service.text.summary import MAX_LINES, summarise, summary_text
from tests.core.builders import arg, deliberation, option, sample


def _plan(*specs: tuple[str, str, str | None, float]) -> tuple[str, ...]:
    """(id, category, priority, supporter tau) -> the plan order."""
    opts = [
        option(oid, [arg(f"{oid}-a", "support", tau)], category=cat, priority=prio)
        for oid, cat, prio, tau in specs
    ]
    d = deliberation(opts)
    return evaluate(d).plan


def test_priority_class_first_then_score() -> None:
    plan = _plan(
        ("review-high", "medication", "review", 0.9),
        ("safety-low", "follow-up", "safety", 0.6),
        ("monitor", "monitoring", "monitoring", 0.95),
        ("omission", "referral", "omission", 0.7),
        ("safety-high", "medication", "safety", 0.8),
    )
    assert plan == ("safety-high", "safety-low", "omission", "monitor", "review-high")


def test_without_priorities_the_category_order_stays() -> None:
    plan = _plan(
        ("f", "follow-up", None, 0.9),
        ("m", "medication", None, 0.6),
        ("s", "immediate-safety", None, 0.55),
    )
    assert plan == ("s", "m", "f")


def test_plan_order_is_the_evaluation_order() -> None:
    d = sample()
    ev = evaluate(d)
    assert plan_order(d.options, ev.options) == ev.plan


def test_priority_and_reason_round_trip_and_old_documents_recompute_bit_for_bit() -> None:
    d = sample()
    o = d.options[0]
    clashes = tuple(replace(c, reason=f"rule {k}") for k, c in enumerate(o.clashes))
    assert clashes, "the sample has clashes"
    d2 = replace(d, options=(replace(o, priority="safety", clashes=clashes), *d.options[1:]))
    doc = json.loads(json.dumps(to_document(d2)))
    assert doc["options"][0]["priority"] == "safety"
    assert doc["options"][0]["clashes"][0]["reason"] == "rule 0"
    assert from_document(doc) == d2
    assert recompute_document(doc) == doc
    # a document written before these fields existed has none and recomputes unchanged
    old = json.loads(json.dumps(to_document(d)))
    assert "priority" not in old["options"][0]
    assert all("reason" not in c for o in old["options"] for c in o["clashes"])
    assert "facts" not in old["meta"]
    assert json.dumps(recompute_document(old)) == json.dumps(old)


def test_schema_refuses_an_unknown_priority() -> None:
    import pytest

    from service.errors import DocumentError

    doc = to_document(sample())
    doc["options"][0]["priority"] = "urgent"
    with pytest.raises(DocumentError, match="priority"):
        from_document(doc)


def test_summary_lines_name_reason_fact_and_proposers_without_ids() -> None:
    sup = replace(
        arg("s1", "support", 0.8, "pharmacist"),
        text="Naproxen raises blood pressure (see Observation/bp1). Stopping it comes first.",
        facts=("MedicationRequest/n1", "Observation/bp1"),
    )
    o = option("stop", [sup, arg("s2", "support", 0.6, "gp")], priority="safety")
    o = replace(o, title="Stop naproxen")
    facts = (
        ("Observation/bp1", "Diastolic blood pressure 115 mmHg on 2024-05-01"),
        ("MedicationRequest/n1", "Naproxen 220 MG (prescribed 2019-01-01)"),
    )
    d = replace(deliberation([o]), meta=Meta(facts=facts))
    (line,) = summarise(d, evaluate(d)).lines
    assert line.action == "Stop naproxen" and line.priority == "safety"
    assert line.reason.startswith("Naproxen raises blood pressure")
    assert "Observation/" not in line.reason and "Stopping" not in line.reason  # one sentence
    assert line.fact == "Diastolic blood pressure 115 mmHg on 2024-05-01"  # a measured value first
    assert line.proposed_by == ("pharmacist", "gp")
    text = summary_text(d, evaluate(d))
    assert "Observation/" not in text and "MedicationRequest/" not in text
    assert "tau" not in text and "sigma" not in text


def test_summary_keeps_at_most_eight_lines() -> None:
    opts = [option(f"o{k}", [arg(f"a{k}", "support", 0.6 + k / 100)]) for k in range(12)]
    d = deliberation(opts)
    s = summarise(d, evaluate(d))
    assert len(s.lines) == MAX_LINES and s.more == 4
    assert [x.rank for x in s.lines] == list(range(1, 9))
    assert "4 more in the detailed view" in summary_text(d, evaluate(d))


def test_summary_of_an_old_document_has_no_fact_but_still_reads() -> None:
    d = sample()
    ev = evaluate(d)
    for line in summarise(d, ev).lines:
        assert line.fact == "" and line.reason.endswith(".")
    assert isinstance(Clash("a", "b", None).reason, str)
