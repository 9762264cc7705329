"""The rule functions' points and options as data: the file is validated and a bad entry is
refused naming the file and the place; every id the rule functions name is in the file and every
entry of the file is used; a point is built from its entry; and a site's value of a named
parameter changes what a rule function decides on a real record."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fhir_mapping.ingest import ingest
from inference.knowledge._datafile import KnowledgeFileError, load_file
from inference.knowledge.parameters import param, shipped_parameters
from inference.knowledge.rule_points import (
    RULE_POINTS_FILE,
    RulePointsFile,
    make_point,
    rule_option,
    rule_points,
)
from inference.knowledge.rules import analyse
from inference.knowledge.site import install, load_site, shipped
from inference.knowledge.strength import Factors, tau
from tests.conftest import fixture_bundle

KNOWLEDGE = Path(__file__).resolve().parents[2] / "inference" / "knowledge"
RULES_PY = KNOWLEDGE / "rules.py"
# The nets under the criteria take their points and options from the same file.
NETS_PY = (
    KNOWLEDGE / "report_net.py",
    KNOWLEDGE / "presenting.py",
    KNOWLEDGE / "goals.py",
    KNOWLEDGE / "adherence_net.py",
    KNOWLEDGE / "perioperative.py",
    KNOWLEDGE / "emergencies.py",
)
# a point id ("falls.no-carer") or a parameter name ("bp.raised_systolic_mmhg")
_DOTTED = re.compile(r"^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)+$")


def _strings(tree: ast.AST) -> set[str]:
    return {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _option_keys(tree: ast.AST) -> set[str]:
    """The option keys rules.py names: the first argument of each ``_proposal`` call."""
    return {
        s
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_proposal"
        for s in _strings(n.args[0])
    }


def test_every_name_rules_use_is_in_the_data_and_every_entry_is_used() -> None:
    """Each dotted name in rules.py is a point of rule_points.yaml or a shipped parameter (a
    misspelt one is neither); each point and option of the file is named in rules.py."""
    tree = ast.parse(RULES_PY.read_text())
    nets = [ast.parse(p.read_text()) for p in NETS_PY]
    dotted = {
        s
        for t in (tree, *nets)
        for s in _strings(t)
        if _DOTTED.match(s) and not s.endswith((".yaml", ".json"))  # a data file's name
    }
    points, params = set(rule_points().points), set(shipped_parameters())
    assert dotted - points - params == set()
    assert points - dotted == set(), "points no rule function makes"
    assert len(dotted & params) > 30
    net_options = {
        s
        for t in nets
        for n in ast.walk(t)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "rule_option"
        for s in _strings(n.args[0])
    }
    assert _option_keys(tree) | net_options == set(rule_points().options)


def _broken(tmp_path: Path, edit: str) -> Path:
    """A copy of the shipped file with one entry broken by ``edit``."""
    raw = yaml.safe_load(RULE_POINTS_FILE.read_text())
    entry = raw["points"]["falls.no-carer"]
    option = raw["options"]["falls-prevention"]
    if edit == "severity":
        entry["severity"] = "catastrophic"
    elif edit == "role":
        entry["role"] = "astrologer"
    elif edit == "themes":
        del entry["themes"]
    elif edit == "category":
        option["category"] = "leisure"
    path = tmp_path / "rule_points.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("edit", "where", "problem"),
    [
        ("severity", "points.falls.no-carer.severity", "Input should be 'critical'"),
        ("role", "points.falls.no-carer.role", "unknown role 'astrologer'"),
        ("themes", "points.falls.no-carer.themes", "Field required"),
        ("category", "options.falls-prevention.category", "unknown category 'leisure'"),
    ],
)
def test_a_malformed_entry_is_refused_naming_the_file_and_place(
    tmp_path: Path, edit: str, where: str, problem: str
) -> None:
    with pytest.raises(KnowledgeFileError) as err:
        load_file(_broken(tmp_path, edit), RulePointsFile)
    assert err.value.file.name == "rule_points.yaml"
    assert err.value.where == where
    assert problem in err.value.problem


def test_the_shipped_file_loads_and_states_themes_and_concerns() -> None:
    points = rule_points().points
    # the care coordinator's objections are about treatment burden (its declared priority)
    burden = {i for i, p in points.items() if p.concern == "treatment-burden"}
    assert burden == {
        i for i, p in points.items() if p.role == "care-coordinator" and p.stance == "attack"
    }
    assert "burden" in points["polypharmacy.another-appointment"].themes


def test_a_point_is_built_from_its_entry() -> None:
    p = make_point("polypharmacy.structured-review", ("MedicationRequest/1",), n=11, names="a, b")
    assert p.text.startswith("11 medicines on the list (a, b): a structured review")
    # its strength from its three levels and its evidence's best grade (B), on the table
    assert p.factors == Factors("major", "certain", "direct")
    assert (p.role, p.stance, p.tau, p.facts) == (
        "pharmacist",
        "support",
        tau("major", "certain", "B", "direct"),
        ("MedicationRequest/1",),
    )
    assert p.themes == () and p.concern == ""
    stronger = make_point(
        "polypharmacy.structured-review", (), stronger_if="hyperpolypharmacy", n=11, names=""
    )
    # the rule's named condition raises the severity, and the strength with it
    assert stronger.factors is not None and stronger.factors.severity == "critical"
    assert stronger.tau == tau("critical", "certain", "B", "direct") > p.tau
    lead = make_point("after-thrombolysis.which-event", (), drug="x", where="y", when="z", what="w")
    assert lead.recent


def test_an_unknown_id_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match=r"no-such\.point"):
        make_point("no-such.point", ())
    with pytest.raises(KeyError, match="no-such-option"):
        rule_option("no-such-option")


@pytest.fixture
def restore() -> Iterator[None]:
    yield
    install(shipped())


def test_a_site_blood_pressure_threshold_changes_the_rule_decision(
    tmp_path: Path, restore: None
) -> None:
    """Adalberto's latest reading is 168/89 mmHg with hypertension recorded: above the shipped
    140/90 his treatment is reviewed; a site whose raised systolic value is 170 does not."""
    profile = ingest(fixture_bundle("adalberto").read_bytes())
    assert param("bp.raised_systolic_mmhg") == 140
    shipped_review = analyse(profile).proposal("opt-review-bp")
    assert shipped_review is not None
    assert shipped_review.priority == rule_option("review-bp").priority
    (tmp_path / "site.yaml").write_text(
        "version: s1\nparameters:\n  bp.raised_systolic_mmhg: 170\n"
    )
    install(load_site(tmp_path))
    assert analyse(profile).proposal("opt-review-bp") is None
    install(shipped())
    assert analyse(profile).proposal("opt-review-bp") is not None
