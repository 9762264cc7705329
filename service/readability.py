"""How hard a text is to read: the Flesch-Kincaid grade level (FKGL), as CANOE reports it.

One function over the ``textstat`` package (US English; syllables from the CMU dictionary it
ships, with pyphen for words the dictionary lacks), so the eval report, the tests and the
review app measure the same way. Bullets and headings count as the sentences they stand for.
No I/O beyond textstat's packaged word lists.
"""

from __future__ import annotations

import re

import textstat

__all__ = ["MAX_PATIENT_GRADE", "fkgl"]

# The grade the patient version must not exceed on any fixture or vignette (a US 8th grade
# reader: the usual ceiling for patient materials).
MAX_PATIENT_GRADE = 8.0
_LINE_END = re.compile(r"(?<![.!?])\n")


def fkgl(text: str) -> float:
    """The Flesch-Kincaid grade of ``text``; a line that ends without a stop (a heading, a
    list item) ends a sentence, as a reader takes it.

    >>> fkgl("The cat sat on the mat. It was happy.") < 2
    True
    """
    if not text.strip():
        return 0.0
    joined = _LINE_END.sub(".\n", text.strip())
    return float(textstat.flesch_kincaid_grade(joined))
