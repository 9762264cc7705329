"""``service.eval``: the case-file format (old and extended forms) and the pure check of one plan.

The plans here are built by hand so that each rule of the check is seen alone; the end-to-end
run over the shipped example cases is in ``tests/e2e/test_eval_examples.py``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from service.core import evaluate
from service.core.evaluation import Evaluation
from service.core.model import (
    Argument,
    Coverage,
    CoverageGap,
    Deliberation,
    Edge,
    Option,
    Parameters,
)
from service.errors import InputError
from service.eval import CaseResult, Expectation, check_case, load_cases, report_json, report_table


def _folder(tmp_path: Path, case: dict[str, object], file: str = "expectations.json") -> Path:
    (tmp_path / "b.json").write_text("{}")
    (tmp_path / file).write_text(
        json.dumps({"format": "canoe.eval/1", "cases": [{"bundle": "b.json", **case}]})
    )
    return tmp_path


def test_plain_strings_and_lists_keep_their_meaning(tmp_path: Path) -> None:
    (case,) = load_cases(_folder(tmp_path, {"must_include": ["Stop Naproxen", ["a", " B "]]}))
    assert case.name == "b"
    assert case.must_include == (
        Expectation((("stop naproxen",),)),
        Expectation((("a", "b"),)),
    )


def test_an_object_carries_its_reason_source_alternatives_and_scope(tmp_path: Path) -> None:
    (case,) = load_cases(
        _folder(
            tmp_path,
            {
                "must_include": [
                    {
                        "any_of": [["stop", "naproxen"], ["switch", "naproxen"]],
                        "reason": "NSAID with an antiplatelet",
                        "source": "STOPP/START v3 (2023)",
                    }
                ],
                "must_not_include": [{"terms": ["fracture"], "where": "arguments"}],
            },
        )
    )
    (inc,) = case.must_include
    assert inc.alternatives == (("stop", "naproxen"), ("switch", "naproxen"))
    assert (inc.reason, inc.source, inc.where) == (
        "NSAID with an antiplatelet",
        "STOPP/START v3 (2023)",
        "activities",
    )
    (exc,) = case.must_not_include
    assert exc.where == "arguments" and exc.terms == ("fracture",)


def test_a_named_file_of_the_folder_is_read(tmp_path: Path) -> None:
    (case,) = load_cases(
        _folder(tmp_path, {"must_include": ["x"]}, "known_gaps.json"), "known_gaps.json"
    )
    assert case.must_include[0].terms == ("x",)


@pytest.mark.parametrize(
    ("finding", "needle"),
    [
        ({"terms": ["a"], "any_of": [["b"]]}, "must_include[0]: give either terms or any_of"),
        ({"reason": "no terms"}, "must_include[0]: give either terms or any_of"),
        ({"any_of": []}, "must_include[0].any_of"),
        ({"any_of": [["a"], []]}, "must_include[0].any_of[1]"),
        ({"terms": ["a"], "reason": 3}, "must_include[0].reason"),
        ({"terms": ["a"], "colour": "red"}, "unknown field 'colour'"),
        ({"terms": ["a"], "where": "arguments"}, "must_include[0].where"),
        ({"terms": ["a"], "where": "everywhere"}, "must_include[0].where"),
    ],
)
def test_a_wrong_expectation_object_is_refused_by_its_field(
    tmp_path: Path, finding: dict[str, object], needle: str
) -> None:
    with pytest.raises(InputError) as err:
        load_cases(_folder(tmp_path, {"must_include": [finding]}))
    assert needle in str(err.value)


def _arg(id_: str, stance: str, text: str, status: str = "active") -> Argument:
    return Argument(id_, "pharmacist", stance, text, (), (), 0.6, status=status)  # type: ignore[arg-type]


def _plan() -> tuple[Deliberation, Evaluation]:
    included = Option(
        "opt-stop-naproxen",
        "Stop naproxen",
        "immediate-safety",
        "Stop the NSAID and switch to paracetamol.",
        arguments=(
            _arg("a1", "support", "Naproxen with clopidogrel: bleeding risk."),
            _arg("a2", "attack", "Pain may return without an anti-inflammatory."),
            _arg("a3", "support", "Naproxen raises blood pressure.", status="rejected"),
        ),
    )
    excluded = Option(
        "opt-start-ppi",
        "Start a proton pump inhibitor",
        "medication",
        "Gastroprotection while the NSAID continues.",
        arguments=(_arg("b1", "support", "Alendronate for 23 years: stop it now."),),
    )
    d = Deliberation("p", 1, "Patient/x", Parameters(), (), (included, excluded))
    return d, Evaluation((), (), ("opt-stop-naproxen",))


def _case(tmp_path: Path, case: dict[str, object]) -> CaseResult:
    (c,) = load_cases(_folder(tmp_path, case))
    d, ev = _plan()
    return check_case(c, d, ev)


def test_check_reads_included_activities_and_live_supporting_arguments(tmp_path: Path) -> None:
    r = _case(
        tmp_path,
        {
            "must_include": [
                ["stop naproxen"],  # title
                ["paracetamol"],  # description
                ["clopidogrel", "bleeding"],  # a live supporting argument
                ["blood pressure"],  # only in a rejected argument: missed
                ["pain may return"],  # only in an objection: missed
                ["proton pump"],  # an excluded option: missed
                {"any_of": [["ibuprofen"], ["naproxen", "bleeding"]]},  # second wording
            ],
            "must_not_include": [
                ["clopidogrel"],  # in an argument only: not a recommendation
                ["start", "proton pump"],  # excluded option: absent
                ["switch", "paracetamol"],  # description of an included one: unsafe
            ],
        },
    )
    statuses = [c.status for c in r.checks]
    assert statuses == [
        "found",
        "found",
        "found",
        "missed",
        "missed",
        "missed",
        "found",
        "absent",
        "absent",
        "unsafe",
    ]
    assert r.checks[6].terms == ("naproxen", "bleeding")
    assert not r.passed


def test_a_claim_is_looked_for_in_every_argument_of_every_option(tmp_path: Path) -> None:
    r = _case(
        tmp_path,
        {
            "must_not_include": [
                {"terms": ["alendronate", "stop it"], "where": "arguments"},  # excluded option
                {"terms": ["pain may return"], "where": "arguments"},  # an objection
                {"terms": ["blood pressure"], "where": "arguments"},  # a rejected argument
                {"terms": ["insulin"], "where": "arguments", "reason": "r", "source": "s"},
            ]
        },
    )
    assert [c.status for c in r.checks] == ["unsafe", "unsafe", "unsafe", "absent"]
    assert r.checks[0].activity == "Start a proton pump inhibitor"


def test_reports_carry_the_reason_and_source_of_what_failed(tmp_path: Path) -> None:
    r = _case(
        tmp_path,
        {
            "must_include": [
                {"terms": ["insulin"], "reason": "why it matters", "source": "NICE NG28 (2015)"},
                ["stop naproxen"],
            ],
        },
    )
    table = report_table([r])
    assert "MISSED  must_include      insulin" in table
    assert "why: why it matters (NICE NG28 (2015))" in table
    assert table.count("why:") == 1  # only failed checks explain themselves
    checks = report_json([r])["cases"][0]["checks"]
    assert checks[0]["reason"] == "why it matters" and checks[0]["source"] == "NICE NG28 (2015)"
    assert "reason" not in checks[1] and "any_of" not in checks[1]


def test_rank_at_most_asks_for_a_place_high_enough_in_the_plan(tmp_path: Path) -> None:
    d, _ = _plan()
    ids = ("opt-start-ppi", "opt-stop-naproxen")  # both included, naproxen second
    (c,) = load_cases(
        _folder(
            tmp_path,
            {
                "must_include": [
                    {"terms": ["stop naproxen"], "rank_at_most": 1},
                    {"terms": ["stop naproxen"], "rank_at_most": 2},
                    {"terms": ["proton pump"], "rank_at_most": 1},
                ]
            },
        )
    )
    r = check_case(c, d, Evaluation((), (), ids))
    assert [x.status for x in r.checks] == ["missed", "found", "found"]
    assert r.checks[0].activity == "Stop naproxen (rank 2)"
    assert report_json([r])["cases"][0]["checks"][0]["rank_at_most"] == 1


@pytest.mark.parametrize("rank", [0, 1.5, True, "3"])
def test_rank_at_most_is_a_whole_number_on_a_finding(tmp_path: Path, rank: object) -> None:
    with pytest.raises(InputError) as err:
        load_cases(_folder(tmp_path, {"must_include": [{"terms": ["a"], "rank_at_most": rank}]}))
    assert "must_include[0].rank_at_most" in str(err.value)
    with pytest.raises(InputError) as err:
        load_cases(_folder(tmp_path, {"must_not_include": [{"terms": ["a"], "rank_at_most": 2}]}))
    assert "must_not_include[0].rank_at_most" in str(err.value)


def _two_included() -> tuple[Deliberation, Evaluation]:
    """Two activities the evaluation includes: naproxen first (stronger support)."""

    def one(oid: str, title: str, text: str, tau: float) -> Option:
        a = Argument(f"{oid}-a", "pharmacist", "support", text, (), (), tau)
        return Option(
            oid,
            title,
            "immediate-safety",
            "See the detail view.",
            arguments=(a,),
            edges=(Edge(a.id, oid, "support"),),
        )

    d = Deliberation(
        "p",
        1,
        "Patient/x",
        Parameters(),
        (),
        (
            one("opt-stop-naproxen", "Stop naproxen", "Naproxen with clopidogrel: bleeding.", 0.9),
            one("opt-start-ppi", "Start a proton pump inhibitor", "Gastroprotection.", 0.7),
        ),
    )
    ev = evaluate(d)
    assert ev.plan == ("opt-stop-naproxen", "opt-start-ppi")
    return d, ev


def test_a_summary_expectation_reads_the_clinician_summary_lines(tmp_path: Path) -> None:
    d, ev = _two_included()
    (c,) = load_cases(
        _folder(
            tmp_path,
            {
                "must_include": [
                    {"terms": ["stop naproxen", "clopidogrel: bleeding"], "where": "summary"},
                    {"terms": ["proton pump"], "where": "summary", "rank_at_most": 2},
                    {"terms": ["proton pump"], "where": "summary", "rank_at_most": 1},
                    {"terms": ["detail view"], "where": "summary"},  # the description: no
                ],
                "must_not_include": [
                    {"terms": ["proposed by pharmacist"], "where": "summary"},
                    {"terms": ["insulin"], "where": "summary"},
                ],
            },
        )
    )
    r = check_case(c, d, ev)
    assert [x.status for x in r.checks] == [
        "found",
        "found",
        "missed",
        "missed",
        "unsafe",
        "absent",
    ]
    assert r.checks[0].activity == "Stop naproxen (summary line 1)"
    assert r.checks[1].activity == "Start a proton pump inhibitor (summary line 2)"
    assert "summary: proposed by pharmacist" in report_table([r])
    assert report_json([r])["cases"][0]["checks"][4]["where"] == "summary"


def test_reports_name_the_items_no_check_covers_per_plan(tmp_path: Path) -> None:
    """The coverage statement's uncovered items travel into the report, per case and as the
    median and most per plan over the run (reported, never a failure)."""
    (c,) = load_cases(_folder(tmp_path, {"must_include": ["stop naproxen"]}))
    d, ev = _plan()
    gaps = (
        CoverageGap("uncovered", "uncovered-medicine", "Imatinib 400 MG", "c", True, ("m/1",)),
        CoverageGap("uncovered", "uncovered-condition", "Gout", "c", False, ("c/1",)),
        CoverageGap("missing-fact", "no-weight", "no body weight", "c", True, ("p/1",)),
    )
    covered = replace(d, meta=replace(d.meta, coverage=Coverage("v", "adults", (), gaps)))
    r = check_case(c, covered, ev)
    assert r.uncovered == ("Imatinib 400 MG [high risk]", "Gout") and r.passed
    bare = check_case(c, d, ev)  # a plan with no coverage statement names none
    assert bare.uncovered == ()
    report = report_json([r, bare])
    assert report["cases"][0]["uncovered"] == ["Imatinib 400 MG [high risk]", "Gout"]
    assert report["uncovered"] == {"median": 1, "max": 2, "total": 2}
    table = report_table([r, bare])
    assert "  UNCOVERED (2): Imatinib 400 MG [high risk]; Gout" in table
    assert "UNCOVERED items per plan: median 1, max 2 (total 2)" in table
