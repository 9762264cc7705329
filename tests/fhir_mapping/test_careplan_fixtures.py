"""Every realistic fixture: ingest the real Bundle, deliberate over its own references, write the
plan as FHIR, check it (R4B, official schema, references into the input), recover it exactly, and
contest it (reject the strongest supporter of the first included option)."""

from __future__ import annotations

import json

import pytest

from fhir_mapping.careplan import (
    careplan_of,
    deliberation_from_bundle,
    graph_from_careplan,
    plan_bundle,
)
from fhir_mapping.definitions import CS_ACTION, CS_INPUT
from fhir_mapping.ingest import ingest
from service.core import evaluate
from tests.conftest import REALISTIC_BUNDLES
from tests.fhir_mapping.factories import PRACTITIONER, deliberation_from_profile
from tests.fhir_mapping.fhir_checks import assert_references_resolve, assert_valid
from tests.support.contest import contest_bundle


def _input_refs(raw: bytes) -> dict[str, object]:
    bundle = json.loads(raw)
    return {
        f"{e['resource']['resourceType']}/{e['resource']['id']}": e["resource"]
        for e in bundle["entry"]
    }


@pytest.mark.parametrize("path", REALISTIC_BUNDLES, ids=lambda p: p.name.split("_")[0])
def test_real_fixture_round_trip(path):
    raw = path.read_bytes()
    profile = ingest(raw)
    d = deliberation_from_profile(profile)
    ev = evaluate(d)
    out = plan_bundle(d, ev, recorded="2026-11-30T10:00:00Z")
    assert_valid(out)
    inputs = _input_refs(raw)
    assert_references_resolve(out, inputs)
    assert deliberation_from_bundle(json.loads(json.dumps(out))) == d

    graph = graph_from_careplan(careplan_of(out)[1])
    included = [oid for oid in ev.plan if graph[oid]["arguments"][0]["stance"] == "support"]
    if not included:
        pytest.skip("no included option with a supporter")
    oid = included[0]
    best = max(
        (a for a in graph[oid]["arguments"] if a["stance"] == "support" and "sigma" in a),
        key=lambda a: a["sigma"],
    )
    task = {
        "resourceType": "Task",
        "id": "t-1",
        "status": "requested",
        "intent": "order",
        "code": {"coding": [{"system": CS_ACTION, "code": "reject"}]},
        "focus": {"reference": f"CarePlan/{d.plan_id}-v1"},
        "for": {"reference": d.patient_ref},
        "requester": {"reference": PRACTITIONER},
        "authoredOn": "2026-11-30T11:00:00Z",
        "input": [
            {
                "type": {"coding": [{"system": CS_INPUT, "code": "target"}]},
                "valueString": best["id"],
            }
        ],
    }
    after = contest_bundle(out, task, recorded="2026-11-30T11:30:00Z")
    assert_valid(after)
    inputs.update({f"CarePlan/{d.plan_id}-v1": {}, PRACTITIONER: {}})
    assert_references_resolve(after, inputs)
    g2 = graph_from_careplan(careplan_of(after)[1])[oid]
    assert (g2["activity"] is not None) == (g2["evaluation"]["score"] > 0.5)
    assert g2["evaluation"]["score"] < graph[oid]["evaluation"]["score"]
