"""Token accounting for the Triton prompts: a pluggable tokenizer and the prefix-cache arithmetic.

``load_tokenizer()`` picks the tokenizer of the configured model where it is installed (llama.cpp's
tokenizer of the Gemma 3 270M GGUF shipped by the ``llm`` extra, vocabulary only) and the word-
and-punctuation stand-in of the test models otherwise; ``Tokenizer.name`` says which.
``uncached`` is what a server with automatic prefix caching (vLLM) computes afresh: for each
call, its tokens minus the longest token prefix it shares with any earlier call of the plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Tokenizer", "common_prefix", "load_tokenizer", "stand_in", "uncached"]

_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class Tokenizer:
    name: str
    tokenize: Callable[[str], Sequence[Any]]

    def count(self, text: str) -> int:
        return len(self.tokenize(text))


def stand_in() -> Tokenizer:
    """Words and punctuation marks: the test models' stand-in (``triton_models.count_tokens``)."""
    return Tokenizer("stand-in (words and punctuation)", _TOKEN.findall)


def load_tokenizer(prefer: str = "auto") -> Tokenizer:
    """``prefer``: "auto" (the model's tokenizer when installed, else the stand-in), "gemma"
    (the model's or ``RuntimeError``) or "stand-in"."""
    if prefer == "stand-in":
        return stand_in()
    try:
        from llama_cpp import Llama

        from tests.support.llm_server import gemma_gguf_path

        llm = Llama(model_path=str(gemma_gguf_path()), vocab_only=True, verbose=False)
    except (ImportError, FileNotFoundError, OSError, ValueError) as exc:
        if prefer == "gemma":
            raise RuntimeError(f"the Gemma tokenizer is not available: {exc}") from exc
        return stand_in()

    def tokenize(text: str) -> Sequence[int]:
        # as the server counts a prompt: with its BOS, special tokens parsed
        tokens: list[int] = llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        return tokens

    return Tokenizer("gemma3-270m (llama.cpp, GGUF vocabulary)", tokenize)


def common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def uncached(calls: Sequence[Sequence[Any]]) -> list[int]:
    """Per call (in the order they were sent): tokens not covered by the longest prefix shared
    with any earlier call."""
    out = []
    for i, tokens in enumerate(calls):
        shared = max((common_prefix(tokens, calls[j]) for j in range(i)), default=0)
        out.append(len(tokens) - shared)
    return out
