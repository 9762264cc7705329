"""Relations, concerns and priority come from what the knowledge states, never from the words
of a point or the prefix of an option id; the reusable points load by id."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import inference.embedded as embedded
from inference.embedded import _argue, _priority, _relate, _stated_themes
from inference.knowledge.analysis import Analysis, Point, Proposal
from inference.knowledge.criteria import KnowledgeError
from inference.knowledge.criteria.loader import CRITERIA_DIR, load, load_file, point_library
from inference.knowledge.themes import THEMES
from inference.protocol import CandidateOption, PanelMember

MED = "MedicationRequest/m1"


def _point(role: str, stance: str, text: str, themes: tuple[str, ...], concern: str = "") -> Point:
    return Point(role, stance, text, (MED,), (), 0.7, themes=themes, concern=concern)  # type: ignore[arg-type]


def _analysis(option_id: str, points: tuple[Point, ...]) -> Analysis:
    prop = Proposal(option_id, "t", "medication", "d", (MED,), (), points, criteria=("c",))
    return Analysis(80, "moderate", 4, (), (), (), (prop,), (), ())


def _relations(option_id: str, points: tuple[Point, ...]) -> set[tuple[str, str, str]]:
    a = _analysis(option_id, points)
    option = CandidateOption(option_id, "t", "medication", "d", (MED,))
    drafts = tuple(
        d
        for role in ("pharmacist", "gp", "nurse")
        for d in _argue(a, PanelMember(role, ""), (option,), (), "Patient/p")
    )
    rel = _relate(option, drafts, _stated_themes(a))
    by_id = {d.id: d.role for d in drafts}
    return {(by_id[r.source], by_id[r.target], r.relation) for r in rel}


def test_relations_follow_stated_themes_whatever_the_words() -> None:
    plain = (
        _point("pharmacist", "support", "Go down slowly over weeks.", ("taper",)),
        _point("gp", "attack", "Symptoms may come back.", ("withdrawal",), "abrupt-withdrawal"),
    )
    assert _relations("opt-x", plain) == {("pharmacist", "gp", "attack")}
    # reworded with the words the old keyword table read, themes unchanged: same relation
    reworded = (
        replace(plain[0], text="Falls, bleeding and sedation."),
        replace(plain[1], text="A taper is no answer here."),
    )
    assert _relations("opt-x", reworded) == {("pharmacist", "gp", "attack")}
    # the words of a taper with no stated theme relate nothing
    unstated = (
        replace(plain[0], text="Taper slowly.", themes=()),
        replace(plain[1], text="Withdrawal and rebound.", themes=()),
    )
    assert _relations("opt-taper-x", unstated) == set()


def test_concern_is_stated_not_read_from_the_option_id() -> None:
    pt = _point("pharmacist", "attack", "Stopping at once is risky.", (), "abrupt-withdrawal")
    for oid in ("opt-taper-x", "opt-anything"):
        a = _analysis(oid, (pt,))
        option = CandidateOption(oid, "t", "medication", "d", (MED,))
        (draft,) = _argue(a, PanelMember("pharmacist", ""), (option,), (), "Patient/p")
        assert draft.concern == "abrupt-withdrawal"
    silent = replace(pt, concern="")
    a = _analysis("opt-taper-x", (silent,))
    option = CandidateOption("opt-taper-x", "t", "medication", "d", (MED,))
    (draft,) = _argue(a, PanelMember("pharmacist", ""), (option,), (), "Patient/p")
    assert draft.concern == ""


@pytest.mark.parametrize(
    ("oid", "renamed"),
    [("opt-copd-rehab", "opt-pulmonary-rehabilitation"), ("opt-stop-x", "opt-x")],
)
def test_a_criterion_proposal_keeps_its_stated_priority_under_any_id(
    oid: str, renamed: str
) -> None:
    p = Proposal(oid, "t", "rehabilitation", "d", (), (), (), priority="review", criteria=("c",))
    assert _priority(p) == _priority(replace(p, id=renamed)) == "review"
    stated = replace(p, priority="omission")
    assert _priority(replace(stated, id=renamed)) == "omission"


def test_shipped_criteria_state_priority_answers_themes_and_concerns() -> None:
    crit = {c.id: c for c in load()}
    assert crit["rehab-copd"].option.priority == "omission"
    assert crit["age-benzodiazepine"].option.answers == ("abrupt-withdrawal",)
    assert crit["ceiling-simvastatin-amiodarone"].option.answers == ("weaker-lipid-lowering",)
    themes = {t for c in crit.values() for pt in c.points for t in pt.themes}
    assert themes and themes <= THEMES.codes
    concerns = {pt.concern for c in crit.values() for pt in c.points if pt.concern}
    assert concerns == {"abrupt-withdrawal", "treatment-burden", "weaker-lipid-lowering"}


def test_the_embedded_backend_has_no_keyword_or_prefix_tables() -> None:
    gone = ("themes", "_THEMES", "_BRIDGE_CONCERNS", "_BRIDGE_ANSWERS", "_OMISSIONS")
    legacy = [name for name in vars(embedded) if "legacy" in name.lower()]
    assert not [name for name in gone if hasattr(embedded, name)] and not legacy


def test_rule_points_state_themes_from_the_closed_vocabulary() -> None:
    from inference.knowledge.rule_points import rule_points

    stated = {t for entry in rule_points().points.values() for t in entry.themes}
    assert stated and stated <= THEMES.codes, stated - THEMES.codes


# ------------------------------------------------------------------ the reusable points


def test_library_points_are_used_in_place_by_many_criteria() -> None:
    lib = point_library()
    started = lib["gp-started-for-a-reason"]
    assert started["role"] == "gp" and started["stance"] == "attack"
    uses = [pt for c in load() for pt in c.points if pt.text == started["text"]]
    assert len(uses) >= 50  # 61 when written: every criterion weighing a stop or a change
    raw = "".join(p.read_text(encoding="utf-8") for p in CRITERIA_DIR.glob("*.json"))
    assert started["text"] not in raw  # stated once, in the library


def _criterion(points: list[object]) -> dict[str, object]:
    raw = json.loads((CRITERIA_DIR / "care.json").read_text(encoding="utf-8"))
    c = next(x for x in raw["criteria"] if x["id"] == "acp-very-old")
    return {"criteria": [c | {"points": points}]}


def test_a_use_is_replaced_by_the_library_point(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(_criterion([{"use": "gp-started-for-a-reason"}])))
    (c,) = load_file(path).criteria
    assert c.points[0].text == point_library()["gp-started-for-a-reason"]["text"]


@pytest.mark.parametrize(
    ("point", "where", "problem"),
    [
        ({"use": "no-such-point"}, "criteria[0].points[1].use", "unknown reusable point"),
        (
            {"use": "gp-started-for-a-reason", "text": "x"},
            "criteria[0].points[1]",
            "no other field",
        ),
    ],
)
def test_a_bad_use_is_refused_naming_file_and_place(
    tmp_path: Path, point: dict[str, str], where: str, problem: str
) -> None:
    ok = {"role": "gp", "stance": "support", "text": "Fine.", "cites": []}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(_criterion([ok, point])))
    with pytest.raises(KnowledgeError) as err:
        load_file(path)
    assert (err.value.file, err.value.path) == ("mine.json", where)
    assert problem in err.value.problem


def test_an_unknown_theme_is_refused(tmp_path: Path) -> None:
    bad = {"role": "gp", "stance": "support", "text": "Fine.", "cites": [], "themes": ["mood"]}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(_criterion([bad])))
    with pytest.raises(KnowledgeError) as err:
        load_file(path)
    assert err.value.path == "criteria[0].points[0].themes[0]"
    assert "unknown theme 'mood'" in err.value.problem


def test_a_library_point_with_an_unknown_theme_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "points.yaml"
    path.write_text(
        "points:\n  - id: gp-x\n    role: gp\n    stance: support\n    text: Fine.\n"
        "    themes: [mood]\n"
    )
    with pytest.raises(KnowledgeError) as err:
        point_library(path)
    assert (err.value.file, err.value.path) == ("points.yaml", "points[gp-x].themes[0]")
