"""The test suite's Triton models: scripted experts and fault modes behind the real server.

``tests.support.llm_server`` serves the tensor contract; this module registers the behaviours the
tests (and compose.yaml's CPU Triton) serve through it:

- ``expert``: reads the ``<canoe-input>`` block from the prompt, runs
  ``inference.embedded.EmbeddedExperts`` on it and answers with the JSON an LLM would write
  (``encode_answer``), cut to the call's ``max_tokens`` by a word tokenizer stand-in;
- ``expert_plain``: the same on the plain (TensorRT-LLM-like) contract;
- fault modes wrapping ``expert``: ``sleepy`` (``--latency`` seconds first), ``slow`` (an hour),
  ``invalid`` (broken JSON), ``out_of_range`` (every bounded value out of range),
  ``truncate_once`` (half an answer unless the prompt is a repair), ``invalid_pharmacist``
  (broken JSON for the pharmacist's calls, the expert's answer for everyone else's),
  ``panel_without_gp`` (the expert's panel less its first member, the GP, call and repair alike),
  ``garbage_score`` (words where the score step's numbers belong, call and repair alike; the
  expert's answer to every other step);
- ``judge``: the evaluation harness's judge, scripted: CANOE's four scores computed from what
  the prompt carries (``judge_answer``), so a test knows what a plan must be scored.

``python -m tests.support.triton_models [--latency S] <tests.support.llm_server options>`` runs the
server with them (``DEFAULT_MODELS`` unless ``--models``); ``start_server`` does that on free
loopback ports and waits until it is ready.
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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from inference._triton_codec import decode
from inference._triton_record import CODED, SYSTEM_NAMES, Aliases, record_refs
from inference.prompts import parse_input_block
from inference.protocol import (
    STRENGTH_DIMENSIONS,
    Adjudicate,
    Arbitrate,
    ArgumentDraft,
    AssemblePanel,
    Assess,
    Assessment,
    CallContext,
    CandidateOption,
    CandidateProblem,
    Consult,
    Consultation,
    EvidenceDoc,
    PanelMember,
    ProblemVote,
    Relate,
    Score,
    Step,
    Synthesize,
)
from service.record.profile import PatientProfile
from tests.support import llm_server
from tests.support.llm_server import LLM_MODEL, Generated, GenerationRequest

__all__ = [
    "DEFAULT_MODELS",
    "LLM_MODEL",
    "PLAIN_MODEL",
    "ServerHandle",
    "count_tokens",
    "encode_answer",
    "expert_answer",
    "free_port",
    "judge_answer",
    "main",
    "profile_from_record",
    "register",
    "start_server",
]

PLAIN_MODEL = "canoe-plain"
# model name -> behaviour; every test server serves these.
DEFAULT_MODELS: dict[str, str] = {
    "canoe-agent": "expert",
    "canoe-adjudicator": "expert",
    "canoe-sleepy": "sleepy",
    "canoe-slow": "slow",
    "canoe-invalid": "invalid",
    "canoe-out-of-range": "out_of_range",
    "canoe-truncate-once": "truncate_once",
    "canoe-invalid-pharmacist": "invalid_pharmacist",
    "canoe-panel-without-gp": "panel_without_gp",
    "canoe-judge": "judge",
    "canoe-garbage-score": "garbage_score",
    PLAIN_MODEL: "expert_plain",
}

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


# -- typed answers -> the JSON an LLM would write -----------------------------------------------


def encode_answer(step: str, result: Any, aliases: Aliases | None = None) -> dict[str, Any]:
    """The answer JSON for a typed step result (every schema field present): the inverse of
    ``inference._triton_steps``' decoders. ``aliases``: the request's (``StepRequest.aliases``),
    to name facts and ids as the prompt does, for a result that names them in full; the scripted
    experts need none, they read the record with its aliases and answer with them."""
    answer = _answer(step, result)
    if aliases is None:
        return answer
    shown: dict[str, Any] = aliases.shorten(answer)
    if step == "consult":  # votes are keyed by problem id: the keys are ids too
        shown["votes"] = {aliases.shorten(k): v for k, v in shown["votes"].items()}
    if step == "score":  # scores are keyed by argument id
        shown["scores"] = {aliases.shorten(k): v for k, v in shown["scores"].items()}
    return shown


def _answer(step: str, result: Any) -> dict[str, Any]:
    if step == "assess":
        a: Assessment = result
        return {
            "complexity": a.complexity,
            "dimensions": list(a.dimensions),
            "problems": [
                {
                    "id": p.id,
                    "display": p.display,
                    "refs": list(p.refs),
                    "initial": p.initial,
                    "rationale": p.rationale,
                }
                for p in a.problems
            ],
            "options": [
                {
                    "id": o.id,
                    "title": o.title,
                    "category": o.category,
                    "description": o.description,
                    "refs": list(o.refs),
                    # by position in the problems list (problem-1 is the first)
                    "addresses": [
                        f"problem-{[p.id for p in a.problems].index(i) + 1}" for i in o.problem_ids
                    ],
                    "code": list(o.code) if o.code is not None else None,
                    "medication_ref": o.medication_ref,
                    "priority": o.priority,
                    "answers": list(o.answers),
                }
                for o in a.options
            ],
        }
    if step == "panel":
        return {
            "members": [
                {"role": m.role, "focus": m.focus, "expertise": list(m.expertise)} for m in result
            ]
        }
    if step == "consult":
        c: Consultation = result
        return {
            "votes": {
                v.problem_id: {
                    "vote": v.vote,
                    "confidence": v.confidence,
                    "quote": v.quote,
                    "rationale": v.rationale,
                }
                for v in c.votes
            },
            "arguments": [
                {
                    "option_id": g.option_id,
                    "stance": g.stance,
                    "text": g.text,
                    "evidence": list(g.evidence),
                    "facts": list(g.facts),
                    "harm": g.harm,
                    "concern": g.concern,
                    "generic": g.generic,
                }
                for g in c.arguments
            ],
        }
    if step == "score":
        return {
            "scores": {
                sc.argument_id: {d: getattr(sc, d) for d in STRENGTH_DIMENSIONS} for sc in result
            }
        }
    if step == "relate":
        return {
            "relations": [
                {"source": r.source, "target": r.target, "relation": r.relation} for r in result
            ]
        }
    if step == "adjudicate":
        return {
            "verdicts": [
                {
                    "support": v.support_id,
                    "attack": v.attack_id,
                    "winner": v.winner,
                    "rationale": v.rationale,
                }
                for v in result
            ]
        }
    if step == "arbitrate":
        return {"decision": result.decision, "rationale": result.rationale}
    if step == "synthesize":
        return {"narrative": result}
    raise KeyError(f"unknown step {step!r}")


# -- the record block -> the profile ------------------------------------------------------------

_SYSTEM_URLS = {name: url for url, name in SYSTEM_NAMES.items()}


def profile_from_record(raw: dict[str, Any], aliases: Aliases | None = None) -> PatientProfile:
    """The profile a ``<canoe-record>`` block shows (the inverse of
    ``inference._triton_record.record``): measured values as rounded there, ``source_refs`` in
    the order the record names them, references as the record names them (their aliases), or in
    full given the plan's ``aliases``."""
    data = json.loads(json.dumps(raw))  # a deep copy of plain JSON
    if aliases is not None:
        data = _spelled_out(data, aliases.long)

    def code(c: dict[str, Any], owner_text: str) -> dict[str, Any]:
        system = c.get("system", "")
        return {
            "system": _SYSTEM_URLS.get(system, system),
            "code": c["code"],
            "display": c.get("display", owner_text),
        }

    for group, (fields, owner) in CODED.items():
        for fact in data.get(group, ()):
            for f in fields:
                if f in fact:
                    fact[f] = [code(c, fact.get(owner, "")) for c in fact[f]]
    for enc in data.get("encounters", ()):
        if "reasons" in enc:
            enc["reasons"] = [code(c, enc.get("reason_text", "")) for c in enc["reasons"]]
    readings = data.get("readings", [])
    current = [dict(r) for r in readings if r.get("latest")]
    for r in (*readings, *current):
        r.pop("latest", None)
    # ingest keeps the current values sorted by code and reference (a stable sort: ties keep
    # the order the record gives)
    data["observations"] = sorted(
        [*data.get("observations", []), *current], key=lambda o: (o.get("loinc", ""), o["ref"])
    )
    data["source_refs"] = list(dict.fromkeys(record_refs(data)))
    data.pop("other_refs", None)
    return decode(PatientProfile, data)


def _spelled_out(value: Any, table: dict[str, str]) -> Any:
    if isinstance(value, str):
        return table.get(value, value)
    if isinstance(value, list):
        return [_spelled_out(v, table) for v in value]
    if isinstance(value, dict):
        return {k: _spelled_out(v, table) for k, v in value.items()}
    return value


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
    profile = profile_from_record(raw["profile"])
    docs = tuple(decode(EvidenceDoc, d) for d in raw.get("evidence", ()))
    request: Step[Any]
    if step == "assess":
        request = Assess(profile, docs)
    elif step == "panel":
        outline = raw["assessment"] | {
            "options": [_option(o) for o in raw["assessment"]["options"]]
        }
        request = AssemblePanel(profile, decode(Assessment, outline))
    elif step == "consult":
        problems = tuple(decode(CandidateProblem, p) for p in raw["problems"])
        options = tuple(decode(CandidateOption, o) for o in raw["options"])
        request = Consult(profile, decode(PanelMember, raw["member"]), problems, options, docs)
    elif step == "score":
        # score is sent each argument less its option and role, which its id names
        option = decode(CandidateOption, _option(raw["option"]))
        request = Score(
            profile,
            option,
            tuple(_scored_argument(g, option) for g in raw["arguments"]),
            docs,
        )
    elif step == "relate":
        # relate is sent only what relating reads: no citations, no strengths, and the option
        # and role only inside the argument's id
        options = tuple(decode(CandidateOption, _option(o)) for o in raw["options"])
        args = tuple(
            ArgumentDraft(
                a["id"], *_option_and_role(a["id"], options), a["stance"], a["text"], (), ()
            )
            for a in raw["arguments"]
        )
        request = Relate(profile, options, args)
    elif step == "adjudicate":
        clash_pairs = tuple(
            (decode(ArgumentDraft, x["support"]), decode(ArgumentDraft, x["attack"]))
            for x in raw["pairs"]
        )
        request = Adjudicate(profile, decode(CandidateOption, raw["option"]), clash_pairs, docs)
    elif step == "arbitrate":
        votes = tuple(decode(ProblemVote, v) for v in raw["votes"])
        request = Arbitrate(profile, decode(CandidateProblem, raw["problem"]), votes)
    elif step == "synthesize":

        def pairs(key: str) -> tuple[tuple[CandidateOption, float], ...]:
            return tuple(
                (decode(CandidateOption, _option(x["option"])), float(x["score"])) for x in raw[key]
            )

        request = Synthesize(profile, pairs("included"), pairs("excluded"))
    else:
        raise ValueError(f"unknown step {step!r}")
    result = await ex.run(request, ctx)
    return json.dumps(encode_answer(step, result), ensure_ascii=False)


def _scored_argument(shown: dict[str, Any], option: CandidateOption) -> ArgumentDraft:
    """An argument as the score prompt shows it (no option, no role: its id names both)."""
    option_id, role = _option_and_role(shown["id"], [option])
    return decode(ArgumentDraft, shown | {"option_id": option_id, "role": role})


def _option_and_role(arg_id: str, options: Sequence[CandidateOption]) -> tuple[str, str]:
    """The option and the role an argument id names (``arg-<role>-<option id>-<n>``; the
    longest option id that fits, should one end another)."""
    for o in sorted(options, key=lambda o: -len(o.id)):
        m = re.fullmatch(rf"arg-(.+)-{re.escape(o.id)}-\d+", arg_id)
        if m:
            return o.id, m.group(1)
    raise ValueError(f"argument id {arg_id!r} names no option of the call")


def _option(outline: dict[str, Any]) -> dict[str, Any]:
    """An option outline (panel, relate, synthesize: no description) as a whole option's JSON."""
    return {"description": ""} | outline


def _out_of_range(answer: str) -> str:
    """The same answer with every bounded value pushed out of its range (still valid JSON)."""

    def spoil(v: Any) -> Any:
        if isinstance(v, dict):
            out = {k: spoil(x) for k, x in v.items()}
            for k in ("tau", "confidence", *STRENGTH_DIMENSIONS):
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


# -- the behaviours -----------------------------------------------------------------------------


class Expert:
    """The embedded experts' answer, cut to the call's token budget."""

    contract: ClassVar[Literal["vllm", "plain"]] = "vllm"

    async def generate(self, request: GenerationRequest) -> Generated:
        text = await self.answer(request.prompt)
        return Generated(_cut_to_tokens(text, request.max_tokens), count_tokens(request.prompt))

    async def answer(self, prompt: str) -> str:
        return await expert_answer(prompt)

    def count_tokens(self, text: str) -> int:
        return count_tokens(text)


class ExpertPlain(Expert):
    contract: ClassVar[Literal["vllm", "plain"]] = "plain"


@dataclass
class Sleepy(Expert):
    latency_s: float

    async def answer(self, prompt: str) -> str:
        await asyncio.sleep(self.latency_s)
        return await expert_answer(prompt)


class Slow(Expert):
    async def answer(self, prompt: str) -> str:
        await asyncio.sleep(3600)
        return await expert_answer(prompt)


class Invalid(Expert):
    async def answer(self, prompt: str) -> str:
        return '{"answer": "this is not what the schema asks for'


class InvalidPharmacist(Expert):
    """Broken JSON when the prompt's panel member is the pharmacist (call and repair alike)."""

    async def answer(self, prompt: str) -> str:
        if parse_input_block(prompt)[2].get("member", {}).get("role") == "pharmacist":
            return await Invalid().answer(prompt)
        return await expert_answer(prompt)


class OutOfRange(Expert):
    async def answer(self, prompt: str) -> str:
        return _out_of_range(await expert_answer(prompt))


class TruncateOnce(Expert):
    """Half an answer, unless the prompt is the repair prompt carrying the previous one."""

    async def answer(self, prompt: str) -> str:
        text = await expert_answer(prompt)
        return text if "<previous-answer>" in prompt else text[: max(1, len(text) // 2)]


class PanelWithoutGp(Expert):
    """The expert's answer, its panel less the first member (the GP, a required role)."""

    async def answer(self, prompt: str) -> str:
        text = await expert_answer(prompt)
        if parse_input_block(prompt)[0] != "panel":
            return text
        answer = json.loads(text)
        answer["members"] = answer["members"][1:]
        return json.dumps(answer, ensure_ascii=False)


def judge_answer(inputs: dict[str, Any]) -> dict[str, Any]:
    """The scripted judge's answer to a judge prompt's inputs: each score a function of one
    thing the prompt carried (the generated plan's words, the evidence statements, the
    reference plan or its absence, the record's medicines), each from 1 to 5."""
    reference = inputs["reference_plan"]
    scores = {
        "completeness": 1 + len(inputs["generated_plan"].split()) % 5,
        "validity": 1 + len(inputs.get("evidence", ())) % 5,
        "coherence": 5 if reference is None else 1 + len(reference.split()) % 5,
        "safety": 1 + len(inputs["profile"].get("medications", ())) % 5,
    }
    return {d: {"score": v, "rationale": f"scripted {d}"} for d, v in scores.items()}


class ScriptedJudge(Expert):
    async def answer(self, prompt: str) -> str:
        step, _, inputs = parse_input_block(prompt)
        if step != "judge":
            raise ValueError(f"the scripted judge answers judge prompts, not {step!r}")
        return json.dumps(judge_answer(inputs))


class GarbageScore(Expert):
    """Words where the score step's numbers belong (call and repair alike): its answer is
    valid JSON that no schema admits; every other step gets the expert's answer."""

    async def answer(self, prompt: str) -> str:
        text = await expert_answer(prompt)
        if parse_input_block(prompt)[0] != "score":
            return text
        answer = json.loads(text)
        for entry in answer["scores"].values():
            for d in entry:
                entry[d] = "strong"
        return json.dumps(answer, ensure_ascii=False)


def register(latency_s: float = 0.5) -> None:
    """Make the test behaviours servable by ``tests.support.llm_server``."""
    llm_server.register_behaviour("expert", Expert)
    llm_server.register_behaviour("expert_plain", ExpertPlain)
    llm_server.register_behaviour("sleepy", lambda: Sleepy(latency_s))
    llm_server.register_behaviour("slow", Slow)
    llm_server.register_behaviour("invalid", Invalid)
    llm_server.register_behaviour("invalid_pharmacist", InvalidPharmacist)
    llm_server.register_behaviour("out_of_range", OutOfRange)
    llm_server.register_behaviour("truncate_once", TruncateOnce)
    llm_server.register_behaviour("panel_without_gp", PanelWithoutGp)
    llm_server.register_behaviour("judge", ScriptedJudge)
    llm_server.register_behaviour("garbage_score", GarbageScore)


def main(argv: Sequence[str] | None = None) -> None:
    """``--latency`` (seconds per call, sleepy models), then the options of
    ``tests.support.llm_server``."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--latency", type=float, default=0.5)
    known, rest = p.parse_known_args(argv)
    register(known.latency)
    llm_server.main(rest, default_models=DEFAULT_MODELS)


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
    """Spawn ``python -m tests.support.triton_models`` on free loopback ports; wait until
    ready. Raises ``RuntimeError`` with the server's log tail if it exits or is not ready in
    time."""
    ports = [free_port() for _ in range(3)]
    log = Path(tempfile.mkstemp(prefix="canoe-triton-", suffix=".log")[1])
    cmd = [
        sys.executable,
        "-m",
        "tests.support.triton_models",
        "--latency",
        str(latency_s),
        "--grpc-port",
        str(ports[0]),
        "--http-port",
        str(ports[1]),
        "--metrics-port",
        str(ports[2]),
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
            cwd=Path(__file__).resolve().parents[2],
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


if __name__ == "__main__":
    main()
