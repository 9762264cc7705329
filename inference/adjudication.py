"""The clash comparator of the embedded backend: which of two near-tied opposing arguments wins.

It reads typed attributes only (``ArgumentDraft.harm``/``concern``/``generic``,
``CandidateOption.answers``, the evidence grades and the status of the cited patient facts),
never the argument text. Rules, in order; the first that separates the pair decides, with its
reason stated in the verdict:

1. **Answered by design.** An objection whose ``concern`` the option's own design already
   answers (``concern in option.answers``, e.g. a gradual taper against "abrupt-withdrawal")
   loses.
2. **Recent abnormal fact over a generic statement.** An argument citing a recent, abnormal
   fact of this patient (``FactStatus.recent_abnormal``) beats one that cites no fact about the
   patient (``generic``).
3. **Severe harm over convenience.** An argument about a severe harm (``harm == "severe"``)
   that rests on this patient's facts (not ``generic``) beats one about treatment burden
   (``concern == "treatment-burden"``) or a minor harm.
4. **Evidence grade.** The better best grade among the evidence cited (A > B > C > expert
   consensus) wins.
5. Otherwise **no winner** (``None``): the clash counts for nobody and both keep their tau.

Pure: no I/O, same inputs, same verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from inference.protocol import ArgumentDraft, CandidateOption, ClashVerdict, Stance
from service.record.profile import Observation, PatientProfile
from service.record.vocabulary import LOINC_GROUPS

__all__ = [
    "ABNORMAL",
    "BURDEN",
    "GRADE_RANK",
    "RECENT_DAYS",
    "FactStatus",
    "compare",
    "fact_status",
]

GRADE_RANK: Mapping[str, int] = {"A": 3, "B": 2, "C": 1, "expert consensus": 0}
BURDEN = "treatment-burden"  # the concern code of an objection about convenience or burden
RECENT_DAYS = 365  # a fact is recent when dated within a year of the record's latest fact

# Abnormal values by LOINC group: (low limit, high limit), a value outside is abnormal. Only
# unambiguous thresholds, units as the fixtures report them.
#   blood pressure: clinic >= 140 systolic or >= 90 diastolic (NICE NG136, 2019)
#   eGFR < 60 mL/min/1.73m2: CKD stage G3a or worse (KDIGO CKD guideline, 2012)
#   potassium > 5.5 mmol/L: hyperkalaemia needing action (KDIGO CKD guideline, 2012)
#   INR > 3.0 on warfarin: above the usual 2-3 target range (BSH anticoagulation, 2011)
ABNORMAL: Mapping[str, tuple[float | None, float | None]] = {
    "systolic_bp": (None, 139.999),
    "diastolic_bp": (None, 89.999),
    "egfr": (60.0, None),
    "potassium": (None, 5.5),
    "inr": (None, 3.0),
}
_GROUP_OF = {code: group for group, codes in LOINC_GROUPS.items() for code in codes}


@dataclass(frozen=True, slots=True)
class FactStatus:
    """What the comparator knows of one cited fact: abnormal and recent, in words for the
    reason (value, unit and date; never the FHIR id)."""

    recent_abnormal: bool
    words: str


def _abnormal(o: Observation) -> bool:
    limits = ABNORMAL.get(_GROUP_OF.get(o.loinc, ""))
    if limits is None or o.value is None:
        return False
    low, high = limits
    return (low is not None and o.value < low) or (high is not None and o.value > high)


def fact_status(profile: PatientProfile) -> dict[str, FactStatus]:
    """Status of every observation fact of the profile that is abnormal (by ``ABNORMAL``).

    Blood pressure's systolic and diastolic share one reference; the fact is abnormal when
    either is."""
    out: dict[str, FactStatus] = {}
    as_of: date = profile.as_of
    for o in profile.observations:
        if not _abnormal(o):
            continue
        recent = o.effective is not None and (as_of - o.effective).days <= RECENT_DAYS
        value = f"{o.value:g}" if o.value is not None else o.value_text
        when = f" on {o.effective.isoformat()}" if o.effective else ""
        words = f"{o.display} {value} {o.unit}".strip() + when
        prev = out.get(o.ref)
        if prev is None or (recent and not prev.recent_abnormal):
            out[o.ref] = FactStatus(recent, words)
    return out


def _recent_abnormal(x: ArgumentDraft, facts: Mapping[str, FactStatus]) -> FactStatus | None:
    for ref in x.facts:
        status = facts.get(ref)
        if status is not None and status.recent_abnormal:
            return status
    return None


def _best_grade(x: ArgumentDraft, grades: Mapping[str, str]) -> int:
    return max((GRADE_RANK.get(grades.get(e, ""), -1) for e in x.evidence), default=-1)


def _grade_name(rank: int) -> str:
    for name, r in GRADE_RANK.items():
        if r == rank:
            return name
    return "none cited"


def compare(
    option: CandidateOption,
    support: ArgumentDraft,
    attack: ArgumentDraft,
    grades: Mapping[str, str],
    facts: Mapping[str, FactStatus],
) -> ClashVerdict:
    """The verdict on one clash (rules in the module docstring). ``grades``: evidence id ->
    grade of the documents passed; ``facts``: ``fact_status`` of the patient."""

    def won(winner: Stance | None, reason: str) -> ClashVerdict:
        return ClashVerdict(support.id, attack.id, winner, reason)

    # 1. answered by design
    if attack.concern and attack.concern in option.answers:
        return won(
            "support", f"the option's design already answers the objection ({attack.concern})"
        )
    # 2. recent abnormal fact over a generic statement
    fs, fa = _recent_abnormal(support, facts), _recent_abnormal(attack, facts)
    if fs is not None and attack.generic and not support.generic:
        return won("support", f"a recent abnormal finding ({fs.words}) outweighs a generic one")
    if fa is not None and support.generic and not attack.generic:
        return won("attack", f"a recent abnormal finding ({fa.words}) outweighs a generic one")
    # 3. severe harm over convenience or a minor harm
    sides: tuple[tuple[ArgumentDraft, ArgumentDraft, Stance], ...] = (
        (support, attack, "support"),
        (attack, support, "attack"),
    )
    for x, y, side in sides:
        if x.harm == "severe" and not x.generic and (y.concern == BURDEN or y.harm == "minor"):
            what = "treatment burden" if y.concern == BURDEN else "a minor harm"
            return won(side, f"preventing a severe harm for this patient outweighs {what}")
    # 4. evidence grade
    gs, ga = _best_grade(support, grades), _best_grade(attack, grades)
    if gs != ga:
        return won(
            "support" if gs > ga else "attack",
            f"stronger evidence: grade {_grade_name(max(gs, ga))} against "
            f"{_grade_name(min(gs, ga))}",
        )
    return won(None, "no rule separates them (same evidence grade, no decisive patient fact)")
