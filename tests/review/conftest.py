"""The review app's test harness: the real CDS/review HTTP app under uvicorn on loopback, over a
real CarePlanService (embedded experts, SQLite), and the test SMART server beside it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn

from service.app import CarePlanService
from service.cds_hooks.http import create_app
from service.review import build_review
from service.settings import Settings, load_settings
from tests.review.smart_server import SmartServer, free_port
from tests.service.conftest import bundle_bytes, real_experts

SIGNING_KEY = "test-review-signing-key-0123456789abcdef"
USER = "Practitioner/dr-ana"


@dataclass
class Review:
    service: CarePlanService
    settings: Settings
    smart: SmartServer
    base: str  # http://127.0.0.1:PORT
    plan_id: str
    patient_ref: str

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base, follow_redirects=False, timeout=30)

    async def launch(self, http: httpx.AsyncClient, **over: Any) -> httpx.Response:
        """A whole EHR launch as the browser would follow it; returns the last answer."""
        ctx = {"user": USER, "patient": self.patient_ref, "plan_id": self.plan_id, **over}
        launch_id = self.smart.launch(**ctx)
        r = await http.get("/review", params={"iss": self.smart.iss, "launch": launch_id})
        assert r.status_code == 303, r.text
        async with httpx.AsyncClient(follow_redirects=False) as ehr:
            auth = await ehr.get(r.headers["location"])
        assert auth.status_code == 302, auth.text
        back = urlsplit(auth.headers["location"])
        return await http.get(f"{back.path}?{back.query}")


def form_fields(html: str, form_id_or_action: str | None = None) -> list[dict[str, str]]:
    """Hidden inputs of each POST form on a page (enough to replay a click without a browser)."""
    out = []
    for form in re.findall(r"<form method=\"post\".*?</form>", html, flags=re.S):
        fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
        out.append(fields)
    return out


@pytest.fixture
async def review(tmp_path: Path) -> AsyncIterator[Review]:
    smart = SmartServer()
    smart_task = await smart.serve_here()
    port = free_port()
    settings = load_settings(
        environ={},
        store_dsn=f"sqlite:///{tmp_path / 'review.sqlite3'}",
        cds_base_url=f"http://127.0.0.1:{port}",
        review_smart_issuers=f"default={smart.iss}",
        review_signing_key=SIGNING_KEY,
    )
    service = await CarePlanService.create(settings, experts=real_experts(settings))
    app = create_app(service, settings)
    app.router.routes.extend(build_review(service, settings))
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False)
    )
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    plan = await service.generate(bundle_bytes(), tenant="default")
    try:
        yield Review(
            service,
            settings,
            smart,
            f"http://127.0.0.1:{port}",
            plan.plan_id,
            str(plan.deliberation["patient_ref"]),
        )
    finally:
        server.should_exit = True
        await task
        await smart.stop_here(smart_task)
        await service.aclose()
