"""The sentence that says how a plan is ranked is the same in every view, each read over its
real transport: the CLI as a subprocess (text summary, CarePlan narrative, Communication) and
the CDS card from the HTTP app. The review page is read over its server in
tests/review/test_ranking_label.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from service.text.words import ranking_label
from tests.cds_hooks.conftest import Servers, cds_fixture

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "examples" / "fixtures" / "fhir" / "trey_berge_f46d1649.json"
CREATED = "2026-11-30T09:00:00+00:00"


def _cli(*extra: str) -> str:
    argv = [sys.executable, "-m", "service.cli", "plan", str(BUNDLE), "--created", CREATED]
    done = subprocess.run(
        [*argv, "--no-progress", *extra], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_ranking_label_is_one_sentence_in_the_cli_careplan_communication_and_card(
    servers: Servers,
) -> None:
    label = ranking_label()
    text = _cli("--format", "text")
    bundle = json.loads(_cli("--format", "fhir"))
    resources = [e["resource"] for e in bundle["entry"]]
    (careplan,) = [r for r in resources if r["resourceType"] == "CarePlan"]
    patient = json.loads(_cli("--format", "fhir", "--for", "patient"))
    communication = patient if patient["resourceType"] == "Communication" else None
    if communication is None:
        (communication,) = [
            e["resource"]
            for e in patient["entry"]
            if e["resource"]["resourceType"] == "Communication"
        ]
    r = servers.post(
        "careplan-patient-view", cds_fixture("requests", "patient-view_trey_berge.json")
    )
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    views = {
        "cli text": text,
        "CarePlan narrative": careplan["text"]["div"],
        "Communication": json.dumps(communication["payload"]),
        "CDS card": card["detail"],
    }
    missing = [
        name
        for name, body in views.items()
        if f"{label}." not in body and f"**{label}**" not in body
    ]
    assert not missing, f"{label!r} not said by {missing}"
    # no view keeps the label the timeframes replaced
    assert not [name for name, body in views.items() if "Urgent" in body]
