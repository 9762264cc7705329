"""``canoe contest`` writes a version through the same step as the service
(``service.versions.write_version``): contested until its top activity changes, the version the
command line writes says so (its synthesis in the CarePlan's notes, its narrative), and for the
same Tasks at the same time it writes the very document and Bundle the service stores.

A real ``canoe contest`` process each round, against a real service on SQLite (embedded
backend) that contests the same plan with the same Tasks."""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from fhir_mapping.careplan import careplan_of, deliberation_from_bundle
from service.app import CarePlanService
from service.core import evaluate, to_document
from service.settings import load_settings
from tests.service.conftest import bundle_bytes
from tests.service.test_contest_synthesis import _reject, _strongest_support
from tests.support.contest_synthesis import stale_reasons

TENANT = "t-cli-contest"
CREATED = "2026-11-30T10:00:00.000+00:00"
MAX_ROUNDS = 12


def _at(round_: int) -> str:
    return f"2026-11-30T11:{round_:02d}:00.000+00:00"


def _canoe_contest(plan: Path, task: Path, at: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "contest", str(plan), str(task), "--recorded", at],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    bundle: dict[str, Any] = json.loads(done.stdout)
    return bundle


async def test_canoe_contest_until_the_top_flips_says_the_new_top_as_the_service_does(
    tmp_path: Path,
) -> None:
    times = iter([CREATED, *(_at(k) for k in range(MAX_ROUNDS))])
    app = await CarePlanService.create(
        load_settings({}, store_dsn=f"sqlite:///{tmp_path}/canoe.sqlite3")
    )
    app.clock = lambda: next(times)
    try:
        plan = await app.generate(bundle_bytes(), tenant=TENANT)
        doc, version = plan.deliberation, 1
        old_top = doc["plan"][0]
        cli_plan = tmp_path / "plan-v1.json"
        cli_plan.write_bytes(plan.bundle_json or json.dumps(plan.bundle).encode())
        cli_bundle: dict[str, Any] = {}
        for k in range(MAX_ROUNDS):
            if not doc["plan"] or doc["plan"][0] != old_top:
                break
            task = _reject(
                plan.plan_id, version, _strongest_support(doc, old_top), doc["patient_ref"]
            )
            task_file = tmp_path / f"task-{k}.json"
            task_file.write_text(json.dumps(task))
            cli_bundle = _canoe_contest(cli_plan, task_file, _at(k))
            out = await app.contest(task, tenant=TENANT, plan_id=plan.plan_id, version=version)
            doc, version = out.deliberation, out.version

            # the same Tasks at the same time: the same document, the same Bundle
            cli_d = deliberation_from_bundle(cli_bundle)
            assert cli_d.version == version
            assert to_document(cli_d, evaluate(cli_d)) == doc
            assert cli_bundle == out.bundle
            cli_plan = tmp_path / f"plan-v{version}.json"
            cli_plan.write_text(json.dumps(cli_bundle))
        assert doc["plan"] and doc["plan"][0] != old_top, "the top activity never flipped"

        # the version the command line wrote names the new top, in its notes and narrative
        d = deliberation_from_bundle(cli_bundle)
        ev = evaluate(d)
        new_top = ev.plan[0]
        titles = {o.id: o.title for o in d.options}
        synthesis = d.meta.synthesis
        assert stale_reasons(synthesis, d, ev) == []
        assert f"Highest priority: {titles[new_top]} (score" in synthesis
        _, careplan = careplan_of(cli_bundle)
        notes = [n["text"] for n in careplan.get("note", [])]
        assert synthesis in notes
        first_item = html.unescape(careplan["text"]["div"].split("<li>", 1)[1].split("</li>")[0])
        assert titles[new_top] in first_item
        assert titles[old_top] not in first_item
    finally:
        await app.aclose()
