"""The papers' evaluation metrics over a labelled set: ``canoe eval --metrics``.

A labelled folder holds ``metrics.json`` (format ``canoe.metrics/1``) naming FHIR bundles by
path (relative to the folder) and, per case, any of: ``reference`` (a text file: the reference
care plan), ``problems`` (the labelled problem list: the problems a plan should address) with
optional ``candidates`` (the labelled problems and their distractors; without it every problem
the plan accepts is scored), and ``reference_rubric`` (the labeller's 1-5 scores of the
reference plan on the judge's four dimensions). Each metric is computed over the cases that
carry its label, per case and averaged over them:

* ROUGE-L (CANOE eq. 15-16) of the generated plan against the reference, by Google's
  ``rouge-score`` package (the ``eval`` extra): F-measure of the longest common subsequence of
  tokens, beta = 1, no stemming;
* FKGL (CANOE eq. 19) of the generated plan and of its patient version (``service.readability``);
* CAMP's macro-F1 (per-problem F1 over the cases, averaged over the problems) and perfect rate
  (the share of cases whose accepted problem set equals the labelled one) of the plan's
  accepted problems (CAMP's Y-hat) against the labelled lists;
* CANOE's LLM-as-a-judge rubric (``inference.judge``) when a judge is given: the four scores
  of each generated plan and, as a check of the judge itself, of each reference plan, with
  the judge's distance from the labeller's scores of the references.

The generated plan is the clinician summary (``canoe plan``'s text, ``summary_text``).
AlignScore (CANOE eq. 17) and MEDCON (eq. 18) need model weights and a licensed vocabulary
(UMLS): ``AlignmentModel`` and ``ConceptExtractor`` are their adapter points, and with none
given the report says they were not run. Nothing here plans or calls a model itself: the CLI
plans the cases and hands the judge in.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from inference.judge import DIMENSIONS, JudgeVerdict
from inference.protocol import CallContext, EvidenceDoc, ModelCall
from service.errors import BackendTimeout, InputError, StepFailed, missing_extra
from service.readability import fkgl
from service.text.patient import patient_text
from service.text.summary import summary_text

if TYPE_CHECKING:
    from service.pipeline import PlanResult
    from service.record.profile import PatientProfile

__all__ = [
    "EVAL_EXTRA",
    "LABELS_FILE",
    "METRICS_FORMAT",
    "AlignmentModel",
    "CaseMetrics",
    "ConceptExtractor",
    "Judge",
    "JudgeRun",
    "LabelledCase",
    "ProblemScores",
    "accepted_labels",
    "alignscore",
    "judge_cases",
    "load_labelled",
    "measure",
    "medcon_f1",
    "metrics_report_json",
    "metrics_report_table",
    "normalise",
    "problem_scores",
    "rouge_l",
]

METRICS_FORMAT = "canoe.metrics/1"
LABELS_FILE = "metrics.json"
EVAL_EXTRA = "eval"  # the project extra that installs rouge-score
_FIELDS = {"name", "bundle", "reference", "problems", "candidates", "reference_rubric"}


# -- the labelled set -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelledCase:
    name: str
    bundle: Path
    reference: str | None = None  # the reference plan's text
    problems: frozenset[str] | None = None  # normalised labels
    candidates: frozenset[str] | None = None  # normalised; None: every accepted problem counts
    reference_rubric: tuple[int, ...] | None = None  # DIMENSIONS order, each 1-5


def normalise(label: str) -> str:
    """A problem label as it is compared: case-folded, runs of white space as one space.

    >>> normalise("  Type 2  Diabetes ")
    'type 2 diabetes'
    """
    return " ".join(label.casefold().split())


def _labels(raw: object, where: str) -> frozenset[str]:
    if not isinstance(raw, list) or not all(isinstance(x, str) and x.strip() for x in raw):
        raise InputError(f"{where}: an array of non-empty strings is required")
    return frozenset(normalise(x) for x in raw)


def _rubric(raw: object, where: str) -> tuple[int, ...]:
    if not isinstance(raw, Mapping) or set(raw) != set(DIMENSIONS):
        raise InputError(f"{where}: an object with exactly {', '.join(DIMENSIONS)}")
    scores = tuple(raw[d] for d in DIMENSIONS)
    if not all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 5 for s in scores):
        raise InputError(f"{where}: every score is a whole number from 1 to 5")
    return scores


def _reference(folder: Path, raw: object, where: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise InputError(f"{where}: a path to a text file is required")
    try:
        return (folder / raw).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{where}: cannot read {raw}: {exc.strerror}") from exc


def _case(folder: Path, c: object, where: str) -> LabelledCase:
    if not isinstance(c, Mapping) or not isinstance(c.get("bundle"), str):
        raise InputError(f"{where}.bundle: a path to a FHIR bundle is required")
    unknown = set(c) - _FIELDS
    if unknown:
        raise InputError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    bundle = (folder / c["bundle"]).resolve()
    if not bundle.is_file():
        raise InputError(f"{where}.bundle: no file at {c['bundle']}")
    problems = _labels(c["problems"], f"{where}.problems") if "problems" in c else None
    candidates = None
    if "candidates" in c:
        candidates = _labels(c["candidates"], f"{where}.candidates")
        if problems is None or not problems <= candidates:
            raise InputError(f"{where}.candidates: must hold every labelled problem")
    return LabelledCase(
        str(c.get("name") or Path(c["bundle"]).stem),
        bundle,
        _reference(folder, c["reference"], f"{where}.reference") if "reference" in c else None,
        problems,
        candidates,
        _rubric(c["reference_rubric"], f"{where}.reference_rubric")
        if "reference_rubric" in c
        else None,
    )


def load_labelled(folder: Path, file: str = LABELS_FILE) -> tuple[LabelledCase, ...]:
    """The labelled cases of ``folder/file``; ``InputError`` naming the field when wrong."""
    path = folder / file
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(raw, Mapping) or raw.get("format") != METRICS_FORMAT:
        raise InputError(f"{path}: format must be {METRICS_FORMAT!r}")
    cases = raw.get("cases")
    if not isinstance(cases, list) or not cases:
        raise InputError(f"{path}: cases must be a non-empty array")
    out = tuple(_case(folder, c, f"cases[{k}]") for k, c in enumerate(cases))
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise InputError(f"{path}: case names must be unique")
    return out


# -- the metrics --------------------------------------------------------------------------------


@cache
def _rouge_scorer() -> Any:
    try:
        from rouge_score import rouge_scorer
    except ImportError as exc:
        raise missing_extra(EVAL_EXTRA, "ROUGE-L") from exc
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l(reference: str, generated: str) -> float:
    """ROUGE-L F-measure of ``generated`` against ``reference`` (CANOE eq. 15-16, beta = 1)."""
    return float(_rouge_scorer().score(reference, generated)["rougeL"].fmeasure)


@dataclass(frozen=True, slots=True)
class ProblemScores:
    macro_f1: float
    perfect_rate: float
    cases: int
    per_label: tuple[tuple[str, float], ...]  # (label, F1), by label


def problem_scores(instances: Sequence[tuple[frozenset[str], frozenset[str]]]) -> ProblemScores:
    """CAMP's macro-F1 and perfect rate over (labelled, predicted) problem sets, one per case.

    A problem's F1 counts over the cases, 2TP / (2TP + FP + FN); macro-F1 is their mean over
    every problem labelled or predicted in some case (one never labelled nor predicted has no
    F1 and is left out). The perfect rate is the share of cases predicted exactly.
    """
    if not instances:
        raise ValueError("no labelled cases")
    labels = sorted(set().union(*(g | p for g, p in instances)))
    per_label = []
    for label in labels:
        tp = sum(label in g and label in p for g, p in instances)
        wrong = sum((label in g) != (label in p) for g, p in instances)
        per_label.append((label, 2 * tp / (2 * tp + wrong)))
    macro = sum(f for _, f in per_label) / len(per_label) if per_label else 1.0
    perfect = sum(g == p for g, p in instances) / len(instances)
    return ProblemScores(macro, perfect, len(instances), tuple(per_label))


def accepted_labels(
    accepted: Sequence[tuple[str, str]], candidates: frozenset[str] | None
) -> frozenset[str]:
    """The labels of a plan's accepted problems, each given as (id, display): a problem is
    named by its id or its display, as the labels name it. With ``candidates``, only the
    candidates the plan accepted; without, each accepted problem by its display."""
    if candidates is None:
        return frozenset(normalise(display) for _, display in accepted)
    names = {normalise(n) for pair in accepted for n in pair}
    return candidates & names


class ConceptExtractor(Protocol):
    """MEDCON's adapter point: the normalised clinical concepts (UMLS CUIs of MEDCON's
    semantic groups) that a text names, e.g. QuickUMLS over a licensed UMLS release. None
    ships with the project: UMLS needs a licence of its own."""

    def concepts(self, text: str) -> frozenset[str]: ...


def medcon_f1(reference: frozenset[str], generated: frozenset[str]) -> float:
    """MEDCON F1 of two concept sets (CANOE eq. 18); 0 when either side names none."""
    common = len(reference & generated)
    if not common:
        return 0.0
    precision, recall = common / len(generated), common / len(reference)
    return 2 * precision * recall / (precision + recall)


class AlignmentModel(Protocol):
    """AlignScore's adapter point: the alignment function A(claim, source) in [0, 1] of Zha
    et al. (2023), a fine-tuned RoBERTa checkpoint. None ships with the project: it needs
    the model's weights."""

    def align(self, claim: str, source: str) -> float: ...


def alignscore(claims: Sequence[str], source: str, model: AlignmentModel) -> float:
    """AlignScore of a plan (CANOE eq. 17): the mean alignment of its claims with the source
    (the patient record and the evidence); 0 for a plan with no claim."""
    if not claims:
        return 0.0
    return sum(model.align(q, source) for q in claims) / len(claims)


# -- one case -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaseMetrics:
    name: str
    fkgl_clinician: float
    fkgl_patient: float
    rouge_l: float | None = None
    gold: frozenset[str] | None = None
    predicted: frozenset[str] | None = None
    medcon_f1: float | None = None
    alignscore: float | None = None
    reference_rubric: tuple[int, ...] | None = None  # the labeller's, carried for the judge
    judge: JudgeVerdict | None = None
    judge_reference: JudgeVerdict | None = None
    judge_error: str = ""


def _claims(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if any(c in line for c in ".!?")]


def measure(
    case: LabelledCase,
    plan: PlanResult,
    *,
    concepts: ConceptExtractor | None = None,
    aligner: AlignmentModel | None = None,
    source: Callable[[PlanResult], str] | None = None,
) -> CaseMetrics:
    """Every metric of one planned case that needs no judge (``source``: the patient record
    and evidence as the aligner reads them, where one is given)."""
    d, ev = plan.deliberation, plan.evaluation
    generated = summary_text(d, ev)
    accepted = [(p.id, p.display) for p in d.problems if ev.problem(p.id).decision == "accept"]
    ref = case.reference
    return CaseMetrics(
        case.name,
        round(fkgl(generated), 1),
        round(fkgl(patient_text(d, ev)), 1),
        rouge_l(ref, generated) if ref is not None else None,
        case.problems,
        accepted_labels(accepted, case.candidates) if case.problems is not None else None,
        medcon_f1(concepts.concepts(ref), concepts.concepts(generated))
        if concepts is not None and ref is not None
        else None,
        alignscore(_claims(generated), source(plan), aligner)
        if aligner is not None and source is not None
        else None,
        case.reference_rubric,
    )


# -- the judge ----------------------------------------------------------------------------------


class Judge(Protocol):
    """What scores a plan on CANOE's rubric (``inference.judge.TritonJudge``)."""

    model: str

    async def score(
        self,
        profile: PatientProfile,
        evidence: tuple[EvidenceDoc, ...],
        generated: str,
        reference: str | None,
        ctx: CallContext,
    ) -> JudgeVerdict: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class JudgeRun:
    """Whether the judge ran, why not when it did not, and what it cost."""

    ran: bool
    reason: str = ""
    model: str = ""
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class _Usage:
    def __init__(self) -> None:
        self.calls: list[ModelCall] = []

    def record(self, call: ModelCall) -> None:
        self.calls.append(call)


async def _judge_one(
    judge: Judge, case: LabelledCase, plan: PlanResult, m: CaseMetrics, ctx: CallContext
) -> CaseMetrics:
    generated = summary_text(plan.deliberation, plan.evaluation)
    try:
        verdict = await judge.score(plan.profile, plan.evidence, generated, case.reference, ctx)
        on_reference = None
        if case.reference is not None:
            # the reference plan judged on its own (no reference beside it): how far the
            # judge's scores are from the labeller's
            on_reference = await judge.score(plan.profile, plan.evidence, case.reference, None, ctx)
    except (StepFailed, BackendTimeout) as exc:
        return replace(m, judge_error=str(exc))
    return replace(m, judge=verdict, judge_reference=on_reference)


async def judge_cases(
    items: Sequence[tuple[LabelledCase, PlanResult, CaseMetrics]],
    make_judge: Callable[[], Judge],
    deadline_s: float,
) -> tuple[list[CaseMetrics], JudgeRun]:
    """Every case's plan (and reference plan) scored by the judge, concurrently; a case whose
    answer stays unusable keeps no score and says why. ``make_judge`` is called inside the
    running loop (a Triton client binds to it). An unreachable backend raises."""
    usage = _Usage()
    ctx = CallContext(recorder=usage, deadline_s=deadline_s)
    judge = make_judge()
    try:
        out = await asyncio.gather(*(_judge_one(judge, c, p, m, ctx) for c, p, m in items))
    finally:
        await judge.aclose()
    run = JudgeRun(
        True,
        model=judge.model,
        calls=len(usage.calls),
        input_tokens=sum(c.input_tokens for c in usage.calls),
        output_tokens=sum(c.output_tokens for c in usage.calls),
    )
    return list(out), run


# -- the report ---------------------------------------------------------------------------------


def _mean(values: Sequence[float], digits: int) -> float | None:
    return round(sum(values) / len(values), digits) if values else None


def _verdict_json(v: JudgeVerdict | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return dict(zip(DIMENSIONS, v.scores, strict=True)) | {"average": v.average}


def _judge_json(results: Sequence[CaseMetrics], run: JudgeRun) -> dict[str, Any]:
    if not run.ran:
        return {"status": "not run", "reason": run.reason}
    judged = [r.judge for r in results if r.judge is not None]
    mean = {d: _mean([v.score(d) for v in judged], 2) for d in DIMENSIONS}
    mean["average"] = _mean([v.average for v in judged], 2)
    pairs = [
        (r.judge_reference, r.reference_rubric)
        for r in results
        if r.judge_reference is not None and r.reference_rubric is not None
    ]
    gap = {
        d: _mean([abs(v.score(d) - labels[i]) for v, labels in pairs], 2)
        for i, d in enumerate(DIMENSIONS)
    }
    return {
        "status": "run",
        "model": run.model,
        "judged": len(judged),
        "failed": sum(bool(r.judge_error) for r in results),
        "mean": mean,
        "reference_vs_labels": {"cases": len(pairs), "mean_abs_difference": gap},
        "calls": run.calls,
        "tokens": {"input": run.input_tokens, "output": run.output_tokens},
    }


def _problems_json(results: Sequence[CaseMetrics]) -> dict[str, Any] | None:
    instances = [(r.gold, r.predicted) for r in results if r.gold is not None]
    if not instances:
        return None
    s = problem_scores([(g, p) for g, p in instances if p is not None])
    return {
        "cases": s.cases,
        "macro_f1": round(s.macro_f1, 4),
        "perfect_rate": round(s.perfect_rate, 4),
        "per_problem_f1": {label: round(f, 4) for label, f in s.per_label},
    }


def _not_run(what: str, adapter: str, needs: str) -> dict[str, Any]:
    return {"status": "not run", "reason": f"{what} needs {needs}; adapter point: {adapter}"}


def _case_json(r: CaseMetrics) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": r.name,
        "rouge_l": None if r.rouge_l is None else round(r.rouge_l, 4),
        "fkgl": {"clinician": r.fkgl_clinician, "patient": r.fkgl_patient},
    }
    if r.gold is not None and r.predicted is not None:
        out["problems"] = {
            "labelled": sorted(r.gold),
            "accepted": sorted(r.predicted),
            "perfect": r.gold == r.predicted,
        }
    if r.medcon_f1 is not None:
        out["medcon_f1"] = round(r.medcon_f1, 4)
    if r.alignscore is not None:
        out["alignscore"] = round(r.alignscore, 4)
    out["judge"] = _verdict_json(r.judge)
    out["judge_reference"] = _verdict_json(r.judge_reference)
    if r.judge_error:
        out["judge_error"] = r.judge_error
    return out


def metrics_report_json(results: Sequence[CaseMetrics], judge: JudgeRun) -> dict[str, Any]:
    """The report (``canoe.metrics-report/1``): each metric averaged over the cases that carry
    its label, and per case."""
    rouge = [r.rouge_l for r in results if r.rouge_l is not None]
    medcon = [r.medcon_f1 for r in results if r.medcon_f1 is not None]
    align = [r.alignscore for r in results if r.alignscore is not None]
    return {
        "format": "canoe.metrics-report/1",
        "cases": len(results),
        "rouge_l": {"cases": len(rouge), "mean": _mean(rouge, 4)},
        "fkgl": {
            "clinician": _mean([r.fkgl_clinician for r in results], 1),
            "patient": _mean([r.fkgl_patient for r in results], 1),
        },
        "problems": _problems_json(results),
        "judge": _judge_json(results, judge),
        "medcon_f1": {"cases": len(medcon), "mean": _mean(medcon, 4)}
        if medcon
        else _not_run("MEDCON", "service.metrics.ConceptExtractor", "a licensed UMLS release"),
        "alignscore": {"cases": len(align), "mean": _mean(align, 4)}
        if align
        else _not_run("AlignScore", "service.metrics.AlignmentModel", "the model's weights"),
        "per_case": [_case_json(r) for r in results],
    }


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def metrics_report_table(report: Mapping[str, Any]) -> str:
    """The report as a short table: per case, then the means (rendered from the JSON)."""
    out = []
    for c in report["per_case"]:
        probs = c.get("problems")
        judge = c["judge"]
        out.append(
            f"{c['name']}: ROUGE-L {_fmt(c['rouge_l'], '.3f')}; FKGL clinician "
            f"{c['fkgl']['clinician']:.1f}, patient {c['fkgl']['patient']:.1f}"
            + (f"; problems {'exact' if probs['perfect'] else 'differ'}" if probs else "")
            + (f"; judge {judge['average']:.2f}" if judge else "")
            + (f" (judge failed: {c['judge_error']})" if "judge_error" in c else "")
        )
    out.append(
        f"ROUGE-L mean {_fmt(report['rouge_l']['mean'], '.4f')} over "
        f"{report['rouge_l']['cases']} cases; FKGL mean clinician "
        f"{_fmt(report['fkgl']['clinician'], '.1f')}, "
        f"patient {_fmt(report['fkgl']['patient'], '.1f')}"
    )
    p = report["problems"]
    if p is not None:
        out.append(
            f"Problems (CAMP): macro-F1 {p['macro_f1']:.4f}, perfect rate "
            f"{p['perfect_rate']:.4f} over {p['cases']} cases"
        )
    j = report["judge"]
    if j["status"] == "run":
        m = j["mean"]
        dims = ", ".join(f"{d} {_fmt(m[d], '.2f')}" for d in DIMENSIONS)
        out.append(
            f"Judge ({j['model']}): {dims}; average {_fmt(m['average'], '.2f')} over "
            f"{j['judged']} cases ({j['failed']} failed; {j['calls']} calls, "
            f"{j['tokens']['input']} + {j['tokens']['output']} tokens)"
        )
        gap = j["reference_vs_labels"]
        if gap["cases"]:
            dims = ", ".join(
                f"{d} {_fmt(gap['mean_abs_difference'][d], '.2f')}" for d in DIMENSIONS
            )
            out.append(
                f"Judge on the reference plans vs the labels, mean |difference|: {dims} "
                f"({gap['cases']} cases)"
            )
    else:
        out.append(f"Judge: not run: {j['reason']}")
    for key, name in (("medcon_f1", "MEDCON F1"), ("alignscore", "AlignScore")):
        if report[key].get("status") == "not run":
            out.append(f"{name}: not run: {report[key]['reason']}")
        else:
            out.append(f"{name} mean {report[key]['mean']:.4f} over {report[key]['cases']} cases")
    return "\n".join(out)
