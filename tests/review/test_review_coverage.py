"""The review app's plan page shows the plan's coverage statement: the short lines, and in the
detail every check family and every gap with what a human should check."""

from __future__ import annotations

import html

from service.core import from_document
from service.text.summary import coverage_detail, coverage_lines
from tests.review.conftest import Review


async def test_plan_page_shows_what_was_checked(review: Review) -> None:
    async with review.client() as http:
        got = await review.launch(http)
        page = await http.get(got.headers["location"])
    assert page.status_code == 200
    rec = await review.service.plan_version(tenant="default", plan_id=review.plan_id)
    coverage = from_document(dict(rec.deliberation)).meta.coverage
    assert coverage is not None
    text = html.unescape(page.text)
    assert '<section aria-labelledby="coverage-title" id="coverage">' in page.text
    for line in coverage_lines(coverage):
        assert line in text
    assert "Coverage in detail" in text
    for family in coverage.families:
        assert family.label in text
    for gap in coverage.gaps:
        assert f"{gap.label}: {gap.check}." in text
    # the detail is the one every view renders, line for line
    for line in coverage_detail(coverage):
        assert f"<li>{line}</li>" in text
