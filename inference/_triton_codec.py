"""Frozen dataclasses <-> plain JSON values, for the machine-readable block inside Triton prompts.

The Triton backend embeds each step's inputs (profile, panel member, options, arguments...) as
compact JSON in the prompt; a server-side generator (the test suite's scripted Triton models,
``tests/support/triton_models.py``) decodes them back.
Fields equal to their default are omitted to keep prompts short. This module knows types only:
it must not know about steps, prompts or transports.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from datetime import date
from typing import Any, Final, TypeVar, get_args, get_origin, get_type_hints

__all__ = ["CodecError", "decode", "encode"]

T = TypeVar("T")

_HINTS: dict[type, dict[str, Any]] = {}


class CodecError(ValueError):
    """A JSON value does not fit the dataclass it should become (message names the path)."""


def encode(obj: object) -> Any:
    """A JSON-ready value for ``obj``: dataclasses become objects (defaults omitted), tuples
    become lists, dates ISO strings."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.default is not dataclasses.MISSING and value == f.default:
                continue
            if f.default_factory is not dataclasses.MISSING and value == f.default_factory():
                continue
            out[f.name] = encode(value)
        return out
    if isinstance(obj, tuple | list):
        return [encode(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): encode(v) for k, v in obj.items()}
    if isinstance(obj, date):
        return obj.isoformat()
    if obj is None or isinstance(obj, str | int | float | bool):
        return obj
    raise CodecError(f"cannot encode {type(obj).__name__}")


def decode(tp: type[T], data: Any, path: str = "$") -> T:
    """Rebuild a value of type ``tp`` from ``encode`` output; raises ``CodecError``."""
    return typing.cast(T, _decode(tp, data, path))


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


def _decode(tp: Any, data: Any, path: str) -> Any:
    """``data`` (parsed JSON) as a value of type ``tp``, or ``CodecError`` naming ``path``."""
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass(tp, data, path)
    origin = get_origin(tp)
    if origin is types.UnionType:
        origin = typing.Union
    by_origin = _BY_ORIGIN.get(origin)
    if by_origin is not None:
        return by_origin(tp, data, path)
    by_type = _BY_TYPE.get(tp)
    if by_type is not None:
        return by_type(tp, data, path)
    raise CodecError(f"{path}: unsupported type {tp!r}")


def _dataclass(tp: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise CodecError(f"{path}: expected an object")
    hints = _hints(tp)
    unknown = set(data) - {f.name for f in dataclasses.fields(tp)}
    if unknown:
        raise CodecError(f"{path}: unknown fields {sorted(unknown)}")
    kwargs = {k: _decode(hints[k], v, f"{path}.{k}") for k, v in data.items()}
    try:
        return tp(**kwargs)
    except TypeError as exc:
        raise CodecError(f"{path}: {exc}") from exc


def _tuple(tp: Any, data: Any, path: str) -> tuple[Any, ...]:
    args = get_args(tp)
    if not isinstance(data, list):
        raise CodecError(f"{path}: expected an array")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_decode(args[0], v, f"{path}[{i}]") for i, v in enumerate(data))
    if len(args) != len(data):
        raise CodecError(f"{path}: expected {len(args)} items")
    pairs = enumerate(zip(args, data, strict=True))
    return tuple(_decode(a, v, f"{path}[{i}]") for i, (a, v) in pairs)


def _dict(tp: Any, data: Any, path: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise CodecError(f"{path}: expected an object")
    _, vt = get_args(tp)
    return {str(k): _decode(vt, v, f"{path}.{k}") for k, v in data.items()}


def _union(tp: Any, data: Any, path: str) -> Any:
    args = get_args(tp)
    if data is None:
        if type(None) in args:
            return None
        raise CodecError(f"{path}: null not allowed")
    errors = []
    for a in args:
        if a is type(None):
            continue
        try:
            return _decode(a, data, path)
        except CodecError as exc:
            errors.append(str(exc))
    raise CodecError("; ".join(errors))


def _literal(tp: Any, data: Any, path: str) -> Any:
    if data not in get_args(tp):
        raise CodecError(f"{path}: {data!r} not one of {get_args(tp)}")
    return data


def _date(tp: Any, data: Any, path: str) -> date:
    if not isinstance(data, str):
        raise CodecError(f"{path}: expected an ISO date")
    try:
        return date.fromisoformat(data)
    except ValueError as exc:
        raise CodecError(f"{path}: {exc}") from exc


def _float(tp: Any, data: Any, path: str) -> float:
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise CodecError(f"{path}: expected a number")
    return float(data)


def _int(tp: Any, data: Any, path: str) -> int:
    if isinstance(data, bool) or not isinstance(data, int):
        raise CodecError(f"{path}: expected an integer")
    return data


def _exact(tp: Any, data: Any, path: str) -> Any:
    if not isinstance(data, tp):
        raise CodecError(f"{path}: expected {tp.__name__}")
    return data


def _any(tp: Any, data: Any, path: str) -> Any:
    return data


_Decoder = Callable[[Any, Any, str], Any]
# One decoder per schema construct: by the generic's origin, else by the type itself.
_BY_ORIGIN: Final[dict[Any, _Decoder]] = {
    tuple: _tuple,
    dict: _dict,
    typing.Union: _union,
    typing.Literal: _literal,
}
_BY_TYPE: Final[dict[Any, _Decoder]] = {
    date: _date,
    float: _float,
    int: _int,
    bool: _exact,
    str: _exact,
    Any: _any,
    object: _any,
}
