"""The review app launched by the official SMART App Launcher (smart-on-fhir/smart-launcher-v2,
built with npm, run with node on loopback), driven in a real headless Chromium.

The launcher's EHR launch sends patient context only (no CDS ``appContext``, no ``fhirContext``):
the review app discovers the launcher's SMART configuration, goes through its authorization
endpoint with PKCE, exchanges the code, verifies the id_token against the launcher's JWKS,
and opens the patient's plan with the patient's header. Skips, with the reason, where node,
the built launcher or chromium is missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import grpc
import pytest

from tests.review.browser import CanoeServe, browser_or_skip, driver, save_artefact
from tests.review.conftest import SIGNING_KEY
from tests.review.launcher import Launcher, TinyFhir, launcher_or_skip
from tests.review.smart_server import free_port
from tests.service.conftest import bundle_bytes, pb, pb_grpc

BROWSER = browser_or_skip()
pytestmark = pytest.mark.skipif(isinstance(BROWSER, str), reason=str(BROWSER))
PROVIDER = "smart-launcher-doctor"


@pytest.fixture(scope="module")
def launcher() -> Iterator[Launcher]:
    folder = launcher_or_skip()
    if isinstance(folder, str):
        pytest.skip(folder)
    fhir = TinyFhir(free_port())
    running = Launcher(folder, free_port(), fhir.base)
    try:
        running.wait_started()
        yield running
    finally:
        running.stop()
        fhir.stop()


@pytest.fixture(scope="module")
def canoe(launcher: Launcher, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    port = free_port()
    tmp = tmp_path_factory.mktemp("smart-launcher")
    serve = CanoeServe(
        {
            "CANOE_GRPC_HOST": "127.0.0.1",
            "CANOE_GRPC_PORT": "0",
            "CANOE_HTTP_PORT": str(port),
            "CANOE_METRICS_PORT": "0",
            "CANOE_STORE_DSN": f"sqlite:///{tmp / 'launcher.sqlite3'}",
            "CANOE_CDS_BASE_URL": f"http://127.0.0.1:{port}",
            "CANOE_REVIEW_SMART_ISSUERS": f"default={launcher.iss}",
            "CANOE_REVIEW_SIGNING_KEY": SIGNING_KEY,
        }
    )
    try:
        grpc_port = serve.wait_started()
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            stub = pb_grpc.CarePlanServiceStub(channel)
            out = stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes("adan")))
            got = stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=out.plan_id))
        patient_ref = str(json.loads(got.deliberation_json)["patient_ref"])
        yield {"base": f"http://127.0.0.1:{port}", "plan_id": out.plan_id, "patient": patient_ref}
    finally:
        serve.stop()


def test_the_smart_app_launcher_opens_the_patients_plan(
    launcher: Launcher, canoe: dict[str, str], tmp_path: Path
) -> None:
    assert not isinstance(BROWSER, str)
    drv = driver(*BROWSER)
    drv.set_page_load_timeout(60)
    try:
        # The launcher's launch API, as its UI's "Launch" button builds it: an EHR launch of
        # our /review with one patient and one provider, for FHIR R4.
        query = urlencode(
            {
                "launch_uri": f"{canoe['base']}/review",
                "fhir_ver": "4",
                "patient": canoe["patient"].removeprefix("Patient/"),
                "provider": PROVIDER,
            }
        )
        drv.get(f"{launcher.base}/launcher?{query}")
        assert drv.current_url == f"{canoe['base']}/review/plans/{canoe['plan_id']}", (
            drv.page_source[:2000]
        )
        who = drv.find_element("css selector", ".who").text
        assert f"Practitioner/{PROVIDER}" in who  # from the verified id_token's fhirUser
        header = drv.find_element("css selector", "#patient").text
        assert " years (born " in header and canoe["patient"] not in header
        assert "Care plan" in drv.find_element("css selector", "h1").text
        save_artefact(drv, "20-smart-launcher")
    finally:
        drv.quit()
