"""Model calls and tokens per plan, per step kind: CAMP/CANOE's schedule against a naive one.

Plans a fixture with the embedded experts standing in for the models, and renders, for every call
the pipeline makes, the exact prompt the Triton backend would send and the JSON answer it would
parse; tokens are counted with the test server's tokenizer stand-in (words and punctuation, an
approximation of a real tokenizer). The naive schedule scores each argument in a call of its own
(on top of writing it) and adjudicates every opposing pair, not only the near-tied ones. Run:

    .venv/bin/python -m tests.benchmarks.triton_costs adalberto_hartmann josue_sipes adan_portillo

Not a test: the numbers go in the issue notes.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from typing import Any

from fhir_mapping.ingest import ingest
from inference import _triton_steps as steps
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.protocol import (
    Adjudicate,
    Argue,
    ArgumentDraft,
    Assess,
    CandidateOption,
    PanelMember,
)
from inference.triton import TritonExperts, TritonSettings
from service.pipeline import Planner
from tests.conftest import fixture_bundle
from tests.support.triton_models import count_tokens, encode_answer

RENDERER = TritonExperts(TritonSettings())


class Counting:
    """Experts that answer with the embedded backend and count what Triton would be sent."""

    name = "counting"

    def __init__(self) -> None:
        self.inner = EmbeddedExperts()
        self.stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        self.arguments: list[ArgumentDraft] = []
        self.options: dict[str, CandidateOption] = {}
        self.evidence: tuple[Any, ...] = ()

    async def run(self, step: Any, ctx: Any) -> Any:
        result = await self.inner.run(step, ctx)
        req = steps.request_for(step)
        s = self.stats[req.step]
        s[0] += 1
        s[1] += count_tokens(RENDERER.render(req))
        s[2] += count_tokens(json.dumps(encode_answer(req.step, result)))
        if isinstance(step, Assess):
            self.evidence = step.evidence
            self.options = {o.id: o for o in result.options}
        if isinstance(step, Argue):
            self.arguments += list(result)
        return result

    async def is_ready(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None


async def costs(name: str) -> dict[str, Any]:
    evidence = EvidenceBase.load()
    profile = ingest(fixture_bundle(name).read_bytes())
    counting = Counting()
    await Planner(counting, evidence).plan(profile, plan_id="costs", created="2026-01-01T00:00Z")
    ours = {k: {"calls": v[0], "input": v[1], "output": v[2]} for k, v in counting.stats.items()}

    # Naive: one extra scoring call per argument (the role's argue prompt for that one option),
    # and every opposing pair of an option adjudicated.
    scoring_in = sum(
        count_tokens(
            RENDERER.render(
                steps.request_for(
                    Argue(
                        profile,
                        PanelMember(a.role, ""),
                        (counting.options[a.option_id],),
                        counting.evidence,
                    )
                )
            )
        )
        for a in counting.arguments
    )
    by_option: dict[str, list[ArgumentDraft]] = defaultdict(list)
    for a in counting.arguments:
        by_option[a.option_id].append(a)
    pairs = [
        (oid, s, t)
        for oid, args in by_option.items()
        for s in args
        if s.stance == "support"
        for t in args
        if t.stance == "attack"
    ]
    adjudicate_in = sum(
        count_tokens(
            RENDERER.render(
                steps.request_for(
                    Adjudicate(profile, counting.options[oid], ((s, t),), counting.evidence)
                )
            )
        )
        for oid, s, t in pairs
    )
    adjudicate_out = ours.get("adjudicate", {"calls": 0, "output": 0})
    per_verdict_out = (
        adjudicate_out["output"] / adjudicate_out["calls"] if adjudicate_out["calls"] else 40
    )
    naive = {k: dict(v) for k, v in ours.items()}
    naive["score"] = {
        "calls": len(counting.arguments),
        "input": scoring_in,
        "output": 8 * len(counting.arguments),
    }
    naive["adjudicate"] = {
        "calls": len(pairs),
        "input": adjudicate_in,
        "output": round(per_verdict_out * len(pairs)),
    }
    total = {
        label: {k: sum(step[k] for step in table.values()) for k in ("calls", "input", "output")}
        for label, table in (("ours", ours), ("naive", naive))
    }
    return {"fixture": name, "per_step": ours, "naive_per_step": naive, "total": total}


def main() -> None:
    names = sys.argv[1:] or ["adalberto_hartmann"]
    for name in names:
        r = asyncio.run(costs(name))
        print(f"\n{name}")
        print(f"  {'step':12s} {'calls':>6s} {'input':>8s} {'output':>8s}")
        for step, v in r["per_step"].items():
            print(f"  {step:12s} {v['calls']:6d} {v['input']:8d} {v['output']:8d}")
        o, n = r["total"]["ours"], r["total"]["naive"]
        print(f"  {'total':12s} {o['calls']:6d} {o['input']:8d} {o['output']:8d}")
        print(
            f"  {'naive total':12s} {n['calls']:6d} {n['input']:8d} {n['output']:8d}"
            f"   saving: {1 - o['calls'] / n['calls']:.0%} calls, "
            f"{1 - o['input'] / n['input']:.0%} input tokens"
        )


if __name__ == "__main__":
    main()
