"""The review app over real HTTP (uvicorn on loopback), launched through a real SMART server:
launch, pages, contestation through the service's contest path, and every refusal."""

from __future__ import annotations

import re
import time
import uuid

import httpx
import jwt
import pytest
from markupsafe import escape

from service.core import evaluate, from_document
from service.review import review_link
from tests.review.conftest import SIGNING_KEY, USER, Review, form_fields


def _top(review_doc: dict) -> tuple[str, str, float]:
    """(top included option id, its strongest live supporter, the option's score)."""
    d = from_document(review_doc)
    ev = evaluate(d)
    top = ev.plan[0]
    o = next(o for o in d.options if o.id == top)
    r = ev.option(top)
    sup = max(
        (a for a in o.arguments if a.stance == "support" and a.status != "rejected"),
        key=lambda a: r.nodes[a.id].sigma or 0.0,
    )
    return top, sup.id, r.score


def _form(html: str, action: str, target: str) -> dict[str, str]:
    for f in form_fields(html):
        if f.get("action") == action and f.get("target") == target:
            return f
    raise AssertionError(f"no {action} form for {target}")


async def _post(http: httpx.AsyncClient, r: Review, data: dict[str, str], **kw) -> httpx.Response:
    return await http.post(f"/review/plans/{r.plan_id}/contest", data=data, **kw)


async def _confirm(http: httpx.AsyncClient, r: Review, **params: str) -> tuple[str, dict[str, str]]:
    """The confirmation page a Reject or Decide click opens, and its form's hidden fields."""
    page = await http.get(f"/review/plans/{r.plan_id}/confirm", params=params)
    assert page.status_code == 200, page.text
    (fields,) = form_fields(page.text)
    return page.text, fields


async def test_an_ehr_launch_opens_the_plan_and_a_reject_makes_a_new_version(
    review: Review,
) -> None:
    async with review.client() as http:
        got = await review.launch(http)
        assert got.status_code == 303
        assert got.headers["location"] == f"/review/plans/{review.plan_id}"
        page = await http.get(got.headers["location"])
        assert page.status_code == 200
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in csp
        assert "Included activities" in page.text and "Problems" in page.text
        assert "KEEP" in page.text  # the votes are shown

        doc = dict(
            (
                await review.service.plan_version(tenant="default", plan_id=review.plan_id)
            ).deliberation
        )
        top, sup, score = _top(doc)
        opt = await http.get(f"/review/plans/{review.plan_id}/options/{top}")
        assert opt.status_code == 200 and "<svg" in opt.text
        assert not any(f.get("action") == "reject" for f in form_fields(opt.text))
        confirm, data = await _confirm(
            http, review, action="reject", target=sup, version="1", back=top
        )
        assert "Reject S" in confirm and 'required aria-required="true"' in confirm
        assert f"{score:.2f}" in confirm  # the preview: the score now and after
        # No reason, no change: the refusal says why.
        bare = await _post(http, review, data)
        assert bare.status_code == 400 and "needs a reason" in bare.text
        assert (
            await review.service.plan_version(tenant="default", plan_id=review.plan_id)
        ).version == 1
        data = {**data, "reason": "the dose was already reduced"}
        done = await _post(http, review, data)
        assert done.status_code == 303
        assert done.headers["location"].endswith(f"/options/{top}?since=1#changes")
        after = await http.get(done.headers["location"].split("#")[0])
        assert "What changed from version 1 to version 2" in after.text
        assert USER in after.text  # who contested
        new = await review.service.plan_version(tenant="default", plan_id=review.plan_id)
        assert new.version == 2 and new.task_ids == (data["task_id"],)
        new_score = evaluate(from_document(new.deliberation)).option(top).score
        assert new_score < score
        assert f"{score:.2f}" in after.text and f"{new_score:.2f}" in after.text

        # The same form sent again (double click) is the same Task: applied once.
        again = await _post(http, review, data)
        assert again.status_code == 303
        assert (
            await review.service.plan_version(tenant="default", plan_id=review.plan_id)
        ).version == 2

        # The old page's form is now stale: refused, nothing changed, a reload offered.
        other = {**data, "task_id": str(uuid.uuid4())}
        stale = await _post(http, review, other)
        assert stale.status_code == 409
        assert "out of date" in stale.text and "Reload the current version" in stale.text
        assert (
            await review.service.plan_version(tenant="default", plan_id=review.plan_id)
        ).version == 2

        hist = await http.get(f"/review/plans/{review.plan_id}/history")
        assert hist.status_code == 200
        assert "Version 2" in hist.text and "rejected" in hist.text and USER in hist.text
        assert "the dose was already reduced" in hist.text
        (task,) = (
            await review.service.store.get_tasks(tenant="default", task_ids=[data["task_id"]])
        ).values()
        assert task.outcome["reasonCode"] == {"text": "the dose was already reduced"}
        cmp_ = await http.get(f"/review/plans/{review.plan_id}/compare?a=1&b=2")
        assert cmp_.status_code == 200 and "Version 1 against version 2" in cmp_.text


async def test_csrf_and_cross_site_posts_are_refused(review: Review) -> None:
    async with review.client() as http:
        await review.launch(http)
        doc = await review.service.plan_version(tenant="default", plan_id=review.plan_id)
        problem = str(doc.deliberation["problems"][0]["id"])
        _, data = await _confirm(
            http, review, action="decide", target=problem, decision="accept", version="1"
        )
        data = {**data, "reason": "confirmed at the visit"}
        bad = await _post(http, review, {**data, "csrf": "forged"})
        assert bad.status_code == 403 and "security token" in bad.text
        cross = await _post(http, review, data, headers={"Origin": "https://evil.example"})
        assert cross.status_code == 403
        # No session cookie at all: asked to open the plan again.
        async with review.client() as stranger:
            anon = await _post(stranger, review, data)
            assert anon.status_code == 401
        assert (
            await review.service.plan_version(tenant="default", plan_id=review.plan_id)
        ).version == 1


async def test_forged_and_unknown_launches_are_refused(review: Review) -> None:
    async with review.client() as http:
        unknown = await http.get(
            "/review", params={"iss": "https://evil.example/fhir", "launch": "x"}
        )
        assert unknown.status_code == 403
        # A callback with no launch cookie, or the wrong state, never reaches the token endpoint.
        cb = await http.get("/review/callback", params={"code": "c", "state": "s"})
        assert cb.status_code == 401
        launch_id = review.smart.launch(
            user=USER, patient=review.patient_ref, plan_id=review.plan_id
        )
        start = await http.get("/review", params={"iss": review.smart.iss, "launch": launch_id})
        assert start.status_code == 303
        wrong = await http.get("/review/callback", params={"code": "c", "state": "not-it"})
        assert wrong.status_code == 401 and "state" in wrong.text
        assert review.smart.token_requests == 0
        # A launch for another patient than the plan's is refused after the exchange.
        other = await review.launch(http, patient="Patient/someone-else")
        assert other.status_code == 403
        # A launch whose user is no practitioner is refused.
        nurse = await review.launch(http, user="Patient/self")
        assert nurse.status_code == 401


async def test_review_links_open_once_signed_and_expire(review: Review) -> None:
    link = review_link(review.settings, tenant="default", plan_id=review.plan_id, user=USER)
    path = link.removeprefix(review.base)
    assert "Patient" not in link
    async with review.client() as http:
        ok = await http.get(path)
        assert ok.status_code == 303 and ok.headers["location"].endswith(review.plan_id)
        assert (await http.get(ok.headers["location"])).status_code == 200
    now = int(time.time())
    expired = jwt.encode(
        {
            "ten": "default",
            "plan": review.plan_id,
            "sub": USER,
            "pur": "link",
            "iss": "canoe-review",
            "iat": now - 3600,
            "exp": now - 60,
        },
        SIGNING_KEY,
        algorithm="HS256",
    )
    forged = jwt.encode(
        {
            "ten": "default",
            "plan": review.plan_id,
            "sub": USER,
            "pur": "link",
            "iss": "canoe-review",
            "iat": now,
            "exp": now + 60,
        },
        "not-the-key-but-just-as-long-as-the-real-one",
        algorithm="HS256",
    )
    session_as_link = re.sub(r".*token=", "", link)
    async with review.client() as http:
        gone = await http.get("/review/open", params={"token": expired})
        assert gone.status_code == 401 and "expired" in gone.text
        fake = await http.get("/review/open", params={"token": forged})
        assert fake.status_code == 401
        # A link's token is no session: sent as the cookie it is refused.
        http.cookies.set("canoe_review", session_as_link, path="/review")
        assert (await http.get(f"/review/plans/{review.plan_id}")).status_code == 401


async def test_a_review_link_opens_one_session_only(review: Review) -> None:
    link = review_link(review.settings, tenant="default", plan_id=review.plan_id, user=USER)
    path = link.removeprefix(review.base)
    async with review.client() as http:
        assert (await http.get(path)).status_code == 303
    for _ in range(2):  # a second browser, and a third, within the link's lifetime
        async with review.client() as http:
            again = await http.get(path)
            assert again.status_code == 401 and "already used" in again.text
            assert "set-cookie" not in again.headers


async def test_a_session_reads_only_its_own_plan_and_tenant(review: Review) -> None:
    from tests.service.conftest import bundle_bytes

    other = await review.service.generate(bundle_bytes(), tenant="default")
    link = review_link(review.settings, tenant="other", plan_id=review.plan_id, user=USER)
    async with review.client() as http:
        await review.launch(http)
        assert (await http.get(f"/review/plans/{other.plan_id}")).status_code == 403
        ok = await http.get("/review/static/review.css")
        assert ok.status_code == 200 and "content-security-policy" in ok.headers
    async with review.client() as http:
        opened = await http.get(link.removeprefix(review.base))
        page = await http.get(opened.headers["location"])
        assert page.status_code in (403, 404)  # another tenant's plan is never shown


async def test_add_an_argument_and_decide_a_problem(review: Review) -> None:
    async with review.client() as http:
        await review.launch(http)
        doc = dict(
            (
                await review.service.plan_version(tenant="default", plan_id=review.plan_id)
            ).deliberation
        )
        top, _, score = _top(doc)
        opt = await http.get(f"/review/plans/{review.plan_id}/options/{top}")
        data = {
            **_form(opt.text, "add", top),
            "stance": "attack",
            "role": "clinician",
            "text": "The patient declined this at the last visit.",
            "strength": "0.9",
        }
        done = await _post(http, review, data)
        assert done.status_code == 303
        new = await review.service.plan_version(tenant="default", plan_id=review.plan_id)
        d = from_document(new.deliberation)
        added = [a for o in d.options for a in o.arguments if a.origin == "human"]
        assert [a.text for a in added] == ["The patient declined this at the last visit."]
        assert evaluate(d).option(top).score < score
        _, pdata = await _confirm(
            http,
            review,
            action="decide",
            target=d.problems[0].id,
            decision="reject",
            version=str(new.version),
        )
        assert pdata["decision"] == "reject"
        bad = await _post(http, review, {**pdata, "decision": "maybe", "reason": "?"})
        assert bad.status_code == 422 and "accept or reject" in bad.text
        good = await _post(http, review, {**pdata, "decision": "reject", "reason": "resolved"})
        assert good.status_code == 303
        final = evaluate(
            from_document(
                (
                    await review.service.plan_version(tenant="default", plan_id=review.plan_id)
                ).deliberation
            )
        )
        assert final.problem(pdata["target"]).decided_by == "human"


async def test_a_patient_only_launch_opens_the_patients_plan_or_a_chooser(review: Review) -> None:
    from tests.service.conftest import bundle_bytes

    async with review.client() as http:
        # One plan for the patient: it opens at once, with the patient's header.
        one = await review.launch(http, plan_id=None)
        assert one.status_code == 303, one.text
        assert one.headers["location"] == f"/review/plans/{review.plan_id}"
        page = await http.get(one.headers["location"])
        assert page.status_code == 200
        header = re.search(r'<p class="patient" id="patient">(.*?)</p>', page.text, flags=re.S)
        assert header is not None and " years (born " in header.group(1)
        assert review.patient_ref not in header.group(1)  # a name, not the reference
    # A second plan for the same patient (and one for nobody we launch): a chooser.
    second = await review.service.generate(bundle_bytes(), tenant="default")
    async with review.client() as http:
        many = await review.launch(http, plan_id=None)
        assert many.status_code == 303 and many.headers["location"] == "/review/choose"
        chooser = await http.get("/review/choose")
        assert chooser.status_code == 200
        listed = re.findall(r'data-plan="([0-9a-f]{32})"', chooser.text)
        assert sorted(listed) == sorted([review.plan_id, second.plan_id])
        # Dates as a reader says them ("Plan of 2 Dec 2026, 09:15 UTC"), not ISO 8601.
        shown = re.findall(r'class="plan-choice"[^>]*>Plan of ([^<]*)</a>', chooser.text)
        assert len(shown) == 2
        for when in shown:
            assert re.fullmatch(r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC", when), when
        picked = await http.get("/review/choose", params={"plan": second.plan_id})
        assert picked.status_code == 303
        assert picked.headers["location"] == f"/review/plans/{second.plan_id}"
        assert (await http.get(picked.headers["location"])).status_code == 200
        # The session is for the plan picked, and the chooser only for this patient's plans.
        assert (await http.get(f"/review/plans/{review.plan_id}")).status_code == 403
        foreign = await http.get("/review/choose", params={"plan": "0" * 32})
        assert foreign.status_code == 403
    async with review.client() as http:
        nobody = await review.launch(http, plan_id=None, patient="Patient/no-plans-here")
        assert nobody.status_code == 404 and "no care plan" in nobody.text
        # No choose cookie: the chooser is not reachable by URL alone.
        assert (await http.get("/review/choose")).status_code == 401


async def test_the_plan_page_shows_the_summary_stored_with_the_version(
    review: Review, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The summary is built once, when the version is written, and the page shows that one:
    # the page renders with the review app unable to compute a summary of its own.
    from service.review import routes
    from service.stored_summary import summary_from_record

    def recomputed(*_args: object) -> None:
        raise AssertionError("the review page computed the summary again")

    monkeypatch.setattr(routes, "summarise", recomputed)
    rec = await review.service.plan_version(tenant="default", plan_id=review.plan_id, version=1)
    stored = summary_from_record(rec.summary)
    assert stored is not None and stored.lines
    async with review.client() as http:
        await review.launch(http)
        page = await http.get(f"/review/plans/{review.plan_id}")
    assert page.status_code == 200, page.text
    summary = page.text.split('id="summary-title"')[1].split("</section>")[0]
    assert all(str(escape(line.action)) in summary for line in stored.lines)


def _url_parts(html: str) -> list[str]:
    """What a click on the page can put in a URL: every href, and every field of a GET form."""
    hrefs = re.findall(r'href="([^"]*)"', html)
    gets = re.findall(r'<form method="get".*?</form>', html, flags=re.S)
    fields = [v for form in gets for v in re.findall(r'name="[^"]+" value="([^"]*)"', form)]
    return hrefs + fields


async def test_review_urls_carry_no_activity_argument_or_problem_id(review: Review) -> None:
    async with review.client() as http:
        got = await review.launch(http)
        plan_page = await http.get(got.headers["location"])
        d = from_document(
            dict(
                (
                    await review.service.plan_version(tenant="default", plan_id=review.plan_id)
                ).deliberation
            )
        )
        ids = {o.id for o in d.options} | {a.id for o in d.options for a in o.arguments}
        ids |= {p.id for p in d.problems}
        top, _sup, _ = _top(
            dict(
                (
                    await review.service.plan_version(tenant="default", plan_id=review.plan_id)
                ).deliberation
            )
        )
        links = re.findall(r'class="option-link" href="([^"]*)"', plan_page.text)
        assert links
        option_page = await http.get(links[0])
        assert option_page.status_code == 200, option_page.text
        assert escape(next(o.title for o in d.options if o.id == top)) in option_page.text
        for page in (plan_page.text, option_page.text):
            parts = _url_parts(page)
            leaked = sorted({i for i in ids for part in parts if i in part})
            assert not leaked, leaked
        # The opaque reject button still previews and applies the rejection of that argument.
        reject = re.search(
            r'<form method="get"[^>]*confirm.*?name="back" value="([^"]+)".*?'
            r'name="action" value="reject"><input type="hidden" name="target" value="([^"]+)"',
            option_page.text,
            flags=re.S,
        )
        assert reject is not None
        back, target = reject.groups()
        _, fields = await _confirm(
            http, review, action="reject", target=target, version="1", back=back
        )
        assert fields["target"] in {a.id for o in d.options for a in o.arguments}
        done = await _post(http, review, {**fields, "reason": "dose already reduced"})
        assert done.status_code == 303
        assert done.headers["location"].endswith(f"/options/{back}?since=1#changes")
        assert (await http.get(done.headers["location"].split("#")[0])).status_code == 200
