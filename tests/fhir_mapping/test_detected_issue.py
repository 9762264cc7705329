"""DetectedIssue per safety finding: the code of its kind, severity from the knowledge's harm,
implicated record, evidence, detail in our words, and a mitigation once a clinician contests the
option; linked from its CarePlan activity and listed in CarePlan.supportingInfo. Findings of a
kind without a detected-issue code (an omission) write none; options carry their findings
through the deliberation document."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fhir_mapping._detected import ISSUE_CODES
from fhir_mapping.careplan import careplan_of, deliberation_from_bundle, plan_bundle
from fhir_mapping.definitions import ext_url
from service.core import evaluate, from_document, to_document
from service.core.contest import DecideOption, apply
from service.core.model import Finding
from tests.fhir_mapping.factories import PATIENT, small_deliberation
from tests.fhir_mapping.fhir_checks import assert_valid

RECORDED = "2026-11-30T10:00:00Z"
ACT_CODE = "http://terminology.hl7.org/CodeSystem/v3-ActCode"


def _issues(b: dict) -> list[dict]:
    return [e["resource"] for e in b["entry"] if e["resource"]["resourceType"] == "DetectedIssue"]


def _plan(d):
    return plan_bundle(d, evaluate(d), recorded=RECORDED, service_version="1.2.3")


def test_the_z_drug_finding_is_an_age_alert_on_the_request_it_implicates():
    d = small_deliberation()
    b = _plan(d)
    assert_valid(b)
    (issue,) = _issues(b)
    assert issue["code"]["coding"] == [{"system": ACT_CODE, "code": "AGE", "display": "Age Alert"}]
    assert issue["severity"] == "high"  # the knowledge's "major" harm
    assert issue["status"] == "final"
    assert issue["patient"]["reference"] == PATIENT
    assert [r["reference"] for r in issue["implicated"]] == ["MedicationRequest/mr-zolpidem"]
    (evidence,) = issue["evidence"]
    assert evidence["code"] == [{"text": "knowledge criterion beers-z-drugs"}]
    # What the supporting arguments cite beyond the implicated request.
    assert {r["reference"] for r in evidence["detail"]} == {
        "Condition/cond-falls",
        "Encounter/enc-1",
    }
    assert issue["detail"].startswith(
        "Drug unsuited to the patient's age: Taper and stop zolpidem."
    )
    assert issue["author"]["reference"].startswith("Device/canoe-service-")
    assert "mitigation" not in issue
    _, cp = careplan_of(b)
    ref = {"reference": f"DetectedIssue/{issue['id']}"}
    assert cp["supportingInfo"] == [ref]
    links = [
        x["valueReference"]
        for act in cp["activity"]
        for x in act["extension"]
        if x["url"] == ext_url("detected-issue")
    ]
    assert links == [ref]


def test_a_clinicians_decision_is_the_mitigation():
    d = small_deliberation()
    after = apply(
        d,
        DecideOption("opt-deprescribe-zolpidem", "exclude"),
        task_id="task-1",
        actor="Practitioner/dr-ada",
        at="2026-11-30T12:00:00Z",
        reason="patient sleeps well, falls explained by a new shoe",
    )
    b = plan_bundle(after, evaluate(after), recorded=RECORDED, previous_version=1)
    assert_valid(b)
    (issue,) = _issues(b)
    (m,) = issue["mitigation"]
    assert m["date"] == "2026-11-30T12:00:00Z"
    assert m["author"] == {
        "reference": "Practitioner/dr-ada",
        "extension": m["author"]["extension"],
    }
    assert m["action"]["text"] == (
        "A clinician decided on Taper and stop zolpidem: patient sleeps well, falls explained "
        "by a new shoe"
    )
    # Left out by the clinician: still listed on the plan, linked from no activity.
    _, cp = careplan_of(b)
    assert cp["supportingInfo"] == [{"reference": f"DetectedIssue/{issue['id']}"}]
    assert ext_url("detected-issue") not in str(cp.get("activity", ""))


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("drug-drug", "DRG"),
        ("drug-disease", "COND"),
        ("dose-ceiling", "DOSEH"),
        ("duplicate-class", "DUPTHPCLS"),
        ("drug-level", "LAB"),
        ("renal-dose", "DOSECOND"),
    ],
)
def test_each_kind_of_safety_finding_has_its_code(kind, code):
    d = small_deliberation()
    opt = replace(d.options[0], findings=(Finding(kind, "moderate", f"c-{kind}"),))
    d = replace(d, options=(opt, *d.options[1:]))
    (issue,) = _issues(_plan(d))
    assert issue["code"]["coding"][0]["code"] == code == ISSUE_CODES[kind][0]
    assert issue["severity"] == "moderate"


def test_an_omission_is_no_detected_issue():
    d = small_deliberation()
    opt = replace(d.options[0], findings=(Finding("omission", "major", "c-omit"),))
    d = replace(d, options=(opt, *d.options[1:]))
    b = _plan(d)
    assert _issues(b) == []
    assert "supportingInfo" not in careplan_of(b)[1]


def test_findings_travel_through_the_document_and_old_documents_still_load():
    d = small_deliberation()
    doc = to_document(d, evaluate(d))
    assert doc["options"][0]["findings"] == [
        {"kind": "drug-age", "severity": "major", "criterion": "beers-z-drugs"}
    ]
    assert from_document(doc) == d
    assert deliberation_from_bundle(_plan(d)) == d
    old = {
        **doc,
        "options": [{k: v for k, v in o.items() if k != "findings"} for o in doc["options"]],
    }
    assert from_document(old).options[0].findings == ()


def test_the_embedded_panel_carries_each_criterions_kind_and_recompute_agrees(tmp_path, capsys):
    from inference.knowledge.rules import CRITERIA
    from service.cli import main
    from tests.conftest import fixture_bundle

    by_id = {c.id: c for c in CRITERIA}
    doc_file = tmp_path / "d.json"
    argv = ["plan", str(fixture_bundle("adalberto")), "--format", "json", "--created", RECORDED]
    assert main(argv) == 0
    doc_file.write_text(capsys.readouterr().out)
    import json

    doc = json.loads(doc_file.read_text())
    findings = [f for o in doc["options"] for f in o.get("findings", ())]
    assert findings
    for f in findings:
        c = by_id[f["criterion"]]
        assert (f["kind"], f["severity"]) == (c.kind, c.factors.severity)
    assert main(["recompute", "--check", str(doc_file)]) == 0
