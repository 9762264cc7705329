"""How hard a text is to read: the Flesch-Kincaid grade level (FKGL), as CANOE reports it.

One function over the ``textstat`` package (US English; syllables from the CMU dictionary it
ships, with pyphen for words the dictionary lacks), so the eval report, the tests and the
review app measure the same way. It measures the sentences: a line with no sentence stop (a
title, a heading) is left out rather than counted as a short sentence, which would flatter the
grade. No I/O beyond textstat's packaged word lists.
"""

from __future__ import annotations

import re

import textstat

__all__ = ["MAX_PATIENT_GRADE", "fkgl", "warm_up"]

# The grade the patient version must not exceed on any fixture or vignette (a US 8th grade
# reader: the usual ceiling for patient materials).
MAX_PATIENT_GRADE = 8.0
_STOP = re.compile(r"[.!?]")
_BULLET = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")


def fkgl(text: str) -> float:
    r"""The Flesch-Kincaid grade of the sentences of ``text`` (list bullets and numbers dropped;
    lines without a sentence stop left out).

    >>> fkgl("Tests:\n- The cat sat on the mat. It was happy.") < 2
    True
    >>> fkgl("A heading only")
    0.0
    """
    lines = [_BULLET.sub("", line) for line in text.splitlines() if _STOP.search(line)]
    if not lines:
        return 0.0
    return float(textstat.flesch_kincaid_grade(" ".join(lines)))


def warm_up() -> None:
    """Load textstat's pronouncing dictionary now (about two seconds, once per process), so a
    server pays it at start-up rather than on its first reader's request."""
    fkgl("Ready.")
