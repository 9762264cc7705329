"""Prompt templates per step (package data) and the chat templates of the model families.

One versioned file per step (``<step>.v1.txt``): comment lines, then a ``=== system ===`` and a
``=== user ===`` section with ``string.Template`` placeholders. Every prompt carries the step
inputs twice over in one form: a machine-readable JSON block between ``<canoe-input>`` tags, which
is what a real LLM reads as the facts it may cite and what the test server's generator decodes.
This module renders text only; it must not call models or parse answers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template
from typing import Any, Literal

__all__ = [
    "CHAT_FAMILIES",
    "INPUT_BLOCK",
    "PROMPT_VERSION",
    "ChatFamily",
    "PromptTemplate",
    "apply_chat_template",
    "input_block",
    "load_template",
    "parse_input_block",
    "stop_sequences",
]

PROMPT_VERSION = "v1"
ChatFamily = Literal["gemma", "llama3", "chatml", "none"]
CHAT_FAMILIES: tuple[str, ...] = ("gemma", "llama3", "chatml", "none")

# Matches the block written by ``input_block``; "<" never occurs inside it (escaped as \u003c).
INPUT_BLOCK = re.compile(
    r'<canoe-input step="(?P<step>[a-z]+)" version="(?P<version>v\d+)">\n(?P<body>[^<]*)\n'
    r"</canoe-input>"
)

_SECTION = re.compile(r"^=== (system|user) ===$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    step: str
    version: str
    system: Template
    user: Template

    def render(self, **fields: str) -> tuple[str, str]:
        """(system, user) text; unknown placeholders are an error, not silently kept."""
        return self.system.substitute(fields), self.user.substitute(fields)


@cache
def load_template(step: str, version: str = PROMPT_VERSION) -> PromptTemplate:
    name = f"{step}.{version}.txt"
    try:
        text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise KeyError(f"no prompt template {name}") from exc
    parts = _SECTION.split(text)
    # parts: [comments, "system", body, "user", body]
    if len(parts) != 5 or parts[1] != "system" or parts[3] != "user":
        raise ValueError(f"prompt template {name} needs a system then a user section")
    return PromptTemplate(step, version, Template(parts[2].strip()), Template(parts[4].strip()))


def input_block(step: str, inputs: dict[str, Any], version: str = PROMPT_VERSION) -> str:
    """The step inputs as one compact JSON line inside ``<canoe-input>`` tags."""
    body = json.dumps(inputs, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    body = body.replace("<", "\\u003c")  # keeps the closing tag unambiguous
    return f'<canoe-input step="{step}" version="{version}">\n{body}\n</canoe-input>'


def parse_input_block(prompt: str) -> tuple[str, str, dict[str, Any]]:
    """(step, version, inputs) of the first input block in a prompt; ``ValueError`` if none."""
    m = INPUT_BLOCK.search(prompt)
    if m is None:
        raise ValueError("prompt has no <canoe-input> block")
    inputs = json.loads(m.group("body"))
    if not isinstance(inputs, dict):
        raise ValueError("input block is not a JSON object")
    return m.group("step"), m.group("version"), inputs


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
