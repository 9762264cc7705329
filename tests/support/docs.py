"""The generated parts of docs/: the import contracts of docs/architecture.md (from
``[tool.importlinter]`` in pyproject.toml) and docs/settings.md (from service/settings.py).
Tests keep them equal to what this makes; ``python -m tests.support.docs`` rewrites them."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from service.settings import settings_markdown

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
SETTINGS = ROOT / "docs" / "settings.md"
BEGIN = "<!-- contracts: made from pyproject.toml by `python -m tests.support.docs` -->"
END = "<!-- end of contracts -->"
_BLOCK = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.DOTALL)


def _modules(text: str) -> str:
    """One layer's modules: `a` | `b` (independent of each other) or `a`, `b` (siblings)."""
    if "|" in text:
        return " | ".join(f"`{m.strip()}`" for m in text.split("|"))
    return ", ".join(f"`{m.strip()}`" for m in text.split(":"))


def _contract(number: int, contract: dict[str, Any]) -> list[str]:
    lines = [f"{number}. **{contract['name']}** ({contract['type']}):"]
    if contract["type"] == "layers":
        lines.append("   (higher first; a layer imports only the layers below it):")
        lines += [f"   - {_modules(layer)}" for layer in contract["layers"]]
    else:
        sources = ", ".join(f"`{m}`" for m in contract["source_modules"])
        forbidden = ", ".join(f"`{m}`" for m in contract["forbidden_modules"])
        direct = " (direct imports)" if contract.get("allow_indirect_imports") else ""
        lines.append(f"   {sources} may not import{direct} {forbidden}.")
    return lines


def contracts_markdown(pyproject: Path = ROOT / "pyproject.toml") -> str:
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]
    lines = [BEGIN, ""]
    for number, contract in enumerate(config["contracts"], start=1):
        lines += _contract(number, contract)
    return "\n".join([*lines, "", END])


def architecture_with_contracts(text: str) -> str:
    """docs/architecture.md's text with its contracts block made anew."""
    if not _BLOCK.search(text):
        raise ValueError(f"{ARCHITECTURE} has no contracts block")
    return _BLOCK.sub(lambda _: contracts_markdown(), text)


def main() -> int:
    ARCHITECTURE.write_text(
        architecture_with_contracts(ARCHITECTURE.read_text(encoding="utf-8")), encoding="utf-8"
    )
    SETTINGS.write_text(settings_markdown(), encoding="utf-8")
    print(f"wrote {ARCHITECTURE.relative_to(ROOT)} and {SETTINGS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
