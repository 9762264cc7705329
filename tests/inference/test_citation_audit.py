"""A criterion's own documents are about what it fires on.

``test_evidence_citations`` proves an argument cites the documents its criterion names; this
proves the criterion names documents on its subject. Mechanical guard for the worst mismatch (a
document about another drug class or another disease, e.g. a benzodiazepine criterion citing a
corticosteroid statement): every document a criterion names at criterion level, and every
document a kidney dose band names, mentions in its statement or tags at least one drug, drug
class or condition group its trigger names (ingredients, brand names and the classes those
ingredients belong to count). Points are not held to this: a point may rightly cite a document
on burden, goals or technique. Documents that state a general rule without naming the class
are listed in ``ALLOWED`` with the reason. The full human listing: ``python -m
tests.inference.citation_audit``.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from inference.evidence import EvidenceBase
from inference.knowledge import drugs
from inference.knowledge.conditions import CONDITION_GROUPS
from inference.knowledge.criteria.loader import load as load_criteria
from inference.knowledge.criteria.schema import Criterion, Trigger
from tests.inference.citation_audit import rows

# Words a class id or label does not contain but documents use for it.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "z-drug": ("z-drug", "z-drugs"),
    "tca": ("tricyclic", "tricyclics"),
    "anticoagulant": ("antithrombotic", "antithrombotics", "anticoagulation"),
    "strong-anticholinergic": ("anticholinergic",),
    "calcium-vitamin-d": ("vitamin d", "calcium"),
    "antiplatelet": ("antithrombotic", "antithrombotics"),
    "phenobarbital": ("barbiturate", "barbiturates"),
    "systemic-corticosteroid": ("corticosteroid", "corticosteroids"),
    "lama": ("antimuscarinic",),
    "h2-antagonist": ("h2 blockers",),
    "xanthine-oxidase-inhibitor": ("urate-lowering",),
    "cns-active": ("central nervous system",),
    "cns-depressant": ("sedative", "sedatives", "central nervous system"),
}

# (criterion or band, document): why the document fits although it names no trigger word.
ALLOWED: dict[tuple[str, str], str] = {
    **{
        (f"duplicate-{cls}", "EB-DUP-001"): "states the same-class duplication rule itself "
        "(STOPP/START v3 A3) and lists only examples of classes"
        for cls in (
            "arb",
            "benzodiazepine",
            "statin",
            "acid-suppressant",
            "beta-blocker",
            "sulfonylurea",
            "bisphosphonate",
        )
    },
    ("duplicate-benzodiazepine-seizure-disorder", "EB-DUP-001"): "same-class duplication rule",
    **{
        (f"transition-duplicate-{cls}", "EB-TOC-001"): "states the reconciliation rule itself "
        "(duplicates between the home and discharge lists are removed) for every class"
        for cls in ("beta-blocker", "acei", "arb", "statin", "ppi", "dhp-ccb", "sulfonylurea")
    },
    ("transition-held-kidney-medicine", "EB-TOC-001"): "states the reconciliation rule for "
    "every held medicine (a decision and the check it depends on); EB-TOC-008 names the drugs",
    ("dd-alpha-blocker-syncope", "EB-MEDSAFE-021"): "alpha-1 blockers are among the "
    "vasodilators with orthostatic hypotension it names; EB-MEDSAFE-014 names them directly",
    ("dd-antiplatelet-anticoagulated-af", "EB-CV-005"): "states that atrial fibrillation with "
    "stroke risk needs an oral anticoagulant, the alternative to aspirin the criterion proposes",
    ("falls-assessment-frail-younger", "EB-FALLS-002"): "the multifactorial falls assessment "
    "after a fall, the recent event its trigger reads beside frailty",
    ("monitor-egfr", "EB-RENAL-002"): "the general rule that kidney-cleared drugs (the "
    "metformin, digoxin and DOACs its trigger names) are dosed to current kidney function",
    **{
        (f"band drug:{name}", "EB-RENAL-002"): "the general kidney dosing rule; the band's own "
        "label or SmPC source is named beside it in drugs.yaml"
        for name in (
            "gabapentin",
            "pregabalin",
            "spironolactone",
            "eplerenone",
            "amiloride",
            "triamterene",
            "glyburide",
            "glimepiride",
        )
    },
}

_STOP = {"inhibitor", "antagonist", "blocker", "agonist", "drug", "drugs", "medicine"}


@cache
def _group_labels() -> dict[str, str]:
    return {g.key: g.label for g in CONDITION_GROUPS}


def spec_words(spec: str) -> set[str]:
    """Words a document may use for a drug spec: the id, its label (and the label's head noun),
    every member ingredient with its other names, and the classes those members belong to."""
    value = spec.partition(":")[2]
    out = {value, value.replace("-", " "), *SYNONYMS.get(value, ())}
    labels = [drugs.CLASS_LABELS.get(value, "")]
    for name in drugs.members(spec):
        d = drugs.drug(name)
        out |= {name, *d.names}
        for cls in d.classes:
            out |= {cls, cls.replace("-", " "), *SYNONYMS.get(cls, ())}
            labels.append(drugs.CLASS_LABELS.get(cls, ""))
    for label in filter(None, labels):
        out.add(label)
        head = label.split()[-1]
        if len(head) >= 6 and head not in _STOP:
            out.add(head)
    return {w.lower() for w in out if w}


def trigger_words(t: Trigger) -> set[str]:
    """The drugs a trigger names (taken or missing); its conditions only when it names no drug,
    so a document about the right disease but the wrong drug still fails."""
    words: set[str] = set()
    changed = t.change.specs if t.change is not None else ()
    counted = t.count.specs if t.count is not None else ()
    for spec in (*t.drugs, *t.absent_drugs, *changed, *counted):
        words |= spec_words(spec)
    for alt in t.any_of:
        words |= trigger_words(alt)
    if words:
        return words
    stayed = t.stay.groups if t.stay is not None else ()
    for g in (*t.any_conditions, *t.ever_conditions, *stayed):
        words |= {g, g.replace("-", " "), _group_labels().get(g, g).lower()}
    return words


def _spelling(text: str) -> str:
    """British and American spellings read alike, in the text and the words sought."""
    return text.lower().replace("anaemia", "anemia").replace("oesophag", "esophag")


def mentions(words: set[str], text: str) -> bool:
    text = _spelling(text)
    return any(
        re.search(rf"(?<![a-z0-9]){re.escape(_spelling(w))}(?:s|es)?(?![a-z0-9])", text)
        for w in words
    )


def doc_text(doc_id: str) -> str:
    d = EvidenceBase.load().by_id(doc_id)
    assert d is not None, doc_id
    return " ".join((d.statement, d.topic, *d.tags))


def criterion_mismatches(criteria: tuple[Criterion, ...]) -> list[tuple[str, str]]:
    bad = []
    for c in criteria:
        words = trigger_words(c.trigger)
        if not words:  # age-only or lab-only triggers (vaccines, monitoring) name nothing
            continue
        bad += [(c.id, e) for e in c.evidence if not mentions(words, doc_text(e))]
    return bad


def band_mismatches() -> list[tuple[str, str]]:
    return [
        (f"band {r.spec}", e)
        for r in drugs.load_drugs().renal
        for e in r.evidence
        if not mentions(spec_words(r.spec), doc_text(e))
    ]


def mismatches() -> list[tuple[str, str]]:
    return criterion_mismatches(load_criteria()) + band_mismatches()


def test_every_criterion_document_is_about_its_trigger() -> None:
    bad = [m for m in mismatches() if m not in ALLOWED]
    assert not bad, f"criterion documents about something else: {bad}"


def test_the_allow_list_holds_only_live_exceptions() -> None:
    live = set(mismatches())
    assert set(ALLOWED) <= live, sorted(set(ALLOWED) - live)


def test_the_guard_catches_the_copd_benzodiazepine_mismatch_13d_found() -> None:
    """The case that started this: a benzodiazepine-in-COPD criterion citing the corticosteroid
    and theophylline statement (EB-MEDSAFE-020) must fail, the benzodiazepine one must pass."""
    (c,) = [c for c in load_criteria() if c.id == "dd-benzodiazepine-copd"]
    wrong = c.model_copy(update={"evidence": ("EB-MEDSAFE-020",)})
    assert criterion_mismatches((wrong,)) == [("dd-benzodiazepine-copd", "EB-MEDSAFE-020")]
    assert criterion_mismatches((c,)) == []


@pytest.mark.parametrize(
    ("criterion", "wrong", "right"),
    [
        ("start-gastroprotection-dual-antithrombotic", "EB-BONE-002", "EB-GI-001"),
        ("age-z-drug", "EB-MEDSAFE-020", "EB-MEDSAFE-024"),
        ("dd-thiazide-gout", "EB-MEDSAFE-017", "EB-MEDSAFE-026"),
        ("dd-loop-hypertension-only", "EB-MEDSAFE-003", "EB-CV-019"),
    ],
)
def test_the_guard_tells_a_wrong_document_from_the_right_one(
    criterion: str, wrong: str, right: str
) -> None:
    (c,) = [c for c in load_criteria() if c.id == criterion]
    assert right in c.evidence
    assert criterion_mismatches((c.model_copy(update={"evidence": (wrong,)}),)) == [
        (criterion, wrong)
    ]
    assert criterion_mismatches((c.model_copy(update={"evidence": (right,)}),)) == []


def test_the_audit_listing_covers_every_point_and_band() -> None:
    listed = rows()
    criteria = load_criteria()
    assert len(listed) == len(criteria) + sum(len(c.points) for c in criteria) + len(
        drugs.load_drugs().renal
    )
    assert all(EvidenceBase.load().by_id(e) is not None for *_, ids in listed for e in ids)
