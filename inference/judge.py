"""CANOE's LLM-as-a-judge (section 5.5) as one call to a Triton-served model.

The judge reads the patient record (the same ``<canoe-record>`` block every call of a plan
starts with), the evidence statements the plan drew on, the generated plan and, where one is
labelled, a reference plan; it answers four scores, each an integer 1-5 with its rationale
(completeness, validity, coherence, safety), under its own versioned prompt (``judge.v1.txt``)
and guided-JSON schema (``judge.v1.json``). The mean of the four is computed here, never asked
of the model. An unusable answer (after the client's one repair) is ``StepFailed``: a score is
never made up. This module builds the request and decodes the answer; the call itself is
``TritonExperts.ask``. It is the evaluation harness's, never part of a plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inference import schemas
from inference._triton_record import Aliases, record
from inference._triton_steps import AnswerError, StepRequest
from inference.prompts import load_template
from inference.protocol import CallContext, EvidenceDoc
from service.record.profile import PatientProfile

if TYPE_CHECKING:
    from inference.triton import TritonExperts

__all__ = ["DIMENSIONS", "JudgeVerdict", "TritonJudge", "judge_request"]

# CANOE's four dimensions, in the paper's order.
DIMENSIONS: tuple[str, ...] = ("completeness", "validity", "coherence", "safety")


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """One plan's scores (integers 1-5, in ``DIMENSIONS`` order) and the judge's rationales."""

    scores: tuple[int, ...]
    rationales: tuple[str, ...]

    def score(self, dimension: str) -> int:
        return self.scores[DIMENSIONS.index(dimension)]

    @property
    def average(self) -> float:
        """The mean of the four scores (CANOE Table 2's "average")."""
        return sum(self.scores) / len(self.scores)


def _decode(answer: dict[str, Any]) -> JudgeVerdict:
    # the schema has already held every score to an integer 1-5; this guards a schema edit
    scores = tuple(answer[d]["score"] for d in DIMENSIONS)
    if not all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 5 for s in scores):
        raise AnswerError("a judge score is not an integer from 1 to 5")
    return JudgeVerdict(scores, tuple(str(answer[d]["rationale"]) for d in DIMENSIONS))


def judge_request(
    profile: PatientProfile,
    evidence: tuple[EvidenceDoc, ...],
    generated: str,
    reference: str | None,
) -> StepRequest[JudgeVerdict]:
    """What the judge is sent for one plan, and how its answer is checked."""
    aliases = Aliases.of(profile)
    docs = [
        {"id": d.id, "statement": d.statement, "grade": d.grade, "source": d.source, "year": d.year}
        for d in evidence
    ]
    return StepRequest(
        "judge",
        record(profile, aliases),
        {"generated_plan": generated, "reference_plan": reference},
        schemas.load("judge"),
        _decode,
        evidence=docs,
        aliases=aliases,
        system=dict(load_template("judge").sections)["system"].substitute(),
    )


class TritonJudge:
    """The judge on a Triton-served model: ``score`` is one call (``TritonExperts.ask``)."""

    def __init__(self, experts: TritonExperts) -> None:
        self.experts = experts
        self.model = experts.settings.model_for("judge")

    async def score(
        self,
        profile: PatientProfile,
        evidence: tuple[EvidenceDoc, ...],
        generated: str,
        reference: str | None,
        ctx: CallContext,
    ) -> JudgeVerdict:
        return await self.experts.ask(judge_request(profile, evidence, generated, reference), ctx)

    async def aclose(self) -> None:
        await self.experts.aclose()
