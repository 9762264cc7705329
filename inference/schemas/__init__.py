"""Per-step JSON schemas of the answers a Triton-served LLM must give (package data).

One file per step and version (``<step>.<version>.json``, ``VERSIONS``), JSON Schema 2020-12, strict
(``additionalProperties: false``, every field required) so that the same document serves guided
decoding on the server and validation on the client. ``inference._triton_steps`` narrows them per
call (ids the answer may cite become ``enum``s). This package only loads files.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

__all__ = ["STEPS", "VERSIONS", "load"]

# Step -> the version of its answer schema (a step's version moves when its answer's shape does;
# consult v3 is v2's vote and argue answers in one; v4 keys the votes by problem id, so
# guided decoding writes each problem once; v5 drops tau, which the score step answers).
VERSIONS: Mapping[str, str] = MappingProxyType(
    {
        "assess": "v3",
        "panel": "v2",
        "consult": "v5",
        "score": "v1",
        "relate": "v2",
        "adjudicate": "v2",
        "arbitrate": "v2",
        "synthesize": "v2",
        "judge": "v1",  # the evaluation harness's judge (inference.judge), not a plan step
    }
)
STEPS: tuple[str, ...] = tuple(VERSIONS)


@cache
def _read(step: str, version: str) -> str:
    return resources.files(__name__).joinpath(f"{step}.{version}.json").read_text(encoding="utf-8")


def load(step: str, version: str | None = None) -> dict[str, Any]:
    """A fresh (mutable) copy of the step's answer schema (its current version by default)."""
    if step not in VERSIONS:
        raise KeyError(f"no answer schema for step {step!r}")
    return copy.deepcopy(json.loads(_read(step, version or VERSIONS[step])))
