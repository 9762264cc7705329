"""Criteria as data: table-driven positive and negative cases for every criterion, the
number-truthfulness property, and refusal of a knowledge file that breaks its schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge.criteria import CRITERIA_DIR, KnowledgeError, load
from inference.knowledge.criteria.interpret import evaluate, numbers_of
from inference.knowledge.criteria.loader import load_file
from inference.knowledge.criteria.schema import NUMBER
from inference.knowledge.facts import Facts, fmt
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import PatientProfile
from tests.conftest import REALISTIC_BUNDLES

from .criteria_factory import negative, positive

IDS = [c.id for c in CRITERIA]


def _fired(c_id: str, profile: object) -> bool:
    c = next(x for x in CRITERIA if x.id == c_id)
    return any(f.criterion.id == c_id for f in evaluate((c,), Facts(profile)))  # type: ignore[arg-type]


@pytest.mark.parametrize("cid", IDS)
def test_criterion_fires_on_its_trigger(cid: str) -> None:
    c = next(x for x in CRITERIA if x.id == cid)
    assert _fired(cid, positive(c)), f"{cid} did not fire on a profile built from its trigger"


@pytest.mark.parametrize("cid", IDS)
def test_criterion_is_excused(cid: str) -> None:
    c = next(x for x in CRITERIA if x.id == cid)
    profile, why = negative(c)
    assert not _fired(cid, profile), f"{cid} fired although {why}"


def _allowed(facts: Facts, firing_binding: object, params: dict[str, float]) -> frozenset[str]:
    return (
        facts.numbers()
        | numbers_of(firing_binding, facts)  # type: ignore[arg-type]
        | frozenset(fmt(v) for v in params.values())
    )


def _numbers_in(text: str) -> list[str]:
    return NUMBER.findall(text)


@pytest.mark.parametrize("cid", IDS)
def test_every_number_in_a_text_is_a_typed_fact(cid: str) -> None:
    c = next(x for x in CRITERIA if x.id == cid)
    facts = Facts(positive(c))
    firings = evaluate((c,), facts)
    assert firings
    for f in firings:
        allowed = _allowed(facts, f.binding, c.params)
        p = f.proposal
        for text in (p.title, p.description, *(pt.text for pt in p.points)):
            stray = [n for n in _numbers_in(text) if n not in allowed]
            assert not stray, f"{cid}: {stray} in {text!r} are not typed facts ({sorted(allowed)})"


def test_every_number_in_fixture_texts_is_a_typed_fact(fixture_profiles: dict[str, object]) -> None:
    checked = 0
    for name, profile in fixture_profiles.items():
        facts = Facts(profile)  # type: ignore[arg-type]
        for f in evaluate(CRITERIA, facts):
            allowed = _allowed(facts, f.binding, f.criterion.params)
            for pt in f.proposal.points:
                stray = [n for n in _numbers_in(pt.text) if n not in allowed]
                assert not stray, f"{name} {f.criterion.id}: {stray} in {pt.text!r}"
                checked += 1
    assert checked > 10


def test_every_fired_criterion_is_recorded_in_the_analysis(
    fixture_profiles: dict[str, object],
) -> None:
    fired_somewhere = set()
    for profile in fixture_profiles.values():
        a = analyse(profile)  # type: ignore[arg-type]
        fired_somewhere |= set(a.fired)
        for cid in a.fired:
            assert any(cid in p.criteria for p in a.proposals)
    assert fired_somewhere


def test_criteria_set_priority_and_category() -> None:
    for c in CRITERIA:
        assert c.priority in ("safety", "omission", "monitoring", "review")
        assert c.source and c.source_id and c.year


# -- start-up refusal ------------------------------------------------------------------------


def _copy_with(tmp_path: Path, mutate: object) -> Path:
    src = CRITERIA_DIR / "interactions.json"
    data = json.loads(src.read_text())
    mutate(data)  # type: ignore[operator]
    out = tmp_path / src.name
    out.write_text(json.dumps(data))
    return out


def test_a_bad_file_is_refused_naming_file_path_and_problem(tmp_path: Path) -> None:
    def bad_kind(d: dict) -> None:  # type: ignore[type-arg]
        d["criteria"][1]["kind"] = "wishful-thinking"

    path = _copy_with(tmp_path, bad_kind)
    with pytest.raises(KnowledgeError) as err:
        load(tmp_path)
    assert err.value.file == path.name
    assert err.value.path == "criteria[1].kind"
    assert "wishful-thinking" in str(err.value) or "Input should be" in err.value.problem


def test_a_literal_number_in_a_template_is_refused(tmp_path: Path) -> None:
    def literal(d: dict) -> None:  # type: ignore[type-arg]
        d["criteria"][0]["points"][0]["text"] = "Stop it below eGFR 30 now."

    path = _copy_with(tmp_path, literal)
    with pytest.raises(KnowledgeError) as err:
        load_file(path)
    assert err.value.path == "criteria[0].points[0].text"
    assert "literal number" in err.value.problem


def test_an_unknown_drug_class_is_refused(tmp_path: Path) -> None:
    def unknown(d: dict) -> None:  # type: ignore[type-arg]
        d["criteria"][2]["trigger"]["drugs"][0] = "class:unicorn-tonic"

    path = _copy_with(tmp_path, unknown)
    with pytest.raises(KnowledgeError) as err:
        load_file(path)
    assert err.value.path == "criteria[2].trigger.drugs[0]"
    assert "unicorn-tonic" in err.value.problem


def test_unknown_evidence_is_refused(tmp_path: Path) -> None:
    def unknown(d: dict) -> None:  # type: ignore[type-arg]
        d["criteria"][0]["evidence"] = ["EB-NOPE-999"]

    path = _copy_with(tmp_path, unknown)
    with pytest.raises(KnowledgeError, match=re.escape("evidence[0]")):
        load_file(path)


def test_the_shipped_files_load() -> None:
    assert len(load()) == len(CRITERIA) > 30


@pytest.fixture(scope="module")
def fixture_profiles() -> dict[str, object]:
    return {p.stem: ingest(p.read_bytes()) for p in REALISTIC_BUNDLES}


def _net_text(text: str, profile: PatientProfile) -> str:
    """A line of the results net without its interval (data, in brackets) and its dates, each
    the day of a result in the record."""
    days = {o.effective.isoformat() for o in profile.readings if o.effective is not None}
    for day in re.findall(r"\d{4}-\d{2}-\d{2}", text):
        assert day in days, f"{day} is no result's day"
    return re.sub(r"\d{4}-\d{2}-\d{2}", "", re.sub(r"\([^)]*\)", "", text))


def test_rule_function_texts_state_only_typed_facts(fixture_profiles: dict[str, object]) -> None:
    """The remaining rule functions (not yet data) obey the same number rule on the fixtures."""
    checked = 0
    for name, profile in fixture_profiles.items():
        facts = Facts(profile)  # type: ignore[arg-type]
        allowed = facts.numbers()
        for p in analyse(profile).proposals:  # type: ignore[arg-type]
            if p.criteria:
                continue
            for text in (p.title, p.description, *(pt.text for pt in p.points)):
                if p.id.startswith("opt-review-result-"):
                    text = _net_text(text, profile)  # type: ignore[arg-type]
                stray = [n for n in _numbers_in(text) if n not in allowed]
                assert not stray, f"{name} {p.id}: {stray} in {text!r}"
                checked += 1
    assert checked > 50
