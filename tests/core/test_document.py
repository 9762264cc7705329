"""The canoe.deliberation/1 document: schema, exact round trip, recompute, bad input refused."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from service.core import (
    DELIBERATION_FORMAT,
    AddArgument,
    DecideOption,
    EditArgument,
    RejectArgument,
    apply,
    deliberation_schema,
    evaluate,
    from_document,
    recompute_document,
    to_document,
)
from service.core.model import Edge, Meta
from service.errors import DocumentError
from tests.core.builders import arg, sample

WHO = {"actor": "Practitioner/1", "at": "2026-01-02T03:04:05Z"}


def contested():
    d = sample()
    d = apply(d, RejectArgument("a2"), task_id="t1", reason="unsafe", **WHO)
    d = apply(d, EditArgument("a3", tau=0.9, evidence=("ev-2",)), task_id="t2", **WHO)
    d = apply(
        d,
        AddArgument("o2", arg("h1", "attack", 0.4, role="human"), (Edge("h1", "b1", "attack"),)),
        task_id="t3",
        **WHO,
    )
    d = apply(d, DecideOption("o3", "include"), task_id="t4", **WHO)
    import dataclasses

    meta = Meta(
        "embedded", "ev-2026.1", "high", ("falls",), (("nurse", "falls"),), ("x",), (), "s", "2026"
    )
    return dataclasses.replace(d, meta=meta)


def test_schema_is_draft_2020_12_and_accepts_our_documents() -> None:
    schema = deliberation_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    doc = to_document(contested())
    Draft202012Validator(schema).validate(doc)
    assert doc["format"] == DELIBERATION_FORMAT


def test_document_carries_the_required_fields() -> None:
    doc = to_document(sample())
    assert set(doc["parameters"]) >= {"delta", "beta", "threshold", "band"}
    o = doc["options"][0]
    assert {"id", "title", "category", "score", "decision", "decided_by", "borderline"} <= set(o)
    node = o["nodes"][1]
    assert {
        "id",
        "kind",
        "role",
        "stance",
        "text",
        "evidence",
        "tau",
        "tau_calibrated",
        "sigma",
        "status",
    } <= set(node)
    assert o["nodes"][0]["kind"] == "option" and o["nodes"][0]["sigma"] == o["score"]
    p = doc["problems"][1]
    assert p["path"] == "conflict" and p["arbitration"] == "reject" and p["decision"] == "reject"
    assert {"role", "vote", "confidence", "quote", "rationale"} <= set(p["votes"][0])


def test_round_trip_is_exact_through_json() -> None:
    d = contested()
    doc = to_document(d)
    assert from_document(doc) == d
    again = json.loads(json.dumps(doc))
    assert from_document(again) == d
    assert recompute_document(again) == doc  # every float survived bit for bit
    assert json.dumps(recompute_document(again)) == json.dumps(doc)


def test_recompute_ignores_every_derived_value() -> None:
    doc = to_document(contested())
    tampered = copy.deepcopy(doc)
    for o in tampered["options"]:
        o["score"], o["decision"], o["decided_by"], o["borderline"] = (
            0.123,
            "include",
            "score",
            True,
        )
        for n in o["nodes"]:
            n["sigma"], n["tau_calibrated"] = 0.9, 0.9
    for p in tampered["problems"]:
        p["path"], p["decision"], p["decided_by"] = "weak_consensus", "accept", "fallback"
    tampered["plan"] = ["o1"]
    assert recompute_document(tampered) == doc


def test_derived_values_may_be_absent_on_input() -> None:
    doc = to_document(sample())
    bare = copy.deepcopy(doc)
    del bare["plan"], bare["meta"]
    for o in bare["options"]:
        for k in ("score", "decision", "decided_by", "borderline", "converged", "iterations"):
            del o[k]
        for n in o["nodes"]:
            n.pop("sigma"), n.pop("tau_calibrated")
    for p in bare["problems"]:
        del p["path"], p["decision"], p["decided_by"]
    assert recompute_document(bare) == doc


def _bad(mutate: Any) -> DocumentError:
    doc = to_document(sample())
    mutate(doc)
    with pytest.raises(DocumentError) as info:
        from_document(doc)
    return info.value


def _set(path: str, value: Any) -> Any:
    def mutate(doc: dict[str, Any]) -> None:
        *head, last = path.split("/")
        cur: Any = doc
        for part in head:
            cur = cur[int(part)] if part.isdigit() else cur[part]
        if value is _DELETE:
            del cur[int(last) if last.isdigit() else last]
        else:
            cur[int(last) if last.isdigit() else last] = value

    return mutate


_DELETE = object()


@pytest.mark.parametrize(
    ("mutate", "expression"),
    [
        (_set("format", "canoe.deliberation/2"), "format"),
        (_set("format", _DELETE), "format"),
        (_set("options/0/edges/1/target", "ghost"), "options[0].edges[1].target"),
        (_set("options/0/edges/1/source", "ghost"), "options[0].edges[1].source"),
        (_set("options/0/edges/0/relation", "neutral"), "options[0].edges[0].relation"),
        (_set("options/0/edges/0/relation", "attack"), "options[0].edges[0].relation"),
        (_set("options/0/nodes/2/tau", 1.5), "options[0].nodes[2].tau"),
        (_set("options/0/nodes/2/tau", -0.01), "options[0].nodes[2].tau"),
        (_set("options/0/nodes/2/tau", float("nan")), "options[0].nodes[2].tau"),
        (_set("options/0/nodes/2/stance", "neutral"), "options[0].nodes[2].stance"),
        (_set("options/0/nodes/2/id", "a1"), "options[0].nodes[2].id"),
        (_set("options/1/nodes/1/id", "a1"), "options[1].nodes[1].id"),
        (_set("options/1/id", "o1"), "options[1].id"),
        (_set("problems/1/id", "pr1"), "problems[1].id"),
        (_set("problems/0/votes/0/vote", "MAYBE"), "problems[0].votes[0].vote"),
        (_set("problems/0/votes/0/confidence", 2), "problems[0].votes[0].confidence"),
        (_set("problems/0/arbitration", "accept"), "problems[0].arbitration"),
        (_set("options/0/clashes/0/winner", "draw"), "options[0].clashes[0].winner"),
        (_set("options/0/clashes/0/support", "a2"), "options[0].clashes[0].support"),
        (_set("options/0/clashes/0/attack", "ghost"), "options[0].clashes[0].attack"),
        (
            _set("options/1/clashes", [{"support": "b1", "attack": "b2", "winner": None}]),
            "options[1].clashes[0]",
        ),
        (_set("options/0/nodes/1/role", _DELETE), "options[0].nodes[1].role"),
        (_set("options/0/nodes/1/colour", "red"), "options[0].nodes[1].colour"),
        (_set("options/0/nodes/0/tau", 0.7), "options[0].nodes[0].tau"),
        (_set("options/0/nodes/0/id", "other"), "options[0].nodes[0].id"),
        (_set("version", 0), "version"),
        (_set("parameters/threshold", 1.2), "parameters.threshold"),
        (
            _set(
                "contestations",
                [{"id": "t", "action": "veto", "target": "a1", "actor": "x", "at": "y"}],
            ),
            "contestations[0].action",
        ),
    ],
)
def test_bad_documents_name_the_field(mutate: Any, expression: str) -> None:
    err = _bad(mutate)
    assert err.issues[0].expression == (expression,), err.message
    assert expression in err.message


def test_duplicate_edges_and_missing_option_edge_are_refused() -> None:
    err = _bad(lambda doc: doc["options"][0]["edges"].append(dict(doc["options"][0]["edges"][4])))
    assert err.issues[0].expression == ("options[0].edges[6]",)
    err = _bad(lambda doc: doc["options"][2]["edges"].clear())
    assert err.issues[0].expression == ("options[2].nodes[1]",)


def test_a_near_tied_pair_without_its_clash_is_refused() -> None:
    # an auditor who deletes the clash entries, or widens delta after the fact, would recompute
    # without the calibration the adjudicator's verdicts imposed: refused, naming the clashes
    doc = to_document(sample())  # what _bad mutates
    assert any(o["clashes"] for o in doc["options"])
    k = next(i for i, o in enumerate(doc["options"]) if o["clashes"])
    err = _bad(lambda d: d["options"][k]["clashes"].clear())
    assert err.issues[0].expression == (f"options[{k}].clashes",)
    assert "never adjudicated" in err.message
    err = _bad(lambda d: d["parameters"].update(delta=0.99))
    assert "no clash entry" in err.message


def test_not_a_mapping_is_refused() -> None:
    with pytest.raises(DocumentError):
        from_document([])  # type: ignore[arg-type]


def test_evaluation_can_be_passed_in() -> None:
    d = sample()
    assert to_document(d, evaluate(d)) == to_document(d)
