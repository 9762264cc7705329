"""What each model-backed step sends to an LLM and how its answer becomes protocol dataclasses.

For every step: the JSON-ready inputs (the ``<canoe-input>`` block), the template fields, the
answer schema narrowed to the ids this call may cite (options, evidence, facts, arguments become
``enum``s, so guided decoding cannot invent them), and a decoder that validates the answer and
builds the typed result, or raises ``AnswerError`` naming what is wrong. (The inverse, a typed
answer as an LLM would write it, is test harness: ``tests/support/triton_models.py``.)
No transport here: this module must stay usable without tritonclient.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

import jsonschema
from jsonschema.exceptions import best_match

from inference import schemas
from inference._triton_codec import encode
from inference._triton_record import Aliases, record
from inference.embedded import required_roles
from inference.panel_sizes import DEFAULT_PANEL_SIZES, PanelSizes, band, panel_faults
from inference.protocol import (
    STRENGTH_DIMENSIONS,
    Adjudicate,
    Arbitrate,
    Arbitration,
    ArgumentDraft,
    ArgumentScore,
    AssemblePanel,
    Assess,
    Assessment,
    CallKind,
    CandidateOption,
    CandidateProblem,
    ClashVerdict,
    Consult,
    Consultation,
    EvidenceDoc,
    PanelMember,
    ProblemVote,
    Relate,
    Relation,
    Score,
    Step,
    Synthesize,
)
from service.record.profile import PatientProfile

__all__ = [
    "AnswerError",
    "StepRequest",
    "adjudicate_request",
    "arbitrate_request",
    "assemble_panel_request",
    "assess_request",
    "consult_request",
    "fact_refs",
    "parse_json_answer",
    "relate_request",
    "request_for",
    "score_request",
    "synthesize_request",
]

R = TypeVar("R")

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```\s*$")


class AnswerError(ValueError):
    """An answer that cannot be used: not JSON, truncated, off-schema or citing unknown ids.

    ``str()`` is safe to log (a location and a rule, never the answer's content); ``detail``
    adds what the model needs to correct itself and goes only into the repair prompt.
    """

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message


@dataclass(frozen=True, slots=True)
class StepRequest(Generic[R]):
    """What one call sends: the patient record (``record``, the same for every call of a plan:
    the shared prompt prefix), the evidence block where the step cites evidence (the same for
    assess and consult), the step's own inputs, the member last where the step is one member's,
    the narrowed answer schema and the decoder of the answer (which maps the aliases the answer
    names back to references and ids)."""

    step: CallKind
    record: dict[str, Any]
    inputs: dict[str, Any]
    schema: dict[str, Any]
    decode: Callable[[dict[str, Any]], R]
    fields: dict[str, str] = field(default_factory=dict)
    evidence: list[Any] | None = None
    member: dict[str, Any] | None = None
    # the plan's reference aliases, as the record, inputs and schema name facts and ids
    aliases: Aliases = field(default_factory=lambda: Aliases(()))
    # a system text of the call's own in place of the panel's shared one ("": the shared one);
    # only a call outside the pipeline (the evaluation judge) has one
    system: str = ""

    def check(self, text: str) -> R:
        """Parse, validate against the narrowed schema, decode; ``AnswerError`` otherwise."""
        answer = parse_json_answer(text)
        err = best_match(jsonschema.Draft202012Validator(self.schema).iter_errors(answer))
        if err is not None:
            where = "/".join(str(p) for p in err.absolute_path) or "(root)"
            raise AnswerError(
                f"answer breaks the schema rule {err.validator!r} at {where}",
                f"at {where}: {err.message[:400]}",
            )
        return self.decode(answer)


def parse_json_answer(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (code fences and trailing chatter ignored)."""
    body = _FENCE.sub("", text.strip())
    start = body.find("{")
    if start < 0:
        raise AnswerError("answer holds no JSON object")
    try:
        value, _ = json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(body.rstrip()) - 1 or exc.msg.startswith("Unterminated string")
        hint = " (truncated?)" if cut else ""
        raise AnswerError(f"answer is not valid JSON{hint}: {exc.msg} at char {exc.pos}") from exc
    if not isinstance(value, dict):
        raise AnswerError("answer is not a JSON object")
    return value


def fact_refs(profile: PatientProfile) -> tuple[str, ...]:
    """Every FHIR reference an answer may cite as a patient fact, sorted."""
    refs = {profile.ref, *profile.source_refs}
    for group in (
        profile.problems,
        profile.medications,
        profile.observations,
        profile.allergies,
        profile.encounters,
        profile.social,
    ):
        refs.update(f.ref for f in group)
    return tuple(sorted(refs))


def _restrict(array_schema: dict[str, Any], values: Sequence[str]) -> None:
    """Narrow an array-of-strings schema to ``values`` (no values: the array must be empty)."""
    if values:
        array_schema["items"] = {"enum": sorted(set(values))}
    else:
        array_schema["maxItems"] = 0


def _items(schema: dict[str, Any], key: str) -> dict[str, Any]:
    item: dict[str, Any] = schema["properties"][key]["items"]
    return item


def _positions(n: int) -> list[str]:
    """The names of the first ``n`` positions in a list: ``problem-1`` ... ``problem-n``."""
    return [f"problem-{i}" for i in range(1, n + 1)]


def _id_map(aliases: Aliases, ids: Sequence[str]) -> dict[str, str]:
    """Short id (as the step's inputs show it) -> id, for ids an answer picks from an enum.
    (Two ids with one short form, an id that already is another's short form, would leave one
    of them unanswerable: the step's checks then refuse the answer.)"""
    return {aliases.shorten(i): i for i in ids}


def _refs_back(aliases: Aliases, refs: Sequence[str]) -> tuple[str, ...]:
    """The references behind aliases an answer cites (the schema's enum admits known ones only)."""
    return tuple(aliases.long.get(r, r) for r in refs)


def _outline(o: CandidateOption, priority: bool = False) -> dict[str, Any]:
    """An option as the steps that read only what it is see it: id, title, category (and its
    priority class where asked); no description, not even an empty one."""
    shown = CandidateOption(
        o.id, o.title, o.category, "", priority=o.priority if priority else "review"
    )
    out: dict[str, Any] = encode(shown)
    del out["description"]
    return out


def _doc_inputs(evidence: Sequence[EvidenceDoc]) -> list[Any]:
    return [encode(d) for d in evidence]


# -- assess ---------------------------------------------------------------------------------


def assess_request(s: Assess, sizes: PanelSizes = DEFAULT_PANEL_SIZES) -> StepRequest[Assessment]:
    profile, evidence = s.profile, s.evidence
    al = Aliases.of(profile)
    refs = [al.shorten(r) for r in fact_refs(profile)]
    meds = sorted(al.shorten(m.ref) for m in profile.medications)
    schema = schemas.load("assess")
    _restrict(_items(schema, "problems")["properties"]["refs"], refs)
    opt = _items(schema, "options")["properties"]
    _restrict(opt["refs"], refs)
    opt["medication_ref"] = (
        {"anyOf": [{"type": "null"}, {"enum": meds}]} if meds else {"type": "null"}
    )
    # An option names its problems by position ("problem-1" is the first listed), not by the
    # ids the model invents: guided decoding then cannot write an ill-formed reference, which a
    # small model does when asked to repeat an id it made up. A position past the end of the
    # list is still an unknown problem and rejected below.
    positions = _positions(schema["properties"]["problems"]["maxItems"])
    addressed = opt["addresses"]["items"]
    opt["addresses"]["items"] = {"description": addressed["description"], "enum": positions}

    def decode(a: dict[str, Any]) -> Assessment:
        problems = tuple(
            CandidateProblem(
                id=al.long_id(p["id"]),
                display=p["display"],
                refs=_refs_back(al, p["refs"]),
                initial=p["initial"],
                rationale=p["rationale"],
            )
            for p in a["problems"]
        )
        pids = [p.id for p in problems]
        if len(set(pids)) != len(pids):
            raise AnswerError("problem ids are not unique")
        by_position = dict(zip(positions, pids, strict=False))
        options = []
        for o in a["options"]:
            unknown = [n for n in o["addresses"] if n not in by_position]
            if unknown:
                raise AnswerError(
                    f"option {o['id']} addresses {', '.join(unknown)}, but only "
                    f"{len(pids)} problems are listed"
                )
            code = o["code"]
            options.append(
                CandidateOption(
                    id=al.long_id(o["id"]),
                    title=o["title"],
                    category=o["category"],
                    description=o["description"],
                    refs=_refs_back(al, o["refs"]),
                    problem_ids=tuple(by_position[n] for n in o["addresses"]),
                    code=(code[0], code[1], code[2]) if code is not None else None,
                    medication_ref=(
                        None if o["medication_ref"] is None else al.long[o["medication_ref"]]
                    ),
                    priority=o["priority"],
                    answers=tuple(o["answers"]),
                )
            )
        oids = [o.id for o in options]
        if len(set(oids)) != len(oids):
            raise AnswerError("option ids are not unique")
        return Assessment(
            complexity=a["complexity"],
            dimensions=tuple(a["dimensions"]),
            problems=problems,
            options=tuple(options),
        )

    return StepRequest(
        "assess",
        record(profile, al),
        {},
        schema,
        decode,
        evidence=_doc_inputs(evidence),
        aliases=al,
    )


# -- panel ----------------------------------------------------------------------------------


def assemble_panel_request(
    s: AssemblePanel, sizes: PanelSizes = DEFAULT_PANEL_SIZES
) -> StepRequest[tuple[PanelMember, ...]]:
    profile, assessment = s.profile, s.assessment
    complexity = assessment.complexity
    schema = schemas.load("panel")
    # The size band for the assessed complexity and the required roles are the schema's, not
    # a hint: guided decoding writes the required roles first (one fixed item each) and stops
    # within the band; the decoder checks the same (``panel_faults``) for a server that cannot
    # guide.
    required = required_roles(profile)
    lo, hi = band(sizes, complexity, required)
    members = schema["properties"]["members"]
    member = members["items"]
    members["minItems"], members["maxItems"] = lo, hi
    members["prefixItems"] = [
        copy.deepcopy(member) | {"properties": member["properties"] | {"role": {"const": r}}}
        for r in required
    ]

    def decode(a: dict[str, Any]) -> tuple[PanelMember, ...]:
        panel = tuple(
            PanelMember(role=m["role"], focus=m["focus"], expertise=tuple(m["expertise"]))
            for m in a["members"]
        )
        roles = [m.role for m in panel]
        if len(set(roles)) != len(roles):
            raise AnswerError("panel roles are not unique")
        faults = panel_faults(roles, complexity, sizes, required)
        if faults:
            raise AnswerError("panel breaks its rules: " + "; ".join(faults))
        return panel

    # Only the outline: the panel is chosen from the record, the complexity and the problems.
    outline = Assessment(
        complexity=assessment.complexity,
        dimensions=assessment.dimensions,
        problems=tuple(
            CandidateProblem(p.id, p.display, (), p.initial, "") for p in assessment.problems
        ),
        options=(),
    )
    al = Aliases.of(profile)
    inputs = al.shorten(
        {"assessment": encode(outline) | {"options": [_outline(o) for o in assessment.options]}}
    )
    sizes_text = {
        "panel_band": f"{lo}" if lo == hi else f"{lo} to {hi}",
        "required_roles": ", ".join(required),
    }
    return StepRequest("panel", record(profile, al), inputs, schema, decode, sizes_text, aliases=al)


# -- consult -------------------------------------------------------------------------------


def consult_request(
    s: Consult, sizes: PanelSizes = DEFAULT_PANEL_SIZES
) -> StepRequest[Consultation]:
    """One member's votes and arguments in one call (one answer with both sections).

    The answer is checked as a whole: a vote or an argument off the schema, or votes that do
    not cover every candidate problem exactly once, make the whole answer unusable (one repair,
    then ``StepFailed``, and the pipeline records both the member's votes and its arguments
    missing). An empty argument list is a valid answer (nothing within the member's expertise).
    """
    profile, member, problems, options = s.profile, s.member, s.problems, s.options
    al = Aliases.of(profile)
    schema = schemas.load("consult")
    # Votes are keyed by problem id, one fixed property per candidate problem, all required:
    # guided decoding then writes each problem exactly once (an array of votes cannot forbid a
    # problem voted twice, which a 270M model did).
    votes = schema["properties"]["votes"]
    vote = votes.pop("additionalProperties")
    del votes["propertyNames"]
    pids = _id_map(al, [p.id for p in problems])
    votes["properties"] = {k: copy.deepcopy(vote) for k in pids}
    votes["required"] = list(pids)
    votes["additionalProperties"] = False
    item = _items(schema, "arguments")["properties"]
    oids = _id_map(al, [o.id for o in options])
    if oids:
        item["option_id"] = {"enum": sorted(oids)}
    else:
        schema["properties"]["arguments"]["maxItems"] = 0
    _restrict(item["evidence"], [d.id for d in s.evidence])
    _restrict(item["facts"], [al.shorten(r) for r in fact_refs(profile)])

    def decode(a: dict[str, Any]) -> Consultation:
        if sorted(a["votes"]) != sorted(pids) or len(pids) != len(problems):
            raise AnswerError("votes must cover every candidate problem exactly once")
        counts: dict[str, int] = {}
        drafts = []
        for g in a["arguments"]:
            oid = oids[g["option_id"]]
            n = counts[oid] = counts.get(oid, 0) + 1
            drafts.append(
                ArgumentDraft(
                    # Ids are ours, not the model's: unique within the plan by construction.
                    id=f"arg-{member.role}-{oid}-{n}",
                    option_id=oid,
                    role=member.role,
                    stance=g["stance"],
                    text=g["text"],
                    evidence=tuple(dict.fromkeys(g["evidence"])),
                    facts=_refs_back(al, tuple(dict.fromkeys(g["facts"]))),
                    harm=g["harm"],
                    concern=g["concern"],
                    generic=bool(g["generic"]),
                )
            )
        return Consultation(
            votes=tuple(
                ProblemVote(
                    problem_id=pids[k],
                    role=member.role,
                    vote=v["vote"],
                    confidence=float(v["confidence"]),
                    quote=v["quote"],
                    rationale=v["rationale"],
                )
                for k, v in a["votes"].items()  # in the answer's order
            ),
            arguments=tuple(drafts),
        )

    return StepRequest(
        "consult",
        record(profile, al),
        al.shorten(
            {"problems": [encode(p) for p in problems], "options": [encode(o) for o in options]}
        ),
        schema,
        decode,
        {},
        evidence=_doc_inputs(s.evidence),
        member=al.shorten(encode(member)),
        aliases=al,
    )


# -- score ----------------------------------------------------------------------------------


def score_request(
    s: Score, sizes: PanelSizes = DEFAULT_PANEL_SIZES
) -> StepRequest[tuple[ArgumentScore, ...]]:
    """Every argument on one option scored in one call, on the five dimensions.

    Scores are keyed by argument id, one fixed property per argument, all required (as consult's
    votes are), so guided decoding scores each argument exactly once; the answer is checked as a
    whole: one score off the schema makes it unusable (one repair, then ``StepFailed``, and the
    pipeline records the option's arguments missing).
    """
    al = Aliases.of(s.profile)
    schema = schemas.load("score")
    scores = schema["properties"]["scores"]
    entry = scores.pop("additionalProperties")
    del scores["propertyNames"]
    ids = _id_map(al, [g.id for g in s.arguments])
    scores["properties"] = {k: copy.deepcopy(entry) for k in ids}
    # the entry's schema before the ids in the prompt's view of it (``prompt_schema``): the
    # part every score call of a plan shares comes first, for a server's prefix cache
    scores["additionalProperties"] = False
    scores["required"] = list(ids)

    def decode(a: dict[str, Any]) -> tuple[ArgumentScore, ...]:
        if sorted(a["scores"]) != sorted(ids) or len(ids) != len(s.arguments):
            raise AnswerError("scores must cover every listed argument exactly once")
        return tuple(
            ArgumentScore(ids[k], **{d: float(v[d]) for d in STRENGTH_DIMENSIONS})
            for k, v in a["scores"].items()
        )

    # What scoring reads: the option, and each argument as written, less what its id already
    # says (its role and option) and its strength (what is asked). The evidence is the plan's
    # evidence block, byte for byte the one assess and consult put first (a server's prefix
    # cache computes it once per plan), where the arguments' evidence ids point.
    inputs = {
        "option": _outline(s.option),
        "arguments": [
            {k: v for k, v in encode(replace(g, tau=None)).items() if k not in _SCORE_HIDDEN}
            for g in s.arguments
        ],
    }
    return StepRequest(
        "score",
        record(s.profile, al),
        al.shorten(inputs),
        schema,
        decode,
        evidence=_doc_inputs(s.evidence),
        aliases=al,
    )


# What a score prompt leaves out of an argument: its id names the option and the role.
_SCORE_HIDDEN = frozenset({"option_id", "role"})


# -- relate ---------------------------------------------------------------------------------


def relate_request(
    s: Relate, sizes: PanelSizes = DEFAULT_PANEL_SIZES
) -> StepRequest[tuple[Relation, ...]]:
    """Relations for every option at once; each must join two arguments on the same option."""
    al = Aliases.of(s.profile)
    schema = schemas.load("relate")
    option_of = {g.id: g.option_id for g in s.arguments}
    ids = _id_map(al, list(option_of))
    item = _items(schema, "relations")["properties"]
    if len(ids) >= 2:
        item["source"] = item["target"] = {"enum": sorted(ids)}
    else:
        schema["properties"]["relations"]["maxItems"] = 0

    def decode(a: dict[str, Any]) -> tuple[Relation, ...]:
        seen: dict[tuple[str, str], Relation] = {}
        for r in a["relations"]:
            if r["source"] == r["target"]:
                raise AnswerError(f"argument {r['source']} relates to itself")
            source, target = ids[r["source"]], ids[r["target"]]
            if option_of[source] != option_of[target]:
                raise AnswerError(
                    f"arguments {r['source']} and {r['target']} are about different options"
                )
            seen.setdefault((source, target), Relation(source, target, r["relation"]))
        return tuple(seen.values())

    # Only what relating needs: which option, who argues which way, and what they say (no
    # citations, no strengths: relations are read from the content). The option and the role
    # are not repeated: an argument's id carries both (arg-<role>-<option id>-<n>).
    inputs = {
        "options": [_outline(o) for o in s.options],
        "arguments": [{"id": g.id, "stance": g.stance, "text": g.text} for g in s.arguments],
    }
    return StepRequest(
        "relate", record(s.profile, al), al.shorten(inputs), schema, decode, aliases=al
    )


# -- adjudicate, arbitrate, synthesize ------------------------------------------------------


def adjudicate_request(
    s: Adjudicate, sizes: PanelSizes = DEFAULT_PANEL_SIZES
) -> StepRequest[tuple[ClashVerdict, ...]]:
    """Every near-tied pair of one option in one call, one verdict per pair.

    The answer is checked as a whole: a verdict off the schema, for a pair not asked about, or
    a pair judged twice or not at all makes the whole answer unusable (one repair, then
    ``StepFailed``, and every pair of the call counts for nobody). A model that cannot judge
    one pair says so with ``winner: null``, which leaves only that pair undecided.
    """
    al = Aliases.of(s.profile)
    schema = schemas.load("adjudicate")
    verdicts = schema["properties"]["verdicts"]
    verdicts["minItems"] = verdicts["maxItems"] = len(s.pairs)
    item = verdicts["items"]["properties"]
    ids = _id_map(al, [g.id for pair in s.pairs for g in pair])
    if s.pairs:
        item["support"] = {"enum": sorted({al.shorten(sup.id) for sup, _ in s.pairs})}
        item["attack"] = {"enum": sorted({al.shorten(att.id) for _, att in s.pairs})}
    asked = [(sup.id, att.id) for sup, att in s.pairs]
    cited = {e for pair in s.pairs for g in pair for e in g.evidence}

    def decode(a: dict[str, Any]) -> tuple[ClashVerdict, ...]:
        got = [(ids[v["support"]], ids[v["attack"]]) for v in a["verdicts"]]
        if sorted(got) != sorted(asked):
            raise AnswerError("verdicts must judge every listed pair exactly once")
        by_pair = {pair: v for pair, v in zip(got, a["verdicts"], strict=True)}
        return tuple(
            ClashVerdict(sup, att, by_pair[(sup, att)]["winner"], by_pair[(sup, att)]["rationale"])
            for sup, att in asked
        )

    inputs = {
        "option": encode(s.option),
        "pairs": [{"support": encode(sup), "attack": encode(att)} for sup, att in s.pairs],
        # Only the statements the arguments cite: the rest cannot decide a clash.
        "evidence": _doc_inputs([d for d in s.evidence if d.id in cited]),
    }
    return StepRequest(
        "adjudicate", record(s.profile, al), al.shorten(inputs), schema, decode, aliases=al
    )


def arbitrate_request(
    s: Arbitrate, sizes: PanelSizes = DEFAULT_PANEL_SIZES
) -> StepRequest[Arbitration]:
    profile, problem, votes = s.profile, s.problem, s.votes

    def decode(a: dict[str, Any]) -> Arbitration:
        return Arbitration(problem.id, a["decision"], a["rationale"])

    inputs = {"problem": encode(problem), "votes": [encode(v) for v in votes]}
    al = Aliases.of(profile)
    schema = schemas.load("arbitrate")
    return StepRequest(
        "arbitrate", record(profile, al), al.shorten(inputs), schema, decode, aliases=al
    )


def synthesize_request(s: Synthesize, sizes: PanelSizes = DEFAULT_PANEL_SIZES) -> StepRequest[str]:
    profile, included, excluded = s.profile, s.included, s.excluded

    def decode(a: dict[str, Any]) -> str:
        text: str = a["narrative"]
        return text

    # what the narrative names and orders by: title, category and priority class
    inputs = {
        "included": [{"option": _outline(o, priority=True), "score": sc} for o, sc in included],
        "excluded": [{"option": _outline(o, priority=True), "score": sc} for o, sc in excluded],
    }
    al = Aliases.of(profile)
    schema = schemas.load("synthesize")
    return StepRequest(
        "synthesize", record(profile, al), al.shorten(inputs), schema, decode, aliases=al
    )


# Request type -> request builder: the dispatch table of ``request_for``.
_BUILDERS: dict[type[Step[Any]], Callable[[Any, PanelSizes], StepRequest[Any]]] = {
    Assess: assess_request,
    AssemblePanel: assemble_panel_request,
    Consult: consult_request,
    Score: score_request,
    Relate: relate_request,
    Adjudicate: adjudicate_request,
    Arbitrate: arbitrate_request,
    Synthesize: synthesize_request,
}


def request_for(step: Step[R], sizes: PanelSizes = DEFAULT_PANEL_SIZES) -> StepRequest[R]:
    """What the LLM is sent for ``step`` and how its answer is checked (``sizes``: the panel
    sizes the panel prompt states). ``KeyError`` for a request type no builder knows."""
    builder = _BUILDERS.get(type(step))
    if builder is None:
        raise KeyError(f"no Triton request for {type(step).__name__}")
    request: StepRequest[R] = builder(step, sizes)  # the table pairs type and result
    return request
