"""Benchmark: the review app's server time for the plan and activity views, and the time from a
click (a contest form POST) to the updated page (the redirect followed), on the realistic
fixture with the most arguments. Run:

    .venv/bin/python -m tests.benchmarks.bench_review [--repeat 30]

The app is the real one (CDS Hooks app + review routes over a CarePlanService with SQLite in a
temporary folder), called in process through httpx's ASGI transport, so the numbers are server
time without a network. "cold" is the first request for a version (the stored document parsed
and evaluated, templates compiled on the very first); "warm" the median of the repeats.
Targets: < 300 ms per view, < 500 ms click to updated page. Not a test: numbers go in the note.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from service.app import CarePlanService
from service.backends import build_experts
from service.cds_hooks.http import create_app
from service.review import build_review, review_link
from service.settings import load_settings
from tests.conftest import REALISTIC_BUNDLES

KEY = "bench-review-signing-key-0123456789abcdef"


def _largest() -> Path:
    from tests.e2e.test_plan_end_to_end import plan_of

    def size(p: Path) -> int:
        return sum(len(o.arguments) for o in plan_of(p).deliberation.options)

    return max(REALISTIC_BUNDLES, key=size)


async def main(repeat: int, path: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            environ={},
            store_dsn=f"sqlite:///{Path(tmp) / 'bench.sqlite3'}",
            review_signing_key=KEY,
            cds_base_url="http://testserver",
        )
        service = await CarePlanService.create(settings, experts=build_experts(settings))
        app = create_app(service, settings)
        app.router.routes.extend(build_review(service, settings))
        out = await service.generate(path.read_bytes(), tenant="default")
        d = out.deliberation
        n_args = sum(len(o["nodes"]) for o in d["options"])
        top = max(
            d["options"],
            key=lambda o: sum(1 for n in o["nodes"] if n.get("kind") == "argument"),
        )
        link = review_link(settings, tenant="default", plan_id=out.plan_id, user="Practitioner/b")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            await http.get(link.removeprefix("http://testserver"))
            plan_url = f"/review/plans/{out.plan_id}"
            option_url = f"{plan_url}/options/{top['id']}"

            async def timed(url: str) -> float:
                t0 = time.perf_counter()
                r = await http.get(url)
                assert r.status_code == 200, r.status_code
                return (time.perf_counter() - t0) * 1000

            cold_plan, cold_option = await timed(plan_url), await timed(option_url)
            plan_ms = [await timed(plan_url) for _ in range(repeat)]
            option_ms = [await timed(option_url) for _ in range(repeat)]

            arg = next(n["id"] for n in top["nodes"] if n.get("kind") == "argument")
            clicks: list[float] = []
            for i in range(repeat):
                page = await http.get(option_url)
                form = re.search(
                    r'name="csrf" value="([^"]+)".*?name="version" value="(\d+)"'
                    r'.*?name="task_id" value="([^"]+)"',
                    page.text,
                    flags=re.S,
                )
                assert form is not None
                csrf, version, task_id = form.groups()
                data = {
                    "csrf": csrf,
                    "version": version,
                    "task_id": task_id,
                    "action": "edit",
                    "target": arg,
                    "strength": f"{0.30 + (i % 2) / 100:.2f}",
                    "back_option": top["id"],
                }
                t0 = time.perf_counter()
                posted = await http.post(f"{plan_url}/contest", data=data)
                assert posted.status_code == 303, posted.text[:300]
                shown = await http.get(posted.headers["location"].split("#")[0])
                assert shown.status_code == 200 and "What changed" in shown.text
                clicks.append((time.perf_counter() - t0) * 1000)
        await service.aclose()

    def row(name: str, cold: float | None, xs: list[float]) -> str:
        c = f"{cold:8.1f}" if cold is not None else "       -"
        return (
            f"{name:<28} cold {c} ms   warm median {statistics.median(xs):7.1f} ms   "
            f"p95 {sorted(xs)[int(len(xs) * 0.95) - 1]:7.1f} ms"
        )

    print(f"fixture {path.name}: {len(d['options'])} activities, {n_args} graph nodes")
    print(row("plan view", cold_plan, plan_ms))
    print(row(f"activity view ({top['id']})", cold_option, option_ms))
    print(row("click -> updated page", None, clicks))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    asyncio.run(main(args.repeat, _largest()))
