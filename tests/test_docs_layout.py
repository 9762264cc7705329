"""The documentation's shape: a short README that links to docs/, and the generated parts of
docs/ equal to what their sources make (the import contracts from pyproject.toml, the settings
from service/settings.py)."""

from __future__ import annotations

import re

from service.settings import settings_markdown
from tests.support.docs import (
    ARCHITECTURE,
    ROOT,
    SETTINGS,
    architecture_with_contracts,
    contracts_markdown,
)

README_MAX_LINES = 120


def test_the_architecture_states_the_contracts_pyproject_declares() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert text == architecture_with_contracts(text), "run: .venv/bin/python -m tests.support.docs"
    block = contracts_markdown()
    assert "`service.core`" in block and "`service.errors`" in block
    assert block.count("**") // 2 >= 6  # every contract, by name
    assert "service.api" not in text  # a layer that does not exist is not named


def test_the_settings_page_is_generated() -> None:
    assert SETTINGS.read_text(encoding="utf-8") == settings_markdown()


def test_the_readme_is_short_and_its_links_resolve() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert {"docs/architecture.md", "docs/operations.md", "docs/settings.md"} <= set(links)
    for link in links:
        assert (ROOT / link).is_file(), link
    for command in ("python3.11 dev.py plan ", "python3.11 dev.py test"):
        assert command in text


def test_links_between_the_docs_resolve() -> None:
    for page in sorted((ROOT / "docs").glob("*.md")):
        for link in re.findall(r"\]\(([^)#:]+)\)", page.read_text(encoding="utf-8")):
            assert (page.parent / link).resolve().exists(), f"{page.name}: {link}"
