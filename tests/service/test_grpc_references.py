"""References over gRPC, a real loopback server and a real client: a ``source_base`` on
GeneratePlan points the plan's references to the record at the EHR (and contested versions keep
them there); without one they are marked as the source's; a bad base is INVALID_ARGUMENT with an
OperationOutcome naming the field. Every reference resolves by R4's Bundle rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc

from fhir_mapping.definitions import DEFAULT_BASE, ext_url
from tests.fhir_mapping.fhir_checks import resolve_by_bundle_rules
from tests.service.conftest import bundle_bytes, pb, reject_task, serving
from tests.service.test_grpc_api import expect_error, resources

SOURCE = "https://ehr.example.net/fhir"
MARK = ext_url("source-reference")
FAILURES = {"nowhere", "wrong-server", "version-mismatch"}


def _outcomes(bundle_json: bytes) -> list[tuple[str, str, str]]:
    found = resolve_by_bundle_rules(
        json.loads(bundle_json), service_base=DEFAULT_BASE, source_mark=MARK
    )
    assert not [x for x in found if x[2] in FAILURES]
    return found


def _first_argument(bundle_json: bytes) -> str:
    doc = resources(bundle_json, "Binary")[0]["data"]
    import base64

    d: dict[str, Any] = json.loads(base64.b64decode(doc))
    for o in d["options"]:
        for n in o["nodes"]:
            if n["kind"] == "argument" and n["stance"] == "support":
                return str(n["id"])
    raise AssertionError("no supporting argument")


async def test_a_source_base_points_the_record_at_the_ehr_in_every_version(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as h:
        r = await h.stub.GeneratePlan(
            pb.GeneratePlanRequest(bundle_json=bundle_bytes("adalberto"), source_base=SOURCE)
        )
        (cp,) = resources(r.careplan_bundle_json, "CarePlan")
        patient = cp["subject"]["reference"]
        assert patient.startswith(f"{SOURCE}/Patient/")
        found = _outcomes(r.careplan_bundle_json)
        record = [ref for _w, ref, o in found if o == "source"]
        assert len(record) > 20 and all(ref.startswith(SOURCE + "/") for ref in record)
        assert MARK.encode() not in r.careplan_bundle_json

        task = reject_task(
            r.plan_id,
            1,
            _first_argument(r.careplan_bundle_json),
            tid="t-ref",
            patient=patient,  # as the plan names the patient: at the EHR
        )
        task["requester"] = {"reference": f"{SOURCE}/Practitioner/dr-1"}
        c = await h.stub.Contest(
            pb.ContestRequest(plan_id=r.plan_id, version=1, tasks_json=json.dumps(task).encode())
        )
        (cp2,) = resources(c.careplan_bundle_json, "CarePlan")
        assert cp2["subject"]["reference"] == patient
        (stored,) = resources(c.careplan_bundle_json, "Task")
        assert stored["for"]["reference"] == patient
        (prov,) = resources(c.careplan_bundle_json, "Provenance")
        assert {"reference": f"{SOURCE}/Practitioner/dr-1"} in [a["who"] for a in prov["agent"]]
        assert {o for _w, _r, o in _outcomes(c.careplan_bundle_json)} >= {"bundle", "service"}


async def test_without_a_source_base_the_record_is_marked_as_the_sources(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        r = await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes("adalberto")))
        (cp,) = resources(r.careplan_bundle_json, "CarePlan")
        assert cp["subject"]["extension"] == [{"url": MARK, "valueBoolean": True}]
        assert "source" in {o for _w, _r, o in _outcomes(r.careplan_bundle_json)}


async def test_a_bad_source_base_is_invalid_argument(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        for bad in ("ftp://ehr.example.net/fhir", "https://ehr.example.net/fhir?x=1", "ehr"):
            oo = await expect_error(
                h.stub.GeneratePlan(
                    pb.GeneratePlanRequest(bundle_json=bundle_bytes("adalberto"), source_base=bad)
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
            )
            (issue,) = oo["issue"]
            assert issue["expression"] == ["source_base"]
            assert "source_base" in issue["diagnostics"]
