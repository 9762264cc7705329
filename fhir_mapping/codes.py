"""Code-system recognition: which codings the profile can use, and why not when it cannot.

Pure functions, no FHIR models, no I/O. They check *form* only (the check digits and shapes
that SNOMED CT, LOINC, RxNorm, NDC and ICD-10 define), not membership in a release: a
well-formed code that names no concept still passes, and the knowledge base behind the panel
decides what it knows. Anything that fails here is kept in the profile with
``recognised=False`` and reported as an ``UnusedFact``, never guessed at.
"""

from __future__ import annotations

import re
from typing import Final

from service.record.vocabulary import ICD10, LOINC, RXNORM, SNOMED

__all__ = [
    "ICD10",
    "ICD10_WHO",
    "KNOWN_SYSTEMS",
    "LOINC",
    "NDC",
    "RXNORM",
    "SNOMED",
    "canonical_system",
    "code_problem",
    "icd10_ok",
    "loinc_check_digit",
    "loinc_ok",
    "ndc_ok",
    "rxnorm_ok",
    "snomed_ok",
    "verhoeff_ok",
]

NDC: Final = "http://hl7.org/fhir/sid/ndc"
ICD10_WHO: Final = "http://hl7.org/fhir/sid/icd-10"

# Aliases seen in the wild (OIDs, trailing slashes, http/https) -> the canonical URL.
_ALIASES: Final[dict[str, str]] = {
    "http://snomed.info/sct": SNOMED,
    "https://snomed.info/sct": SNOMED,
    "urn:oid:2.16.840.1.113883.6.96": SNOMED,
    "http://loinc.org": LOINC,
    "https://loinc.org": LOINC,
    "urn:oid:2.16.840.1.113883.6.1": LOINC,
    "http://www.nlm.nih.gov/research/umls/rxnorm": RXNORM,
    "https://www.nlm.nih.gov/research/umls/rxnorm": RXNORM,
    "urn:oid:2.16.840.1.113883.6.88": RXNORM,
    "http://hl7.org/fhir/sid/ndc": NDC,
    "urn:oid:2.16.840.1.113883.6.69": NDC,
    "http://hl7.org/fhir/sid/icd-10-cm": ICD10,
    "urn:oid:2.16.840.1.113883.6.90": ICD10,
    "http://hl7.org/fhir/sid/icd-10": ICD10_WHO,
    "urn:oid:2.16.840.1.113883.6.3": ICD10_WHO,
}

KNOWN_SYSTEMS: Final = frozenset(_ALIASES.values())


def canonical_system(system: str | None) -> str:
    """The canonical URL for ``system`` ("" when absent); unknown systems come back unchanged."""
    if not system:
        return ""
    s = system.strip()
    return _ALIASES.get(s.rstrip("/"), s)


# --- SNOMED CT: Verhoeff check digit ------------------------------------------------------------
# Tables from Verhoeff (1969) as used by SNOMED CT (Technical Implementation Guide, "Check-digit"):
# multiplication in the dihedral group D5, the position permutation, and the inverse.
_D: Final = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 2, 3, 4, 0, 6, 7, 8, 9, 5),
    (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7),
    (4, 0, 1, 2, 3, 9, 5, 6, 7, 8),
    (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2),
    (7, 6, 5, 9, 8, 2, 1, 0, 4, 3),
    (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)
_P: Final = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 5, 7, 6, 2, 8, 3, 0, 9, 4),
    (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7),
    (9, 4, 5, 3, 1, 2, 6, 8, 7, 0),
    (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5),
    (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)


def verhoeff_ok(digits: str) -> bool:
    """True when the last digit of ``digits`` is the Verhoeff check digit of the rest.

    >>> verhoeff_ok("2363"), verhoeff_ok("2364")
    (True, False)
    """
    if not digits.isascii() or not digits.isdigit():
        return False
    c = 0
    for i, ch in enumerate(reversed(digits)):
        c = _D[c][_P[i % 8][int(ch)]]
    return c == 0


_SCTID: Final = re.compile(r"[1-9][0-9]{5,17}")
# Partition identifier (2nd and 3rd digits from the right): 00 = concept in the international
# release, 10 = concept in an extension (long format). Descriptions (01/11) and relationships
# (02/12) are valid SCTIDs but never valid codes in a CodeableConcept.
_CONCEPT_PARTITIONS: Final = frozenset({"00", "10"})


def snomed_ok(code: str) -> bool:
    """A well-formed SNOMED CT concept id: 6-18 digits, no leading zero, concept partition,
    Verhoeff check digit.

    >>> snomed_ok("44054006"), snomed_ok("44054007"), snomed_ok("999999999999999")
    (True, False, False)
    """
    return (
        _SCTID.fullmatch(code) is not None
        and code[-3:-1] in _CONCEPT_PARTITIONS
        and verhoeff_ok(code)
    )


# --- LOINC: mod 10 check digit ------------------------------------------------------------------
_LOINC: Final = re.compile(r"([1-9][0-9]{0,6})-([0-9])")
# Answer (LA), part (LP) and group (LG) codes live in the same system; their check digit is
# computed the same way over the digits after the prefix.
_LOINC_OTHER: Final = re.compile(r"L[APG]([1-9][0-9]{0,7})-([0-9])")


def loinc_check_digit(base: str) -> int:
    """LOINC's mod 10 check digit of the digits before the hyphen (Luhn: from the right, double
    every other digit starting with the rightmost, add the digits, distance to the next ten).

    >>> loinc_check_digit("4548"), loinc_check_digit("33914"), loinc_check_digit("8480")
    (4, 3, 6)
    """
    total = 0
    for i, ch in enumerate(reversed(base)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            d = d // 10 + d % 10
        total += d
    return (10 - total % 10) % 10


def loinc_ok(code: str) -> bool:
    """A well-formed LOINC code whose check digit matches. ``00000-0`` has a correct check digit
    (an all-zero base sums to 0) but no LOINC number starts with 0, so it is refused too.

    >>> loinc_ok("4548-4"), loinc_ok("4548-5"), loinc_ok("00000-0")
    (True, False, False)
    """
    m = _LOINC.fullmatch(code) or _LOINC_OTHER.fullmatch(code)
    return m is not None and loinc_check_digit(m.group(1)) == int(m.group(2))


# --- RxNorm, NDC, ICD-10 ------------------------------------------------------------------------
_RXCUI: Final = re.compile(r"[1-9][0-9]{0,9}")
# NDC in FHIR: the 10-digit forms with hyphens (4-4-2, 5-3-2, 5-4-1), the 11-digit HIPAA form
# (5-4-2, with or without hyphens) or 10 digits without hyphens.
_NDC: Final = re.compile(r"[0-9]{4}-[0-9]{4}-[0-9]{2}|[0-9]{5}-[0-9]{3,4}-[0-9]{1,2}|[0-9]{10,11}")
# ICD-10(-CM): letter, two characters, optional dot and up to four more (the seventh character
# of CM codes may be a placeholder X).
_ICD10: Final = re.compile(r"[A-Z][0-9][0-9A-Z](\.?[0-9A-Z]{1,4})?")


def rxnorm_ok(code: str) -> bool:
    """An RxCUI: a positive integer without leading zeros (RxNorm has no check digit).

    >>> rxnorm_ok("316049"), rxnorm_ok("0000000"), rxnorm_ok("0316049")
    (True, False, False)
    """
    return _RXCUI.fullmatch(code) is not None


def ndc_ok(code: str) -> bool:
    """A product NDC in one of the formats FHIR allows, with a labeler code that is not zero.

    >>> ndc_ok("0777-3105-02"), ndc_ok("99999-9999-99"), ndc_ok("00000-0000-00")
    (True, True, False)
    """
    if _NDC.fullmatch(code) is None:
        return False
    labeler = code.split("-")[0] if "-" in code else code[:5]
    return labeler.strip("0") != ""


def icd10_ok(code: str) -> bool:
    """An ICD-10 / ICD-10-CM code by shape (``E11.9``, ``I10``, ``S72.001A``)."""
    return _ICD10.fullmatch(code) is not None


_CHECKS: Final = {
    SNOMED: (snomed_ok, "not a valid SNOMED CT concept id (format, partition or check digit)"),
    LOINC: (loinc_ok, "not a valid LOINC code (format or mod 10 check digit)"),
    RXNORM: (rxnorm_ok, "not a valid RxNorm RxCUI (must be a positive integer)"),
    NDC: (ndc_ok, "not a valid NDC (format)"),
    ICD10: (icd10_ok, "not a valid ICD-10-CM code (format)"),
    ICD10_WHO: (icd10_ok, "not a valid ICD-10 code (format)"),
}


def code_problem(system: str, code: str) -> str | None:
    """Why (``system``, ``code``) cannot be used, or None when it is well-formed in a known
    system. ``system`` should be canonical (see ``canonical_system``)."""
    if not code:
        return "coding has no code"
    if not system:
        return "coding has no system; the code cannot be interpreted"
    check = _CHECKS.get(system)
    if check is None:
        return "code system is not one the service knows (local or unsupported)"
    ok, reason = check
    return None if ok(code) else f"{code!r}: {reason}"
