"""The patient-view card says what the plan could not check, over the real CDS Hooks transport
(a real HTTP server, a signed client JWT): a high-risk gap raises the indicator to ``warning``;
an in-scope record keeps ``info``."""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from service.text.summary import NO_GAP
from tests.cds_hooks.conftest import Servers, cds_fixture

PV = "careplan-patient-view"


def _request(birth_date: str, medicines: list[tuple[str, str]]) -> dict[str, Any]:
    """A patient-view request for a record of one Patient and the given medicines (text,
    RxNorm code), fully prefetched, with no condition, allergy or observation."""
    body = copy.deepcopy(cds_fixture("requests", "patient-view_trey_berge.json"))
    body["hookInstance"] = str(uuid.uuid4())
    pid = body["context"]["patientId"]
    pre = body["prefetch"]
    pre["patient"]["birthDate"] = birth_date
    for key in ("conditions", "allergies", "observations"):
        pre[key]["entry"] = []
        pre[key]["total"] = 0
    template = pre["medications"]["entry"][0]
    entries = []
    for k, (text, rxcui) in enumerate(medicines):
        e = copy.deepcopy(template)
        r = e["resource"]
        r["id"] = f"med-{k}"
        e["fullUrl"] = e["fullUrl"].rsplit("/", 1)[0] + f"/med-{k}"
        r["medicationCodeableConcept"] = {
            "coding": [
                {
                    "system": "http://www.nlm.nih.gov/research/umls/rxnorm",
                    "code": rxcui,
                    "display": text,
                }
            ],
            "text": text,
        }
        r["subject"] = {"reference": f"Patient/{pid}"}
        r["authoredOn"] = "2019-01-01T00:00:00+00:00"
        r.pop("reasonReference", None)
        entries.append(e)
    pre["medications"]["entry"] = entries
    pre["medications"]["total"] = len(entries)
    return body


def test_a_child_on_an_unrecognised_medicine_gets_a_warning_card(servers: Servers) -> None:
    body = _request("2014-05-01", [("Zorbitaxumab 40 MG Injection", "999999991")])
    r = servers.post(PV, body)
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    assert card["indicator"] == "warning"
    assert "not checked" in card["summary"]
    detail = card["detail"]
    assert "**What was checked**" in detail and "NOT CHECKED, needs a human" in detail
    assert "a child or adolescent \\(under 18\\)" in detail  # record text is escaped
    assert "No check covers: Zorbitaxumab 40 MG Injection \\(not in the drug knowledge\\)" in detail
    assert "MedicationRequest/" not in detail


def test_an_in_scope_adult_with_nothing_missing_keeps_an_info_card(servers: Servers) -> None:
    body = _request("1950-05-01", [("amlodipine 5 MG Oral Tablet", "197361")])
    # a current record: one that ends years before today first asks to confirm it (a warning)
    recent = (datetime.now(UTC) - timedelta(days=10)).isoformat(timespec="seconds")
    for e in body["prefetch"]["medications"]["entry"]:
        e["resource"]["authoredOn"] = recent
    r = servers.post(PV, body)
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    assert NO_GAP in card["detail"]
    assert "Nothing found outside" not in card["detail"]
    assert card["indicator"] == "info", card["detail"]


def test_an_uncovered_high_alert_medicine_raises_the_card_to_a_warning(servers: Servers) -> None:
    """Imatinib (oral chemotherapy, an ISMP high-alert medicine) is one no check reads: the
    card rises to a warning, says so in its summary, and names it first, with its list."""
    body = _request(
        "1950-05-01",
        [("amlodipine 5 MG Oral Tablet", "197361"), ("Imatinib 400 MG Oral Tablet", "999999992")],
    )
    recent = (datetime.now(UTC) - timedelta(days=10)).isoformat(timespec="seconds")
    for e in body["prefetch"]["medications"]["entry"]:
        e["resource"]["authoredOn"] = recent
    r = servers.post(PV, body)
    assert r.status_code == 200, r.text
    (card,) = r.json()["cards"]
    assert card["indicator"] == "warning", card["detail"]
    assert card["summary"].endswith(
        "not checked: Imatinib 400 MG Oral Tablet (not in the drug knowledge)"
    )
    assert "No check covers: Imatinib 400 MG Oral Tablet" in card["detail"]
    assert "ISMP high-alert medicine, chemotherapy" in card["detail"]
    assert NO_GAP not in card["detail"]
