"""Secondary prophylaxis omissions (criteria/omissions.json): hepatic encephalopathy on record
with no lactulose prescribed fires; with lactulose, or cirrhosis alone, it does not."""

from __future__ import annotations

from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA

from .criteria_factory import Builder

HE = "start-lactulose-hepatic-encephalopathy"


def _fired(b: Builder) -> set[str]:
    return {f.criterion.id for f in evaluate(CRITERIA, Facts(b.build()))}


def test_hepatic_encephalopathy_without_lactulose() -> None:
    b = Builder(age=61)
    b.condition("hepatic-encephalopathy")
    assert HE in _fired(b)


def test_lactulose_prescribed_or_cirrhosis_alone_does_not_fire() -> None:
    on = Builder(age=61)
    on.condition("hepatic-encephalopathy")
    on.med("lactulose")
    assert HE not in _fired(on)
    cirrhosis = Builder(age=61)
    cirrhosis.condition("cirrhosis")
    assert HE not in _fired(cirrhosis)


def test_a_resolved_episode_still_calls_for_lactulose() -> None:
    """Secondary prophylaxis follows an episode: a blind record held the encephalopathy as
    resolved after its admission, and the omission was not seen (EASL/AASLD 2014)."""
    b = Builder(age=61)
    b.resolved("hepatic-encephalopathy")
    assert HE in _fired(b)
