"""Each order card's indicator and topic come from the kind and harm of the finding behind it.

The topic is the v3 ActCode detected-issue code of the worst-harm coded finding of the options
behind the card (the code the plan's DetectedIssue carries); the indicator is that finding's
harm, never below ``critical`` for an immediate-safety or urgent option.
"""

from __future__ import annotations

from typing import Any

import pytest

from fhir_mapping._detected import ISSUE_CODES
from service.cds_hooks.cards import CardRecord, order_card, order_findings, summary_card

DRAFT = "MedicationRequest/d1"


def _option(findings: list[dict[str, str]], **over: Any) -> dict[str, Any]:
    return {
        "id": "opt-1",
        "title": "Stop the drafted medicine",
        "category": "medication",
        "description": "The panel advises against it.",
        "refs": [DRAFT],
        "medication_ref": DRAFT,
        "score": 0.8,
        "decision": "include",
        "urgency_class": "routine",
        "findings": findings,
        "nodes": [],
        **over,
    }


def _card(*options: dict[str, Any]) -> dict[str, Any]:
    doc = {"parameters": {"threshold": 0.5}, "meta": {"panel": []}, "options": list(options)}
    record = CardRecord(
        "c", "t", "careplan-order-select", "p1", 1, "Patient/x", "Practitioner/1", "order"
    )
    return order_card(
        order_findings(doc, [DRAFT]),
        plan=doc,
        draft=None,
        review_url="https://r",
        record=record,
    )


@pytest.mark.parametrize("kind", sorted(ISSUE_CODES))
@pytest.mark.parametrize(
    ("harm", "indicator"),
    [("critical", "critical"), ("major", "critical"), ("moderate", "warning"), ("minor", "info")],
)
def test_each_kind_names_its_topic_and_its_harm_the_indicator(
    kind: str, harm: str, indicator: str
) -> None:
    card = _card(_option([{"criterion": "c1", "kind": kind, "severity": harm}]))
    assert card["source"]["topic"]["code"] == ISSUE_CODES[kind][0]
    assert card["source"]["topic"]["display"] == ISSUE_CODES[kind][1]
    assert card["indicator"] == indicator


def test_naproxen_on_warfarin_is_a_drug_interaction_card_not_an_age_alert() -> None:
    """The option's findings as the panel states them for naproxen drafted beside warfarin in
    an older patient: the age finding comes first, the interaction is the worse harm."""
    findings = [
        {"criterion": "age-nsaid-chronic", "kind": "drug-age", "severity": "major"},
        {"criterion": "ddi-anticoagulant-nsaid", "kind": "drug-drug", "severity": "critical"},
        {"criterion": "ddi-antiplatelet-nsaid", "kind": "drug-drug", "severity": "moderate"},
    ]
    card = _card(_option(findings))
    assert card["source"]["topic"]["code"] == "DRG"
    assert card["indicator"] == "critical"


def test_equal_harm_keeps_the_first_finding() -> None:
    findings = [
        {"criterion": "c1", "kind": "drug-disease", "severity": "major"},
        {"criterion": "c2", "kind": "drug-age", "severity": "major"},
    ]
    assert _card(_option(findings))["source"]["topic"]["code"] == "COND"


def test_an_urgent_option_is_critical_whatever_its_harm() -> None:
    minor = [{"criterion": "c1", "kind": "drug-drug", "severity": "minor"}]
    assert _card(_option(minor, urgency_class="urgent"))["indicator"] == "critical"
    assert _card(_option(minor, category="immediate-safety"))["indicator"] == "critical"


def test_a_finding_without_a_code_leaves_no_topic_and_the_argument_rule() -> None:
    """An omission has no detected-issue code: no topic, and the indicator follows the
    arguments (no strong supporting one here: ``warning``)."""
    card = _card(_option([{"criterion": "c1", "kind": "omission", "severity": "critical"}]))
    assert "topic" not in card["source"]
    assert card["indicator"] == "warning"


def test_the_summary_card_topic_is_the_worst_harm_of_its_safety_options() -> None:
    findings = [
        {"criterion": "c1", "kind": "drug-age", "severity": "moderate"},
        {"criterion": "c2", "kind": "dose-ceiling", "severity": "critical"},
    ]
    doc = {
        "parameters": {"threshold": 0.5},
        "meta": {"panel": []},
        "options": [_option(findings, category="immediate-safety")],
    }
    record = CardRecord(
        "c", "t", "careplan-patient-view", "p1", 1, "Patient/x", "Practitioner/1", "summary"
    )
    card = summary_card(doc, review_url="https://r", record=record)
    assert card["source"]["topic"]["code"] == "DOSEH"
