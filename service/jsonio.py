"""The one JSON loader for every entry point: Bundles, Tasks, CDS Hooks requests and feedback,
the settings file.

``load_json_object`` turns bytes or text into a JSON object (a ``dict``) or raises the caller's
``InputError`` subclass: never ``RecursionError``, ``UnicodeDecodeError`` or a bare
``ValueError``, whatever the input. Nesting deeper than ``max_depth`` is refused after parsing,
before any recursive code downstream (pydantic, our own walkers, ``json.dumps``) can meet it.
``orjson`` parses (it rejects invalid UTF-8, lone surrogates, ``NaN``/``Infinity`` and stops
by itself at 1024 levels). Diagnostics name the position of a syntax error, never its text: the
body may be a patient record. This module is a bottom layer: standard library, ``orjson`` and
``service.errors`` only.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from service.errors import InputError, Issue

__all__ = ["MAX_JSON_DEPTH", "dump_json", "load_json_object"]

# FHIR resources nest about 10 levels (Bundle.entry.resource.extension.extension.value...); a
# CDS Hooks request with a prefetched searchset about 15. 64 leaves room for any real document.
MAX_JSON_DEPTH: Final = 64
_BOM: Final = b"\xef\xbb\xbf"


def load_json_object(
    data: bytes | bytearray | memoryview | str,
    *,
    what: str,
    max_depth: int = MAX_JSON_DEPTH,
    error: type[InputError] = InputError,
    expression: str = "",
) -> dict[str, Any]:
    """The JSON object in ``data``, or ``error`` naming ``what`` and why it is unusable.

    ``expression`` is the FHIRPath the OperationOutcome issue points at (e.g. ``Bundle``).
    A UTF-8 byte-order mark is tolerated (some EHR exports write one).
    """
    where = (expression,) if expression else ()
    if isinstance(data, bytearray | memoryview):
        data = bytes(data)
    if isinstance(data, bytes) and data.startswith(_BOM):
        data = data[len(_BOM) :]
    elif isinstance(data, str) and data.startswith("\ufeff"):
        data = data[1:]
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise _refuse(
            error, what, f"is not valid JSON in UTF-8 ({_position(exc)})", where
        ) from None
    except RecursionError:  # not raised by orjson today; kept so no version of it can leak one
        raise _refuse(error, what, "nests too deeply", where) from None
    if not isinstance(value, dict):
        raise _refuse(error, what, f"must be a JSON object, not {_kind(value)}", where)
    if not _within_depth(value, max_depth):
        raise _refuse(error, what, f"nests deeper than {max_depth} levels", where)
    return value


def dump_json(value: Any) -> bytes:
    """Compact UTF-8 JSON (non-ASCII kept as is), as ``json.dumps(..., ensure_ascii=False,
    separators=(",", ":"))`` writes it, several times faster: what the transports send back."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def canonical_json(value: Any) -> bytes:
    """``dump_json`` with every object's keys sorted: the one serialisation of a deliberation
    document, stored, returned and embedded (base64) in the plan's Binary, byte for byte."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _refuse(error: type[InputError], what: str, why: str, where: tuple[str, ...]) -> InputError:
    message = f"{what} {why}"
    return error(message, issues=(Issue("error", "structure", message, where),))


def _position(exc: orjson.JSONDecodeError) -> str:
    # orjson's message may quote the input around the error (record text); keep line/column.
    return f"line {exc.lineno} column {exc.colno}" if exc.lineno else "unreadable"


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _within_depth(root: dict[str, Any], limit: int) -> bool:
    """True when no object or array in ``root`` sits more than ``limit`` levels deep (the root
    is level 1). Iterative, so the check itself cannot overflow the stack."""
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return True
