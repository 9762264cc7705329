"""Deterministic clinical knowledge for the embedded expert backend.

Readable tables (``drugs``, ``conditions``, ``tables``, ``roles``) kept apart from the rule
functions (``rules``) that apply them to a ``PatientProfile``. No I/O, no FHIR types.
"""

from __future__ import annotations

from .roles import CATEGORY_RELEVANCE, POOL, ROLE_BY_NAME, AgentProfile
from .rules import Analysis, Point, ProblemCase, Proposal, analyse

__all__ = [
    "CATEGORY_RELEVANCE",
    "POOL",
    "ROLE_BY_NAME",
    "AgentProfile",
    "Analysis",
    "Point",
    "ProblemCase",
    "Proposal",
    "analyse",
]
