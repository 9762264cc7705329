"""Criteria as data: the JSON files beside this module, their schema, loader and interpreter.

``load()`` reads and validates every ``*.json`` here once (at import of
``inference.knowledge``, so at service start-up); a file that breaks its schema, or refers to an
unknown drug, class, condition group, role or evidence id, stops start-up with a
``KnowledgeError`` naming the file, the path inside it and the problem.
"""

from __future__ import annotations

from .loader import CRITERIA_DIR, KnowledgeError, load
from .schema import KINDS, CriteriaFile, Criterion

__all__ = ["CRITERIA_DIR", "KINDS", "CriteriaFile", "Criterion", "KnowledgeError", "load"]
