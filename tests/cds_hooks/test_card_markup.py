"""Cards carry no markup from data: record text, draft orders and knowledge text arrive in a
card's ``detail`` as escaped CommonMark and in ``summary``, labels and action descriptions as
plain text; the only links are the service's own.

The oracle is a real CommonMark parser (markdown-it-py, with GFM tables and strikethrough): a
card's ``detail`` may hold paragraphs, lists, emphasis and bold (the card's own layout), never a
link, image, raw HTML, code, heading, quote, rule or table; and GFM's extended autolinks (a bare
``https://``, ``www.``, an e-mail address) are checked on the source. Random Markdown and HTML go
through every card field twice: into the card functions directly (many examples), and into a
real request over the real CDS HTTP app (the record's condition text, a draft order's medicine
text), where each example is a whole plan.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from service.cds_hooks.cards import CardRecord, order_card, order_findings, summary_card
from service.cds_hooks.markdown import escape, plain
from tests.cds_hooks.conftest import Servers, cds_fixture

PV, OSEL = "careplan-patient-view", "careplan-order-select"
REVIEW = "https://canoe.example.org/review"
DRAFT = "MedicationRequest/draft-1"

_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# The card's own layout; everything else in a rendered ``detail`` came from data.
_LAYOUT = frozenset(
    {
        "paragraph_open",
        "paragraph_close",
        "inline",
        "text",
        "softbreak",
        "strong_open",
        "strong_close",
        "em_open",
        "em_close",
        "bullet_list_open",
        "bullet_list_close",
        "ordered_list_open",
        "ordered_list_close",
        "list_item_open",
        "list_item_close",
    }
)
_AUTOLINK = re.compile(r"[A-Za-z0-9]://|(?<![\\\w])www\.|\w(?<!\\)@\w")
_PLAIN_MARKUP = re.compile(r"[<>\[\]`*_\\|~]|://|(?i:javascript:)")

# Markdown and HTML an attacker would try, and the characters they are made of.
ATTACKS = (
    "<img src=x onerror=alert(1)>",
    "[login](javascript:alert(1))",
    "![](https://tracker.example/p.png)",
    "<script>alert(1)</script>",
    "https://evil.example/x",
    "www.evil.example",
    "mail@evil.example",
    "`code`",
    "```",
    "**bold** _em_ ~~gone~~",
    "# Heading",
    "> quote",
    "---",
    "1. item",
    "- item",
    "| a | b |\n|---|---|",
    "&lt;b&gt; &#106;avascript",
    "<https://evil.example>",
    "[x]: https://evil.example",
    "\\[escaped\\]",
    "line\n\n    indented code",
    "\u202eevil\u200b",
)
payloads = st.lists(
    st.one_of(
        st.sampled_from(ATTACKS),
        st.text(alphabet=st.sampled_from("<>[]()!`*_#-+=.|~&@:/\\ \nabcxyz019"), max_size=30),
    ),
    min_size=1,
    max_size=4,
).map(" ".join)


def _tokens(tokens: list[Token]) -> Iterator[Token]:
    for t in tokens:
        yield t
        yield from _tokens(t.children or [])


def markup_from_data(detail: str) -> list[str]:
    """What in ``detail`` is markup beyond the card's layout (empty: none)."""
    found = [t.type for t in _tokens(_MD.parse(detail)) if t.type not in _LAYOUT]
    return found + [m.group() for m in _AUTOLINK.finditer(detail)]


def rendered_text(detail: str) -> str:
    return " ".join(
        " ".join(t.content for t in _tokens(_MD.parse(detail)) if t.type == "text").split()
    )


def plain_fields(card: dict[str, Any]) -> list[str]:
    out = [card["summary"]]
    for s in card.get("suggestions") or ():
        out.append(s["label"])
        out += [a["description"] for a in s.get("actions") or ()]
    return out


def check_card(card: dict[str, Any]) -> None:
    assert markup_from_data(card["detail"]) == [], card["detail"]
    for text in plain_fields(card):
        assert not _PLAIN_MARKUP.search(text), text
    for link in card.get("links") or ():
        assert link["url"].startswith(card["source"]["url"])


# ------------------------------------------------------------------ the escaping itself


@given(payloads)
@settings(max_examples=300, deadline=None, database=None)
def test_escaped_text_renders_as_its_characters_and_nothing_else(text: str) -> None:
    md = escape(text)
    assert markup_from_data(md) == [], md
    # What a reader sees is the value itself (on one line, without control characters).
    shown = " ".join("".join(c for c in text if c.isprintable() or c.isspace()).split())
    assert rendered_text(md) == shown.replace("\u202e", "").replace("\u200b", "")


@given(payloads)
@settings(max_examples=200, deadline=None, database=None)
def test_plain_text_has_no_markup(text: str) -> None:
    assert not _PLAIN_MARKUP.search(plain(text))


# ------------------------------------------------------------------ every card field


def _document(p: list[str]) -> dict[str, Any]:
    argument = {
        "kind": "argument",
        "stance": "support",
        "sigma": 0.9,
        "role": p[0],
        "text": p[1],
        "evidence": [p[2]],
    }
    attack = argument | {"stance": "attack", "sigma": 0.3, "role": p[3]}
    finding = {
        "id": "opt-1",
        "decision": "include",
        "category": "medication",
        "medication_ref": DRAFT,
        "title": f"Stop {p[4]}",
        "description": p[5],
        "score": 0.8,
        "nodes": [argument, attack],
    }
    alternative = {
        "id": "opt-2",
        "decision": "include",
        "category": "medication",
        "medication_ref": DRAFT,
        "title": p[6],
        "score": 0.7,
        "code": {
            "system": "http://www.nlm.nih.gov/research/umls/rxnorm",
            "code": "161",
            "display": p[7],
        },
    }
    loose = {"id": "opt-3", "title": p[8], "category": p[9], "score": 0.5, "borderline": True}
    urgent = {
        "id": "opt-4",
        "decision": "include",
        "category": "immediate-safety",
        "title": p[10],
        "score": 0.9,
        "nodes": [argument],
    }
    return {
        "options": [finding, alternative, loose, urgent],
        "parameters": {"threshold": 0.5},
        "meta": {"panel": [{"role": p[11]}], "missing": [p[12]]},
    }


def _record(kind: str) -> CardRecord:
    return CardRecord("card-1", "t", "svc", "plan-1", 1, "Patient/p", "", kind)  # type: ignore[arg-type]


@given(st.lists(payloads, min_size=14, max_size=14))
@settings(max_examples=150, deadline=None, database=None)
def test_no_card_field_carries_markup_from_data(p: list[str]) -> None:
    document = _document(p)
    draft = {"resourceType": "MedicationRequest", "medicationCodeableConcept": {"text": p[13]}}
    findings = order_findings(document, [DRAFT])
    assert findings  # the finding's title says "Stop"
    card = order_card(
        findings,
        plan=document,
        draft=draft,
        review_url=REVIEW,
        record=_record("order"),
        notes=[p[12]],
    )
    check_card(card)
    assert len(card["suggestions"]) == 2  # the alternative's label and action went through too
    assert escape(p[13]) in card["detail"]  # the drug is named, escaped, not dropped
    check_card(summary_card(document, review_url=REVIEW, record=_record("summary"), notes=[p[0]]))


# ------------------------------------------------------------------ over the real CDS HTTP app


def _with_condition_text(text: str) -> dict[str, Any]:
    body = copy.deepcopy(cds_fixture("requests", "patient-view_trey_berge.json"))
    for entry in body["prefetch"]["conditions"]["entry"]:
        entry["resource"]["code"]["text"] = text
    return body


def _with_draft_text(text: str) -> dict[str, Any]:
    body = copy.deepcopy(cds_fixture("requests", "order-select_trey_berge_naproxen.json"))
    for entry in body["context"]["draftOrders"]["entry"]:
        entry["resource"]["medicationCodeableConcept"]["text"] = text
    return body


# A FHIR string: printable, not blank (control characters are the ingest's own 400).
fhir_payloads = payloads.map(lambda s: "Key " + " ".join(s.split()) + " end")
OVER_HTTP = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@given(fhir_payloads)
@OVER_HTTP
def test_condition_text_reaches_the_patient_view_card_escaped(servers: Servers, text: str) -> None:
    r = servers.post(PV, _with_condition_text(text))
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    check_card(card)


@given(fhir_payloads)
@OVER_HTTP
def test_draft_medicine_text_reaches_the_order_card_escaped(servers: Servers, text: str) -> None:
    r = servers.post(OSEL, _with_draft_text(text))
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    check_card(card)
    assert escape(text) in card["detail"]


def test_the_attacks_of_the_report_arrive_as_text(servers: Servers) -> None:
    attack = (
        "Key <img src=x onerror=alert(1)> [login](javascript:alert(1)) ![](https://t.example/p)"
    )
    pv = servers.post(PV, _with_condition_text(attack)).json()["cards"][0]
    assert "Key \\<img src=x onerror=alert\\(1\\)\\>" in pv["detail"]
    order = servers.post(OSEL, _with_draft_text(attack)).json()["cards"][0]
    for card in (pv, order):
        check_card(card)
        assert not re.search(r"(?<!\\)<img|(?<!\\)\]\(", card["detail"])
    assert order["summary"].startswith("Key login")
    assert order["suggestions"][0]["label"].startswith("Remove the draft order for Key login")
