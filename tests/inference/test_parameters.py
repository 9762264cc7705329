"""Named clinical parameters: the shipped file is complete and cited, code reads them through
``param``, and a site's ``parameters`` in its site.yaml change the value plans use, are recorded
as changes, and are refused by name when unknown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from inference.knowledge.criteria import KnowledgeError
from inference.knowledge.parameters import param, shipped_parameters, site_values
from inference.knowledge.site import install, load_site, shipped


@pytest.fixture
def restore() -> Iterator[None]:
    yield
    install(shipped())


def test_every_parameter_is_cited_with_a_unit() -> None:
    params = shipped_parameters()
    assert params, "the parameters file is empty"
    for name, p in params.items():
        assert p.source.strip() and p.unit.strip() and p.description.strip(), name


def test_param_reads_the_shipped_value() -> None:
    assert param("age.adult_years") == shipped_parameters()["age.adult_years"].value


def test_unknown_parameter_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match=r"no-such\.thing"):
        param("no-such.thing")


def test_site_sets_a_parameter_and_plans_read_it(tmp_path: Path, restore: None) -> None:
    (tmp_path / "site.yaml").write_text("version: s1\nparameters:\n  age.adult_years: 16\n")
    knowledge = load_site(tmp_path)
    assert [(c.kind, c.criterion) for c in knowledge.changes] == [("parameter", "age.adult_years")]
    assert "18 -> 16 years" in knowledge.changes[0].detail
    install(knowledge)
    assert param("age.adult_years") == 16
    assert site_values() == {"age.adult_years": 16}
    install(shipped())
    assert param("age.adult_years") == 18
    assert site_values() == {}


@pytest.mark.parametrize(
    ("text", "path", "problem"),
    [
        ("version: x\nparameters:\n  age.no_such: 3\n", "parameters.age.no_such", "unknown"),
        ("version: x\nparameters:\n  age.adult_years: .nan\n", "parameters", "finite"),
    ],
)
def test_bad_site_parameter_is_refused_by_name(
    tmp_path: Path, text: str, path: str, problem: str
) -> None:
    (tmp_path / "site.yaml").write_text(text)
    with pytest.raises(KnowledgeError) as err:
        load_site(tmp_path)
    assert err.value.path.startswith(path)
    assert problem in err.value.problem


def test_knowledge_check_lists_a_site_parameter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    (tmp_path / "site.yaml").write_text(
        "version: s1\nparameters:\n  bp.raised_systolic_mmhg: 150\n"
    )
    assert main(["knowledge", "check", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "parameter bp.raised_systolic_mmhg: 140 -> 150 mmHg (site.yaml)" in out.out + out.err
