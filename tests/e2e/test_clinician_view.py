"""The clinician view end to end on the shared fixtures: ranking by clinical priority, the clinician
summary on every fixture (CLI, CarePlan), and ``canoe eval`` on a small case folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fhir_mapping.careplan import careplan_of, plan_bundle
from service.core.model import TIMEFRAMES
from service.text.summary import LINE_MAX, MAX_LINES, summarise, summary_text
from tests.conftest import FHIR_FIXTURES, REALISTIC_BUNDLES, REPO_ROOT, fixture_bundle
from tests.e2e.test_plan_end_to_end import CREATED, _canoe, plan_of

_ID = re.compile(
    r"(urn:uuid:|\b(Patient|Condition|MedicationRequest|Observation|Encounter)/[A-Za-z0-9])"
)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def test_trey_clopidogrel_with_warfarin_ranks_above_the_generic_medication_review() -> None:
    result = plan_of(fixture_bundle("trey_berge"))
    plan = list(result.evaluation.plan)
    options = {o.id: o for o in result.deliberation.options}
    # a safety item (an INR never measured on warfarin and a haemoglobin never measured with
    # anaemia on two antithrombotics may come first; found in a clinical review)
    assert options["opt-review-clopidogrel"].priority == "safety"
    assert "opt-review-clopidogrel" in plan
    if "opt-medication-review" in plan:
        assert plan.index("opt-review-clopidogrel") < plan.index("opt-medication-review")


@pytest.mark.parametrize("path", REALISTIC_BUNDLES, ids=lambda p: p.name.split("_")[0])
def test_plan_order_follows_time_then_harm(path: Path) -> None:
    result = plan_of(path)
    options = {o.id: o for o in result.deliberation.options}
    ranks = [
        (
            options[oid].timeframe != "now",
            not (options[oid].transition and options[oid].timeframe != "now"),
            TIMEFRAMES.index(options[oid].timeframe or "next-review"),
            options[oid].urgency_class != "resolve-first",
            -(options[oid].harm or 0.0),
        )
        for oid in result.evaluation.plan
    ]
    assert ranks == sorted(ranks)
    assert all(options[oid].timeframe in TIMEFRAMES for oid in result.evaluation.plan)
    # every option says how soon to act; a due vaccination is routine, never above a problem
    assert all(options[oid].urgency_class for oid in result.evaluation.plan)
    if "opt-vaccinations-due" in options:
        assert options["opt-vaccinations-due"].urgency_class == "routine"
    review = options.get("opt-medication-review")
    if review is not None:
        assert review.priority == "review"
        # proposed only when a medicine is left that no specific action covers
        covered = {
            r
            for o in options.values()
            if o.id != review.id and o.medication_ref
            for r in (o.medication_ref, *o.refs)
        }
        assert not set(review.refs) <= covered


@pytest.mark.parametrize("path", REALISTIC_BUNDLES, ids=lambda p: p.name.split("_")[0])
def test_clinician_summary_on_every_fixture(path: Path) -> None:
    result = plan_of(path)
    d, ev = result.deliberation, result.evaluation
    s = summarise(d, ev)
    assert len(s.lines) == min(MAX_LINES, len(ev.plan))
    text = summary_text(d, ev)
    assert not _ID.search(text), _ID.search(text)
    for word in ("tau", "sigma", "τ", "σ", "KEEP", "REFUSE"):
        assert word not in text
    for line in s.lines:
        # a long reason is cut at a word, marked by the ellipsis, nowhere else: never before
        # the fact, which stands before the reason
        assert "…" not in line.text().replace("… Proposed", "")
        assert not line.fact or line.fact in line.text()
        assert len(line.text()) <= LINE_MAX
        assert line.proposed_by and line.reason
        # every included activity names its key patient fact, unless that fact is a medicine
        # the line already names (it would add only its prescribing date)
        assert line.fact or any(
            words.split(" (prescribed ")[0].lower() in line.text().lower()
            for ref, words in d.meta.facts
            if ref.startswith("MedicationRequest/")
        ), line
        if "on 2" in line.fact or "since" in line.fact or "prescribed" in line.fact:
            assert _DATE.search(line.fact)
    measured = [x for x in s.lines if re.search(r"\d", x.fact) and _DATE.search(x.fact)]
    assert measured, "at least one line names a fact with its value or date"
    # the CarePlan carries it as narrative and description
    cp = careplan_of(plan_bundle(d, ev, recorded=CREATED))[1]
    assert cp["text"]["status"] == "generated"
    assert cp["description"] == text
    assert cp["text"]["div"].count("<li>") == len(s.lines)
    assert not _ID.search(re.sub(r'xmlns="[^"]*"', "", cp["text"]["div"]))


def test_gayla_summary_names_the_blood_pressure_with_value_and_date() -> None:
    result = plan_of(fixture_bundle("gayla_ferry"))
    text = summary_text(result.deliberation, result.evaluation)
    bp = next(line for line in text.splitlines() if "Review blood pressure" in line)
    # the key fact is the panel as a clinician writes it: systolic/diastolic, whole mmHg
    assert " — Blood pressure 146/115 mmHg on 2020-08-20 — " in bp and _DATE.search(bp)
    assert "pharmacist" in bp.split("Proposed by ", 1)[1]


# ---------------------------------------------------------------------------- canoe eval


def _cases(tmp_path: Path, cases: list[dict[str, object]]) -> Path:
    for c in cases:
        c["bundle"] = str(FHIR_FIXTURES / str(c["bundle"]))
    (tmp_path / "expectations.json").write_text(
        json.dumps({"format": "canoe.eval/1", "cases": cases})
    )
    return tmp_path


def test_eval_reports_a_pass_a_miss_and_an_unsafe_inclusion(tmp_path: Path) -> None:
    folder = _cases(
        tmp_path,
        [
            {
                "name": "pass",
                "bundle": "trey_berge_f46d1649.json",
                "must_include": [["clopidogrel", "warfarin"]],
                "must_not_include": [["start", "nsaid"]],
            },
            {
                "name": "miss",
                "bundle": "gayla_ferry_77155e2b.json",
                "must_include": [["stop naproxen"], ["start", "insulin"]],
            },
            {
                "name": "unsafe",
                "bundle": "adalberto_hartmann_ba18818d.json",
                "must_not_include": [["taper", "diazepam"]],
            },
        ],
    )
    out = _canoe("eval", str(folder), "--created", CREATED, "--report", str(tmp_path / "r.json"))
    assert out.returncode == 1, out.stderr.decode()
    table = out.stdout.decode()
    assert "pass: PASS" in table and "miss: FAIL" in table and "unsafe: FAIL" in table
    assert "TOTAL: 1/3 cases passed" in table
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["passed"] is False
    assert report["totals"] == {
        "cases": 3,
        "cases_passed": 1,
        "found": 2,
        "missed": 1,
        "absent": 1,
        "unsafe": 1,
    }
    by_name = {c["name"]: c for c in report["cases"]}
    assert [c["status"] for c in by_name["miss"]["checks"]] == ["found", "missed"]
    (unsafe,) = by_name["unsafe"]["checks"]
    assert unsafe["status"] == "unsafe" and "diazepam" in unsafe["activity"].lower()


def test_eval_passes_on_the_shipped_example() -> None:
    out = _canoe("eval", str(REPO_ROOT / "examples" / "eval"), "--format", "json")
    assert out.returncode == 0, out.stdout.decode()[-2000:] + out.stderr.decode()
    report = json.loads(out.stdout)
    assert report["passed"] and report["totals"]["missed"] == report["totals"]["unsafe"] == 0


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ({"format": "other"}, "format"),
        ({"format": "canoe.eval/1", "cases": []}, "non-empty"),
        ({"format": "canoe.eval/1", "cases": [{"bundle": "nope.json"}]}, "cases[0].bundle"),
    ],
)
def test_eval_refuses_bad_expectations_with_exit_2(
    tmp_path: Path, content: dict[str, object], needle: str
) -> None:
    (tmp_path / "expectations.json").write_text(json.dumps(content))
    out = _canoe("eval", str(tmp_path))
    assert out.returncode == 2 and needle in out.stderr.decode()
    assert "Traceback" not in out.stderr.decode()
