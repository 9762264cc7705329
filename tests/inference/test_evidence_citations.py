"""An argument cites the evidence its own points name, whatever else the evidence base holds.

Retrieval (BM25 top-k) decides what else the panel may read; it must never decide which document
a point cites. So: every document the analysis's points name is retrieved (for the embedded
experts and for the Triton schema alike), an argument cites exactly the documents of the points
it stands for, those documents are the ones its criteria name, and adding unrelated documents to
the base (even ones that out-rank every real document) changes no citation.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fhir_mapping.ingest import ingest
from inference._triton_steps import request_for
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase, preferred_ids, profile_query
from inference.knowledge import analyse, drugs
from inference.knowledge.criteria.loader import load as load_criteria
from inference.protocol import (
    ArgumentDraft,
    AssemblePanel,
    Assess,
    CallContext,
    Consult,
    EvidenceDoc,
    PanelMember,
)
from service.record.profile import PatientProfile
from tests.conftest import REALISTIC_BUNDLES

NAMES = [p.name.split("_")[0] for p in REALISTIC_BUNDLES]


@cache
def profile(name: str) -> PatientProfile:
    (path,) = [p for p in REALISTIC_BUNDLES if p.name.startswith(name + "_")]
    return ingest(path.read_bytes())


def arguments(prof: PatientProfile, evidence: Sequence[EvidenceDoc]) -> list[ArgumentDraft]:
    async def go() -> list[ArgumentDraft]:
        ex, ctx = EmbeddedExperts(), CallContext()
        a = await ex.run(Assess(prof, evidence), ctx)
        out: list[ArgumentDraft] = []
        for m in await ex.run(AssemblePanel(prof, a), ctx):
            said = await ex.run(Consult(prof, m, a.problems, a.options, evidence), ctx)
            out += said.arguments
        return out

    return asyncio.run(go())


@cache
def named_by_criterion() -> dict[str, frozenset[str]]:
    """Every evidence id a criterion names: its own, its points', and (kidney dose bands) the
    band table's evidence for the drugs it covers."""
    bands = frozenset(e for r in drugs.load_drugs().renal for e in r.evidence)
    out = {}
    for c in load_criteria():
        ids = {*c.evidence, *(e for pt in c.points for e in pt.evidence)}
        if c.kind == "renal-dose":
            ids |= bands
        out[c.id] = frozenset(ids)
    return out


@pytest.mark.bundle_sweep
@pytest.mark.parametrize("name", NAMES)
def test_retrieval_holds_every_document_the_points_name(name: str) -> None:
    eb = EvidenceBase.load()
    prof = profile(name)
    got = [d.id for d in eb.retrieve(prof)]
    wanted = preferred_ids(prof)
    assert wanted and all(eb.by_id(e) is not None for e in wanted)
    assert set(wanted) <= set(got)
    assert len(got) == len(set(got))
    # the ranked part comes first and is the plain BM25 top-k
    top = [d.id for d in eb.search(profile_query(prof), 24)]
    assert got[: len(top)] == top
    # the Triton consult schema is narrowed to the same set, so it too may cite every one
    member = PanelMember("pharmacist", "medicines")
    req = request_for(Consult(prof, member, (), (), eb.retrieve(prof)))
    enum = req.schema["properties"]["arguments"]["items"]["properties"]["evidence"]["items"]
    assert set(wanted) <= set(enum["enum"])


@pytest.mark.bundle_sweep
@pytest.mark.parametrize("name", NAMES)
def test_each_argument_cites_exactly_what_its_points_and_criteria_name(name: str) -> None:
    prof = profile(name)
    a = analyse(prof)
    named = named_by_criterion()
    args = arguments(prof, EvidenceBase.load().retrieve(prof))
    assert args
    for arg in args:
        prop = a.proposal(arg.option_id)
        assert prop is not None
        pts = [p for p in prop.points if p.role == arg.role and p.stance == arg.stance]
        # the argument stands for the role's points of its stance: it cites their documents,
        # all of them and nothing else (no nearest word match)
        assert set(arg.evidence) == {e for p in pts for e in p.evidence}, arg.id
        assert arg.evidence, arg.id
        # the nets under the criteria (net-*) name no criterion: their points cite their own
        criteria = [c for c in prop.criteria if not c.startswith("net-")]
        if criteria:
            allowed = frozenset().union(*(named[c] for c in criteria))
            assert set(arg.evidence) <= allowed, (arg.id, prop.criteria)


def test_renea_naproxen_cites_the_kidney_documents() -> None:
    # The case that exposed the fault: a new lipid document pushed EB-CKD-005 out of the
    # top 24 and "naproxen is nephrotoxic" cited KDIGO lipids (EB-CKD-006) instead.
    prof = profile("renea")
    args = arguments(prof, EvidenceBase.load().retrieve(prof))
    stop = {x.role: x.evidence for x in args if x.option_id == "opt-stop-naproxen"}
    # (the nephrologist joins the panel only when kidney points outweigh the others)
    assert "EB-CKD-005" in stop["pharmacist"] and "EB-CKD-005" in stop.get(
        "nephrologist", "EB-CKD-005"
    )
    assert not any("EB-CKD-006" in ev for ev in stop.values())


def test_a_point_whose_documents_were_not_passed_cites_nothing_else() -> None:
    # The experts may be handed less than the points name (another evidence source, a smaller
    # k): a point then cites only what it names among the documents passed, never the nearest
    # word match among the rest.
    prof = profile("renea")
    base = EvidenceBase.load()
    prop = analyse(prof).proposal("opt-stop-naproxen")
    assert prop is not None
    wanted = {e for pt in prop.points for e in pt.evidence}
    passed = [d for d in base.docs if d.id not in {"EB-CKD-005", "EB-MEDSAFE-007"}]
    stop = [x for x in arguments(prof, passed) if x.option_id == "opt-stop-naproxen"]
    assert stop
    for x in stop:
        assert set(x.evidence) <= wanted - {"EB-CKD-005", "EB-MEDSAFE-007"}, x.evidence


def _with_extra(base: EvidenceBase, extra: Sequence[EvidenceDoc]) -> EvidenceBase:
    docs = (*base.docs, *extra)
    return EvidenceBase(base.version, docs, {d.id: d for d in docs})


@cache
def _citations(name: str) -> dict[str, tuple[str, ...]]:
    prof = profile(name)
    return {x.id: x.evidence for x in arguments(prof, EvidenceBase.load().retrieve(prof))}


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    name=st.sampled_from(NAMES),
    n_docs=st.integers(min_value=1, max_value=30),
    seed=st.randoms(use_true_random=False),
)
def test_unrelated_documents_change_no_citation(
    name: str, n_docs: int, seed: random.Random
) -> None:
    """Synthetic documents built from the patient's own query words out-rank the real ones and
    push them out of the top 24; no argument's citations may move."""
    base = EvidenceBase.load()
    prof = profile(name)
    words = list(profile_query(prof))
    extra = [
        EvidenceDoc(
            id=f"EB-ZZZ-{i:03d}",
            topic="synthetic",
            statement=" ".join(seed.sample(words, min(len(words), 12)) * 3),
            grade="A",
            source="synthetic test document",
            year=2024,
        )
        for i in range(n_docs)
    ]
    bigger = _with_extra(base, extra)
    retrieved = bigger.retrieve(prof)
    assert any(d.id.startswith("EB-ZZZ") for d in retrieved)  # the extra docs did compete
    got = {x.id: x.evidence for x in arguments(prof, retrieved)}
    assert got == _citations(name)
