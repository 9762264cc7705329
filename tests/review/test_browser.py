"""The review app in a real headless Chromium (Debian's chromium + chromium-driver, driven by
Selenium) against a real ``canoe serve`` on loopback, launched through the test SMART server.

One browser session for the module; the tests run in order and build on each other (launch ->
plan -> activity -> reject -> add -> decide -> history -> patient version -> stale ->
refusals). Each page is saved as a screenshot under tmp/artefacts/review/ and scanned with
axe-core (WCAG 2.1 A/AA rules): no serious or critical violation is allowed. Skips, with the
reason, where chromium cannot run.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import jwt
import pytest

from service.core import evaluate, from_document
from service.core.contest import RejectArgument, apply_all
from service.review.tokens import Signer
from tests.review.browser import (
    ARTEFACTS,
    CanoeServe,
    axe_source,
    browser_or_skip,
    driver,
    save_artefact,
)
from tests.review.conftest import SIGNING_KEY, USER
from tests.review.smart_server import SmartServer, free_port
from tests.service.conftest import bundle_bytes, pb, pb_grpc, reject_task

FOUND = browser_or_skip()
pytestmark = pytest.mark.skipif(isinstance(FOUND, str), reason=str(FOUND))
REF = Signer(SIGNING_KEY).opaque  # the opaque URL token of an activity id
FIXTURE = "trey"  # its top activity flips when its strongest supporter goes; borderline ones


class Stack:
    def __init__(self, tmp: Path) -> None:
        self.smart = SmartServer()
        self.smart.start_thread()
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.serve = CanoeServe(
            {
                "CANOE_GRPC_HOST": "127.0.0.1",
                "CANOE_GRPC_PORT": "0",
                "CANOE_HTTP_PORT": str(self.port),
                "CANOE_METRICS_PORT": "0",
                "CANOE_STORE_DSN": f"sqlite:///{tmp / 'browser.sqlite3'}",
                "CANOE_CDS_BASE_URL": self.base,
                "CANOE_REVIEW_SMART_ISSUERS": f"default={self.smart.iss}",
                "CANOE_REVIEW_SIGNING_KEY": SIGNING_KEY,
            }
        )
        grpc_port = self.serve.wait_started()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
        self.stub = pb_grpc.CarePlanServiceStub(self.channel)
        out = self.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes(FIXTURE)))
        self.plan_id = out.plan_id
        self.doc = self.deliberation()
        self.patient_ref = str(self.doc["patient_ref"])

    def deliberation(self) -> dict[str, Any]:
        got = self.stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=self.plan_id))
        return dict(json.loads(got.deliberation_json))

    def close(self) -> None:
        self.channel.close()
        self.serve.stop()
        self.smart.stop_thread()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    s = Stack(tmp_path_factory.mktemp("review-browser"))
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    assert not isinstance(FOUND, str)
    drv = driver(*FOUND)
    drv.set_page_load_timeout(60)
    try:
        yield drv
    finally:
        drv.quit()
    print(f"review app screenshots in {ARTEFACTS}")


def check_page(drv: Any, name: str) -> None:
    """Screenshot, then axe-core: no serious or critical WCAG 2.1 A/AA violation."""
    save_artefact(drv, name)
    source = axe_source()
    if source is None:
        pytest.skip("axe-core could not be fetched with npm (no npm here)")
    drv.execute_script(source)
    drv.set_script_timeout(60)
    result = drv.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}}).then(r => done(r.violations));"
    )
    bad = [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in result
        if v.get("impact") in ("serious", "critical")
    ]
    assert not bad, f"axe on {name}: " + "; ".join(bad)


def text_of(drv: Any, css: str) -> str:
    from selenium.webdriver.common.by import By

    return str(drv.find_element(By.CSS_SELECTOR, css).text)


def until(drv: Any, what: str, check: Any) -> None:
    """Wait (up to 20 s) for a page the click led to: clicks return before navigation ends, so
    an element read while the old page is replaced may go stale: that is a retry, not a failure."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def replaced_page_is_a_retry(d: Any) -> Any:
        try:
            return check(d)
        except WebDriverException as exc:
            # Chromium's DevTools may report an element of the page being replaced this way
            # rather than as a stale reference: the same race, read again.
            if "does not belong to the document" in str(exc):
                return False
            raise

    WebDriverWait(drv, 20, ignored_exceptions=(StaleElementReferenceException,)).until(
        replaced_page_is_a_retry, message=f"waiting for {what}"
    )


def h1_has(text: str) -> Any:
    from selenium.webdriver.common.by import By

    return lambda d: any(text in e.text for e in d.find_elements(By.CSS_SELECTOR, "h1"))


def by_css(drv: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    return drv.find_element(By.CSS_SELECTOR, css)


def flipping_choice(doc: dict[str, Any]) -> tuple[str, str]:
    """The highest-ranked included activity that rejecting its strongest supporter flips, and
    that supporter (a safety action backed by several roles rarely flips on one rejection)."""
    d = from_document(doc)
    ev = evaluate(d)
    for oid in ev.plan:
        o = next(x for x in d.options if x.id == oid)
        r = ev.option(oid)
        sups = [a for a in o.arguments if a.stance == "support" and a.status != "rejected"]
        if not sups:
            continue
        best = max(sups, key=lambda a: (r.nodes[a.id].sigma or 0.0, a.id))
        after = evaluate(apply_all(d, [(RejectArgument(best.id), "t", "P/x", "2026-01-01", "")]))
        if after.option(oid).decision != r.decision:
            return oid, best.id
    raise AssertionError("no included activity flips when its strongest supporter is rejected")


def test_launch_plan_activity_reject(stack: Stack, browser: Any) -> None:
    from selenium.webdriver.common.keys import Keys

    launch = stack.smart.launch(
        user=USER, patient=stack.patient_ref, plan_id=stack.plan_id, version=1
    )
    browser.get(f"{stack.base}/review?iss={stack.smart.iss}&launch={launch}")
    assert browser.current_url == f"{stack.base}/review/plans/{stack.plan_id}"
    assert "Care plan" in text_of(browser, "h1")
    assert USER in text_of(browser, ".who")
    header = text_of(browser, "#patient")
    assert " years (born " in header and stack.patient_ref not in header
    # Keyboard: the first Tab reaches the skip link.
    by_css(browser, "body").send_keys(Keys.TAB)
    assert browser.switch_to.active_element.get_attribute("class") == "skip"
    check_page(browser, "01-plan")

    ev = evaluate(from_document(stack.doc))
    option_id, supporter = flipping_choice(stack.doc)
    assert option_id in ev.plan
    before = ev.option(option_id).score
    by_css(browser, f'#table-included a.option-link[href$="/options/{REF(option_id)}"]').click()
    until(browser, "the activity", lambda d: "/options/" in d.current_url)
    assert browser.current_url.endswith(f"/options/{REF(option_id)}")
    assert float(text_of(browser, "#score")) == pytest.approx(before, abs=0.006)
    assert text_of(browser, "#decision") == "include"
    assert browser.find_elements("css selector", "svg.qbaf g.node.support")
    check_page(browser, "02-activity")

    # Reject the strongest supporter with the keyboard: focus its button, press Enter; the
    # confirmation names the argument, previews the flip and will not go on without a reason.
    button = by_css(browser, f"#reject-{supporter}")
    button.send_keys(Keys.ENTER)
    until(browser, "the confirmation", h1_has("Reject S"))
    assert "include → exclude" in text_of(browser, "#preview")
    check_page(browser, "02b-confirm-reject")
    by_css(browser, "#confirm").send_keys(Keys.ENTER)
    reason = by_css(browser, "#confirm-reason")
    assert browser.switch_to.active_element == reason  # the browser asks for the reason
    assert browser.execute_script("return arguments[0].validity.valueMissing", reason)
    assert "/confirm?" in browser.current_url  # nothing was sent
    reason.send_keys("renal function has recovered")
    by_css(browser, "#confirm").send_keys(Keys.ENTER)
    until(browser, "the new version", lambda d: "since=1" in d.current_url)
    after = float(text_of(browser, "#score"))
    assert after < before
    assert text_of(browser, "#decision") == "exclude"
    diff = text_of(browser, "#changes")
    assert "flipped: include → exclude" in diff and "rejected" in diff and USER in diff
    assert "renal function has recovered" in diff  # the reason, recorded and shown
    check_page(browser, "03-after-reject")


def test_add_an_argument(stack: Stack, browser: Any) -> None:
    version = len(
        stack.stub.ListPlanVersions(pb.ListPlanVersionsRequest(plan_id=stack.plan_id)).versions
    )
    by_css(browser, "#add-argument summary").click()
    by_css(browser, "#add-argument input[value='support']").click()
    by_css(browser, "#add-text").send_keys("Discussed with the family: they can supervise this.")
    strength = by_css(browser, "#add-strength")
    strength.clear()
    strength.send_keys("0.8")
    by_css(browser, "#add-reason").send_keys("family meeting")
    save_artefact(browser, "04-add-form")
    by_css(browser, "#add-argument button[type='submit']").click()
    until(browser, "the new version", lambda d: f"since={version}" in d.current_url)
    assert "Discussed with the family" in by_css(browser, ".arguments").text
    assert "added an argument" in text_of(browser, "#changes")
    check_page(browser, "05-after-add")


def test_decide_a_borderline_activity(stack: Stack, browser: Any) -> None:
    browser.get(f"{stack.base}/review/plans/{stack.plan_id}")
    rows = browser.find_elements("css selector", "#table-borderline tbody tr")
    assert rows, "the fixture should leave at least one activity borderline"
    option_id = rows[0].get_attribute("data-option")
    form = rows[0].find_element("css selector", "form")
    form.find_element("css selector", "select").send_keys("Include")
    form.find_element("css selector", "button").click()
    until(browser, "the confirmation", h1_has("Decide"))
    # Cancel changes nothing and goes back; the second time it is confirmed with a reason.
    by_css(browser, "#cancel").click()
    until(browser, "the plan", lambda d: d.current_url.endswith(f"/plans/{stack.plan_id}"))
    form = by_css(browser, f'#table-borderline tr[data-option="{option_id}"] form')
    form.find_element("css selector", "select").send_keys("Include")
    form.find_element("css selector", "button").click()
    until(browser, "the confirmation", h1_has("Decide"))
    by_css(browser, "#confirm-reason").send_keys("discussed with the patient")
    by_css(browser, "#confirm").click()
    until(browser, "the new version", lambda d: "since=" in d.current_url)
    included = [
        r.get_attribute("data-option")
        for r in browser.find_elements("css selector", "#table-included tbody tr")
    ]
    assert option_id in included
    assert "decided" in text_of(browser, "#changes")
    assert "discussed with the patient" in text_of(browser, "#changes")
    check_page(browser, "06-after-decide")


def test_history_lists_every_version(stack: Stack, browser: Any) -> None:
    by_css(browser, "nav a[href$='/history']").click()
    until(browser, "the history", h1_has("History"))
    items = browser.find_elements("css selector", "ol.history > li")
    versions = stack.stub.ListPlanVersions(
        pb.ListPlanVersionsRequest(plan_id=stack.plan_id)
    ).versions
    assert len(items) == len(versions) >= 4
    text = by_css(browser, "ol.history").text
    assert "rejected" in text and "added an argument" in text and "decided" in text
    check_page(browser, "07-history")
    by_css(browser, "form[action$='/compare'] button").click()
    until(browser, "the comparison", h1_has("Version 1 against version"))
    check_page(browser, "08-compare")


def test_the_patient_version_reads_as_the_patient_will(stack: Stack, browser: Any) -> None:
    browser.get(f"{stack.base}/review/plans/{stack.plan_id}")
    by_css(browser, "nav a[href*='/patient']").click()
    until(browser, "the patient version", h1_has("What the patient reads"))
    article = by_css(browser, "article.patient").text
    assert "Your care plan" in article and "What to watch for and when to call" in article
    assert "Proposed by" not in article and "MedicationRequest/" not in article
    assert float(text_of(browser, "#patient-grade")) <= 8
    check_page(browser, "09-patient-version")


def test_a_stale_page_says_so_and_reloads(stack: Stack, browser: Any) -> None:
    doc = stack.deliberation()
    option_id = evaluate(from_document(doc)).plan[0]
    browser.get(f"{stack.base}/review/plans/{stack.plan_id}/options/{option_id}")
    stale_version = int(doc["version"])
    # Meanwhile another client contests the same version over gRPC (rejects an argument).
    d = from_document(doc)
    arg = next(
        a for o in d.options if o.id == option_id for a in o.arguments if a.status == "active"
    )
    task = reject_task(
        stack.plan_id, stale_version, arg.id, tid=str(uuid.uuid4()), patient=stack.patient_ref
    )
    stack.stub.Contest(
        pb.ContestRequest(
            plan_id=stack.plan_id, version=stale_version, tasks_json=json.dumps(task).encode()
        )
    )
    by_css(browser, "#decide-form button").click()
    until(browser, "the stale page", h1_has("This page is out of date"))
    check_page(browser, "09-stale")
    by_css(browser, "#reload").click()
    until(browser, "the current version", lambda d: f"since={stale_version}" in d.current_url)
    assert f"/options/{REF(option_id)}" in browser.current_url
    assert "Practitioner/planner-1" in text_of(browser, "#changes")  # what the other one did
    assert (
        len(stack.stub.ListPlanVersions(pb.ListPlanVersionsRequest(plan_id=stack.plan_id)).versions)
        == stale_version + 1
    )


def test_csrf_forged_and_expired_are_refused(stack: Stack, browser: Any) -> None:
    option_id = evaluate(from_document(stack.deliberation())).plan[0]
    browser.get(f"{stack.base}/review/plans/{stack.plan_id}/options/{option_id}")
    versions = len(
        stack.stub.ListPlanVersions(pb.ListPlanVersionsRequest(plan_id=stack.plan_id)).versions
    )
    # A form whose CSRF token is not the session's (as a forged cross-site form would be).
    browser.execute_script(
        "const f = document.querySelector('form[method=post]');"
        "f.querySelector('input[name=csrf]').value = 'forged'; f.submit();"
    )
    until(browser, "the refusal", h1_has("could not be verified"))
    check_page(browser, "10-csrf-refused")
    assert (
        len(stack.stub.ListPlanVersions(pb.ListPlanVersionsRequest(plan_id=stack.plan_id)).versions)
        == versions
    )

    browser.get(f"{stack.base}/review?iss=https://evil.example/fhir&launch=forged")
    assert "Not allowed" in text_of(browser, "h1")
    check_page(browser, "11-forged-launch")

    now = int(time.time())
    expired = jwt.encode(
        {"ten": "default", "plan": stack.plan_id, "sub": USER, "pur": "link",
         "iss": "canoe-review", "iat": now - 3600, "exp": now - 60},
        SIGNING_KEY, algorithm="HS256",
    )  # fmt: skip
    browser.delete_all_cookies()
    browser.get(f"{stack.base}/review/open?token={expired}")
    assert "expired" in text_of(browser, ".notice")
    check_page(browser, "12-expired-link")
