"""The scoring step of a plan: each argument's intrinsic strength, scored apart from its author.

CANOE §4.3 (Alg. 1 l. 13) gives every argument its base strength tau from a scoring step that
weighs it on five dimensions (``inference.protocol.STRENGTH_DIMENSIONS``); the panel member who
wrote the argument does not score it. Here that is one ``Score`` call per option with arguments
(all of them in one call: fewer calls, and fewer tokens, than one per argument), answered by
the backend like every other step: the embedded backend from a table
(``inference.knowledge.strength``), the Triton backend by a model. tau is the mean of the
five, at two decimals (``ArgumentScore.tau``).

A call that fails scores none of its option's arguments: they are left out of the plan and the
call is recorded missing (by the pipeline, like any failed contribution), never given a strength
nobody scored. An answer that leaves one argument unscored (the decoders refuse one that does;
a backend could still) loses that argument alone, recorded missing too. This module builds the
requests and applies the answers; the pipeline makes the calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from inference.protocol import ArgumentDraft, ArgumentScore, CandidateOption, EvidenceDoc, Score
from service.record.profile import PatientProfile

__all__ = ["apply_scores", "score_requests"]


def score_requests(
    profile: PatientProfile,
    options: Sequence[CandidateOption],
    drafts: Sequence[ArgumentDraft],
    evidence: Sequence[EvidenceDoc],
) -> list[tuple[str, Score]]:
    """(what a failure is recorded as, the request) for every option with arguments, in the
    options' order. Each request carries the plan's evidence, as the consultation had it: the
    statements the arguments cite are among it."""
    out = []
    docs = tuple(evidence)
    for option in options:
        mine = tuple(d for d in drafts if d.option_id == option.id)
        if not mine:
            continue
        what = f"strength of {len(mine)} argument(s) on {option.title}"
        out.append((what, Score(profile, option, mine, docs)))
    return out


def apply_scores(
    drafts: Sequence[ArgumentDraft],
    requests: Sequence[Score],
    answers: Sequence[tuple[ArgumentScore, ...] | None],
) -> tuple[list[ArgumentDraft], list[str]]:
    """The drafts that were scored, each with its tau, in their own order, and a missing entry
    for each argument an answer left unscored (or scored outside [0, 1]). A request answered by
    ``None`` (a failed call, already recorded) scores none of its arguments; a draft on an
    option no request asked about has no strength either and is dropped."""
    tau: dict[str, float] = {}
    missing: list[str] = []
    for request, answer in zip(requests, answers, strict=True):
        if answer is None:
            continue
        by_id = {s.argument_id: s for s in answer}
        for d in request.arguments:
            score = by_id.get(d.id)
            if score is None:
                missing.append(f"strength of {d.id}: not scored")
                continue
            try:
                tau[d.id] = score.tau
            except ValueError as exc:
                missing.append(f"strength of {d.id}: {exc}")
    return [replace(d, tau=tau[d.id]) for d in drafts if d.id in tau], missing
