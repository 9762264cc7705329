"""``canoe eval --metrics`` with its judge on a real Triton (pytriton's tritonserver, CPU,
loopback): the scripted judge (``tests.support.triton_models.judge_answer``) scores each plan
from what its prompt carried, so the report must hold exactly those scores for the plans the
harness made; a judge whose answers are unusable leaves every case unscored, saying why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inference.judge import DIMENSIONS, judge_request
from inference.prompts import parse_input_block
from inference.triton import TritonExperts, TritonSettings
from service.app import request_time
from service.backends import build_planner
from service.cli import main
from service.eval import Case, plan_cases
from service.metrics import load_labelled
from service.settings import load_settings
from service.text.summary import summary_text
from tests.conftest import REPO_ROOT
from tests.integration.conftest import _pytriton_or_skip
from tests.support.triton_models import ServerHandle, judge_answer, start_server

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SHIPPED = REPO_ROOT / "examples" / "metrics"
CREATED = "2026-11-30T09:00:00+00:00"
CASES = ("m02_af_warfarin_diazepam_falls", "m07_hypothyroid_statin_stable")


@pytest.fixture(scope="module")
def judge_server() -> Iterator[ServerHandle]:
    _pytriton_or_skip()
    try:
        handle = start_server(
            models={"canoe-judge": "judge", "canoe-invalid": "invalid"}, timeout_s=180
        )
    except RuntimeError as exc:
        pytest.skip(f"pytriton's tritonserver did not start here: {exc}")
    try:
        yield handle
    finally:
        handle.stop()


def _labels(tmp: Path) -> Path:
    """Two of the shipped cases, as a label file of their own (paths made absolute)."""
    body = json.loads((SHIPPED / "metrics.json").read_text(encoding="utf-8"))
    cases = [c for c in body["cases"] if c["name"] in CASES]
    for c in cases:
        c["bundle"] = str(SHIPPED / c["bundle"])
        c["reference"] = str(SHIPPED / c["reference"])
    (tmp / "metrics.json").write_text(json.dumps(body | {"cases": cases}), encoding="utf-8")
    return tmp


def _expected() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Per case, what the scripted judge answers for the harness's plan (with the reference
    beside it) and for the reference plan on its own: its prompts rendered here from a plan
    made here, as the harness makes it."""
    settings = load_settings(backend="embedded")
    labelled = {c.name: c for c in load_labelled(SHIPPED) if c.name in CASES}
    cases = [Case(n, c.bundle, (), ()) for n, c in labelled.items()]
    render = TritonExperts(TritonSettings(chat_template="none")).render
    out = {}
    planner = build_planner(settings)
    for p in plan_cases(cases, planner, settings, created=CREATED, received=request_time(CREATED)):
        plan, ref = p.plan, labelled[p.case.name].reference
        generated = summary_text(plan.deliberation, plan.evaluation)
        answers = [
            judge_answer(
                parse_input_block(render(judge_request(plan.profile, plan.evidence, g, r)))[2]
            )
            for g, r in ((generated, ref), (ref, None))
        ]
        out[p.case.name] = (
            {d: a["score"] for d, a in answers[0].items()},
            {d: a["score"] for d, a in answers[1].items()},
        )
    return out


def _run(
    server: ServerHandle, model: str, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    monkeypatch.setenv("CANOE_TRITON_URL", server.url)
    monkeypatch.setenv("CANOE_BACKEND", "embedded")  # plans embedded, judged on Triton
    report = folder / "report.json"
    args = ["eval", str(folder), "--metrics", "--created", CREATED, "--report", str(report)]
    assert main([*args, "--judge-model", model]) == 0
    result: dict[str, Any] = json.loads(report.read_text())
    return result


def test_the_judge_scores_what_the_model_answered_for_each_plan(
    judge_server: ServerHandle, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    report = _run(judge_server, "canoe-judge", _labels(tmp_path), monkeypatch)
    expected = _expected()
    judge = report["judge"]
    assert (judge["status"], judge["model"], judge["judged"], judge["failed"]) == (
        "run",
        "canoe-judge",
        2,
        0,
    )
    assert judge["calls"] == 4 and judge["tokens"]["input"] > 0  # plan and reference, each
    for case in report["per_case"]:
        on_plan, on_reference = expected[case["name"]]
        assert {d: case["judge"][d] for d in DIMENSIONS} == on_plan
        assert {d: case["judge_reference"][d] for d in DIMENSIONS} == on_reference
        assert case["judge"]["average"] == sum(on_plan.values()) / 4
    means = {d: sum(expected[n][0][d] for n in CASES) / 2 for d in DIMENSIONS}
    # the report rounds means to two decimals
    wanted = means | {"average": sum(means.values()) / 4}
    assert judge["mean"] == pytest.approx(wanted, abs=0.005)
    labels = {c.name: c.reference_rubric for c in load_labelled(SHIPPED) if c.name in CASES}
    gap = judge["reference_vs_labels"]
    assert gap["cases"] == 2
    for i, d in enumerate(DIMENSIONS):
        diffs = [abs(expected[n][1][d] - labels[n][i]) for n in CASES]  # type: ignore[index]
        assert gap["mean_abs_difference"][d] == pytest.approx(sum(diffs) / 2)


def test_an_unusable_judge_leaves_every_case_unscored_and_says_why(
    judge_server: ServerHandle, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    report = _run(judge_server, "canoe-invalid", _labels(tmp_path), monkeypatch)
    judge = report["judge"]
    assert (judge["judged"], judge["failed"]) == (0, 2)
    assert judge["mean"]["average"] is None
    for case in report["per_case"]:
        assert case["judge"] is None and "unusable answer" in case["judge_error"]
