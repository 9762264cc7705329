"""Per-step JSON schemas of the answers a Triton-served LLM must give (package data).

One file per step and version (``<step>.v2.json``), JSON Schema 2020-12, strict
(``additionalProperties: false``, every field required) so that the same document serves guided
decoding on the server and validation on the client. ``inference._triton_steps`` narrows them per
call (ids the answer may cite become ``enum``s). This package only loads files.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["SCHEMA_VERSION", "STEPS", "load"]

SCHEMA_VERSION = "v2"
STEPS: tuple[str, ...] = (
    "assess",
    "panel",
    "vote",
    "argue",
    "relate",
    "adjudicate",
    "arbitrate",
    "synthesize",
)


@cache
def _read(step: str, version: str) -> str:
    return resources.files(__name__).joinpath(f"{step}.{version}.json").read_text(encoding="utf-8")


def load(step: str, version: str = SCHEMA_VERSION) -> dict[str, Any]:
    """A fresh (mutable) copy of the step's answer schema."""
    if step not in STEPS:
        raise KeyError(f"no answer schema for step {step!r}")
    return copy.deepcopy(json.loads(_read(step, version)))
