"""Every example in examples/ runs here: the contestation Tasks (in step with their generator,
valid R4, each applied to the fixture plan with the effect it names), the grpcurl scripts and
the Python client examples against a real loopback server, and the CDS Hooks walk-through
against a real ``canoe serve``."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fhir_mapping.careplan import deliberation_from_bundle
from service.core import evaluate, to_document
from tests.conftest import CDS_FIXTURES, REPO_ROOT, fixture_bundle
from tests.examples.make_tasks import TASKS_DIR, dumps, fixture_plan, render
from tests.fhir_mapping.fhir_checks import assert_valid
from tests.service.conftest import grpcurl_binary, serving
from tests.service.test_http_side import _free_port
from tests.support.contest import contest_bundle

EXAMPLES = REPO_ROOT / "examples"
RECORDED = "2026-11-30T11:00:00+00:00"
BUNDLE = fixture_bundle("adalberto")


# --------------------------------------------------------------------------- Tasks


def test_committed_tasks_are_what_the_generator_writes() -> None:
    rendered = render()
    assert sorted(p.name for p in TASKS_DIR.glob("*.json")) == sorted(rendered)
    for name, res in rendered.items():
        assert (TASKS_DIR / name).read_text() == dumps(res), (
            f"{name} drifted: run .venv/bin/python -m tests.examples.make_tasks"
        )


def _apply(name: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(the Task file, the new plan Bundle, the new deliberation document)."""
    plan, _ = fixture_plan()
    tasks = json.loads((TASKS_DIR / name).read_text())
    out = contest_bundle(plan, tasks, recorded=RECORDED)
    d = deliberation_from_bundle(out)
    return tasks, out, to_document(d, evaluate(d))


def _node(doc: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(n for o in doc["options"] for n in o["nodes"] if n["id"] == node_id)


def _option(doc: dict[str, Any], option_id: str) -> dict[str, Any]:
    return next(o for o in doc["options"] if o["id"] == option_id)


def _inputs(task: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for i in task["input"]:
        value = next(v for k, v in i.items() if k.startswith("value"))
        out[i["type"]["coding"][0]["code"]] = value
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in TASKS_DIR.glob("*.json")))
def test_each_example_is_valid_fhir(name: str) -> None:
    assert_valid(json.loads((TASKS_DIR / name).read_text()))


def test_accept_pins_the_argument() -> None:
    task, _, doc = _apply("accept.json")
    assert _node(doc, _inputs(task)["target"])["status"] == "accepted"
    assert doc["version"] == 2


def test_reject_removes_the_argument() -> None:
    task, _, doc = _apply("reject.json")
    assert _node(doc, _inputs(task)["target"])["status"] == "rejected"


def test_edit_changes_strength_and_text() -> None:
    task, _, doc = _apply("edit.json")
    got, node = _inputs(task), _node(doc, _inputs(task)["target"])
    assert node["tau"] == got["strength"] and node["tau_source"] == "human"
    assert node["text"] == got["text"]


def test_add_puts_a_human_argument_on_the_option() -> None:
    task, _, doc = _apply("add.json")
    got = _inputs(task)
    node = _node(doc, f"human-{task['id']}")
    assert node["origin"] == "human" and node["stance"] == got["stance"]
    assert node["tau"] == got["strength"]
    assert node in _option(doc, got["target"])["nodes"]


def test_decide_is_the_human_decision() -> None:
    task, _, doc = _apply("decide.json")
    got = _inputs(task)
    option = _option(doc, got["target"])
    assert option["decision"] == got["decision"] and option["decided_by"] == "human"


def test_the_transaction_bundle_applies_all_of_its_tasks_at_once() -> None:
    bundle, out, doc = _apply("transaction-bundle.json")
    assert doc["version"] == 2, "one new version for the whole Bundle"
    applied = [e["resource"] for e in out["entry"] if e["resource"]["resourceType"] == "Task"]
    assert [t["id"] for t in applied] == [e["resource"]["id"] for e in bundle["entry"]]
    assert {t["status"] for t in applied} == {"completed"}
    actions = [c["action"] for c in doc["contestations"]]
    assert actions == ["reject", "add", "decide"]


# --------------------------------------------------------------------------- grpcurl


def _tools() -> dict[str, str]:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed: the grpcurl examples need it")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    env["GRPCURL"] = str(grpcurl_binary())
    return env


def _sh(env: dict[str, str], script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXAMPLES / script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


async def test_grpcurl_scripts_wrap_and_unwrap_base64(tmp_path: Path) -> None:
    env = _tools()
    async with serving(tmp_path) as h:
        env["CANOE_ADDR"] = f"127.0.0.1:{h.port}"

        async def sh(script: str, *args: str) -> subprocess.CompletedProcess[str]:
            return await asyncio.to_thread(_sh, env, f"grpcurl/{script}", *args)

        plan = await sh("plan.sh", str(BUNDLE))
        assert plan.returncode == 0, plan.stderr
        reply = json.loads(plan.stdout)
        plan_id = reply["plan_id"]
        assert reply["careplan_bundle_json"]["resourceType"] == "Bundle", "decoded, not base64"

        doc = await sh("deliberation.sh", plan_id)
        assert doc.returncode == 0, doc.stderr
        assert json.loads(doc.stdout)["plan_id"] == plan_id

        # The example Bundle of Tasks, re-aimed at this plan by the script.
        contest = await sh("contest.sh", plan_id, "1", str(TASKS_DIR / "transaction-bundle.json"))
        assert contest.returncode == 0, contest.stderr
        answer = json.loads(contest.stdout)
        assert answer["version"] == 2
        assert answer["tasks_bundle_json"]["entry"][0]["resource"]["status"] == "completed"
        assert answer["careplan_bundle_json"]["resourceType"] == "Bundle"

        # The same example on another plan of the same bundle: the ids are that plan's own.
        other = json.loads((await sh("plan.sh", str(BUNDLE))).stdout)["plan_id"]
        again = await sh("contest.sh", other, "1", str(TASKS_DIR / "transaction-bundle.json"))
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["version"] == 2

        versions = await sh("versions.sh", plan_id)
        assert [v["version"] for v in json.loads(versions.stdout)["versions"]] == [1, 2]
        by_patient = await sh("versions.sh", "--patient", doc_patient(doc.stdout))
        assert by_patient.returncode == 0 and plan_id in by_patient.stdout

        v1 = await sh("deliberation.sh", plan_id, "1")
        assert json.loads(v1.stdout)["version"] == 1

        stream = await sh("stream_plan.sh", str(BUNDLE))
        assert stream.returncode == 0, stream.stderr
        events = [json.loads(x) for x in _json_values(stream.stdout)]
        assert events[0]["progress"]["stage"] == "ingest"
        assert events[-1]["plan"]["careplan_bundle_json"]["resourceType"] == "Bundle"

        # A refusal: the status and the OperationOutcome, decoded, on stderr.
        stale = await sh("contest.sh", plan_id, "1", str(TASKS_DIR / "reject.json"))
        assert stale.returncode == 2, "the CLI's bad-input code, not grpcurl's 64 + 9"
        err = json.loads(stale.stderr)
        assert err["code"] == 9  # FAILED_PRECONDITION
        assert err["operationOutcome"]["resourceType"] == "OperationOutcome"
        assert err["operationOutcome"]["issue"][0]["code"] == "conflict"

        # Not found is a refusal (2), never the CLI's "backend unavailable" (69)...
        unknown = await sh("deliberation.sh", "0" * 32)
        assert unknown.returncode == 2, unknown.stderr
        assert json.loads(unknown.stderr)["code"] == 5  # NOT_FOUND
    # ... which is a service that cannot be reached.
    env["CANOE_ADDR"] = f"127.0.0.1:{_free_port()}"
    gone = await asyncio.to_thread(_sh, env, "grpcurl/versions.sh", "0" * 32)
    assert gone.returncode == 69, gone.stderr


def doc_patient(deliberation_json: str) -> str:
    return str(json.loads(deliberation_json)["patient_ref"])


def _json_values(text: str) -> list[str]:
    """Split concatenated pretty-printed JSON values (jq's output of a stream)."""
    decoder, out, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        value, end = decoder.raw_decode(text, i)
        out.append(json.dumps(value))
        i = end
    return out


# --------------------------------------------------------------------------- Python


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=180, check=False
    )


async def test_python_client_examples(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        target = f"127.0.0.1:{h.port}"
        sync = await asyncio.to_thread(
            _python, str(EXAMPLES / "python" / "plan_sync.py"), str(BUNDLE), target
        )
        assert sync.returncode == 0, sync.stderr
        assert "contested -> v2" in sync.stdout and "v2 contested current=True" in sync.stdout

        with_tasks = await asyncio.to_thread(
            _python,
            str(EXAMPLES / "python" / "plan_sync.py"),
            str(BUNDLE),
            target,
            str(TASKS_DIR / "transaction-bundle.json"),
        )
        assert with_tasks.returncode == 0, with_tasks.stderr
        assert with_tasks.stdout.count("'status': 'completed'") == 3
        twice = await asyncio.to_thread(
            _python,
            str(EXAMPLES / "python" / "plan_sync.py"),
            str(BUNDLE),
            target,
            str(TASKS_DIR / "transaction-bundle.json"),
        )
        assert twice.returncode == 0, twice.stderr  # the same example Tasks, a second plan

        streamed = await asyncio.to_thread(
            _python, str(EXAMPLES / "python" / "plan_async.py"), str(BUNDLE), target
        )
        assert streamed.returncode == 0, streamed.stderr
        assert "ingest" in streamed.stdout and "activities" in streamed.stdout

    # Nothing listening: the client's error, with its outcome, and exit 1.
    down = await asyncio.to_thread(
        _python, str(EXAMPLES / "python" / "plan_sync.py"), str(BUNDLE), target
    )
    assert down.returncode == 1 and "BackendUnavailable" in down.stderr


# --------------------------------------------------------------------------- CDS Hooks


def test_cds_hooks_walkthrough(tmp_path: Path) -> None:
    if shutil.which("jq") is None or shutil.which("curl") is None:
        pytest.skip("jq and curl are needed by the walk-through script")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        CANOE_HTTP_PORT=str(_free_port()),
        CANOE_GRPC_PORT=str(_free_port()),
        CANOE_GRPC_HOST="127.0.0.1",
        CDS_REQUESTS=str(CDS_FIXTURES / "requests"),
    )
    if shutil.which("canoe", path=env["PATH"]) is None:
        pytest.skip("the canoe command is not installed in this interpreter's environment")
    out = subprocess.run(
        [str(EXAMPLES / "cds-hooks" / "walkthrough.sh"), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr + _log(tmp_path)
    assert "careplan-order-sign (order-sign)" in out.stdout
    assert "diphenhydramine" in out.stdout.lower()
    assert json.loads((tmp_path / "feedback-answer.json").read_text()) == {
        "recorded": 1,
        "contested": 1,
    }
    (card,) = json.loads((tmp_path / "patient-view.json").read_text())["cards"]
    assert card["source"]["label"]


def test_cds_hooks_walkthrough_refuses_a_taken_port_naming_it(tmp_path: Path) -> None:
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
        env.update(CANOE_HTTP_PORT=str(port), CANOE_GRPC_PORT=str(_free_port()))
        out = subprocess.run(
            [str(EXAMPLES / "cds-hooks" / "walkthrough.sh"), str(tmp_path / "work")],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"port {port} (CANOE_HTTP_PORT) is already taken" in out.stderr
    assert out.stdout == "" and not (tmp_path / "work").exists(), "nothing was started"


def _log(tmp_path: Path) -> str:
    log = tmp_path / "serve.log"
    return log.read_text()[-3000:] if log.exists() else ""
