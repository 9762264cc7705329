"""Dates a record cannot have, over the real transports: `canoe plan` on a bundle file and
GeneratePlan over loopback gRPC (the service's clock pinned to the eval's reference time). A
birth date in the future or implying an impossible age, and an Observation dated after the
request, are listed among the facts the panel could not use; no argument states a negative age,
clearance or interval, and the record date stays on or before the request."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fhir_mapping.careplan import deliberation_from_bundle
from service.cli import main
from service.core import to_document
from tests.fhir_mapping.test_ingest_dates import _with_birth, _with_creatinine
from tests.service.conftest import pb, serving

CREATED = "2026-11-30T09:00:00+00:00"
NEGATIVE = re.compile(r"(?<![\w.])-\d")
CASES = [
    ("birth-2090", _with_birth("opioid_gabapentin_benzo", "2090-01-01"), "Patient.birthDate"),
    ("birth-1850", _with_birth("ckd4_metformin", "1850-01-01"), "Patient.birthDate"),
    ("obs-2999", _with_creatinine("ckd4_metformin", "2999-01-01", 0.5), "Observation.effective"),
]


def _argument_texts(doc: object) -> str:
    """Every text, description and rationale the document states, joined."""
    if isinstance(doc, dict):
        own = [v for k, v in doc.items() if k in _WORDS and isinstance(v, str)]
        return "\n".join([*own, *(_argument_texts(v) for v in doc.values())])
    if isinstance(doc, list):
        return "\n".join(_argument_texts(v) for v in doc)
    return ""


_WORDS = frozenset({"text", "description", "rationale", "title"})


def _check(doc: dict[str, Any], field: str) -> None:
    unused = doc["meta"]["unused_facts"]
    assert any(
        field in u and ("after the request" in u or "plausible maximum" in u) for u in unused
    )
    texts = _argument_texts(doc)
    assert texts and not NEGATIVE.search(texts), NEGATIVE.search(texts)
    assert not re.search(r"\b\d{4,} months", texts)  # e.g. "11903 months before the record date"


@pytest.mark.parametrize(("bundle", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_canoe_plan_lists_the_impossible_date_and_states_no_impossible_fact(
    bundle: dict[str, Any], field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    assert main(["plan", str(path), "--format", "json", "--created", CREATED]) == 0
    doc = json.loads(capsys.readouterr().out)
    _check(doc, field)
    assert main(["plan", str(path), "--detail", "--created", CREATED, "--no-progress"]) == 0
    detail = capsys.readouterr().out
    assert field in detail and not re.search(r"-\d+-year-old", detail)


def test_canoe_plan_refuses_a_created_time_that_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(CASES[0][1]))
    assert main(["plan", str(path), "--created", "yesterday"]) == 2
    assert "ISO 8601" in capsys.readouterr().err


async def test_generate_plan_over_grpc_judges_dates_by_the_service_clock(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        h.app.clock = lambda: "2026-11-30T09:00:00.000+00:00"
        for _, bundle, field in CASES:
            r = await h.stub.GeneratePlan(
                pb.GeneratePlanRequest(bundle_json=json.dumps(bundle).encode())
            )
            d = deliberation_from_bundle(json.loads(r.careplan_bundle_json))
            doc = to_document(d)
            _check(doc, field)
