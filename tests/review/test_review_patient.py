"""The review app's patient version page over real HTTP: the clinician reads what the patient
will receive, with its reading grade; excluding an activity takes it out of the next version's
patient version."""

from __future__ import annotations

import html as htmllib
import re

from service.core import evaluate, from_document
from service.readability import MAX_PATIENT_GRADE
from tests.review.conftest import Review, form_fields


def _wordings(doc: dict) -> dict[str, str]:
    return {w["option_id"]: w["text"] for w in doc["meta"]["patient_wordings"] if w["option_id"]}


async def test_the_patient_version_page_follows_the_contested_plan(review: Review) -> None:
    async with review.client() as http:
        got = await review.launch(http)
        assert got.status_code == 303
        plan_page = await http.get(got.headers["location"])
        assert f'/review/plans/{review.plan_id}/patient?v=1"' in plan_page.text
        page = await http.get(f"/review/plans/{review.plan_id}/patient")
        assert page.status_code == 200
        assert "unsafe-inline" not in page.headers["content-security-policy"]
        text = htmllib.unescape(page.text)
        assert "What the patient reads" in text and "Changes to your medicines" in text
        grade = float(re.search(r'id="patient-grade">([0-9.\-]+)<', page.text).group(1))
        assert grade <= MAX_PATIENT_GRADE

        doc = dict(
            (
                await review.service.plan_version(tenant="default", plan_id=review.plan_id)
            ).deliberation
        )
        words = _wordings(doc)
        d = from_document(doc)
        plan = evaluate(d).plan
        # an included activity whose wording no other included activity shares
        target = next(
            oid
            for oid in plan
            if oid in words and sum(words.get(o) == words[oid] for o in plan) == 1
        )
        assert words[target] in text
        assert "Proposed by" not in text  # no clinician text reaches the patient

        option_page = await http.get(f"/review/plans/{review.plan_id}/options/{target}")
        assert f'/review/plans/{review.plan_id}/patient?v=1"' in option_page.text
        confirm = await http.get(
            f"/review/plans/{review.plan_id}/confirm",
            params={"action": "decide", "target": target, "decision": "exclude", "version": "1"},
        )
        assert confirm.status_code == 200, confirm.text
        (data,) = form_fields(confirm.text)
        done = await http.post(
            f"/review/plans/{review.plan_id}/contest", data={**data, "reason": "not wanted"}
        )
        assert done.status_code == 303, done.text
        after = await http.get(f"/review/plans/{review.plan_id}/patient?v=2")
        assert after.status_code == 200
        assert words[target] not in htmllib.unescape(after.text)
        before = await http.get(f"/review/plans/{review.plan_id}/patient?v=1")
        assert words[target] in htmllib.unescape(before.text)
