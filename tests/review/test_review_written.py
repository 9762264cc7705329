"""The review app renders the version a contestation just wrote from the typed result of the
writing step (``service.versions.write_version``), not by parsing its stored document again."""

from __future__ import annotations

from typing import Any

import pytest

import service.review.routes as routes
from service.core import from_document
from tests.review.conftest import Review
from tests.review.test_review_http import _confirm, _post, _top


async def test_the_page_after_a_contestation_renders_the_written_version(
    review: Review, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[int] = []

    def counting(document: Any) -> Any:
        parsed.append(int(document["version"]))
        return from_document(document)

    monkeypatch.setattr(routes, "from_document", counting)
    async with review.client() as http:
        got = await review.launch(http)
        assert (await http.get(got.headers["location"])).status_code == 200
        assert parsed == [1]  # a stored version: its document is all there is
        doc = dict(
            (
                await review.service.plan_version(tenant="default", plan_id=review.plan_id)
            ).deliberation
        )
        top, sup, _ = _top(doc)
        _, data = await _confirm(http, review, action="reject", target=sup, version="1", back=top)
        done = await _post(http, review, {**data, "reason": "the dose was already reduced"})
        assert done.status_code == 303
        after = await http.get(done.headers["location"].split("#")[0])
        assert after.status_code == 200
        assert "What changed from version 1 to version 2" in after.text
        assert 2 not in parsed  # version 2 came typed from its writing step
