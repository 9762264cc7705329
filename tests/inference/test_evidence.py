"""Evidence base: versioned, well-formed, BM25 retrieval deterministic and relevant."""

from __future__ import annotations

import functools
import json
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from fhir_mapping.ingest import ingest
from inference.evidence import (
    EvidenceBase,
    _bm25,
    _doc_text,
    preferred_ids,
    profile_query,
    tokenize,
)
from inference.protocol import EvidenceDoc
from service.record.profile import Code, Medication, PatientProfile
from service.record.vocabulary import RXNORM
from tests.conftest import fixture_bundle


def test_load_version_and_docs() -> None:
    eb = EvidenceBase.load()
    assert eb.version == "2026.12-4"
    assert 40 <= len(eb.docs) <= 400
    assert len({d.id for d in eb.docs}) == len(eb.docs)
    for d in eb.docs:
        assert d.id.startswith("EB-") and d.statement and d.source and 2000 < d.year < 2030
        assert d.grade in ("A", "B", "C", "expert consensus")
    assert eb.by_id("EB-MEDSAFE-001") is not None and eb.by_id("nope") is None


def test_a_harm_outside_the_severity_vocabulary_is_refused(tmp_path: Path) -> None:
    doc = {"id": "EB-X-001", "topic": "t", "statement": "s", "grade": "C", "source": "x"}
    bad = {"version": "t", "documents": [{**doc, "year": 2024, "harm": "major"}]}
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="harm must be one of"):
        EvidenceBase.load(path)


def test_retrieval_relevant_and_deterministic() -> None:
    eb = EvidenceBase.load()
    prof = PatientProfile(
        "Patient/x",
        "male",
        date(1940, 1, 1),
        date(2024, 1, 1),
        (),
        (
            Medication(
                "MedicationRequest/m",
                "Diazepam [Valium]",
                (Code(RXNORM, "563026"),),
                "active",
                "order",
                None,
            ),
        ),
    )
    docs = eb.retrieve(prof, k=5)
    ranked = eb.search(profile_query(prof), 5)
    assert len(ranked) == 5 and docs[:5] == ranked
    assert "EB-MEDSAFE-001" in [d.id for d in docs[:3]]
    assert docs == eb.retrieve(prof, k=5)
    # after the ranked five, the documents the analysis's points name that the ranking left out
    assert [d.id for d in docs[5:]] == [
        e for e in preferred_ids(prof) if e not in ranked_ids(ranked)
    ]
    empty = PatientProfile("Patient/y", "male", None, date(2024, 1, 1))
    assert eb.retrieve(empty) == ()


def ranked_ids(docs: tuple[EvidenceDoc, ...]) -> set[str]:
    return {d.id for d in docs}


def test_fixture_retrieval_hits_the_relevant_guidelines() -> None:
    eb = EvidenceBase.load()
    trey = [d.id for d in eb.retrieve(ingest(fixture_bundle("trey").read_bytes()))]
    assert {"EB-DDI-002", "EB-DDI-005"} <= set(trey)
    josue = [d.id for d in eb.retrieve(ingest(fixture_bundle("josue").read_bytes()))]
    assert {"EB-CKD-001", "EB-RENAL-001"} <= set(josue)


@functools.cache
def _reference() -> BM25Okapi:
    """rank_bm25's own index of the shipped base, built once for the property test."""
    return BM25Okapi([tokenize(_doc_text(d)) for d in EvidenceBase.load().docs])


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_scores_are_rank_bm25s_to_the_last_bit(data: st.DataObject) -> None:
    """The cached term columns give exactly the floats ``BM25Okapi.get_scores`` gives, for any
    query over the base's vocabulary, unknown and repeated terms included."""
    base, reference = EvidenceBase.load(), _reference()
    vocabulary = sorted(reference.idf)
    term = st.one_of(st.sampled_from(vocabulary), st.sampled_from(["zzz-unknown", "the", ""]))
    query = data.draw(st.lists(term, min_size=1, max_size=80))
    assert _bm25(base).get_scores(query).tobytes() == reference.get_scores(query).tobytes()
