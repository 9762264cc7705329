"""The one logging set-up: structlog JSON lines carrying the request id and the trace id.

``configure_logging`` runs once at start-up (``serve_forever``; tests may point it at a buffer).
The request id lives in a ``contextvars`` variable bound by ``request_context``; the trace and
span ids come from the current OpenTelemetry span. Third-party standard-library loggers (httpx,
httpcore, uvicorn's error and access logs, grpc, asyncio) lose any handler of their own and go
through the same JSON renderer. Callers log operational facts only (method, status, durations,
counts, plan ids), never patient data or free text from a bundle; and because libraries do not
know that rule (httpx logs every URL it fetches: ``.../Patient/<id>``), every line, ours and
theirs, passes ``redact``: URL paths and query strings, ``Type/id`` references, ``urn:uuid:``
and UUID-shaped ids are replaced before the line is written.
"""

from __future__ import annotations

import logging
import re
import sys
import uuid
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, Final, TextIO

import structlog
from opentelemetry import trace

__all__ = ["configure_logging", "get_logger", "new_request_id", "redact", "request_context"]

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")

# Loggers of libraries the service runs: their own handlers removed, propagating to ours.
THIRD_PARTY: Final = (
    "httpx",
    "httpcore",
    "uvicorn",
    "uvicorn.error",
    "uvicorn.access",
    "grpc",
    "asyncio",
    "opentelemetry",
)
_URL = re.compile(r"(?i)\b((?:https?|wss?|grpcs?)://[^\s/?#\"'<>]+)[^\s\"'<>]*")
# A request line as servers log it ("POST /path?query HTTP/1.1"): keep method and path, drop
# the query. Our own routes carry no ids in their paths.
_REQUEST_LINE = re.compile(r"\b([A-Z]{3,7} /[^\s?\"']*)\?[^\s\"']*")
_REFERENCE = re.compile(r"\b(?!HTTP/)([A-Z][A-Za-z]{2,40})/[A-Za-z0-9\-.]{1,64}")
_URN = re.compile(r"(?i)\burn:(?:uuid|oid):[0-9A-Za-z\-.]+")
_UUID = re.compile(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_SAFE_KEYS: Final = frozenset({"timestamp", "level", "logger", "request_id", "trace_id", "span_id"})


def _redact_url(match: re.Match[str]) -> str:
    """Scheme and host kept; a path, query or fragment past a bare "/" becomes [redacted]."""
    rest = match.group(0)[len(match.group(1)) :]
    return match.group(0) if rest in ("", "/") else f"{match.group(1)}/[redacted]"


def redact(text: str) -> str:
    """``text`` with what could identify a record removed: URLs keep only scheme and host,
    request lines lose their query, ``Type/id`` keeps its type, ``urn:uuid:`` and UUIDs go.

    >>> redact("GET https://ehr.example.org/fhir/Patient/123?x=1 200")
    'GET https://ehr.example.org/[redacted] 200'
    >>> redact("CDS Hooks on http://127.0.0.1:8091/")
    'CDS Hooks on http://127.0.0.1:8091/'
    >>> redact("see Condition/c-9 and urn:uuid:0b1e")
    'see Condition/[id] and urn:[redacted]'
    """
    text = _URL.sub(_redact_url, text)
    text = _REQUEST_LINE.sub(r"\1?[redacted]", text)
    text = _URN.sub("urn:[redacted]", text)
    text = _UUID.sub("[uuid]", text)
    return _REFERENCE.sub(r"\1/[id]", text)


def _redact_event(
    _logger: object, _method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    for key, value in event.items():
        if isinstance(value, str) and key not in _SAFE_KEYS:
            event[key] = redact(value)
        elif isinstance(value, list | tuple) and key not in _SAFE_KEYS:
            event[key] = [redact(v) if isinstance(v, str) else v for v in value]
    return event


def _render_foreign_args(
    _logger: object, _method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    # A library's record: its message is formatted already; the raw args (uvicorn passes the
    # client address and request line) must not travel on beside it unredacted.
    event.pop("positional_args", None)
    return event


def _add_trace_ids(
    _logger: object, _method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    ctx = trace.get_current_span().get_span_context()
    if ctx.is_valid:
        event.setdefault("trace_id", format(ctx.trace_id, "032x"))
        event.setdefault("span_id", format(ctx.span_id, "016x"))
    return event


def configure_logging(level: str = "info", *, stream: TextIO | None = None) -> None:
    """JSON logs to ``stream`` (stderr by default) at ``level`` and above."""
    out = stream or sys.stderr
    lvl = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_trace_ids,
    ]
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.format_exc_info,
            _redact_event,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name, _render_foreign_args],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                _redact_event,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_canoe", False):
            root.removeHandler(h)
    handler._canoe = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(lvl)
    for name in THIRD_PARTY:
        lib = logging.getLogger(name)
        for h in list(lib.handlers):
            lib.removeHandler(h)
        lib.propagate = True
        lib.setLevel(logging.NOTSET)


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)


def new_request_id(offered: str | None = None) -> str:
    """The caller's ``x-request-id`` when it is a plain token, else a fresh one."""
    if offered and _REQUEST_ID.match(offered):
        return offered
    return uuid.uuid4().hex


@contextmanager
def request_context(request_id: str, **fields: Any) -> Iterator[None]:
    """Bind ``request_id`` (and operational fields) to every log line inside the block."""
    tokens = structlog.contextvars.bind_contextvars(request_id=request_id, **fields)
    try:
        yield
    finally:
        structlog.contextvars.reset_contextvars(**tokens)
