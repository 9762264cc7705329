"""The review page says how the plan is ranked in the sentence every other view uses
(``ranking_label``; the CLI, CarePlan, Communication and CDS card are read in
tests/cds_hooks/test_ranking_label.py), over the review app's real server."""

from __future__ import annotations

from markupsafe import escape

from service.text.words import ranking_label
from tests.review.conftest import Review


async def test_the_review_page_says_the_ranking_label(review: Review) -> None:
    async with review.client() as http:
        got = await review.launch(http)
        page = await http.get(got.headers["location"])
    assert page.status_code == 200
    assert f"{escape(ranking_label())}." in page.text
    assert "Urgent" not in page.text
