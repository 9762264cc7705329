"""Model calls and tokens per plan and per step kind, as the Triton backend would send them.

Plans a fixture with the embedded experts standing in for the models (``Counting`` wraps them at
``Experts.run``) and renders, for every call the pipeline makes, the exact prompt the Triton
backend would send and the JSON answer it would parse. Per step and per plan it reports calls,
input tokens, *uncached* input tokens (what a server with automatic prefix caching computes
afresh: each call's tokens minus the longest token prefix shared with any earlier call of the
plan) and output tokens. Tokens are counted with the configured model's tokenizer where it is
installed (llama.cpp's, for the Gemma 3 270M GGUF of the ``llm`` extra), else with the test
models' stand-in (words and punctuation); the report names the one used. Run:

    .venv/bin/python -m tests.benchmarks.triton_costs [--tokenizer auto|gemma|stand-in] \\
        adalberto_hartmann josue_sipes adan_portillo

Not a test: the numbers go in the issue notes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import defaultdict
from typing import Any

from fhir_mapping.ingest import ingest
from inference import _triton_steps as steps
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.triton import TritonExperts, TritonSettings
from service.pipeline import Planner
from tests.conftest import fixture_bundle
from tests.support.token_costs import Tokenizer, load_tokenizer, uncached
from tests.support.triton_models import encode_answer

RENDERER = TritonExperts(TritonSettings())


class Counting:
    """Experts that answer with the embedded backend and keep what Triton would be sent."""

    name = "counting"

    def __init__(self) -> None:
        self.inner = EmbeddedExperts()
        self.sent: list[tuple[str, str, str]] = []  # (step, prompt, answer) in call order

    async def run(self, step: Any, ctx: Any) -> Any:
        req = steps.request_for(step)
        prompt = RENDERER.render(req)  # rendered when sent, before the answer comes back
        index = len(self.sent)
        self.sent.append((req.step, prompt, ""))
        result = await self.inner.run(step, ctx)
        self.sent[index] = (
            req.step,
            prompt,
            json.dumps(encode_answer(req.step, result, req.aliases)),
        )
        return result

    async def is_ready(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None


async def costs(name: str, tok: Tokenizer) -> dict[str, Any]:
    profile = ingest(fixture_bundle(name).read_bytes())
    counting = Counting()
    await Planner(counting, EvidenceBase.load()).plan(
        profile, plan_id="costs", created="2026-01-01T00:00Z"
    )
    tokens = [tok.tokenize(prompt) for _, prompt, _ in counting.sent]
    fresh = uncached(tokens)
    per_step: dict[str, dict[str, int]] = defaultdict(
        lambda: {"calls": 0, "input": 0, "uncached": 0, "output": 0}
    )
    for (step, _, answer), t, u in zip(counting.sent, tokens, fresh, strict=True):
        row = per_step[step]
        row["calls"] += 1
        row["input"] += len(t)
        row["uncached"] += u
        row["output"] += tok.count(answer)
    total = {
        k: sum(r[k] for r in per_step.values()) for k in ("calls", "input", "uncached", "output")
    }
    return {"fixture": name, "tokenizer": tok.name, "per_step": dict(per_step), "total": total}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--tokenizer", choices=("auto", "gemma", "stand-in"), default="auto")
    p.add_argument("fixtures", nargs="*", default=["adalberto_hartmann"])
    args = p.parse_args()
    tok = load_tokenizer(args.tokenizer)
    print(f"tokenizer: {tok.name}")
    for name in args.fixtures:
        r = asyncio.run(costs(name, tok))
        print(f"\n{name}")
        print(f"  {'step':12s} {'calls':>6s} {'input':>8s} {'uncached':>9s} {'output':>8s}")
        for step, v in [*r["per_step"].items(), ("total", r["total"])]:
            print(
                f"  {step:12s} {v['calls']:6d} {v['input']:8d} {v['uncached']:9d} {v['output']:8d}"
            )


if __name__ == "__main__":
    main()
