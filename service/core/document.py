"""The exported deliberation: ``canoe.deliberation/1`` JSON documents to and from the model.

``to_document`` writes every input of the deliberation and every derived value;
``from_document`` validates a document against ``deliberation.schema.json`` (draft 2020-12) and
the semantic rules (ids, edges, clashes, router), keeps only inputs, and raises ``DocumentError``
naming the offending field (``options[2].edges[0].target``). ``recompute_document`` is
``to_document(from_document(doc))``: derived values given in the input are ignored.

Round trip: ``from_document(to_document(d)) == d`` for any deliberation whose contestation
payloads are JSON-native (dicts, lists, str, float, int, bool, None), which ``apply`` guarantees.
Numbers are written as Python floats so ``json.dumps``/``json.loads`` keep them bit for bit.
No I/O beyond reading the packaged schema, once, the first time a document is checked (the
schema is the core's: the format it defines is the reasoning's); callers read and write files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from service.core.arena import is_near_tie
from service.core.contest import argument_dict, edge_dict
from service.core.evaluation import OPTION_PRIOR, Evaluation, evaluate
from service.core.memo import CONTESTATION_MEMO, PrefixMemo
from service.core.model import (
    Argument,
    Clash,
    Contestation,
    Coverage,
    CoverageFamily,
    CoverageGap,
    Deliberation,
    Edge,
    Finding,
    KnowledgeStamp,
    Meta,
    Option,
    Parameters,
    PatientWording,
    Problem,
    SiteRetirement,
    SourceRecord,
    Vote,
)
from service.core.results import OptionResult, ProblemResult
from service.core.router import count_votes, route_counts
from service.errors import DocumentError, Issue

if TYPE_CHECKING:  # jsonschema is imported lazily: only documents being checked need it
    from jsonschema.protocols import Validator

__all__ = [
    "DELIBERATION_FORMAT",
    "deliberation_schema",
    "from_document",
    "recompute_document",
    "to_document",
]

DELIBERATION_FORMAT = "canoe.deliberation/1"
_SCHEMA_FILE = "deliberation.schema.json"


@lru_cache(maxsize=1)
def _schema_text() -> str:
    return resources.files("service.core").joinpath(_SCHEMA_FILE).read_text(encoding="utf-8")


def deliberation_schema() -> dict[str, Any]:
    """The JSON Schema (a fresh copy each call, so callers cannot alter the cached one)."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema


@lru_cache(maxsize=1)
def _validator() -> Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(deliberation_schema())


def _fail(where: str, message: str, code: str = "invalid") -> DocumentError:
    return DocumentError(f"{where}: {message}", issues=(Issue("error", code, message, (where,)),))


def _plain(value: object) -> object:
    """A deep JSON-native copy (tuples become lists), so documents never alias the model."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# --------------------------------------------------------------------------------------- writing


def _clash(c: Clash) -> dict[str, object]:
    out: dict[str, object] = {"support": c.support, "attack": c.attack, "winner": c.winner}
    if c.reason:  # optional: older documents have none and recompute bit for bit
        out["reason"] = c.reason
    return out


def _contestation_dict(c: Contestation) -> dict[str, object]:
    return {
        "id": c.id,
        "action": c.action,
        "target": c.target,
        "actor": c.actor,
        "at": c.at,
        "reason": c.reason,
        "payload": _plain(c.payload),
    }


# A plan's versions share their contestation records, and every version's document lists them
# all: each record is written once and reused (shared, so documents are read-only).
_contestations: PrefixMemo[Contestation, dict[str, object]] = PrefixMemo(
    _contestation_dict, size=CONTESTATION_MEMO
)


def to_document(deliberation: Deliberation, ev: Evaluation | None = None) -> dict[str, Any]:
    """The JSON-ready document for ``deliberation`` (``ev`` computed when not given)."""
    if ev is None:
        ev = evaluate(deliberation)
    p = deliberation.parameters
    m = deliberation.meta
    problems = [
        _problem_dict(prob, pr) for prob, pr in zip(deliberation.problems, ev.problems, strict=True)
    ]
    options = [_option_dict(o, r) for o, r in zip(deliberation.options, ev.options, strict=True)]
    return {
        "format": DELIBERATION_FORMAT,
        "plan_id": deliberation.plan_id,
        "version": deliberation.version,
        "patient_ref": deliberation.patient_ref,
        "parameters": {
            "delta": float(p.delta),
            "beta": float(p.beta),
            "threshold": float(p.threshold),
            "band": float(p.band),
            "tolerance": float(p.tolerance),
            "max_iterations": p.max_iterations,
        },
        "meta": {
            "backend": m.backend,
            "evidence_version": m.evidence_version,
            "complexity": m.complexity,
            "dimensions": list(m.dimensions),
            "panel": [{"role": role, "focus": focus} for role, focus in m.panel],
            "missing": list(m.missing),
            "unused_facts": list(m.unused_facts),
            "synthesis": m.synthesis,
            "created": m.created,
            **({"facts": [{"ref": r, "text": x} for r, x in m.facts]} if m.facts else {}),
            **({"names": [{"name": n, "short": s} for n, s in m.names]} if m.names else {}),
            **({"coverage": _coverage_dict(m.coverage)} if m.coverage is not None else {}),
            **({"sources": [_source_dict(x) for x in m.sources]} if m.sources else {}),
            **({"source_base": m.source_base} if m.source_base else {}),
            **({"knowledge": _knowledge_dict(m.knowledge)} if m.knowledge is not None else {}),
            **({"patient": m.patient} if m.patient else {}),
            **(
                {"patient_wordings": [_wording_dict(w) for w in m.patient_wordings]}
                if m.patient_wordings
                else {}
            ),
        },
        "problems": problems,
        "options": options,
        "contestations": _contestations(deliberation.contestations),
        "plan": list(ev.plan),
    }


def _problem_dict(prob: Problem, pr: ProblemResult) -> dict[str, Any]:
    return {
        "id": prob.id,
        "display": prob.display,
        "initial": prob.initial,
        "votes": [
            {
                "role": v.role,
                "vote": v.vote,
                "confidence": float(v.confidence),
                "quote": v.quote,
                "rationale": v.rationale,
            }
            for v in prob.votes
        ],
        "refs": list(prob.refs),
        "arbitration": prob.arbitration,
        "arbitration_rationale": prob.arbitration_rationale,
        "human_decision": prob.human_decision,
        "path": pr.path,
        "decision": pr.decision,
        "decided_by": pr.decided_by,
    }


def _option_dict(o: Option, r: OptionResult) -> dict[str, Any]:
    option_node = r.nodes[o.id]
    nodes: list[dict[str, object]] = [
        {
            "id": o.id,
            "kind": "option",
            "tau": OPTION_PRIOR,
            "tau_calibrated": OPTION_PRIOR,
            "sigma": option_node.sigma,
        }
    ]
    for a in o.arguments:
        ns = r.nodes[a.id]
        node: dict[str, object] = {"kind": "argument", **argument_dict(a)}
        node["tau"] = float(a.tau)
        node["tau_calibrated"] = ns.tau_calibrated
        node["sigma"] = ns.sigma
        nodes.append(node)
    out: dict[str, Any] = {
        "id": o.id,
        "title": o.title,
        "category": o.category,
        "description": o.description,
        "refs": list(o.refs),
        "problem_ids": list(o.problem_ids),
        "code": None
        if o.code is None
        else {"system": o.code[0], "code": o.code[1], "display": o.code[2]},
        "medication_ref": o.medication_ref,
        "human_decision": o.human_decision,
        "score": r.score,
        "decision": r.decision,
        "decided_by": r.decided_by,
        "borderline": r.borderline,
        "converged": r.converged,
        "iterations": r.iterations,
        "nodes": nodes,
        "edges": [edge_dict(e) for e in o.edges],
        "clashes": [_clash(c) for c in o.clashes],
    }
    out.update(_optional_option_fields(o, r))
    return out


def _optional_option_fields(o: Option, r: OptionResult) -> dict[str, Any]:
    """The option's optional fields, each only where it has a value: older documents have none
    and stay as they were. ``reason`` and ``problem_paths`` are derived (the selection's)."""
    fields: list[tuple[str, Any, bool]] = [
        ("reason", r.reason, bool(r.reason)),
        (
            "problem_paths",
            [{"problem_id": pid, "decided_by": how} for pid, how in r.problems],
            bool(r.problems),
        ),
        ("priority", o.priority, o.priority is not None),
        (
            "findings",
            [
                {"kind": f.kind, "severity": f.severity, "criterion": f.criterion}
                for f in o.findings
            ],
            bool(o.findings),
        ),
        ("urgency_class", o.urgency_class, o.urgency_class is not None),
        ("answers", list(o.answers), bool(o.answers)),
        ("treats", o.treats, o.treats is not None),
        ("action", o.action, o.action is not None),
        ("timeframe", o.timeframe, o.timeframe is not None),
        ("harm", None if o.harm is None else float(o.harm), o.harm is not None),
        ("transition", True, o.transition),
    ]
    return {name: value for name, value, present in fields if present}


# --------------------------------------------------------------------------------------- reading


def _expression(path: Sequence[object]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "$"


def _schema_check(doc: Mapping[str, Any]) -> None:
    errors = list(_validator().iter_errors(doc))
    if not errors:
        return
    issues = []
    for e in sorted(errors, key=lambda e: (e.json_path, e.message)):
        path = list(e.absolute_path)
        # validator_value and schema are always set on errors from iter_errors; the isinstance
        # checks only narrow jsonschema's "unset" sentinel away for the type checker.
        if e.validator == "required" and isinstance(e.instance, Mapping):
            required = e.validator_value if isinstance(e.validator_value, list) else []
            missing = [k for k in required if k not in e.instance]
            path += missing[:1]
        elif e.validator == "additionalProperties" and isinstance(e.instance, Mapping):
            allowed = e.schema.get("properties", {}) if isinstance(e.schema, Mapping) else {}
            extra = sorted(k for k in e.instance if k not in allowed)
            path += extra[:1]
        issues.append(Issue("error", "structure", e.message, (_expression(path),)))
    first = issues[0]
    raise DocumentError(f"{first.expression[0]}: {first.diagnostics}", issues=tuple(issues))


# Plans made before the clash test used exact decimals (``arena.is_near_tie``) decided pairs
# exactly delta apart by binary float subtraction (0.87 vs 0.67 clashed, 0.9 vs 0.7 did not). A
# stored plan stays readable: a clash either rule calls a near tie is accepted, and a missing
# clash is an error only when both rules call the pair a near tie.
def _may_tie(tau_s: float, tau_a: float, delta: float) -> bool:
    return is_near_tie(tau_s, tau_a, delta) or abs(tau_s - tau_a) < delta


def _must_tie(tau_s: float, tau_a: float, delta: float) -> bool:
    return is_near_tie(tau_s, tau_a, delta) and abs(tau_s - tau_a) < delta


def _finite(value: Any, where: str, *, unit: bool = True) -> float:
    """Schema bounds do not catch NaN (every comparison with it is false); this does."""
    x = float(value)
    if not math.isfinite(x) or (unit and not 0.0 <= x <= 1.0):
        raise _fail(
            where,
            f"{value!r} is not a number in [0, 1]" if unit else f"{value!r} is not finite",
            "value",
        )
    return x


def _parameters(raw: Mapping[str, Any]) -> Parameters:
    defaults = Parameters()
    return Parameters(
        delta=_finite(raw["delta"], "parameters.delta", unit=False),
        beta=_finite(raw["beta"], "parameters.beta", unit=False),
        threshold=_finite(raw["threshold"], "parameters.threshold"),
        band=_finite(raw["band"], "parameters.band", unit=False),
        tolerance=_finite(
            raw.get("tolerance", defaults.tolerance), "parameters.tolerance", unit=False
        ),
        max_iterations=int(raw.get("max_iterations", defaults.max_iterations)),
    )


def _coverage_dict(c: Coverage) -> dict[str, Any]:
    return {
        "knowledge_version": c.knowledge_version,
        "population": c.population,
        "families": [
            {
                "key": f.key,
                "label": f.label,
                "ran": f.ran,
                "why": f.why,
                **({"site_emptied": True} if f.site_emptied else {}),
            }
            for f in c.families
        ],
        "gaps": [
            {
                "kind": g.kind,
                "key": g.key,
                "label": g.label,
                "check": g.check,
                "high_risk": g.high_risk,
                "refs": list(g.refs),
            }
            for g in c.gaps
        ],
        "high_risk": c.high_risk,
        **({"claims_checked": c.claims_checked} if c.claims_checked else {}),
        **({"withheld": list(c.withheld)} if c.withheld else {}),
        **(
            {"retired": [{"criterion": r.criterion, "reason": r.reason} for r in c.retired]}
            if c.retired
            else {}
        ),
    }


def _source_dict(x: SourceRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"ref": x.ref}
    if x.url:
        out["url"] = x.url
    if x.identifier is not None:
        out["identifier"] = {"system": x.identifier[0], "value": x.identifier[1]}
    if x.display:
        out["display"] = x.display
    return out


def _source(raw: Mapping[str, Any]) -> SourceRecord:
    ident = raw.get("identifier")
    return SourceRecord(
        ref=raw["ref"],
        url=raw.get("url", ""),
        identifier=None if ident is None else (ident["system"], ident["value"]),
        display=raw.get("display", ""),
    )


def _coverage(raw: Mapping[str, Any] | None) -> Coverage | None:
    """The coverage statement of a document (None in one written before it existed); its
    ``high_risk`` is derived from the gaps and ignored on the way in."""
    if raw is None:
        return None
    return Coverage(
        knowledge_version=raw["knowledge_version"],
        population=raw["population"],
        families=tuple(
            CoverageFamily(
                f["key"], f["label"], f["ran"], f.get("why", ""), f.get("site_emptied", False)
            )
            for f in raw.get("families", ())
        ),
        gaps=tuple(
            CoverageGap(
                g["kind"], g["key"], g["label"], g["check"], g["high_risk"], tuple(g["refs"])
            )
            for g in raw.get("gaps", ())
        ),
        claims_checked=int(raw.get("claims_checked", 0)),
        withheld=tuple(raw.get("withheld", ())),
        retired=tuple(SiteRetirement(r["criterion"], r["reason"]) for r in raw.get("retired", ())),
    )


def _meta(raw: Mapping[str, Any]) -> Meta:
    return Meta(
        backend=raw.get("backend", ""),
        evidence_version=raw.get("evidence_version", ""),
        complexity=raw.get("complexity", ""),
        dimensions=tuple(raw.get("dimensions", ())),
        panel=tuple((p["role"], p["focus"]) for p in raw.get("panel", ())),
        missing=tuple(raw.get("missing", ())),
        unused_facts=tuple(raw.get("unused_facts", ())),
        synthesis=raw.get("synthesis", ""),
        created=raw.get("created", ""),
        facts=tuple((f["ref"], f["text"]) for f in raw.get("facts", ())),
        names=tuple((n["name"], n["short"]) for n in raw.get("names", ())),
        coverage=_coverage(raw.get("coverage")),
        sources=tuple(_source(x) for x in raw.get("sources", ())),
        source_base=raw.get("source_base", ""),
        patient_wordings=tuple(
            PatientWording(w["option_id"], w["section"], w["text"], w.get("watch", ""))
            for w in raw.get("patient_wordings", ())
        ),
        knowledge=_knowledge(raw.get("knowledge")),
        patient=raw.get("patient", ""),
    )


def _knowledge_dict(k: KnowledgeStamp) -> dict[str, str]:
    return {
        "version": k.version,
        "content_hash": k.content_hash,
        "site_version": k.site_version,
        "site_hash": k.site_hash,
    }


def _knowledge(raw: Mapping[str, Any] | None) -> KnowledgeStamp | None:
    """The knowledge stamp of a document (None in one written before it was recorded)."""
    if raw is None:
        return None
    return KnowledgeStamp(
        raw["version"], raw["content_hash"], raw["site_version"], raw["site_hash"]
    )


def _wording_dict(w: PatientWording) -> dict[str, str]:
    out = {"option_id": w.option_id, "section": w.section, "text": w.text}
    return {**out, "watch": w.watch} if w.watch else out


def _problem(raw: Mapping[str, Any], where: str) -> Problem:
    votes = tuple(
        Vote(
            role=v["role"],
            vote=v["vote"],
            confidence=_finite(v["confidence"], f"{where}.votes[{k}].confidence"),
            quote=v["quote"],
            rationale=v["rationale"],
        )
        for k, v in enumerate(raw["votes"])
    )
    p = Problem(
        id=raw["id"],
        display=raw["display"],
        initial=raw["initial"],
        votes=votes,
        refs=tuple(raw.get("refs", ())),
        arbitration=raw.get("arbitration"),
        arbitration_rationale=raw.get("arbitration_rationale", ""),
        human_decision=raw.get("human_decision"),
    )
    if p.arbitration is not None:
        path = route_counts(*count_votes(p.votes), p.initial).path
        if path != "conflict":
            raise _fail(
                f"{where}.arbitration", f"arbitration on a {path} problem (only on conflict)"
            )
    return p


def _option(
    raw: Mapping[str, Any], where: str, params: Parameters, taken: dict[str, str]
) -> Option:
    oid: str = raw["id"]
    args = _arguments(raw, where, taken)
    by_id = {a.id: a for a in args}
    edges = _edges(raw, where, by_id)
    clashes = _clashes(raw, where, by_id, params)
    code = raw.get("code")
    return Option(
        id=oid,
        title=raw["title"],
        category=raw["category"],
        description=raw.get("description", ""),
        arguments=args,
        edges=edges,
        clashes=clashes,
        refs=tuple(raw.get("refs", ())),
        problem_ids=tuple(raw.get("problem_ids", ())),
        code=None if code is None else (code["system"], code["code"], code["display"]),
        medication_ref=raw.get("medication_ref"),
        human_decision=raw.get("human_decision"),
        priority=raw.get("priority"),
        findings=tuple(
            Finding(f["kind"], f["severity"], f["criterion"]) for f in raw.get("findings", ())
        ),
        urgency_class=raw.get("urgency_class"),
        answers=tuple(raw.get("answers", ())),
        treats=raw.get("treats"),
        action=raw.get("action"),
        timeframe=raw.get("timeframe"),
        harm=None if raw.get("harm") is None else float(raw["harm"]),
        transition=bool(raw.get("transition", False)),
    )


def _arguments(raw: Mapping[str, Any], where: str, taken: dict[str, str]) -> tuple[Argument, ...]:
    """The option's argument nodes; exactly one option node, named as the option is."""
    oid: str = raw["id"]
    option_nodes = [k for k, n in enumerate(raw["nodes"]) if n["kind"] == "option"]
    if len(option_nodes) != 1:
        raise _fail(f"{where}.nodes", f"needs exactly one option node, has {len(option_nodes)}")
    k0 = option_nodes[0]
    if raw["nodes"][k0]["id"] != oid:
        raise _fail(f"{where}.nodes[{k0}].id", f"option node id must be the option id {oid!r}")
    args: list[Argument] = []
    for k, n in enumerate(raw["nodes"]):
        if n["kind"] == "option":
            continue
        nw = f"{where}.nodes[{k}]"
        if n["id"] in taken:
            raise _fail(f"{nw}.id", f"duplicate id {n['id']!r} (also {taken[n['id']]})")
        taken[n["id"]] = f"{nw}.id"
        args.append(
            Argument(
                id=n["id"],
                role=n["role"],
                stance=n["stance"],
                text=n["text"],
                evidence=tuple(n.get("evidence", ())),
                facts=tuple(n.get("facts", ())),
                tau=_finite(n["tau"], f"{nw}.tau"),
                origin=n.get("origin", "agent"),
                status=n.get("status", "active"),
                tau_source=n.get("tau_source", "model"),
            )
        )
    return tuple(args)


def _edges(raw: Mapping[str, Any], where: str, by_id: Mapping[str, Argument]) -> tuple[Edge, ...]:
    """The option's edges, each between known nodes, none twice, and every argument reaching
    the option by an edge of its own stance."""
    oid: str = raw["id"]
    edges: list[Edge] = []
    seen: set[Edge] = set()
    to_option: set[str] = set()
    for k, e in enumerate(raw["edges"]):
        ew = f"{where}.edges[{k}]"
        edge = Edge(e["source"], e["target"], e["relation"])
        _check_edge(edge, ew, oid, by_id, seen)
        if edge.target == oid:
            if edge.relation != by_id[edge.source].stance:
                raise _fail(f"{ew}.relation", f"contradicts the stance of {edge.source!r}")
            to_option.add(edge.source)
        seen.add(edge)
        edges.append(edge)
    for k, n in enumerate(raw["nodes"]):
        if n["kind"] == "argument" and n["id"] not in to_option:
            raise _fail(f"{where}.nodes[{k}]", f"argument {n['id']!r} has no edge to the option")
    return tuple(edges)


def _check_edge(
    edge: Edge, ew: str, oid: str, by_id: Mapping[str, Argument], seen: set[Edge]
) -> None:
    if edge.source == oid:
        raise _fail(f"{ew}.source", "the option node cannot support or attack anything")
    if edge.source not in by_id:
        raise _fail(f"{ew}.source", f"unknown node id {edge.source!r}", "not-found")
    if edge.target != oid and edge.target not in by_id:
        raise _fail(f"{ew}.target", f"unknown node id {edge.target!r}", "not-found")
    if edge.source == edge.target:
        raise _fail(ew, f"{edge.source!r} cannot support or attack itself")
    if edge in seen:
        raise _fail(ew, "duplicate edge")


def _clashes(
    raw: Mapping[str, Any], where: str, by_id: Mapping[str, Argument], params: Parameters
) -> tuple[Clash, ...]:
    """The option's clashes: each an opposing pair of its arguments near-tied under delta, and
    every near-tied pair among them adjudicated (see ``_unadjudicated``)."""
    clashes: list[Clash] = []
    pairs: set[tuple[str, str]] = set()
    for k, c in enumerate(raw.get("clashes", ())):
        cw = f"{where}.clashes[{k}]"
        s, a = by_id.get(c["support"]), by_id.get(c["attack"])
        if s is None:
            raise _fail(f"{cw}.support", f"unknown argument {c['support']!r}", "not-found")
        if a is None:
            raise _fail(f"{cw}.attack", f"unknown argument {c['attack']!r}", "not-found")
        if s.stance != "support":
            raise _fail(f"{cw}.support", f"{s.id!r} does not support the option")
        if a.stance != "attack":
            raise _fail(f"{cw}.attack", f"{a.id!r} does not attack the option")
        if (s.id, a.id) in pairs:
            raise _fail(cw, "duplicate clash")
        pairs.add((s.id, a.id))
        model_set = all(x.origin == "agent" and x.tau_source == "model" for x in (s, a))
        if model_set and not _may_tie(s.tau, a.tau, params.delta):
            raise _fail(cw, f"|tau_s - tau_a| = {abs(s.tau - a.tau)!r} is not below delta")
        clashes.append(Clash(s.id, a.id, c["winner"], c.get("reason", "")))
    _unadjudicated(tuple(by_id.values()), pairs, where, params)
    return tuple(clashes)


def _unadjudicated(
    args: tuple[Argument, ...], pairs: set[tuple[str, str]], where: str, params: Parameters
) -> None:
    """The converse: every near-tied opposing pair of model-scored arguments was adjudicated when
    the plan was made (a failed verdict is kept as winner null). A missing pair means clashes
    were removed, or delta changed after the fact: recomputing would silently drop calibration."""
    arena = [x for x in args if x.origin == "agent" and x.tau_source == "model"]
    for s in arena:
        if s.stance != "support":
            continue
        for a in arena:
            missing = a.stance == "attack" and (s.id, a.id) not in pairs
            if missing and _must_tie(s.tau, a.tau, params.delta):
                raise _fail(
                    f"{where}.clashes",
                    f"near-tied pair ({s.id!r}, {a.id!r}) has no clash entry: it was never "
                    "adjudicated under this delta",
                    "required",
                )


def from_document(doc: Mapping[str, Any]) -> Deliberation:
    """The deliberation a document describes (inputs only). Raises ``DocumentError``."""
    if not isinstance(doc, Mapping):
        raise _fail("$", "a deliberation document must be a JSON object", "structure")
    if doc.get("format") != DELIBERATION_FORMAT:
        raise _fail(
            "format",
            f"unknown format {doc.get('format')!r}; this reader knows {DELIBERATION_FORMAT!r}",
            "not-supported",
        )
    _schema_check(doc)
    params = _parameters(doc["parameters"])

    problems: list[Problem] = []
    problem_ids: dict[str, str] = {}
    for k, raw in enumerate(doc["problems"]):
        if raw["id"] in problem_ids:
            raise _fail(f"problems[{k}].id", f"duplicate id {raw['id']!r}")
        problem_ids[raw["id"]] = f"problems[{k}].id"
        problems.append(_problem(raw, f"problems[{k}]"))

    taken: dict[str, str] = {}
    for k, raw in enumerate(doc["options"]):
        if raw["id"] in taken:
            raise _fail(f"options[{k}].id", f"duplicate id {raw['id']!r}")
        taken[raw["id"]] = f"options[{k}].id"
    options = tuple(
        _option(raw, f"options[{k}]", params, taken) for k, raw in enumerate(doc["options"])
    )

    contestations: list[Contestation] = []
    seen_tasks: set[str] = set()
    for k, c in enumerate(doc["contestations"]):
        if c["id"] in seen_tasks:
            raise _fail(f"contestations[{k}].id", f"duplicate task id {c['id']!r}")
        seen_tasks.add(c["id"])
        payload = _plain(c.get("payload", {}))
        contestations.append(
            Contestation(
                id=c["id"],
                action=c["action"],
                target=c["target"],
                actor=c["actor"],
                at=c["at"],
                reason=c.get("reason", ""),
                payload=payload,  # type: ignore[arg-type]
            )
        )

    return Deliberation(
        plan_id=doc["plan_id"],
        version=int(doc["version"]),
        patient_ref=doc["patient_ref"],
        parameters=params,
        problems=tuple(problems),
        options=options,
        contestations=tuple(contestations),
        meta=_meta(doc.get("meta", {})),
    )


def recompute_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Validate, drop every derived value, recompute them all, and return the full document."""
    return to_document(from_document(doc))
