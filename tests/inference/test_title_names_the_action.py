"""Every action names what to do, and its action kind says the same (issue 36, item 5).

The clinician reads the title's verb; the patient version and the timeframe read the action kind
(``data/actions.yaml``, an option's own ``action``). For every active criterion whose title
starts with a verb of action, the kind must be that verb's: a "Stop" is a stop (or a taper),
never a review the patient is told about as "your care team will check". And where a source
names the action for the situation its trigger states, the title says it, not "Review".
"""

from __future__ import annotations

import pytest

from inference.knowledge import analyse
from inference.knowledge.actions import action_kind
from inference.knowledge.criteria import load
from inference.knowledge.criteria.schema import Criterion, urgency_class_of
from tests.inference.criteria_factory import Builder

ACTIVE = tuple(c for c in load() if c.status == "active")

# The kinds a title's first word allows.
VERB_KINDS = {
    "Stop": {"stop-now", "stop-at-review", "taper", "end-course"},
    "Hold": {"hold"},
    "Withhold": {"hold", "stop-now", "stop-at-review"},
    "Switch": {"switch"},
    "Reduce": {"lower"},
    "Taper": {"taper"},
    "Review": {"review"},
}

# Criteria whose source names the action for what the trigger states (STOPP/START v3 2023,
# Beers 2023, labels, ADA 2024 section 13): retitled from "Review" to that action.
NAMED = {
    "age-tca": "switch",
    "age-paroxetine": "switch",
    "age-anticholinergic-antiparkinson": "stop-at-review",
    "age-muscle-relaxant": "stop-at-review",
    "age-nitrofurantoin-long-term": "stop-at-review",
    "age-dipyridamole": "stop-at-review",
    "deprescribe-corticosteroid-copd": "taper",
    "deprescribe-theophylline-copd": "switch",
    "dd-anticholinergic-urinary-retention": "stop-at-review",
    "dd-ache-syncope": "stop-at-review",
    "dd-alpha-blocker-syncope": "stop-at-review",
    "dd-tca-syncope": "switch",
    "dd-anticholinergic-delirium": "stop-at-review",
    "dd-h2-delirium": "switch",
    "dd-loop-hypertension-only": "switch",
    "dd-alpha-blocker-incontinence": "stop-at-review",
    "dd-thiazide-gout": "switch",
    "dd-antiplatelet-anticoagulated-af": "stop-at-review",
    "lab-thiazide-hypokalaemia": "hold",
    "lab-thiazide-hyponatraemia": "hold",
    "lab-siadh-hyponatraemia": "hold",
    "lab-hypoglycaemic-low-hba1c": "lower",
    "deintensify-low-hba1c-frail": "lower",
    "paed-tetracycline-under-eight": "switch",
    "paed-fluoroquinolone-first-line": "switch",
    "ddi-simvastatin-strong-cyp3a4": "hold",
    "ddi-lovastatin-strong-cyp3a4": "hold",
    "ddi-phenytoin-trimethoprim": "switch",
    "ddi-theophylline-ciprofloxacin": "switch",
    "ddi-theophylline-cimetidine": "switch",
    "ddi-clopidogrel-omeprazole": "switch",
    "ddi-clopidogrel-esomeprazole": "switch",
    "ddi-fluoroquinolone-corticosteroid": "switch",
    "ddi-levothyroxine-iron": "teach",
    "ddi-levothyroxine-calcium": "teach",
}


def _kind(c: Criterion) -> str:
    return action_kind(c.option.id, urgency_class_of(c), c.option.action)


@pytest.mark.parametrize("c", ACTIVE, ids=[c.id for c in ACTIVE])
def test_the_title_verb_and_the_action_kind_agree(c: Criterion) -> None:
    title = c.option.title
    verb = title.split(" ", 1)[0].rstrip(":")
    if verb not in VERB_KINDS or title.startswith("Reduce and review"):
        return  # "Reduce and review" (Beers, antipsychotics in dementia) asks for both
    allowed = VERB_KINDS[verb] | ({"switch"} if " or switch " in title else set())
    assert _kind(c) in allowed, (c.id, title, _kind(c))


def test_a_source_that_names_the_action_is_said_so() -> None:
    by_id = {c.id: c for c in ACTIVE}
    assert set(NAMED) <= set(by_id)
    got = {cid: _kind(by_id[cid]) for cid in NAMED}
    assert got == NAMED
    assert not [cid for cid in NAMED if by_id[cid].option.title.startswith("Review")]


# Reviews added in release 2026.12-4 where the record cannot settle which medicine to change: a
# generic interaction by pathway role or property names two drugs, either of which may be the
# one to change, and a dose below the label's reduced one may be a deliberate choice.
JUDGEMENT_REVIEWS = frozenset(
    {
        "feature-dose-below-full",
        "prop-ddi-inhibitor-started",
        "prop-ddi-inhibitor",
        "prop-ddi-inducer-started",
        "prop-ddi-inducer",
        "prop-ddi-acid-absorption",
        "prop-raised-icp-stack-symptoms",
        "prop-raised-icp-stack",
    }
)


def test_a_review_is_left_only_where_judgement_decides() -> None:
    """The titles that still ask to review: fewer than before (136), each a review kind; the
    generic ones added since are named above with why."""
    reviews = [c for c in ACTIVE if c.option.title.startswith("Review")]
    assert {c.id for c in reviews} >= JUDGEMENT_REVIEWS
    assert len(reviews) <= 136 - len(NAMED) + len(JUDGEMENT_REVIEWS)
    assert all(_kind(c) == "review" for c in reviews)


def test_aspirin_beside_an_anticoagulant_in_af_is_one_stop() -> None:
    """Three criteria act on the aspirin (AF without vascular disease, no indication beside
    the anticoagulant, the interaction review): one activity, a stop, whatever order they
    fold in, not a review beside a stop."""
    b = Builder(age=82)
    b.condition("af")
    b.med("apixaban")
    b.med("aspirin")
    aspirin = [p for p in analyse(b.build()).proposals if "aspirin" in p.title.lower()]
    assert [p.id for p in aspirin] == ["opt-stop-aspirin-beside-anticoagulant"]
    (stop,) = aspirin
    assert stop.title.startswith("Stop aspirin: no indication beside the anticoagulant")
    assert {"dd-antiplatelet-anticoagulated-af", "ddi-anticoagulant-antiplatelet"} <= set(
        stop.criteria
    )
