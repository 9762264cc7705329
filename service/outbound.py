"""Reading an answer from another server with a size cap, counted as the bytes arrive.

Every outbound read of the service (a FHIR server in a CDS call, a CDS client's JWKS, an EHR's
SMART configuration, token endpoint and keys) goes through ``read_capped``: it streams the body,
stops at the cap, closes the connection and raises ``AnswerTooLarge``, so a server that sends
gigabytes costs the worker at most the cap. A declared ``Content-Length`` over the cap is
refused before a byte of the body is read. Callers translate ``AnswerTooLarge`` (an
``httpx.HTTPError``, so their existing handling of a failed read applies) into their own
documented error. Nothing here logs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx

__all__ = ["DOCUMENT_MAX_BYTES", "Answer", "AnswerTooLarge", "read_capped"]

# Keys and configuration documents are a few kilobytes; a megabyte is generous.
DOCUMENT_MAX_BYTES: Final = 1024 * 1024


class AnswerTooLarge(httpx.HTTPError):
    """The answer's body is over the caller's cap; the connection was closed unread."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A whole answer, read within the cap."""

    status_code: int
    headers: httpx.Headers
    content: bytes


def _declared(headers: httpx.Headers) -> int | None:
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None


async def read_capped(
    http: httpx.AsyncClient,
    method: str,
    url: str | httpx.URL,
    *,
    max_bytes: int,
    headers: Mapping[str, str] | None = None,
    **kw: Any,
) -> Answer:
    """The answer to one request, its body at most ``max_bytes`` (``AnswerTooLarge`` else).
    ``kw`` goes to ``httpx.AsyncClient.stream`` (``timeout``, ``data``...)."""
    # Compressed answers are not asked for; one sent anyway is counted as it decodes.
    sent = {"Accept-Encoding": "identity", **(headers or {})}
    async with http.stream(method, url, headers=sent, **kw) as resp:
        declared = _declared(resp.headers)
        if declared is not None and declared > max_bytes:
            raise AnswerTooLarge(f"answer declares {declared} bytes, over {max_bytes}")
        body = bytearray()
        async for chunk in resp.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                # Leaving the ``stream`` block closes the connection without reading on.
                raise AnswerTooLarge(f"answer over {max_bytes} bytes")
        return Answer(resp.status_code, resp.headers, bytes(body))
