"""An option crosses from the model protocol into the deliberation and its document and back
with every field: the field sets are compared, so a field added to one side and not the other
fails here rather than being dropped on the way."""

from __future__ import annotations

from dataclasses import fields, replace

from inference.protocol import CandidateOption
from service.core import evaluate, from_document, to_document
from service.core.model import Finding, Option
from service.pipeline import (
    DELIBERATED_OPTION_FIELDS,
    candidate_from_option,
    option_from_candidate,
)
from tests.fhir_mapping.factories import small_deliberation

# Every field set away from its default, so that a field a crossing drops shows as a difference.
FULL = CandidateOption(
    id="opt-taper-zolpidem",
    title="Taper zolpidem",
    category="medication",
    description="Reduce the dose by a quarter every two weeks.",
    refs=("MedicationRequest/mr-zolpidem",),
    problem_ids=small_deliberation().options[0].problem_ids,
    code=("http://snomed.info/sct", "225372007", "Medication withdrawal"),
    medication_ref="MedicationRequest/mr-zolpidem",
    priority="safety",
    urgency_class="soon",
    answers=("abrupt-withdrawal",),
    findings=(Finding("drug-age", "major", "beers-z-drug"),),
    treats="insomnia",
    action="taper",
    timeframe="7d",
    harm=6.0,
    transition=True,
)


def _names(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


def test_every_candidate_field_is_kept_in_the_deliberation() -> None:
    assert _names(CandidateOption) <= _names(Option)
    assert _names(Option) - _names(CandidateOption) == DELIBERATED_OPTION_FIELDS


def test_every_default_differs_in_the_full_candidate() -> None:
    # The round trip below proves something only if no field of FULL sits at its default.
    bare = CandidateOption(FULL.id, FULL.title, FULL.category, FULL.description)
    assert all(
        getattr(FULL, n) != getattr(bare, n)
        for n in _names(CandidateOption) - {"id", "title", "category", "description"}
    )


def test_a_candidate_survives_the_deliberation_and_its_document() -> None:
    option = option_from_candidate(FULL)
    assert candidate_from_option(option) == FULL
    d = small_deliberation()
    d = replace(d, options=(*d.options, option))
    back = next(o for o in from_document(to_document(d, evaluate(d))).options if o.id == FULL.id)
    assert back == option
    assert candidate_from_option(back) == FULL
