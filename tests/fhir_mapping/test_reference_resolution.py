"""Every reference of every output resolves where its resource lives, by R4's Bundle resolution
rules (``fhir_checks.resolve_by_bundle_rules``): what the service writes inside the Bundle
(version-specific references against ``meta.versionId``), the patient's record at the source
(an absolute URL under the source's base, or marked as the source's when the base is unknown),
an earlier plan version at the service. Over the CLI for every fixture and each contested
version, with and without a source base; the gRPC and CDS Hooks transports have their own tests
beside their servers. An independent FHIR client library (fhirclient) reads the Bundle without
a server: CarePlan, its activities, their DetectedIssues and the Provenance of the CarePlan."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fhir_mapping.definitions import DEFAULT_BASE, ext_url
from service.cli import main
from tests.conftest import BAD_BUNDLES, REALISTIC_BUNDLES
from tests.examples.make_tasks import TASKS_DIR
from tests.fhir_mapping.fhir_checks import resolve_by_bundle_rules

CREATED = "2026-11-30T09:00:00+00:00"
RECORDED = "2026-11-30T11:00:00+00:00"
SOURCE = "https://ehr.example.net/fhir"
MARK = ext_url("source-reference")
FAILURES = {"nowhere", "wrong-server", "version-mismatch"}
RECORD_TYPES = {"Patient", "Condition", "MedicationRequest", "Observation", "Encounter"}


def outcomes(bundle: dict[str, Any]) -> list[tuple[str, str, str]]:
    return resolve_by_bundle_rules(bundle, service_base=DEFAULT_BASE, source_mark=MARK)


def assert_all_resolve(bundle: dict[str, Any]) -> Counter[str]:
    found = outcomes(bundle)
    bad = [x for x in found if x[2] in FAILURES]
    assert not bad, bad[:10]
    return Counter(o for _w, _r, o in found)


def _plan(capsys: pytest.CaptureFixture[str], bundle: Path, *extra: str) -> dict[str, Any]:
    argv = ["plan", str(bundle), "--format", "fhir", "--created", CREATED, *extra]
    assert main(argv) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _of(bundle: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == kind]


PLANNABLE = [*REALISTIC_BUNDLES, *(b for b in BAD_BUNDLES if "unknown_codes" in b.name)]


@pytest.mark.parametrize("bundle", PLANNABLE, ids=lambda p: p.stem)
def test_every_reference_of_every_plan_resolves(
    bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(capsys, bundle)
    counts = assert_all_resolve(plan)
    assert counts["bundle"] > 10 and counts["source"] > 0
    assert counts["service"] == 0  # version 1 names no earlier version
    # Our own resources: the Provenance's version-specific target matches the CarePlan.
    (cp,) = _of(plan, "CarePlan")
    (prov,) = _of(plan, "Provenance")
    assert prov["target"][0]["reference"] == f"CarePlan/{cp['id']}/_history/1"
    assert cp["meta"]["versionId"] == "1"
    # The record: at the entry's own RESTful fullUrl where it had one; otherwise (Synthea's
    # urn:uuid fullUrls name no server) as sent, marked as the source's.
    raw = json.loads(bundle.read_text())
    patient_url = next(
        e.get("fullUrl", "") for e in raw["entry"] if e["resource"]["resourceType"] == "Patient"
    )
    subject = cp["subject"]
    if patient_url.startswith("http"):
        assert subject == {"reference": patient_url}
    else:
        assert subject["extension"] == [{"url": MARK, "valueBoolean": True}]
        assert subject["reference"].startswith("Patient/")


@pytest.mark.parametrize("bundle", REALISTIC_BUNDLES[:3], ids=lambda p: p.stem)
def test_a_source_base_makes_the_record_absolute_at_the_ehr(
    bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(capsys, bundle, "--source-base", SOURCE + "/")
    counts = assert_all_resolve(plan)
    assert counts["source"] > 0
    for where, ref, outcome in outcomes(plan):
        kind = ref.split("/")[-2] if "://" in ref else ref.split("/")[0]
        if kind in RECORD_TYPES:
            assert ref.startswith(SOURCE + "/" + kind + "/"), (where, ref)
            assert outcome == "source"
    assert MARK not in json.dumps(plan)


def test_restful_fullurls_win_over_a_given_source_base(
    capsys: pytest.CaptureFixture[str],
) -> None:
    restful = next(p for p in REALISTIC_BUNDLES if "yvone889" in p.name)
    raw = json.loads(restful.read_text())
    urls = {
        f"{e['resource']['resourceType']}/{e['resource']['id']}": e["fullUrl"] for e in raw["entry"]
    }
    assert all(u.startswith("http://example.org/fhir/") for u in urls.values())
    plan = _plan(capsys, restful, "--source-base", SOURCE)
    assert_all_resolve(plan)
    (cp,) = _of(plan, "CarePlan")
    assert cp["subject"]["reference"] in urls.values()
    for _where, ref, outcome in outcomes(plan):
        if ref.startswith("http://example.org/fhir/"):
            assert outcome == "source"
            assert ref in urls.values(), ref


def test_contested_versions_resolve_and_name_the_earlier_version_at_the_service(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    adalberto = next(p for p in REALISTIC_BUNDLES if "adalberto" in p.name)
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(_plan(capsys, adalberto)))
    for task in sorted(TASKS_DIR.glob("*.json")):
        assert main(["contest", str(plan_file), str(task), "--recorded", RECORDED]) == 0
        contested = json.loads(capsys.readouterr().out)
        counts = assert_all_resolve(contested)
        assert counts["service"] >= 2, task.name  # CarePlan.replaces, the revision entity
        (cp,) = _of(contested, "CarePlan")
        (prov,) = _of(contested, "Provenance")
        version = cp["meta"]["versionId"]
        assert prov["target"][0]["reference"] == f"CarePlan/{cp['id']}/_history/{version}"


def test_detected_issues_are_in_the_bundle_and_linked_from_their_activities(
    capsys: pytest.CaptureFixture[str],
) -> None:
    adalberto = next(p for p in REALISTIC_BUNDLES if "adalberto" in p.name)
    plan = _plan(capsys, adalberto)
    issues = {i["id"]: i for i in _of(plan, "DetectedIssue")}
    assert issues
    (cp,) = _of(plan, "CarePlan")
    listed = {r["reference"].split("/")[1] for r in cp["supportingInfo"]}
    assert listed == set(issues)
    linked = {
        x["valueReference"]["reference"].split("/")[1]
        for act in cp["activity"]
        for x in act["extension"]
        if x["url"] == ext_url("detected-issue")
    }
    assert linked and linked <= set(issues)
    for issue in issues.values():
        (coding,) = issue["code"]["coding"]
        assert coding["system"] == "http://terminology.hl7.org/CodeSystem/v3-ActCode"
        assert issue["severity"] in ("high", "moderate", "low")
        assert issue["implicated"], issue["id"]
        kinds = {r["reference"].split("/")[0] for r in issue["implicated"]}
        assert kinds <= {"MedicationRequest", "Condition", "Medication"}
        assert issue["detail"] and "mitigation" not in issue


def test_fhirclient_reads_careplan_activities_issues_and_provenance_offline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fhirclient.models.bundle import Bundle
    from fhirclient.models.careplan import CarePlan
    from fhirclient.models.detectedissue import DetectedIssue
    from fhirclient.models.provenance import Provenance
    from fhirclient.server import FHIRServer

    adalberto = next(p for p in REALISTIC_BUNDLES if "adalberto" in p.name)
    raw = _plan(capsys, adalberto)
    bundle = Bundle(raw, strict=True)
    # The service's base, so fhirclient reads relative references as the Bundle rules say;
    # constructing the server object contacts nothing.
    bundle.origin_server = FHIRServer(None, base_uri=DEFAULT_BASE + "/")
    (cp,) = [e.resource for e in bundle.entry if isinstance(e.resource, CarePlan)]
    assert cp.activity
    seen = 0
    for activity in cp.activity:
        for x in activity.extension or ():
            if x.url == ext_url("detected-issue"):
                issue = x.valueReference.resolved(DetectedIssue)
                assert isinstance(issue, DetectedIssue), x.valueReference.reference
                assert issue.code.coding[0].code
                seen += 1
    assert seen
    (prov,) = [e.resource for e in bundle.entry if isinstance(e.resource, Provenance)]
    target, _, version = prov.target[0].reference.partition("/_history/")
    assert target == f"CarePlan/{cp.id}" and version == cp.meta.versionId
