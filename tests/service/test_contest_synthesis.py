"""Every version says what it decided: a plan is contested until its top activity changes, and
every text of the new version (the synthesis in the document and in the CarePlan's notes, the
CarePlan's narrative, the clinician summary, the detailed view and the patient version) names
the new top activity first and states the new scores. A real service on SQLite, embedded
backend."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from fhir_mapping.careplan import careplan_of
from fhir_mapping.definitions import CS_ACTION, CS_INPUT
from service.app import CarePlanService
from service.core import evaluate, from_document
from service.render import render_plan, render_summary
from service.settings import load_settings
from service.stored_summary import summary_from_record
from service.text.patient import patient_text
from tests.service.conftest import bundle_bytes
from tests.support.contest_synthesis import stale_reasons

TENANT = "t-synthesis"


def _reject(plan_id: str, version: int, argument: str, patient: str) -> dict[str, Any]:
    return {
        "resourceType": "Task",
        "id": f"flip-{plan_id[:8]}-{version}",
        "status": "requested",
        "intent": "order",
        "code": {"coding": [{"system": CS_ACTION, "code": "reject"}]},
        "focus": {"reference": f"CarePlan/{plan_id}-v{version}"},
        "for": {"reference": patient},
        "requester": {"reference": "Practitioner/planner-1"},
        "authoredOn": "2026-11-30T11:00:00Z",
        "reasonCode": {"text": "not relevant for this patient"},
        "input": [
            {
                "type": {"coding": [{"system": CS_INPUT, "code": "target"}]},
                "valueString": argument,
            }
        ],
    }


def _strongest_support(document: dict[str, Any], option_id: str) -> str:
    option = next(o for o in document["options"] if o["id"] == option_id)
    live = [
        n
        for n in option["nodes"]
        if n["kind"] == "argument" and n["stance"] == "support" and n["status"] != "rejected"
    ]
    assert live, f"nothing left to reject on {option_id}"
    return str(max(live, key=lambda n: (n["sigma"], n["id"]))["id"])


def _scores(text: str) -> list[str]:
    return re.findall(r"\(score (\d\.\d\d)", text)


async def test_contesting_until_the_top_flips_rewrites_every_text(tmp_path: Path) -> None:
    app = await CarePlanService.create(
        load_settings({}, store_dsn=f"sqlite:///{tmp_path}/canoe.sqlite3")
    )
    try:
        plan = await app.generate(bundle_bytes(), tenant=TENANT)
        doc, version = plan.deliberation, 1
        old_top = doc["plan"][0]
        old_title = next(o["title"] for o in doc["options"] if o["id"] == old_top)
        assert doc["meta"]["synthesis"].startswith("Care plan")
        assert f"Highest priority: {old_title} (score" in doc["meta"]["synthesis"]
        out = None
        while doc["plan"] and doc["plan"][0] == old_top:
            task = _reject(
                plan.plan_id, version, _strongest_support(doc, old_top), doc["patient_ref"]
            )
            out = await app.contest(task, tenant=TENANT, plan_id=plan.plan_id, version=version)
            doc, version = out.deliberation, out.version
        assert out is not None and doc["plan"], "the top activity never flipped"
        new_top = doc["plan"][0]
        titles = {o["id"]: o["title"] for o in doc["options"]}
        new_title = titles[new_top]
        d = from_document(doc)
        ev = evaluate(d)
        assert ev.plan == tuple(doc["plan"])

        # the synthesis, in the document and in the CarePlan's notes
        synthesis = doc["meta"]["synthesis"]
        assert stale_reasons(synthesis, d, ev) == []
        assert f"Highest priority: {new_title} (score {ev.option(new_top).score:.2f})" in synthesis
        highest = synthesis.split("Highest priority: ")[1].split(". Also included")[0]
        assert f"{old_title} (score" not in highest or ev.option(old_top).decision == "include"
        _, careplan = careplan_of(out.bundle)
        notes = [n["text"] for n in careplan.get("note", [])]
        assert synthesis in notes
        assert not [n for n in notes if "Highest priority" in n and n != synthesis]

        # the narrative lists the new top first, with no trace of the old order
        div = careplan["text"]["div"]
        first_item = div.split("<li>", 1)[1].split("</li>", 1)[0]
        assert html.escape(new_title, quote=False) in first_item or new_title in html.unescape(
            first_item
        )
        assert old_title not in html.unescape(first_item)

        # the clinician summary (as stored and as rendered), the detailed view, the patient's
        rec = await app.store.get_version(tenant=TENANT, plan_id=plan.plan_id, version=version)
        _assert_views_name_the_new_top(rec, d, ev, (old_title, new_title), synthesis)
        # the patient version is written from this version: it leaves out what is now excluded
        first = from_document(plan.deliberation)
        assert patient_text(d, ev) != patient_text(first, evaluate(first))

        # accounting: the embedded backend re-ran the synthesis without a model call
        assert rec.summary["tokens"] == {"model_calls": 0, "input": 0, "output": 0}
    finally:
        await app.aclose()


def _assert_views_name_the_new_top(
    rec: Any, d: Any, ev: Any, titles: tuple[str, str], synthesis: str
) -> None:
    """The stored summary, its rendering and the detailed view lead with the new top."""
    old_title, new_title = titles
    summary = summary_from_record(rec.summary)
    assert summary is not None and summary.lines
    assert new_title in summary.lines[0].action or new_title in (
        summary.lines[0].action + " ".join(summary.lines[0].also)
    )
    assert not summary.lines[0].action.startswith(old_title)
    rendered = render_summary(d, ev, summary)
    assert rendered.index(new_title) < rendered.index(old_title) if old_title in rendered else True
    detail = render_plan(d, ev, {})
    assert synthesis in detail
    included = detail.split("ACTIVITIES (included)", 1)[1].split("NOT INCLUDED", 1)[0]
    assert included.index(new_title) < (
        included.index(old_title) if old_title in included else len(included)
    )
    for title_score in _scores(detail.split("SUMMARY", 1)[1]):
        assert title_score in {f"{r.score:.2f}" for r in ev.options}
