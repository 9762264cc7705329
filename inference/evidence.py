"""The local, versioned evidence base and its BM25 retrieval.

``evidence_base.json`` (next to this module) holds guideline statements in the project's own
words, each with an id that arguments cite, a topic, a grade, the source it paraphrases and its
year. ``EvidenceBase.retrieve`` ranks them against a query built from the patient's problems,
medicines (with their drug classes), labs and social facts using Okapi BM25 (``rank_bm25``),
with ties broken by document id so the same profile always retrieves the same documents.
The documents the analysis's own points name (each criterion cites its evidence ids) are always
added after the top ``k``: the word ranking decides what else the panel may read, never which
document a point may cite, so adding a document to the base cannot take a point's evidence away.
Reads one packaged file; no network, no model download, no logging of patient data.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import get_args

import numpy as np
import numpy.typing as npt
from rank_bm25 import BM25Okapi

from inference.protocol import EvidenceDoc, Severity
from service.record.profile import PatientProfile

__all__ = ["DEFAULT_PATH", "EvidenceBase", "preferred_ids", "profile_query", "tokenize"]

DEFAULT_PATH = Path(__file__).with_name("evidence_base.json")

_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "per",
        "the",
        "to",
        "with",
        "without",
        "mg",
        "oral",
        "tablet",
        "tablets",
        "capsule",
        "ml",
        "unt",
        "actuat",
        "hr",
        "extended",
        "release",
        "injection",
        "disorder",
        "finding",
        "situation",
    ]
)
_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens without stop words and bare numbers; a light plural fold."""
    out = []
    for w in _WORD.findall(text.lower()):
        if w in _STOP or w.isdigit() or len(w) < 2:
            continue
        if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def profile_query(profile: PatientProfile) -> tuple[str, ...]:
    """Query tokens for a profile: its active problems, medicines and their classes, derived
    concerns (polypharmacy, fall risk, interactions), labs and social facts. Sorted, unique."""
    from inference.knowledge import analyse  # local: knowledge imports nothing from here

    terms = list(analyse(profile).query_terms)
    terms += [o.display for o in profile.observations]
    terms += [s.text for s in profile.social]
    return tuple(sorted({t for term in terms for t in tokenize(term)}))


def preferred_ids(profile: PatientProfile) -> tuple[str, ...]:
    """The evidence ids the analysis's points name, in the order the points name them."""
    from inference.knowledge import analyse  # local: knowledge imports nothing from here

    return tuple(
        dict.fromkeys(e for p in analyse(profile).proposals for pt in p.points for e in pt.evidence)
    )


@dataclass(frozen=True, slots=True)
class EvidenceBase:
    version: str
    docs: tuple[EvidenceDoc, ...]
    _index: dict[str, EvidenceDoc] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def load(cls, path: Path | None = None) -> EvidenceBase:
        return _load(str(path or DEFAULT_PATH))

    def by_id(self, doc_id: str) -> EvidenceDoc | None:
        return self._index.get(doc_id)

    def retrieve(self, profile: PatientProfile, k: int = 24) -> tuple[EvidenceDoc, ...]:
        """The ``k`` documents most relevant to the profile, best first (documents with no
        matching term are not among them; ties: lower id first), then every document the
        analysis's points prefer that the ranking left out, in the order the points name them.
        An id the base does not hold is skipped (the criteria loader refuses such ids)."""
        top = self.search(profile_query(profile), k)
        seen = {d.id for d in top}
        extra = (self._index.get(e) for e in preferred_ids(profile) if e not in seen)
        return top + tuple(d for d in extra if d is not None)

    def search(
        self, query: tuple[str, ...] | list[str] | str, k: int = 24
    ) -> tuple[EvidenceDoc, ...]:
        tokens = tokenize(query) if isinstance(query, str) else list(query)
        if not tokens or k <= 0:
            return ()
        scores = _bm25(self).get_scores(tokens)
        ranked = sorted(
            ((float(s), d.id, d) for s, d in zip(scores, self.docs, strict=True) if s > 0),
            key=lambda t: (-round(t[0], 9), t[1]),
        )
        return tuple(d for _, _, d in ranked[:k])


def _doc_text(d: EvidenceDoc) -> str:
    return " ".join((d.topic, d.statement, " ".join(d.tags), d.topic))


@lru_cache(maxsize=8)
def _load(path: str) -> EvidenceBase:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    docs = tuple(
        EvidenceDoc(
            id=d["id"],
            topic=d["topic"],
            statement=d["statement"],
            grade=d["grade"],
            source=d["source"],
            year=int(d["year"]),
            tags=tuple(d.get("tags", ())),
            harm=d.get("harm"),
        )
        for d in raw["documents"]
    )
    bad = [d.id for d in docs if d.harm is not None and d.harm not in get_args(Severity)]
    if bad:
        raise ValueError(f"{path}: harm must be one of {get_args(Severity)}: {', '.join(bad)}")
    ids = [d.id for d in docs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate evidence ids in {path}")
    return EvidenceBase(str(raw["version"]), docs, {d.id: d for d in docs})


def _bm25(base: EvidenceBase) -> _Okapi:
    return _bm25_of(base.docs)


@lru_cache(maxsize=8)
def _bm25_of(docs: tuple[EvidenceDoc, ...]) -> _Okapi:
    # Keyed by the documents themselves (not the base's identity, which Python may reuse for
    # a later base with other documents): a loaded base builds its index once.
    return _Okapi(BM25Okapi([tokenize(_doc_text(d)) for d in docs]))


class _Okapi:
    """``rank_bm25``'s Okapi scores, to the last bit, with each term's column of per-document
    weights worked out once per index: ``BM25Okapi.get_scores`` rebuilds it from every
    document's term counts for every term of every query, most of a plan's retrieval time.
    A term the documents never use adds nothing (its weight is zero everywhere) and is not
    kept, so the columns are bounded by the documents' vocabulary."""

    def __init__(self, bm25: BM25Okapi) -> None:
        self._bm25 = bm25
        self._doc_len = np.array(bm25.doc_len)
        self._columns: dict[str, npt.NDArray[np.float64]] = {}

    def _column(self, term: str) -> npt.NDArray[np.float64]:
        col = self._columns.get(term)
        if col is None:
            b = self._bm25
            freq = np.array([(doc.get(term) or 0) for doc in b.doc_freqs])
            # The expression get_scores evaluates, in its order: the same floats.
            col = (b.idf.get(term) or 0) * (
                freq * (b.k1 + 1) / (freq + b.k1 * (1 - b.b + b.b * self._doc_len / b.avgdl))
            )
            self._columns[term] = col
        return col

    def get_scores(self, query: list[str]) -> npt.NDArray[np.float64]:
        score: npt.NDArray[np.float64] = np.zeros(self._bm25.corpus_size)
        for term in query:
            if term in self._bm25.idf:
                score += self._column(term)
        return score
