"""Deterministic clinical knowledge for the embedded expert backend.

Data (``data/*.yaml`` read by ``drugs`` and ``conditions``, ``criteria/*.json`` read by the
criteria interpreter, ``roles``) kept apart from the code that applies it to a
``PatientProfile``: ``rules`` (the case analysis) and the short rule functions registered in
``registry`` for what cannot be said as data. No I/O, no FHIR types.
"""

from __future__ import annotations

from .roles import POOL, ROLE_BY_NAME, AgentProfile
from .rules import Analysis, Point, ProblemCase, Proposal, analyse

__all__ = [
    "POOL",
    "ROLE_BY_NAME",
    "AgentProfile",
    "Analysis",
    "Point",
    "ProblemCase",
    "Proposal",
    "analyse",
]
