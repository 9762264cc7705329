"""The one logging set-up: structlog JSON lines carrying the request id and the trace id.

``configure_logging`` runs once at start-up (``serve_forever``; tests may point it at a buffer).
The request id lives in a ``contextvars`` variable bound by ``request_context``; the trace and
span ids come from the current OpenTelemetry span. Standard-library loggers (grpc, asyncio,
uvicorn) are routed through the same JSON renderer. Callers log operational facts only (method,
status, durations, counts, plan ids), never patient data or free text from a bundle.
"""

from __future__ import annotations

import logging
import re
import sys
import uuid
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, TextIO

import structlog
from opentelemetry import trace

__all__ = ["configure_logging", "get_logger", "new_request_id", "request_context"]

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")


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
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
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
