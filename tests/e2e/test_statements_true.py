"""Every plan of every fixture and vignette, re-read sentence by sentence against its record.

Independently of the checker the interpreter runs, this reads what each plan says (titles,
descriptions, arguments, the clinician summary and the coverage line) and holds the statements
of the kinds a blind review found false against the record itself:

* "no result in the record" for a test whose result the record holds (by code or by name),
  and "latest <test> not recorded" beside such a result;
* "stopped during the <stay>" for a medicine the record still orders;
* stop-smoking advice to a patient whose latest smoking status is not current;
* "Nothing found outside what the knowledge covers" at all.

It also totals the claims the checker held and withheld over the whole set.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge import analyse
from inference.knowledge.claims import CurrentSmoker, check, latest_named
from service.record.profile import PatientProfile
from service.record.vocabulary import LOINC_SHORT_NAMES
from tests.support.plan_hashes import CREATED, bundles, plan_output

ROOT = Path(__file__).resolve().parents[2]
PLANNED = [
    p
    for p in bundles()
    if not p.name.startswith("bad_") and b'"resourceType": "Bundle"' in p.read_bytes()[:200]
]
_NO_RESULT = re.compile(r"Check ([^()]+?(?: \([^()]*\))?) \(no result in the record\)")
_NOT_RECORDED = re.compile(r"latest ([A-Za-z0-9 -]+?) (?:at )?not recorded")
# What the monitoring titles call a test besides its short name.
_TITLES = {
    "blood pressure": "blood_pressure",
    "cognitive assessment (mmse or equivalent)": "cognition",
}
_STOPPED = re.compile(r"Keep (\S+) off the medicine list: stopped during")


def _plan(path: Path) -> tuple[PatientProfile, dict[str, Any], str]:
    profile = ingest(path.read_bytes(), received=datetime.fromisoformat(CREATED))
    rc, _, body = plan_output(path).partition("\n")
    assert rc == "0", f"{path.name}: plan failed"
    doc = json.loads(body)
    return profile, doc, body


@pytest.fixture(scope="module")
def plans() -> dict[str, tuple[PatientProfile, dict[str, Any], str]]:
    return {str(p.relative_to(ROOT)): _plan(p) for p in PLANNED}


def _texts(doc: dict[str, Any]) -> list[str]:
    out = []
    for o in doc["options"]:
        out += [o["title"], o["description"], *(a["text"] for a in o.get("arguments", ()))]
    return out


def test_no_result_is_said_only_where_the_record_holds_none(plans) -> None:  # type: ignore[no-untyped-def]
    by_name = {v.lower(): k for k, v in LOINC_SHORT_NAMES.items()} | _TITLES
    false = []
    for name, (profile, doc, _) in plans.items():
        for text in _texts(doc):
            for test in (*_NO_RESULT.findall(text), *_NOT_RECORDED.findall(text)):
                group = by_name.get(test.lower())
                if group is not None and latest_named(profile, group) is not None:
                    false.append(f"{name}: {text}")
    assert not false, "\n".join(false)


def test_stopped_during_a_stay_is_said_only_of_a_medicine_no_longer_ordered(plans) -> None:  # type: ignore[no-untyped-def]
    false = []
    for name, (profile, doc, _) in plans.items():
        current = " ".join(
            m.text.lower() for m in profile.medications if m.status in ("active", "draft")
        )
        for text in _texts(doc):
            for drug in _STOPPED.findall(text):
                if drug.lower() in current:
                    false.append(f"{name}: {text}")
    assert not false, "\n".join(false)


def test_stop_smoking_advice_only_to_a_current_smoker(plans) -> None:  # type: ignore[no-untyped-def]
    false = []
    for name, (profile, doc, _) in plans.items():
        smokes = check(CurrentSmoker(), profile, profile.plan_day) is None
        said = [t for t in _texts(doc) if re.search(r"stop smoking|stop-smoking", t, re.I)]
        if said and not smokes:
            false.append(f"{name}: {said[0]}")
    assert not false, "\n".join(false)


def test_no_plan_says_nothing_lies_outside_the_knowledge(plans) -> None:  # type: ignore[no-untyped-def]
    said = [n for n, (_, _, body) in plans.items() if "Nothing found outside" in body]
    assert not said


def test_claims_are_checked_on_every_plan_and_the_withheld_are_named(plans) -> None:  # type: ignore[no-untyped-def]
    checked = withheld = 0
    for profile, _, _ in plans.values():
        a = analyse(profile)
        checked += a.claims_checked
        withheld += len(a.withheld)
        assert all(re.fullmatch(r"[a-z0-9-]+:[a-z-]+", w) for w in a.withheld), a.withheld
    assert checked > len(plans)  # the set holds stays, monitoring, pairs and smokers
    print(f"claims checked {checked}, withheld {withheld}, plans {len(plans)}")


def test_no_text_has_an_empty_placeholder(plans) -> None:  # type: ignore[no-untyped-def]
    """A template whose fact was not bound leaves a gap ("Review : each raises..."): never said."""
    gaps = re.compile(r"\w :|\(\s*\)|\{[a-z_.:]+\}")
    found = [f"{n}: {t}" for n, (_, doc, _) in plans.items() for t in _texts(doc) if gaps.search(t)]
    assert not found, "\n".join(found[:10])


def test_the_knowledge_version_shown_is_the_one_recorded(plans) -> None:  # type: ignore[no-untyped-def]
    """The coverage line names the release the Provenance records, not another version."""
    for name, (_, doc, _) in plans.items():
        recorded = doc["meta"]["knowledge"]["version"]
        shown = doc["meta"]["coverage"]["knowledge_version"]
        assert shown.startswith(f"{recorded}:"), (name, shown, recorded)
