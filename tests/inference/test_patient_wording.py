"""The patient templates (``inference/knowledge/data/patient_wording.yaml``): validated at load
(no literal number, no unknown placeholder), matched by id template with the most specific
winning, filled with the medicine's plain name only, and every template words some activity
the knowledge can propose."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
import yaml

from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.criteria import CRITERIA_DIR
from inference.knowledge.patient import WORDINGS, load_wordings, patient_wordings
from service.core.model import Option
from service.record.profile import Medication, PatientProfile

KNOWLEDGE = CRITERIA_DIR.parent
PROFILE = PatientProfile(
    ref="Patient/p",
    sex="female",
    birth_date=date(1950, 1, 1),
    as_of=date(2026, 1, 1),
    medications=(
        Medication(
            "MedicationRequest/m1", "Warfarin Sodium 5 MG Oral Tablet", (), "active", "order", None
        ),
    ),
)


def _option(oid: str, med: str | None = None, category: str = "medication") -> Option:
    return Option(oid, "a clinical title 25 mg", category, "a description", medication_ref=med)


def _words(*options: Option) -> dict[str, tuple[str, str, str]]:
    return {w.option_id: (w.section, w.text, w.watch) for w in patient_wordings(PROFILE, options)}


def test_the_medicine_is_named_by_its_plain_name_without_its_strength() -> None:
    got = _words(_option("opt-stop-warfarin", "MedicationRequest/m1"))
    section, text, _ = got["opt-stop-warfarin"]
    assert section == "medicines"
    assert text.startswith("Your care team may stop warfarin.") and "5" not in text


def test_the_most_specific_template_wins() -> None:
    got = _words(
        _option("opt-review-duplicate-statin", "MedicationRequest/m1"),
        _option("opt-review-warfarin", "MedicationRequest/m1"),
    )
    assert "two medicines that do the same job" in got["opt-review-duplicate-statin"][1]
    assert (
        got["opt-review-warfarin"][1]
        == "Your care team will check if warfarin is still right for you."
    )


def test_no_template_or_no_medicine_to_name_leaves_the_generic_line_to_the_core() -> None:
    got = _words(_option("opt-something-new"), _option("opt-stop-warfarin", None))
    assert "opt-something-new" not in got and "opt-stop-warfarin" not in got
    assert "" in got  # the plan-wide lines are always there


def _activity_ids() -> list[str]:
    """Every activity id the knowledge can propose, its bindings filled with a name: the
    criteria's options, variants and lab groups (and the verify-the-dose form), the rule functions'
    options (``rule_points.yaml``) and the merged monitoring panels."""
    ids = []
    for f in sorted(CRITERIA_DIR.glob("*.json")):
        for c in json.loads(f.read_text())["criteria"]:
            ids.append(c["option"]["id"])
            ids += [v["id"] for v in c.get("variants", {}).values()]
            if c["option"].get("group"):
                ids.append(c["option"]["group"]["id"])
    ids += ["opt-verify-" + i.removeprefix("opt-") for i in ids]
    rule_options = yaml.safe_load((KNOWLEDGE / "data" / "rule_points.yaml").read_text())
    ids += [o["id"] for o in rule_options["options"].values()]
    # the nets under the criteria end their option's id with the record resource's id
    nets = ("follow-up-report", "chase-order", "presenting-problem", "not-taken")
    ids += [rule_options["options"][k]["id"] + "-{a}" for k in nets]
    panels = yaml.safe_load((KNOWLEDGE / "data" / "panels.yaml").read_text())
    ids += [f"opt-monitor-{p['id']}" for p in panels.get("panels", [])]
    return [re.sub(r"\{[a-z]+\}", "drug", i) for i in ids]


def test_every_template_words_some_activity_the_knowledge_proposes() -> None:
    concrete = _activity_ids()
    patterns = {
        w.id: re.compile(".+".join(map(re.escape, re.split(r"\{[a-z]+\}", w.id))))
        for w in WORDINGS.activities
    }
    unused = [k for k, p in patterns.items() if not any(p.fullmatch(c) for c in concrete)]
    assert not unused, f"templates no activity can match: {unused}"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Take {medicine} twice, every 12 hours.", "literal number"),
        ("Stop {drug} now.", "unknown placeholder"),
    ],
)
def test_a_bad_template_stops_start_up_naming_it(tmp_path: Path, text: str, problem: str) -> None:
    bad = tmp_path / "patient_wording.yaml"
    bad.write_text(
        json.dumps(
            {
                "version": "t",
                "activities": [{"id": "opt-stop-{a}", "section": "medicines", "text": text}],
            }
        )
    )
    with pytest.raises(KnowledgeFileError) as err:
        load_wordings(bad)
    assert "opt-stop-{a}" in str(err.value) or "activities" in str(err.value)
    assert problem.split()[-1] in str(err.value)


def test_lines_said_whatever_the_record_assume_nothing_it_may_not_hold() -> None:
    """The final blind review found two patient lines untrue of their records: "check your
    blood pressure medicines" to a man taking none (the line serves treated and untreated
    patients alike), and "give you your glucagon" where glucagon was only being offered."""
    bp = next(w for w in WORDINGS.activities if w.id == "opt-review-bp")
    assert "medicine" not in bp.text
    hypo = WORDINGS.advice["hypoglycaemia"]
    assert all("your glucagon" not in line for line in hypo.glucagon)
