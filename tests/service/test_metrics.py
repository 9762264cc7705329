"""The papers' metrics (``service.metrics``): each formula on values worked by hand, the label
file's checks, and ``canoe eval --metrics`` end to end on the shipped labelled set."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from service import metrics
from service.cli import main
from service.errors import BackendUnavailable, InputError
from service.metrics import (
    accepted_labels,
    alignscore,
    load_labelled,
    medcon_f1,
    problem_scores,
    rouge_l,
)
from tests.conftest import REPO_ROOT

SHIPPED = REPO_ROOT / "examples" / "metrics"
CREATED = "2026-11-30T09:00:00+00:00"

# -- ROUGE-L (CANOE eq. 15-16) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "generated", "expected"),
    [
        # LCS "the cat on the mat" = 5 of 6 tokens either side: P = R = 5/6, F = 5/6
        ("the cat sat on the mat", "the cat lay on the mat", 5 / 6),
        # LCS "stop ibuprofen" (or "check potassium") = 2 of 5 either side: F = 0.4
        ("stop ibuprofen and check potassium", "check potassium then stop ibuprofen", 0.4),
        # LCS = 3; R = 3/6, P = 3/3: F = 2 * 0.5 * 1 / 1.5 = 2/3
        ("review blood pressure in two weeks", "review pressure weeks", 2 / 3),
        # case and punctuation are not tokens: identical token sequences
        ("Stop ibuprofen.", "stop IBUPROFEN", 1.0),
        ("continue warfarin", "refer to physiotherapy", 0.0),
    ],
)
def test_rouge_l_on_hand_worked_pairs(reference: str, generated: str, expected: float) -> None:
    assert rouge_l(reference, generated) == pytest.approx(expected, abs=1e-12)


def test_rouge_l_without_the_eval_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rouge_score", None)
    metrics._rouge_scorer.cache_clear()
    try:
        with pytest.raises(BackendUnavailable, match=r"canoe-careplan\[eval\]"):
            rouge_l("a", "a")
    finally:
        metrics._rouge_scorer.cache_clear()


# -- CAMP's macro-F1 and perfect rate ----------------------------------------------------------


def test_problem_scores_on_hand_worked_lists() -> None:
    f = frozenset
    instances = [
        (f({"x", "y"}), f({"x"})),  # y missed
        (f({"x"}), f({"x", "z"})),  # z wrongly accepted
        (f({"y"}), f({"y"})),  # exact
    ]
    s = problem_scores(instances)
    # x: TP 2, FP 0, FN 0 -> 1; y: TP 1, FN 1 -> 2/3; z: FP 1 -> 0
    assert dict(s.per_label) == pytest.approx({"x": 1.0, "y": 2 / 3, "z": 0.0})
    assert s.macro_f1 == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert s.perfect_rate == pytest.approx(1 / 3)
    assert s.cases == 3


def test_a_problem_never_labelled_nor_accepted_has_no_f1() -> None:
    s = problem_scores([(frozenset({"a"}), frozenset({"a"})), (frozenset(), frozenset())])
    assert dict(s.per_label) == {"a": 1.0}
    assert (s.macro_f1, s.perfect_rate) == (1.0, 1.0)


def test_accepted_problems_are_named_by_id_or_display() -> None:
    accepted = [("prob-fall-risk", "Fall risk"), ("prob-c1", "Type 2  diabetes mellitus")]
    candidates = frozenset({"prob-fall-risk", "type 2 diabetes mellitus", "gout"})
    assert accepted_labels(accepted, candidates) == {"prob-fall-risk", "type 2 diabetes mellitus"}
    # without candidates every accepted problem counts, by its display
    assert accepted_labels(accepted, None) == {"fall risk", "type 2 diabetes mellitus"}


# -- the adapter points' formulas --------------------------------------------------------------


def test_medcon_f1_on_hand_worked_concept_sets() -> None:
    # common {b, c}: P = 2/4, R = 2/3, F1 = 2 * (1/2) * (2/3) / (7/6) = 4/7
    ref, gen = frozenset("abc"), frozenset("bcde")
    assert medcon_f1(ref, gen) == pytest.approx(4 / 7)
    assert medcon_f1(ref, frozenset()) == 0.0


class _Overlap:
    """A test double at the AlignScore adapter point: 1 when the claim's first word is in the
    source, else 0."""

    def align(self, claim: str, source: str) -> float:
        return 1.0 if claim.split()[0] in source.split() else 0.0


def test_alignscore_is_the_mean_alignment_of_the_claims() -> None:
    claims = ["warfarin is continued.", "aspirin is added.", "warfarin INR 2.4."]
    assert alignscore(claims, "warfarin 3 mg", _Overlap()) == pytest.approx(2 / 3)
    assert alignscore([], "x", _Overlap()) == 0.0


# -- the label file -----------------------------------------------------------------------------


def test_the_shipped_set_loads_with_every_label() -> None:
    cases = load_labelled(SHIPPED)
    assert 6 <= len(cases) <= 10
    for c in cases:
        assert c.reference and c.problems and c.candidates and c.reference_rubric
        assert c.problems <= c.candidates and c.bundle.is_file()


def _write(tmp: Path, case: dict[str, object]) -> Path:
    bundle = SHIPPED / "bundles" / "m07_hypothyroid_statin_stable.json"
    (tmp / "ref.txt").write_text("Continue levothyroxine.", encoding="utf-8")
    body = {"format": "canoe.metrics/1", "cases": [{"bundle": str(bundle)} | case]}
    (tmp / "metrics.json").write_text(json.dumps(body), encoding="utf-8")
    return tmp


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ({"problems": ["a"], "candidates": ["b"]}, r"cases\[0\]\.candidates"),
        ({"reference_rubric": {"completeness": 6}}, r"reference_rubric"),
        (
            {
                "reference_rubric": {
                    "completeness": 5,
                    "validity": 0,
                    "coherence": 5,
                    "safety": 5,
                }
            },
            r"whole number from 1 to 5",
        ),
        ({"reference": "missing.txt"}, r"cases\[0\]\.reference: cannot read"),
        ({"problems": "diabetes"}, r"cases\[0\]\.problems"),
        ({"expected": 1}, r"unknown field 'expected'"),
    ],
)
def test_a_wrong_label_file_is_refused_naming_the_field(
    tmp_path: Path, case: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        load_labelled(_write(tmp_path, case))


def test_a_case_may_carry_only_some_labels(tmp_path: Path) -> None:
    (c,) = load_labelled(_write(tmp_path, {"reference": "ref.txt"}))
    assert c.reference == "Continue levothyroxine."
    assert c.problems is None and c.candidates is None and c.reference_rubric is None


# -- canoe eval --metrics on the shipped set -----------------------------------------------------


def test_canoe_eval_metrics_end_to_end_on_the_shipped_set(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CANOE_TRITON_URL", raising=False)
    report_path = tmp_path / "report.json"
    args = ["eval", str(SHIPPED), "--metrics", "--created", CREATED, "--report", str(report_path)]
    assert main(args) == 0
    table = capsys.readouterr().out
    report = json.loads(report_path.read_text())
    labelled = {c.name: c for c in load_labelled(SHIPPED)}
    assert report["format"] == "canoe.metrics-report/1"
    assert report["cases"] == len(labelled) == len(report["per_case"])
    # no Triton configured: the judge says so and no case has a score
    assert report["judge"]["status"] == "not run"
    assert "CANOE_TRITON_URL" in report["judge"]["reason"]
    assert all(c["judge"] is None and c["judge_reference"] is None for c in report["per_case"])
    assert "Judge: not run: no Triton configured" in table
    # AlignScore and MEDCON are adapter points, never faked
    assert report["alignscore"]["status"] == report["medcon_f1"]["status"] == "not run"
    assert "AlignmentModel" in report["alignscore"]["reason"]
    assert "ConceptExtractor" in report["medcon_f1"]["reason"]
    # the aggregates are the per-case values combined as the papers combine them
    per_case = report["per_case"]
    rouge = [c["rouge_l"] for c in per_case]
    assert all(0.0 < r < 1.0 for r in rouge)
    assert report["rouge_l"]["mean"] == pytest.approx(sum(rouge) / len(rouge), abs=1e-4)
    sets = [
        (frozenset(c["problems"]["labelled"]), frozenset(c["problems"]["accepted"]))
        for c in per_case
    ]
    for c, (gold, _) in zip(per_case, sets, strict=True):
        assert gold == labelled[c["name"]].problems
    again = problem_scores(sets)
    assert report["problems"]["macro_f1"] == round(again.macro_f1, 4)
    assert report["problems"]["perfect_rate"] == round(again.perfect_rate, 4)
    assert f"macro-F1 {again.macro_f1:.4f}" in table
    fk = [c["fkgl"]["patient"] for c in per_case]
    assert report["fkgl"]["patient"] == pytest.approx(sum(fk) / len(fk), abs=0.051)


def test_canoe_eval_without_metrics_still_reads_expectations(tmp_path: Path) -> None:
    # the labelled folder has no expectations.json: the plain safety check asks for one
    assert main(["eval", str(SHIPPED), "--created", CREATED]) == 2


def test_an_unreachable_judge_fails_the_run_as_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.triton_models import free_port

    monkeypatch.setenv("CANOE_TRITON_URL", f"127.0.0.1:{free_port()}")
    monkeypatch.setenv("CANOE_BACKEND", "embedded")
    folder = _write(tmp_path, {"reference": "ref.txt"})
    assert main(["eval", str(folder), "--metrics", "--created", CREATED]) == 69
    assert "unavailable" in capsys.readouterr().err
    # asked not to judge, the same run measures and says the judge was not asked
    assert main(["eval", str(folder), "--metrics", "--created", CREATED, "--no-judge"]) == 0
    assert "Judge: not run: not asked (--no-judge)" in capsys.readouterr().out
