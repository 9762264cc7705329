"""Load one knowledge data file (YAML or JSON) into its pydantic schema, or refuse it by name.

The knowledge tables under ``inference/knowledge/data`` are read once, when their module is
imported (service start-up). A file that cannot be read, is not YAML, or breaks its schema raises
``KnowledgeFileError`` naming the file, the place in it and the problem, so a bad edit stops
start-up instead of silently changing what the service recommends. No other I/O here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

__all__ = [
    "DATA_DIR",
    "KnowledgeFileError",
    "check_patterns",
    "load_file",
    "load_yaml",
    "problems_message",
]

DATA_DIR = Path(__file__).resolve().parent / "data"

M = TypeVar("M", bound=BaseModel)

# libyaml's safe loader when installed (5x faster on the drug table), else the pure-Python one.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Keys whose value names a list item better than its index does ("drugs[metformin]").
_NAMING_KEYS = ("id", "name", "spec", "rxcui", "drug")


def check_patterns(patterns: Iterable[str], where: str = "") -> None:
    """Every pattern compiles as a regular expression, else a ValueError naming it (a schema
    validator's error, so the load names the file and place); ``where`` prefixes the message."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{where}bad pattern {pattern!r}: {exc}") from exc


class KnowledgeFileError(ValueError):
    """A knowledge file that cannot be used: ``file``, ``where`` in it, ``problem``."""

    def __init__(self, file: Path, where: str, problem: str) -> None:
        self.file = file
        self.where = where or "(top level)"
        self.problem = problem
        super().__init__(f"{file.name}: {self.where}: {problem}")


def _where(raw: object, loc: tuple[int | str, ...]) -> str:
    """A readable path for a pydantic error location, naming list items where they have a
    name: ``drugs[metformin].classes[1]``."""
    out = ""
    node = raw
    for part in loc:
        if isinstance(part, int) and isinstance(node, list):
            item = node[part] if 0 <= part < len(node) else None
            label = next(
                (str(item[k]) for k in _NAMING_KEYS if isinstance(item, dict) and k in item),
                str(part),
            )
            out += f"[{label}]"
            node = item
        else:
            out += f".{part}" if out else str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return out


def load_file(path: Path, model: type[M]) -> M:
    """Read ``path`` (JSON when it ends in .json, else YAML) and validate it as ``model``; any
    failure is a ``KnowledgeFileError``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise KnowledgeFileError(path, "", f"cannot be read ({exc.strerror})") from exc
    raw: object
    if path.suffix == ".json":
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise KnowledgeFileError(
                path, f"line {exc.lineno}", f"not valid JSON ({exc.msg})"
            ) from exc
    else:
        try:
            raw = yaml.load(text, Loader=_Loader)  # a safe loader, see _Loader
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark is not None else ""
            raise KnowledgeFileError(path, where, f"not valid YAML ({exc})") from exc
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        problem = str(err["msg"]).removeprefix("Value error, ")
        raise KnowledgeFileError(path, _where(raw, tuple(err["loc"])), problem + more) from exc


load_yaml = load_file


def problems_message(problems: Sequence[str]) -> str:
    """The first few of a file's cross-reference ``problems`` as one message, "..." when more."""
    return "; ".join(problems[:5]) + (" ..." if problems[5:] else "")
