"""Prompt templates per step (package data) and the chat templates of the model families.

Every call of one plan starts with the same byte-identical prefix, ``shared.<version>.txt``:
one system text for every step and the patient record rendered once (a ``<canoe-record>`` JSON
block, every fact with its FHIR reference), so a server with automatic prefix caching (vLLM)
computes the record once per plan. The step's own part follows (``<step>.<version>.txt``, one
``=== task ===`` section with ``string.Template`` placeholders): the evidence block where the
step cites evidence (assess and consult put the same ``<canoe-evidence>`` block first, so they
share it too), the step's instructions, its inputs (``<canoe-input>``), the answer schema, and
last whatever differs between calls of the same step (the panel member of consult,
``<canoe-member>``), so that the members' calls share everything before it. The JSON blocks are
what a real LLM reads as the facts it may cite and what the test server's generator decodes.
This module renders text only; it must not call models or parse answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template
from types import MappingProxyType
from typing import Any, Literal, get_args

__all__ = [
    "CHAT_FAMILIES",
    "VERSIONS",
    "ChatFamily",
    "PromptTemplate",
    "apply_chat_template",
    "block",
    "input_block",
    "load_template",
    "parse_input_block",
    "prompt_schema",
    "stop_sequences",
]

# Template -> its current version (``<name>.<version>.txt``): a template's version moves when
# its text or the shape of its blocks does (consult v3 is v2's vote and argue in one call; v4
# keys its votes by problem id; v5 leaves the arguments unscored for the score step).
VERSIONS: Mapping[str, str] = MappingProxyType(
    {
        "shared": "v4",
        "assess": "v3",
        "panel": "v3",
        "consult": "v5",
        "score": "v1",
        "relate": "v3",
        "adjudicate": "v2",
        "arbitrate": "v2",
        "synthesize": "v2",
        "repair": "v2",
        "judge": "v1",  # the evaluation harness's judge (inference.judge), not a plan step
    }
)
ChatFamily = Literal["gemma", "llama3", "chatml", "none"]
CHAT_FAMILIES: tuple[str, ...] = get_args(ChatFamily)

# Matches a block written by ``block``; "<" never occurs inside one (escaped as \u003c).
_BLOCK = re.compile(
    r"<canoe-(?P<kind>[a-z]+)(?P<attrs>(?: [a-z]+=\"[^\"]*\")*)>\n"
    r"(?P<body>[^<]*)\n</canoe-(?P=kind)>"
)
_ATTR = re.compile(r' ([a-z]+)="([^"]*)"')
_SECTION = re.compile(r"^=== ([a-z]+) ===$", re.MULTILINE)
# An enum longer than this is shown to the model as "an id given above" (the ids are in the
# record or the inputs; guided decoding still gets the whole enum).
_ENUM_SHOWN = 8
_GIVEN_ABOVE = "an id given above"


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    step: str
    version: str
    sections: tuple[tuple[str, Template], ...]

    def render(self, **fields: str) -> dict[str, str]:
        """Section name -> text; unknown placeholders are an error, not silently kept."""
        return {name: t.substitute(fields) for name, t in self.sections}


@cache
def load_template(step: str, version: str | None = None) -> PromptTemplate:
    """The step's template, its current version (``VERSIONS``) unless ``version`` is given."""
    if version is None:
        if step not in VERSIONS:
            raise KeyError(f"no prompt template for {step!r}")
        version = VERSIONS[step]
    name = f"{step}.{version}.txt"
    try:
        text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise KeyError(f"no prompt template {name}") from exc
    parts = _SECTION.split(text)
    # parts: [comments, name, body, name, body, ...]
    if len(parts) < 3 or len(parts) % 2 == 0:
        raise ValueError(f"prompt template {name} has no === section ===")
    sections = tuple((parts[i], Template(parts[i + 1].strip())) for i in range(1, len(parts), 2))
    return PromptTemplate(step, version, sections)


def block(kind: str, data: Any, **attrs: str) -> str:
    """``data`` as one compact, key-sorted JSON line inside ``<canoe-KIND ...>`` tags."""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    body = body.replace("<", "\\u003c")  # keeps the closing tag unambiguous
    head = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f"<canoe-{kind}{head}>\n{body}\n</canoe-{kind}>"


def input_block(step: str, inputs: dict[str, Any], version: str) -> str:
    """The step's own inputs as one ``<canoe-input>`` block."""
    return block("input", inputs, step=step, version=version)


def parse_input_block(prompt: str) -> tuple[str, str, dict[str, Any]]:
    """(step, version, inputs) of a prompt: its ``<canoe-input>`` block merged with the shared
    blocks (``record`` -> "profile", ``evidence`` -> "evidence", ``member`` -> "member"; the
    step's own inputs win). ``ValueError`` if the prompt has no input block."""
    found: dict[str, tuple[dict[str, str], Any]] = {}
    for m in _BLOCK.finditer(prompt):
        found.setdefault(m.group("kind"), (dict(_ATTR.findall(m.group("attrs"))), m.group("body")))
    if "input" not in found:
        raise ValueError("prompt has no <canoe-input> block")
    attrs, body = found["input"]
    inputs = json.loads(body)
    if not isinstance(inputs, dict):
        raise ValueError("input block is not a JSON object")
    merged: dict[str, Any] = {}
    for kind, key in (("record", "profile"), ("evidence", "evidence"), ("member", "member")):
        if kind in found:
            merged[key] = json.loads(found[kind][1])
    return attrs.get("step", ""), attrs.get("version", ""), merged | inputs


def _one_schema(node: dict[str, Any], keyed: dict[str, Any]) -> bool:
    """An object keyed by ids (consult's votes): fixed properties, all required, none other,
    all of one schema."""
    first = next(iter(keyed.values()))
    return (
        node.get("additionalProperties") is False
        and node.get("required") == list(keyed)
        and all(v == first for v in keyed.values())
    )


def prompt_schema(schema: dict[str, Any]) -> str:
    """The answer schema as the prompt shows it: compact JSON of its properties, long ``enum``s
    replaced by a pointer to the ids given above, or by their own description where they have
    one, and an object keyed by ids (every key required, each of one schema) as its keys
    (``required``) and that schema once (``additionalProperties``). Guided decoding gets the
    full schema."""

    def shown(node: Any) -> Any:
        if isinstance(node, dict):
            if "enum" in node and len(node["enum"]) > _ENUM_SHOWN:
                return {"type": "string", "description": node.get("description", _GIVEN_ABOVE)}
            keyed = node.get("properties")
            if isinstance(keyed, dict) and keyed and _one_schema(node, keyed):
                rest = {k: v for k, v in node.items() if k != "properties"}
                return shown(rest | {"additionalProperties": next(iter(keyed.values()))})
            return {k: shown(v) for k, v in node.items()}
        if isinstance(node, list):
            return [shown(v) for v in node]
        return node

    return json.dumps(shown(schema["properties"]), separators=(",", ":"))


def apply_chat_template(family: str, system: str, user: str) -> str:
    """One prompt string in the model family's chat format, ending where the model answers.

    No begin-of-sequence token is written: the serving tokenizer (vLLM, llama.cpp, TRT-LLM)
    adds it, and a second one degrades answers.
    """
    if family == "gemma":
        # Gemma has no system role: its chat template puts the system text first in the user turn.
        return f"<start_of_turn>user\n{system}\n\n{user}<end_of_turn>\n<start_of_turn>model\n"
    if family == "llama3":
        return (
            f"<|start_header_id|>system<|end_header_id|>\n\n{system}<|eot_id|>"
            f"<|start_header_id|>user<|end_header_id|>\n\n{user}<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n"
        )
    if family == "chatml":
        return (
            f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            "<|im_start|>assistant\n"
        )
    if family == "none":
        return f"{system}\n\n{user}\n"
    raise ValueError(f"unknown chat template family {family!r}; one of {CHAT_FAMILIES}")


def stop_sequences(family: str) -> tuple[str, ...]:
    """End-of-turn markers to stop generation at, per family."""
    return {
        "gemma": ("<end_of_turn>",),
        "llama3": ("<|eot_id|>",),
        "chatml": ("<|im_end|>",),
        "none": (),
    }[family]
