"""Code-form checks used at ingest: SNOMED CT Verhoeff, LOINC mod 10, RxNorm, NDC, ICD-10."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from fhir_mapping import codes
from fhir_mapping.codes import (
    LOINC,
    NDC,
    RXNORM,
    SNOMED,
    canonical_system,
    code_problem,
    icd10_ok,
    loinc_check_digit,
    loinc_ok,
    ndc_ok,
    rxnorm_ok,
    snomed_ok,
    verhoeff_ok,
)
from tests.conftest import FHIR_FIXTURES, REALISTIC_BUNDLES

# Real concept ids from the fixtures (Diabetes, Alzheimer's, Hypertension, Atrial fibrillation,
# Prediabetes, an extension-namespace id) and ids from SNOMED's own examples.
VALID_SCTIDS = [
    "44054006",
    "26929004",
    "38341003",
    "49436004",
    "15777000",
    "195662009",
    "1551000119108",
    "5251000175109",
    "87628006",
    "278662003",
]


def test_verhoeff_position_table_is_the_powers_of_its_first_permutation() -> None:
    # A typo in the 8x10 table breaks ~half of all ids; derive it independently.
    row = tuple(range(10))
    for i in range(8):
        assert codes._P[i] == row, i
        row = tuple(row[codes._P[1][j]] for j in range(10))


@pytest.mark.parametrize("sctid", VALID_SCTIDS)
def test_valid_snomed_ids(sctid: str) -> None:
    assert snomed_ok(sctid)


@pytest.mark.parametrize("sctid", VALID_SCTIDS[:4])
def test_verhoeff_catches_every_single_digit_error_and_adjacent_swap(sctid: str) -> None:
    for pos in range(len(sctid)):
        for d in "0123456789":
            if d != sctid[pos]:
                assert not verhoeff_ok(sctid[:pos] + d + sctid[pos + 1 :]), (pos, d)
    for pos in range(len(sctid) - 1):
        a, b = sctid[pos], sctid[pos + 1]
        if a != b:
            assert not verhoeff_ok(sctid[:pos] + b + a + sctid[pos + 2 :]), pos


@pytest.mark.parametrize(
    "bad",
    [
        "999999999999999",  # the bad_unknown_codes fixture
        "44054007",  # check digit off by one
        "04405400",  # leading zero
        "12345",  # too short
        "1234567890123456789",  # too long
        "44054006 ",
        "4405-4006",
        "",
        "١٢٣٤٥٦٧",  # non-ASCII digits
        "1487430010",  # a valid SCTID, but a description (partition 01), not a concept
    ],
)
def test_invalid_snomed_ids(bad: str) -> None:
    assert not snomed_ok(bad)


@pytest.mark.parametrize(
    ("code", "check"),
    [("4548-4", 4), ("33914-3", 3), ("8480-6", 6), ("8462-4", 4), ("2160-0", 0), ("718-7", 7)],
)
def test_loinc_check_digit(code: str, check: int) -> None:
    base = code.split("-")[0]
    assert loinc_check_digit(base) == check
    assert loinc_ok(code)
    wrong = f"{base}-{(check + 1) % 10}"
    assert not loinc_ok(wrong)


@pytest.mark.parametrize(
    "bad", ["00000-0", "0718-7", "4548", "4548-", "4548-44", "A548-4", "", "12345678-9"]
)
def test_invalid_loinc(bad: str) -> None:
    assert not loinc_ok(bad)


def test_loinc_single_digit_errors_are_caught() -> None:
    for code in ("33914-3", "29463-7", "14959-1"):
        base, check = code.split("-")
        for pos in range(len(base)):
            for d in "0123456789":
                if d != base[pos] and not (pos == 0 and d == "0"):
                    assert not loinc_ok(f"{base[:pos]}{d}{base[pos + 1 :]}-{check}")


@pytest.mark.parametrize(
    ("code", "ok"),
    [("316049", True), ("1", True), ("0000000", False), ("0316049", False), ("31604a", False)],
)
def test_rxnorm(code: str, ok: bool) -> None:
    assert rxnorm_ok(code) is ok


@pytest.mark.parametrize(
    ("code", "ok"),
    [
        ("0777-3105-02", True),  # 4-4-2
        ("50580-506-02", True),  # 5-3-2
        ("99999-9999-99", True),  # 5-4-2, well formed (the fixture's "unknown" NDC)
        ("00777310502", True),
        ("12345-6789-0", True),  # 5-4-1
        ("1234-567-89", False),
        ("00000-0000-00", False),
        ("123-4567-890", False),
        ("NDC12345", False),
    ],
)
def test_ndc(code: str, ok: bool) -> None:
    assert ndc_ok(code) is ok


@pytest.mark.parametrize(
    ("code", "ok"),
    [("E11.9", True), ("I10", True), ("S72.001A", True), ("e11.9", False), ("E1", False)],
)
def test_icd10(code: str, ok: bool) -> None:
    assert icd10_ok(code) is ok


@pytest.mark.parametrize(
    ("system", "canonical"),
    [
        ("http://snomed.info/sct/", SNOMED),
        ("urn:oid:2.16.840.1.113883.6.96", SNOMED),
        ("urn:oid:2.16.840.1.113883.6.1", LOINC),
        ("urn:oid:2.16.840.1.113883.6.88", RXNORM),
        ("urn:oid:2.16.840.1.113883.6.69", NDC),
        ("http://example.org/local", "http://example.org/local"),
        (None, ""),
    ],
)
def test_canonical_system(system: str | None, canonical: str) -> None:
    assert canonical_system(system) == canonical


def test_code_problem_reasons() -> None:
    assert code_problem(SNOMED, "44054006") is None
    assert "no system" in (code_problem("", "38341003") or "")
    assert "not one the service knows" in (code_problem("http://example.org/x", "A") or "")
    assert "check digit" in (code_problem(LOINC, "4548-5") or "")
    assert "no code" in (code_problem(SNOMED, "") or "")


def _codings(node: object) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        if isinstance(node.get("system"), str) and isinstance(node.get("code"), str):
            yield node["system"], node["code"]
        for v in node.values():
            yield from _codings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _codings(v)


def test_every_standard_code_in_the_realistic_fixtures_passes() -> None:
    seen = 0
    for path in [*REALISTIC_BUNDLES, FHIR_FIXTURES / "bad_huge_many_conditions_2mb.json"]:
        for system, code in _codings(json.loads(path.read_bytes())):
            system = canonical_system(system)
            if system in (SNOMED, LOINC, RXNORM):
                seen += 1
                assert code_problem(system, code) is None, (path.name, system, code)
    assert seen > 2000


@pytest.mark.parametrize("module", ["fhir_mapping.codes", "fhir_mapping._refs"])
def test_doctests(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
