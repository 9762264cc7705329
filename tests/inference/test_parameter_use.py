"""The named parameters are the ones the knowledge reads: every shipped parameter is read by
name somewhere in the code or the criteria, and a site's value of one changes the facts of a
real record (the thresholds are read when a decision is made, not frozen at import)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge.criteria import KnowledgeError
from inference.knowledge.facts import Facts, age_phrase
from inference.knowledge.parameters import PARAMETERS_FILE, param, shipped_parameters
from inference.knowledge.registry import Case
from inference.knowledge.site import install, load_site, shipped
from service.record.profile import PatientProfile
from tests.conftest import fixture_bundle

ROOT = Path(__file__).resolve().parents[2]
# Where a parameter may be read: the packages' code and the criteria data.
READERS = ("inference", "service", "fhir_mapping")


@pytest.fixture
def restore() -> Iterator[None]:
    yield
    install(shipped())


def _with_site(tmp_path: Path, values: dict[str, float]) -> None:
    lines = "".join(f"  {name}: {value}\n" for name, value in values.items())
    (tmp_path / "site.yaml").write_text(f"version: s1\nparameters:\n{lines}")
    install(load_site(tmp_path))


def _profile(name: str) -> PatientProfile:
    return ingest(fixture_bundle(name).read_bytes())


def _reader_text() -> str:
    suffixes = (".py", ".json", ".yaml")
    files = [p for d in READERS for p in (ROOT / d).rglob("*") if p.suffix in suffixes]
    return "\n".join(p.read_text(encoding="utf-8") for p in files if p != PARAMETERS_FILE)


def test_every_shipped_parameter_is_read_by_name() -> None:
    text = _reader_text()
    # quoted in code and criteria, or a bare YAML value (``divide_by: units.creatinine_...``)
    unread = [
        n
        for n in shipped_parameters()
        if not re.search(rf"(?<![\w.]){re.escape(n)}(?![\w.])", text)
    ]
    assert not unread, f"parameters no code or criterion reads (remove them): {unread}"


def test_a_site_ckd_threshold_makes_lab_ckd_of_a_real_record(tmp_path: Path, restore: None) -> None:
    # eGFR 87 (2018), 110 (2019) and 93.9 (2021): never below 60, so no CKD by labs as shipped
    profile = _profile("trey_berge")
    assert Facts(profile).lab_ckd == ()
    _with_site(tmp_path, {"kidney.ckd_egfr_ml_min": 95})
    got = Facts(profile).lab_ckd
    assert len(got) == 2, "the 2018 and the 2021 results, both below 95 and years apart"
    _with_site(tmp_path, {"kidney.ckd_egfr_ml_min": 95, "kidney.ckd_chronicity_days": 3650})
    assert Facts(profile).lab_ckd == (), "too close together for a ten-year chronicity window"


def test_a_site_age_cut_off_changes_the_stroke_score_and_older(
    tmp_path: Path, restore: None
) -> None:
    profile = _profile("renea_quigley")  # a woman of 63
    shipped_score = Facts(profile).stroke.score
    assert not Case(profile).older
    _with_site(tmp_path, {"stroke.cha2ds2vasc.age_one_point_years": 60, "age.older_years": 60})
    stroke = Facts(profile).stroke
    assert stroke.score == shipped_score + 1
    assert ("age 63", 1) in [(label, points) for label, points, _ in stroke.parts]
    assert Case(profile).older


def test_a_site_whole_number_stays_whole_in_text(tmp_path: Path, restore: None) -> None:
    _with_site(tmp_path, {"age.stated_cap_years": 100.0})
    assert isinstance(param("age.stated_cap_years"), int)
    assert age_phrase(100) == "a person aged 100 or over"
    assert age_phrase(95) == "a 95-year-old"


def test_a_fraction_for_a_whole_number_parameter_is_refused(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(
        "version: s1\nparameters:\n  stroke.cha2ds2vasc.points_stroke: 1.5\n"
    )
    with pytest.raises(KnowledgeError, match="whole number"):
        load_site(tmp_path)
