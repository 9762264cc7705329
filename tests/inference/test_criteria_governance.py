"""Criteria governance: status, version, review date and reviewer role on every criterion; only
active criteria fire (drafts where a site enables them, retired never); one knowledge version,
from the change log; files named by clinical domain, the move losing and changing nothing.
Real files, the real embedded planner and the real CLI."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from fhir_mapping.ingest import ingest
from inference.embedded import KB_VERSION
from inference.knowledge.changelog import Changelog, changelog
from inference.knowledge.criteria import CRITERIA_DIR, KnowledgeError
from inference.knowledge.criteria.schema import Criterion
from inference.knowledge.rules import analyse
from inference.knowledge.site import (
    _versioned,
    firing,
    install,
    load_site,
    shipped,
    with_drafts,
)
from service.cli import main
from service.knowledge import fhir_definitions
from tests.conftest import FHIR_FIXTURES

BUNDLE = FHIR_FIXTURES / "adalberto_hartmann_ba18818d.json"
CREATED = "2026-11-30T09:00:00+00:00"
COPIED = "vaccine-pneumococcal-older"  # fires on BUNDLE
BEFORE = Path(__file__).parent / "data" / "criteria_before_domains.json"
GOVERNANCE = ("status", "version", "last_reviewed", "reviewer_role")


def _files() -> dict[str, list[dict[str, object]]]:
    return {
        p.name: json.loads(p.read_text(encoding="utf-8"))["criteria"]
        for p in sorted(CRITERIA_DIR.glob("*.json"))
    }


def _shipped_raw(cid: str) -> dict[str, object]:
    for criteria in _files().values():
        for c in criteria:
            if c["id"] == cid:
                return dict(c)
    raise AssertionError(cid)


def test_ids_are_unique_across_files() -> None:
    ids = [str(c["id"]) for criteria in _files().values() for c in criteria]
    assert len(ids) == len(set(ids)) == len(shipped().criteria)


# The comparisons each numeric trigger part states since, as code read them before: a part
# that states one of these is unchanged; one that states another changed.
_FORMER_OPS = {
    "age_min": ">=",
    "age_max": "<=",
    "min_years_on": ">=",
    "min_days_on": ">=",
    "started_within": "<=",
    "daily_mg_above": ">",
    "gestation_weeks_min": ">=",
    "gestation_weeks_max": "<=",
}
_FORMER_PART_OPS = {
    ("monitor", "op"): ">",
    ("count", "op"): ">=",
    ("stroke_risk", "op"): ">=",
    ("weight_dose", "op"): ">",
    ("stay", "within_op"): "<=",
}


def _without_stated_ops(t: object) -> object:
    """A dumped trigger less the comparisons it states where they are the former ones."""
    if isinstance(t, list):
        return [_without_stated_ops(x) for x in t]
    if not isinstance(t, dict):
        return t
    out = {k: _without_stated_ops(v) for k, v in t.items()}
    if isinstance(out.get("ops"), dict):
        kept = {k: v for k, v in out["ops"].items() if _FORMER_OPS.get(k) != v}
        if kept:
            out["ops"] = kept
        else:
            del out["ops"]
    for (part, field), op in _FORMER_PART_OPS.items():
        inner = out.get(part)
        if isinstance(inner, dict) and field in inner and inner[field] in (op, None):
            out[part] = {k: v for k, v in inner.items() if k != field}
    return out


def _cites_before(pt: dict[str, object]) -> dict[str, object]:
    """The stock objection ("{a} was started for a reason") cited the medicine it names until
    an objection citing no record fact was capped in strength; it cites none since."""
    text = str(pt.get("text", ""))
    named = re.match(r"\{(\w+)\} was started for a reason", text)
    return pt if named is None or pt.get("cites") else {**pt, "cites": [named.group(1)]}


# Trigger parts and criterion fields added since the hashes were taken, at their defaults (a
# criterion that does not use them reads as before).
_ADDED_SINCE = {
    "above_max_daily": False,
    "smoking_stopped_within": None,
    "yields_to": [],
    "equivalence": None,
    "equivalent_daily_min": None,
    "own_monitor_grace": None,
    "record_bound": False,
    "roles": None,
    "feature_dose": None,
    "kidney_acute": False,
    "above_weight_max": None,
}


def _without_added(x: object) -> object:
    if isinstance(x, dict):
        return {
            k: _without_added(v)
            for k, v in x.items()
            if not (k in _ADDED_SINCE and v == _ADDED_SINCE[k])
        }
    if isinstance(x, list):
        return [_without_added(v) for v in x]
    return x


def _content(c: Criterion) -> str:
    """A criterion's content as the interpreter reads it, as canonical JSON: reusable points
    in place, defaults filled in, without the governance fields and the relations, concerns,
    option priority, action kind, verify wording and comparisons stated since (they were read
    from words, ids and code before; a comparison other than the one code read is a change)."""
    raw = _without_added(_without_stated_ops(c.model_dump(mode="json", exclude=set(GOVERNANCE))))
    assert isinstance(raw, dict)
    stated_since = ("priority", "answers", "action", "verify_description")
    raw["option"] = {k: v for k, v in raw["option"].items() if k not in stated_since}
    raw["variants"] = {
        name: {k: v for k, v in variant.items() if k != "action"}
        for name, variant in raw["variants"].items()
    }
    raw["points"] = [
        {k: v for k, v in _cites_before(pt).items() if k not in ("themes", "concern")}
        for pt in raw["points"]
    ]
    vaccine = raw.get("trigger", {}).get("vaccine")
    if isinstance(vaccine, dict):  # its short name for a summary line, stated since
        vaccine.pop("short", None)
    return "sha256:" + hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()


def test_the_move_to_domain_files_kept_every_criterion_unchanged() -> None:
    """Every criterion shipped before the move to domain files is still there, its content
    the same (``_content``; the stored hashes were taken when the criteria came to state their
    themes, concerns and priority, from the criteria then, whose raw JSON matched the move's)."""
    before: dict[str, str] = json.loads(BEFORE.read_text(encoding="utf-8"))
    now = {c.id: _content(c) for c in shipped().criteria}
    assert set(before) <= set(now)
    changed = sorted(cid for cid, h in before.items() if now[cid] != h)
    assert changed == []


def test_no_file_is_named_after_a_work_round() -> None:
    rounds = re.compile(r"review\d|generalisation|_more$|_start$")
    assert [name for name in _files() if rounds.search(Path(name).stem)] == []


def test_every_criterion_states_its_governance() -> None:
    releases = {r.version for r in changelog().releases}
    for c in shipped().criteria:
        assert c.status == "active", c.id
        assert c.version in releases, c.id
        assert c.last_reviewed <= changelog().releases[0].date, c.id
        assert c.reviewer_role, c.id


def test_one_knowledge_version_from_the_change_log() -> None:
    assert shipped().stamp.version == changelog().version == changelog().releases[0].version
    assert shipped().stamp.version == KB_VERSION


def test_change_log_lists_releases_newest_first() -> None:
    release = {"date": "2026-11-30", "summary": "s"}
    with pytest.raises(ValidationError, match="newest first"):
        Changelog.model_validate(
            {"releases": [{**release, "version": "2026.11-1"}, {**release, "version": "2026.12-1"}]}
        )


def test_a_version_that_is_no_release_is_refused() -> None:
    raw = {**_shipped_raw(COPIED), "version": "2031.01-1"}
    with pytest.raises(KnowledgeError) as err:
        _versioned((Criterion.model_validate(raw),))
    assert (
        err.value.file == "changelog.yaml" and "'2031.01-1' is not a release" in err.value.problem
    )


@pytest.mark.parametrize("status", ["draft", "active", "retired", "withdrawn"])
def test_status_is_one_of_three(status: str) -> None:
    raw = {**_shipped_raw(COPIED), "status": status}
    if status == "withdrawn":
        with pytest.raises(ValidationError, match="status"):
            Criterion.model_validate(raw)
    else:
        assert Criterion.model_validate(raw).status == status


@pytest.fixture
def restore() -> Iterator[None]:
    yield
    install(shipped())


def _site(folder: Path, status: str) -> Path:
    """A site folder adding a copy of ``COPIED`` with ``status``, under a new id and option."""
    folder.mkdir(parents=True, exist_ok=True)
    added = {**_shipped_raw(COPIED), "id": f"site-{status}", "status": status}
    added["option"] = {**added["option"], "id": f"opt-site-{status}"}  # type: ignore[dict-item]
    (folder / "local.json").write_text(json.dumps({"criteria": [added]}), encoding="utf-8")
    return folder


def _fired() -> tuple[str, ...]:
    profile = ingest(BUNDLE.read_bytes(), received=datetime(2026, 11, 30, 9, tzinfo=UTC))
    return analyse(profile).fired


@pytest.mark.parametrize(
    ("status", "drafts", "fires"),
    [
        ("active", False, True),
        ("draft", False, False),
        ("draft", True, True),
        ("retired", False, False),
        ("retired", True, False),
    ],
)
def test_only_active_criteria_fire_and_drafts_when_enabled(
    tmp_path: Path, status: str, drafts: bool, fires: bool, restore: None
) -> None:
    knowledge = load_site(_site(tmp_path, status))
    install(with_drafts(knowledge) if drafts else knowledge)
    ids = {c.id for c in firing(with_drafts(knowledge) if drafts else knowledge)}
    assert (f"site-{status}" in ids) is fires
    assert (f"site-{status}" in _fired()) is fires
    assert COPIED in _fired()  # the shipped original fires either way


def test_drafts_setting_makes_drafts_fire_in_a_plan(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    restore: None,
) -> None:
    monkeypatch.setenv("CANOE_KNOWLEDGE_DIR", str(_site(tmp_path, "draft")))
    argv = ["plan", str(BUNDLE), "--format", "json", "--created", CREATED]
    monkeypatch.delenv("CANOE_KNOWLEDGE_DRAFTS", raising=False)
    assert main(argv) == 0
    assert "opt-site-draft" not in capsys.readouterr().out
    monkeypatch.setenv("CANOE_KNOWLEDGE_DRAFTS", "true")
    assert main(argv) == 0
    assert "opt-site-draft" in capsys.readouterr().out


def test_plan_definitions_carry_each_criterion_status_and_version(tmp_path: Path) -> None:
    _, rules = fhir_definitions(load_site(_site(tmp_path, "draft")))
    by_id = {r.id: r for r in rules}
    assert (by_id["site-draft"].status, by_id["site-draft"].version) == (
        "draft",
        _shipped_raw(COPIED)["version"],
    )
    assert {r.version for r in rules} <= {r.version for r in changelog().releases}
