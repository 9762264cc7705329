"""CarePlan + Provenance out: validity, exact recovery, the graph from extensions alone."""

from __future__ import annotations

import base64
import copy
import json
from dataclasses import replace

import pytest

from fhir_mapping.careplan import (
    careplan_of,
    deliberation_from_bundle,
    graph_from_careplan,
    plan_bundle,
)
from fhir_mapping.definitions import (
    AI_CONFIDENCE,
    AIAST,
    CANOE_BASE,
    DELIBERATION_CONTENT_TYPE,
    EXTENSIONS,
    ext_url,
)
from service.core import evaluate
from service.errors import BundleError, DocumentError
from tests.fhir_mapping.factories import PATIENT, input_resources, small_deliberation
from tests.fhir_mapping.fhir_checks import all_references, assert_references_resolve, assert_valid

RECORDED = "2026-11-30T10:00:00Z"
# The mark on a reference to the patient's record whose source base the service was not told.
AT_SOURCE = [{"url": ext_url("source-reference"), "valueBoolean": True}]


def _bundle(d=None):
    d = d or small_deliberation()
    return d, evaluate(d), plan_bundle(d, evaluate(d), recorded=RECORDED, service_version="1.2.3")


def _resources(bundle, kind):
    return [e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == kind]


def test_bundle_validates_as_r4b_and_against_the_official_schema():
    _, _, b = _bundle()
    assert b["type"] == "collection"
    assert_valid(b)


def test_deliberation_is_recovered_exactly_even_through_json_text():
    d, _, b = _bundle()
    assert deliberation_from_bundle(b) == d
    assert deliberation_from_bundle(json.loads(json.dumps(b))) == d


def test_every_reference_resolves_in_the_bundle_or_the_input():
    _, _, b = _bundle()
    refs = list(all_references(b))
    assert len(refs) > 20
    assert_references_resolve(b, input_resources())


def test_careplan_core_elements():
    d, ev, b = _bundle()
    _, cp = careplan_of(b)
    assert cp["id"] == f"{d.plan_id}-v1"
    assert cp["meta"]["versionId"] == "1"
    assert cp["status"] == "draft"
    assert cp["intent"] == "proposal"
    assert cp["subject"] == {"reference": PATIENT, "extension": AT_SOURCE}
    assert cp["created"] == RECORDED
    assert cp["category"]
    assert "replaces" not in cp
    (service,) = [r for r in _resources(b, "Device") if r["type"]["text"].startswith("clinical")]
    assert cp["author"] == {"reference": f"Device/{service['id']}"}
    # accepted problems only (obesity was refused by strong consensus), Conditions only
    assert [a["reference"] for a in cp["addresses"]] == [
        "Condition/cond-falls",
        "Condition/cond-t2dm",
        "Condition/cond-insomnia",
    ]
    assert [p.problem_id for p in ev.problems if p.decision == "accept"] == [
        "prob-falls",
        "prob-t2dm",
        "prob-insomnia",
    ]
    assert len(cp["activity"]) == len(ev.plan) == 2


def test_activities_follow_the_plan_order_with_kind_code_and_medication():
    _, ev, b = _bundle()
    _, cp = careplan_of(b)
    graph = graph_from_careplan(cp)
    ids = [graph_id for graph_id, g in graph.items() if g["activity"] is not None]
    assert sorted(ids, key=lambda i: graph[i]["activity"]) == list(ev.plan)
    med, mon = cp["activity"]
    assert med["detail"]["kind"] == "MedicationRequest"
    assert med["detail"]["status"] == "not-started"
    assert med["detail"]["extension"] == [
        {
            "url": ext_url("activity-medication"),
            "valueReference": {
                "reference": "MedicationRequest/mr-zolpidem",
                "extension": AT_SOURCE,
            },
        }
    ]
    assert med["detail"]["description"].startswith("Reduce zolpidem")
    assert mon["detail"]["code"]["coding"] == [
        {
            "system": "http://loinc.org",
            "code": "4548-4",
            "display": "Hemoglobin A1c/Hemoglobin.total in Blood",
        }
    ]
    assert mon["detail"]["reasonReference"] == [
        {"reference": "Condition/cond-t2dm", "extension": AT_SOURCE},
        {"reference": "Observation/obs-hba1c", "extension": AT_SOURCE},
    ]


def test_ai_transparency_label_and_confidence():
    _, ev, b = _bundle()
    _, cp = careplan_of(b)
    assert AIAST in cp["meta"]["security"]
    (binary,) = _resources(b, "Binary")
    assert AIAST in binary["meta"]["security"]
    for oid, act in zip(ev.plan, cp["activity"], strict=True):
        conf = [x for x in act["extension"] if x["url"] == AI_CONFIDENCE]
        assert conf == [{"url": AI_CONFIDENCE, "valueDecimal": ev.option(oid).score}]
        assert 0.5 < conf[0]["valueDecimal"] <= 1.0


def test_graph_from_extensions_alone_matches_the_deliberation_and_its_evaluation():
    d, ev, b = _bundle()
    _, cp = careplan_of(b)
    cp.pop("text")  # no narrative, no Binary: extensions only
    graph = graph_from_careplan(cp)
    assert set(graph) == {o.id for o in d.options}
    for o in d.options:
        g, res = graph[o.id], ev.option(o.id)
        assert g["evaluation"]["score"] == res.score
        assert g["evaluation"]["decision"] == res.decision
        assert g["evaluation"]["decidedBy"] == res.decided_by
        assert g["evaluation"]["borderline"] is res.borderline
        assert (g["activity"] is not None) == (o.id in ev.plan)
        assert len(g["arguments"]) == len(o.arguments)
        for a, x in zip(o.arguments, g["arguments"], strict=True):
            node = res.nodes[a.id]
            assert (x["id"], x["role"], x["stance"], x["text"]) == (a.id, a.role, a.stance, a.text)
            assert tuple(x.get("evidence", [])) == a.evidence
            assert tuple(x.get("fact", [])) == a.facts
            assert (x["tau"], x["tauCalibrated"], x.get("sigma")) == (
                a.tau,
                node.tau_calibrated,
                node.sigma,
            )
        assert [(r["source"], r["target"], r["relation"]) for r in g["relations"]] == [
            (e.source, e.target, e.relation) for e in o.edges
        ]
        assert [(c["support"], c["attack"], c.get("winner")) for c in g["clashes"]] == [
            (c.support, c.attack, c.winner) for c in o.clashes
        ]


def test_arena_calibration_is_visible_in_the_extensions():
    d, _, b = _bundle()
    graph = graph_from_careplan(careplan_of(b)[1])
    pharm = next(
        a for a in graph["opt-deprescribe-zolpidem"]["arguments"] if a["role"] == "pharmacist"
    )
    # won its only clash: tau~ = tau + beta * (2*1 - 1)
    assert pharm["tauCalibrated"] == pytest.approx(0.7 + d.parameters.beta)


def test_rejected_option_carries_why_on_the_careplan():
    _, ev, b = _bundle()
    _, cp = careplan_of(b)
    g = graph_from_careplan(cp)["opt-pt-referral"]
    assert g["activity"] is None
    assert g["evaluation"]["decision"] == "exclude"
    assert g["evaluation"]["score"] == ev.option("opt-pt-referral").score <= 0.5
    assert "<= threshold 0.5" in g["evaluation"]["explanation"]
    assert "Physiotherapy referral" in cp["text"]["div"]


def test_problem_reconciliation_extensions():
    d, _, b = _bundle()
    _, cp = careplan_of(b)
    probs = [x for x in cp["extension"] if x["url"] == ext_url("problem-reconciliation")]
    assert len(probs) == len(d.problems)
    by_id = {}
    for x in probs:
        parts = {
            p["url"]: next(v for k, v in p.items() if k.startswith("value")) for p in x["extension"]
        }
        by_id[parts["problemId"]] = parts
    assert by_id["prob-t2dm"]["path"] == "conflict"
    assert by_id["prob-t2dm"]["decidedBy"] == "arbitration"
    assert by_id["prob-obesity"]["decision"] == "reject"
    assert by_id["prob-insomnia"]["decidedBy"] == "fallback"


def test_provenance_names_the_service_each_role_agent_and_every_cited_resource():
    d, _, b = _bundle()
    (prov,) = _resources(b, "Provenance")
    assert prov["target"][0] == {"reference": f"CarePlan/{d.plan_id}-v1/_history/1"}
    assert prov["recorded"] == RECORDED
    assert prov["activity"]["coding"][0]["code"] == "CREATE"
    devices = {f"Device/{r['id']}": r for r in _resources(b, "Device")}
    roles = {a["role"][0]["text"] for a in prov["agent"]}
    assert {"pharmacist", "nurse", "general practitioner", "physiotherapist"} <= roles
    for agent in prov["agent"]:
        dev = devices[agent["who"]["reference"]]
        if agent["role"][0]["text"] != "care-plan service":
            assert agent["role"][0]["text"] in dev["type"]["text"]
            versions = {v["type"]["text"]: v["value"] for v in dev["version"]}
            assert versions == {
                "model": d.meta.backend,
                "knowledge-base": d.meta.evidence_version,
                "software": "1.2.3",
            }
    sources = {e["what"]["reference"] for e in prov["entity"] if e["role"] == "source"}
    cited = {f for o in d.options for a in o.arguments for f in a.facts}
    assert cited <= sources
    assert PATIENT in sources
    assert not [e for e in prov["entity"] if e["role"] == "revision"]


def test_binary_holds_the_deliberation_document():
    d, _, b = _bundle()
    (binary,) = _resources(b, "Binary")
    assert binary["contentType"] == DELIBERATION_CONTENT_TYPE
    doc = json.loads(base64.b64decode(binary["data"]))
    assert doc["format"] == "canoe.deliberation/1"
    assert doc["plan_id"] == d.plan_id


def test_output_is_deterministic():
    _, _, b1 = _bundle()
    _, _, b2 = _bundle()
    assert json.dumps(b1, sort_keys=True) == json.dumps(b2, sort_keys=True)


def test_full_urls_sit_under_the_project_base_and_are_unique():
    _, _, b = _bundle()
    urls = [e["fullUrl"] for e in b["entry"]]
    assert len(set(urls)) == len(urls)
    assert all(u.startswith(f"{CANOE_BASE}/") for u in urls)


def test_narrative_escapes_markup_and_still_validates():
    d = small_deliberation()
    o = d.options[0]
    evil = replace(o, title="<script>alert(1)</script> & taper", description="a < b")
    d = replace(d, options=(evil, *d.options[1:]))
    _, _, b = _bundle(d)
    div = careplan_of(b)[1]["text"]["div"]
    assert "<script>" not in div
    assert "&lt;script&gt;" in div
    assert_valid(b)


def test_empty_plan_still_validates():
    d = small_deliberation()
    d = replace(d, options=tuple(replace(o, human_decision="exclude") for o in d.options))
    _, ev, b = _bundle(d)
    assert ev.plan == ()
    _, cp = careplan_of(b)
    assert "activity" not in cp
    assert_valid(b)
    assert deliberation_from_bundle(b) == d


def test_every_extension_used_is_defined_with_its_parts():
    _, _, b = _bundle()
    seen = set()

    def walk(node):
        if isinstance(node, dict):
            for x in node.get("extension", ()):
                url = x["url"]
                if url.startswith(CANOE_BASE):
                    name = url.rsplit("/", 1)[1]
                    spec = EXTENSIONS[name]
                    seen.add(name)
                    if spec.parts:
                        allowed = {p.url: p for p in spec.parts}
                        used = [p["url"] for p in x["extension"]]
                        assert set(used) <= set(allowed), (name, set(used) - set(allowed))
                        for p in spec.parts:
                            n = used.count(p.url)
                            assert n >= p.min, (name, p.url)
                            assert p.max == "*" or n <= int(p.max), (name, p.url)
                            for sub in x["extension"]:
                                if sub["url"] == p.url:
                                    key = "value" + p.type[0].upper() + p.type[1:]
                                    assert key in sub, (name, p.url, sub)
                    else:
                        key = "value" + spec.value[0].upper() + spec.value[1:]
                        assert key in x
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(b)
    # no contestation in version 1, and no Task (whose authoredOn a clamp may keep)
    assert seen == set(EXTENSIONS) - {"contestation", "original-authored-on"}


def test_tampered_binary_is_refused():
    _, _, b = _bundle()
    bad = copy.deepcopy(b)
    for e in bad["entry"]:
        if e["resource"]["resourceType"] == "Binary":
            e["resource"]["data"] = base64.b64encode(b"not json").decode()
    with pytest.raises(DocumentError):
        deliberation_from_bundle(bad)


def test_version_mismatch_between_careplan_and_document_is_refused():
    _, _, b = _bundle()
    bad = copy.deepcopy(b)
    bad["entry"][0]["resource"]["meta"]["versionId"] = "7"
    with pytest.raises(DocumentError) as err:
        deliberation_from_bundle(bad)
    assert err.value.issues[0].code == "conflict"


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b.update(resourceType="Parameters"),
        lambda b: b.update(
            entry=[e for e in b["entry"] if e["resource"]["resourceType"] != "CarePlan"]
        ),
    ],
)
def test_a_bundle_without_one_careplan_is_refused(mutate):
    _, _, b = _bundle()
    bad = copy.deepcopy(b)
    mutate(bad)
    with pytest.raises(BundleError):
        deliberation_from_bundle(bad)


def test_missing_binary_is_refused_as_not_found():
    _, _, b = _bundle()
    bad = copy.deepcopy(b)
    bad["entry"] = [e for e in bad["entry"] if e["resource"]["resourceType"] != "Binary"]
    with pytest.raises(DocumentError) as err:
        deliberation_from_bundle(bad)
    assert err.value.issues[0].code == "not-found"
    assert err.value.issues[0].expression == ("Bundle.entry[0].resource.extension",)
