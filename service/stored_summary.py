"""The clinician summary as the store keeps it beside each plan version.

A version's summary is built once, when the version is written (the CarePlan's narrative is
written from it), and stored with the version, so the review pages show the very summary the
EHR received instead of computing it again. ``summary_record`` turns it into JSON-ready data,
``summary_from_record`` back; a record written before summaries were kept gives None.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any

from service.text.summary import Summary, SummaryLine

__all__ = ["summary_from_record", "summary_record"]

_LINE_FIELDS = frozenset(f.name for f in fields(SummaryLine))


def summary_record(summary: Summary) -> dict[str, Any]:
    """``summary`` as JSON-ready data (tuples become lists)."""
    return {
        "lines": [
            {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(line).items()}
            for line in summary.lines
        ],
        "more": summary.more,
        "awaiting": list(summary.awaiting),
    }


def summary_from_record(version_summary: Mapping[str, Any]) -> Summary | None:
    """The clinician summary stored in a version's summary data, or None where none was."""
    raw = version_summary.get("clinician")
    if not isinstance(raw, Mapping):
        return None
    lines = tuple(SummaryLine(**_line_fields(line)) for line in raw.get("lines", ()))
    return Summary(lines, int(raw.get("more", 0)), tuple(raw.get("awaiting", ())))


def _line_fields(line: Mapping[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in line.items() if k in _LINE_FIELDS}
