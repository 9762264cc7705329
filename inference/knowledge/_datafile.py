"""Load one knowledge data file (YAML or JSON) into its pydantic schema, or refuse it by name.

The knowledge tables under ``inference/knowledge/data`` are read once, when their module is
imported (service start-up). A file that cannot be read, is not YAML, or breaks its schema raises
``KnowledgeFileError`` naming the file, the place in it and the problem, so a bad edit stops
start-up instead of silently changing what the service recommends. No other I/O here.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

__all__ = [
    "DATA_DIR",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "KnowledgeFileError",
    "check_patterns",
    "load_file",
    "load_yaml",
    "parse_file",
    "problems_message",
    "read_text",
]

DATA_DIR = Path(__file__).resolve().parent / "data"

M = TypeVar("M", bound=BaseModel)

# libyaml's safe loader when installed (5x faster on the drug table), else the pure-Python one;
# either way a mapping that repeats a key is refused (YAML would keep the last one silently).
_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _RepeatedKey(yaml.constructor.ConstructorError):
    """A mapping that states one key twice."""


class _Loader(_Base):  # type: ignore[misc,valid-type]
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _RepeatedKey(
                    None,
                    None,
                    f"key {key!r} repeated (first at line {seen[key]})",
                    key_node.start_mark,
                )
            seen[key] = line
        return dict(super().construct_mapping(node, deep=deep))


# The most a knowledge file may be: the largest shipped one is a few hundred kB, so a file far
# over it is a mistake (or an attack), refused before it is read whole. This module imports
# nothing of the package (it is loaded first), so its two reading limits are stated here.
MAX_FILE_BYTES = 4 * 1024 * 1024
# The deepest nesting of lists and mappings a knowledge file may have (the shipped ones stay
# under 16): deeper is refused before a recursive reader could exhaust the stack.
MAX_DEPTH = 64

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


def read_text(path: Path) -> str:
    """The text of ``path``: a regular file (a FIFO or device would block or never end), at most
    ``MAX_FILE_BYTES``, UTF-8; else a ``KnowledgeFileError``."""
    try:
        st = path.stat()
    except OSError as exc:
        raise KnowledgeFileError(path, "", f"cannot be read ({exc.strerror})") from exc
    if not stat.S_ISREG(st.st_mode):
        raise KnowledgeFileError(path, "", "not a regular file")
    if st.st_size > MAX_FILE_BYTES:
        raise KnowledgeFileError(
            path, "", f"{st.st_size} bytes, over the limit of {MAX_FILE_BYTES} bytes"
        )
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise KnowledgeFileError(path, "", f"cannot be read ({exc.strerror})") from exc
    if len(data) > MAX_FILE_BYTES:
        raise KnowledgeFileError(path, "", f"over the limit of {MAX_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KnowledgeFileError(
            path, f"byte {exc.start}", "not UTF-8 text (save the file as UTF-8)"
        ) from exc


def _yaml_error(path: Path, exc: yaml.YAMLError) -> KnowledgeFileError:
    """``exc`` as one line naming the line of the file it points at."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}" if mark is not None else ""
    if isinstance(exc, _RepeatedKey):
        return KnowledgeFileError(path, where, str(exc.problem))
    said = [str(x) for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x]
    return KnowledgeFileError(path, where, f"not valid YAML ({', '.join(said) or exc})")


def _yaml_depth(path: Path, text: str) -> None:
    """Refuse YAML nested deeper than ``MAX_DEPTH``, from the parser's event stream (flat,
    not recursive), before any recursive step composes it."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Base):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    line = event.start_mark.line + 1 if event.start_mark else 0
                    raise KnowledgeFileError(
                        path, f"line {line}", f"nested deeper than {MAX_DEPTH} levels"
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        raise _yaml_error(path, exc) from exc


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def _json_depth(path: Path, text: str) -> None:
    """Refuse JSON nested deeper than ``MAX_DEPTH`` by counting brackets outside strings."""
    depth = 0
    for m in _BRACKET.finditer(_JSON_STRING.sub('""', text)):
        depth += 1 if m.group() in "[{" else -1
        if depth > MAX_DEPTH:
            raise KnowledgeFileError(path, "", f"nested deeper than {MAX_DEPTH} levels")


def _unique(path: Path, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when it repeats a key (``json`` would keep the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise KnowledgeFileError(path, "", f"key {key!r} repeated in one object")
        out[key] = value
    return out


def parse_file(path: Path) -> object:
    """The data of ``path`` (JSON when it ends in .json, else YAML), read by ``read_text`` and
    refused when nested too deep, not JSON or YAML, or holding a number too long to convert."""
    text = read_text(path)
    try:
        if path.suffix == ".json":
            _json_depth(path, text)
            try:
                return json.loads(text, object_pairs_hook=lambda kv: _unique(path, kv))
            except json.JSONDecodeError as exc:
                raise KnowledgeFileError(
                    path, f"line {exc.lineno}", f"not valid JSON ({exc.msg})"
                ) from exc
        _yaml_depth(path, text)
        try:
            return yaml.load(text, Loader=_Loader)  # a safe loader, see _Loader
        except yaml.YAMLError as exc:
            raise _yaml_error(path, exc) from exc
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, KnowledgeFileError):
            raise
        # Python refuses integers of more than a few thousand digits (and a stack's worth of
        # nesting): a value no knowledge file needs.
        raise KnowledgeFileError(path, "", f"a value that cannot be read ({exc})") from exc


def load_file(path: Path, model: type[M]) -> M:
    """Read ``path`` (``parse_file``) and validate it as ``model``; any failure is a
    ``KnowledgeFileError``."""
    raw = parse_file(path)
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
