"""Pregnancy and breastfeeding as typed facts, read from the record.

The codes, windows and sources are data (``data/pregnancy.yaml``, validated against
``PregnancyFile`` when this module is imported). ``pregnancy_of`` says whether a woman is pregnant
on the record date, from Conditions, pregnancy tests and status Observations, gestational age,
last menstrual period and due date Observations, and antenatal Encounters; with the gestational
age and trimester when the record tells them. A pregnancy whose signs are followed by a delivery,
a miscarriage or a negative test, or that would now be past 42 weeks, is not current.
``lactation_of`` does the same for breastfeeding. Pure: no I/O after import, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Code, Condition, Observation, PatientProfile
from service.record.vocabulary import ICD10, SNOMED

from . import conditions
from ._datafile import DATA_DIR, check_patterns, load_yaml
from .units import DAYS_PER_WEEK

__all__ = [
    "PREGNANCY",
    "PREGNANCY_FILE",
    "Lactation",
    "Pregnancy",
    "PregnancyFile",
    "is_pregnancy_test",
    "lactation_of",
    "load_pregnancy",
    "pregnancy_of",
    "stated_weeks",
]

PREGNANCY_FILE = DATA_DIR / "pregnancy.yaml"

_Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
_Text = Annotated[str, Field(min_length=1)]
_Loinc = Annotated[str, Field(pattern=r"^[0-9]{1,7}-[0-9]$")]
_Icd10 = Annotated[str, Field(pattern=r"^[A-Z][0-9A-Z.]{0,7}$")]
_Days = Annotated[int, Field(gt=0, le=3650)]
_Sctid = Annotated[str, Field(pattern=r"^[1-9][0-9]{5,17}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Codes(_Strict):
    snomed: tuple[_Sctid, ...] = ()
    icd10: tuple[_Icd10, ...] = ()
    text: tuple[_Text, ...] = ()


class Trimesters(_Strict):
    second: int = Field(gt=0)
    third: int = Field(gt=0)


class PregnancyDef(_Codes):
    encounter_snomed: tuple[_Sctid, ...] = ()
    encounter_text: tuple[_Text, ...] = ()
    status_loinc: tuple[_Loinc, ...]
    positive_snomed: tuple[_Sctid, ...]
    negative_snomed: tuple[_Sctid, ...]
    positive_text: tuple[_Text, ...]
    negative_text: tuple[_Text, ...]
    hcg_loinc: tuple[_Loinc, ...]
    positive_iu_l: float = Field(gt=0)
    test_text: tuple[_Text, ...] = ()
    hcg_units: tuple[_Text, ...] = ()
    weeks_text: tuple[_Text, ...] = ()
    # Words before the weeks that make them approximate ("about 5 weeks"): quoted with them.
    approx_words: tuple[_Text, ...] = ()
    # A last menstrual period stated in a pregnancy's Condition text: group 1 is its ISO date.
    lmp_text: tuple[_Text, ...] = ()
    gestational_age_loinc: tuple[_Loinc, ...]
    lmp_loinc: tuple[_Loinc, ...]
    edd_loinc: tuple[_Loinc, ...]
    term_days: _Days
    max_weeks: int = Field(gt=0)
    undated_days: _Days
    trimester_from_weeks: Trimesters
    sources: tuple[_Id, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> PregnancyDef:
        """The trimesters start in order within a pregnancy, and term falls within it."""
        t = self.trimester_from_weeks
        if not t.second < t.third < self.max_weeks:
            raise ValueError("trimester_from_weeks: second < third < max_weeks")
        if self.term_days >= self.max_weeks * DAYS_PER_WEEK:
            raise ValueError("term_days: term must fall before max_weeks")
        return self


class LactationDef(_Codes):
    not_text: tuple[_Text, ...] = ()
    encounter_text: tuple[_Text, ...] = ()
    within_days: _Days
    sources: tuple[_Id, ...] = Field(min_length=1)


class NotInPregnancy(_Strict):
    id: _Id  # a rule function's or a criterion's id
    why: _Text


class PregnancyFile(_Strict):
    version: _Text
    sources: dict[_Id, _Text]
    pregnancy: PregnancyDef
    ended: _Codes
    lactation: LactationDef
    not_in_pregnancy: tuple[NotInPregnancy, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> PregnancyFile:
        p, e, lac = self.pregnancy, self.ended, self.lactation
        for s in (*p.sources, *lac.sources):
            if s not in self.sources:
                raise ValueError(f"unknown source {s!r}")
        check_patterns((*p.text, *p.encounter_text, *p.positive_text, *p.negative_text,
                        *p.test_text, *p.weeks_text, *p.lmp_text,
                        *e.text, *lac.text, *lac.not_text, *lac.encounter_text))  # fmt: skip
        for w in (*p.weeks_text, *p.lmp_text):
            if re.compile(w).groups < 1:
                raise ValueError(f"{w!r}: group 1 must capture the weeks or the date")
        return self


def load_pregnancy(path: Path = PREGNANCY_FILE) -> PregnancyFile:
    """Validate ``path``; ``KnowledgeFileError`` when it is unusable."""
    return load_yaml(path, PregnancyFile)


PREGNANCY: PregnancyFile = load_pregnancy()


@dataclass(frozen=True, slots=True)
class Pregnancy:
    """A current pregnancy: ``weeks`` of gestation on the record date (None when the record
    does not tell), its ``trimester`` (1-3, None with the weeks), what shows it (``basis``, in
    words) and the facts cited."""

    weeks: int | None
    trimester: int | None
    basis: str
    refs: tuple[str, ...]
    # Weeks a Condition's text states without the day they refer to ("Pregnancy, 14 weeks"):
    # quoted in the phrase, never counted forward.
    stated_weeks: int | None = None
    stated_about: bool = False  # the text qualifies them ("about 5 weeks")

    @property
    def phrase(self) -> str:
        """ "pregnant, 16 weeks (second trimester)", "pregnant (the record says 14 weeks,
        undated)" or "pregnant (gestational age not recorded)"."""
        if (self.weeks is None or self.trimester is None) and self.stated_weeks is not None:
            about = "about " if self.stated_about else ""
            return f"pregnant (the record says {about}{self.stated_weeks} weeks, undated)"
        if self.weeks is None or self.trimester is None:
            return "pregnant (gestational age not recorded)"
        nth = ("first", "second", "third")[self.trimester - 1]
        return f"pregnant, {self.weeks} weeks ({nth} trimester)"


@dataclass(frozen=True, slots=True)
class Lactation:
    basis: str
    refs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Sign:
    day: date | None
    ref: str
    basis: str
    weeks: float | None = None  # gestational age on ``day`` when the sign states it


def _coded(codes: Iterable[Code], c: _Codes) -> bool:
    for code in codes:
        if code.system == SNOMED and code.code in c.snomed:
            return True
        if code.system in (ICD10, conditions.ICD10_WHO):
            flat = code.code.replace(".", "").upper()
            if any(flat.startswith(p.replace(".", "")) for p in c.icd10):
                return True
    return False


def _said(text: str, patterns: Iterable[str]) -> bool:
    low = text.lower()
    return any(re.search(p, low) for p in patterns)


def _words(pr: Condition) -> str:
    return " ".join((pr.text, *(c.display for c in pr.codes)))


def _is(pr: Condition, c: _Codes) -> bool:
    return _coded(pr.codes, c) or _said(_words(pr), c.text)


def _current(pr: Condition) -> bool:
    return (
        pr.active
        and pr.abatement is None
        and pr.verification
        not in (
            "refuted",
            "entered-in-error",
        )
    )


def _on(text: str) -> date | None:
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def is_pregnancy_test(o: Observation) -> bool:
    """A pregnancy test or status Observation, by its LOINC code or by its name."""
    d = PREGNANCY.pregnancy
    return o.loinc in (*d.status_loinc, *d.hcg_loinc) or _said(o.display, d.test_text)


def _hcg_positive(o: Observation) -> bool | None:
    """True, False or None (says nothing) for a pregnancy test or status Observation."""
    d = PREGNANCY.pregnancy
    if o.loinc in d.hcg_loinc and o.value is not None:
        return o.value >= d.positive_iu_l
    named = o.loinc not in d.status_loinc and _said(o.display, d.test_text)
    if named and o.value is not None:  # a number, by name, only in a unit of hCG
        unit = o.unit.strip().lower()
        return o.value >= d.positive_iu_l if unit in d.hcg_units else None
    if o.loinc not in d.status_loinc and not named:
        return None
    codes = {c.code for c in o.value_codes if c.system == SNOMED}
    if codes & set(d.positive_snomed) or _said(o.value_text.strip(), d.positive_text):
        return True
    if codes & set(d.negative_snomed) or _said(o.value_text.strip(), d.negative_text):
        return False
    return None


def _ga_weeks(o: Observation) -> float | None:
    if o.value is None:
        return None
    unit = o.unit.strip().lower()
    return o.value / DAYS_PER_WEEK if unit in ("d", "day", "days") else o.value


def stated_weeks(text: str) -> int | None:
    """Completed weeks of gestation a text states ("Pregnancy, 14 weeks" -> 14), by the
    ``weeks_text`` patterns; None when none matches or the number is past ``max_weeks``.

    >>> stated_weeks("Pregnancy, 14 weeks"), stated_weeks("Booking visit, 20+3 weeks pregnant")
    (14, 20)
    >>> stated_weeks("Period 6 weeks late"), stated_weeks("pregnant, 60 weeks")
    (None, None)
    """
    m = _weeks_match(text)
    return None if m is None else int(m.group(1))


def _weeks_match(text: str) -> re.Match[str] | None:
    d = PREGNANCY.pregnancy
    low = text.lower()
    for pattern in d.weeks_text:
        m = re.search(pattern, low)
        if m is not None and 0 < int(m.group(1)) <= d.max_weeks:
            return m
    return None


def _approximate(text: str) -> bool:
    """The weeks ``text`` states are qualified ("about 5 weeks"): an ``approx_words`` word
    stands between the start of the match and the number."""
    m = _weeks_match(text)
    if m is None:
        return False
    before = m.string[m.start() : m.start(1)]
    return any(
        re.search(rf"(?<![a-z]){re.escape(w)}", before) for w in PREGNANCY.pregnancy.approx_words
    )


def stated_lmp(text: str) -> date | None:
    """The first day of the last menstrual period a text states as a date ("LMP 2026-10-24"),
    by the ``lmp_text`` patterns; None when none matches or the date is not a date.

    >>> stated_lmp("Pregnancy; last menstrual period 2026-10-24"), stated_lmp("LMP unsure")
    (datetime.date(2026, 10, 24), None)
    """
    low = text.lower()
    for pattern in PREGNANCY.pregnancy.lmp_text:
        m = re.search(pattern, low)
        if m is not None and (day := _on(m.group(1))) is not None:
            return day
    return None


def _current_conditions(p: PatientProfile) -> Iterator[Condition]:
    d = PREGNANCY.pregnancy
    for pr in p.problems:
        if _current(pr) and not _is(pr, PREGNANCY.ended) and _is(pr, d):
            yield pr


def _signs(p: PatientProfile) -> Iterator[_Sign]:
    d = PREGNANCY.pregnancy
    for pr in _current_conditions(p):
        yield _Sign(pr.onset, pr.ref, f"a current Condition ({pr.text})")
        lmp = stated_lmp(_words(pr))
        if lmp is not None:  # Naegele: the gestation is counted from the LMP's first day
            yield _Sign(lmp, pr.ref, "the last menstrual period the Condition states", 0.0)
    for e in p.encounters:
        words = " ".join((e.kind, e.reason_text, *(c.display for c in (*e.types, *e.reasons))))
        if _coded((*e.types, *e.reasons), _Codes(snomed=d.encounter_snomed)) or _said(
            words, d.encounter_text
        ):
            said = stated_weeks(words) if e.start is not None else None
            yield _Sign(e.start, e.ref, "an antenatal visit", said)
    for o in p.observations:
        if _hcg_positive(o):
            yield _Sign(
                o.effective,
                o.ref,
                "a positive pregnancy test"
                if o.loinc not in d.status_loinc[:1]
                else "a pregnancy status of pregnant",
            )
        elif o.loinc in d.gestational_age_loinc and (w := _ga_weeks(o)) is not None:
            yield _Sign(o.effective, o.ref, "a recorded gestational age", w)
        elif o.loinc in d.lmp_loinc and (lmp := _on(o.value_text)) is not None:
            day = o.effective or lmp
            yield _Sign(day, o.ref, "the last menstrual period", (day - lmp).days / DAYS_PER_WEEK)
        elif o.loinc in d.edd_loinc and (edd := _on(o.value_text)) is not None:
            day = o.effective or edd
            weeks = (d.term_days - (edd - day).days) / DAYS_PER_WEEK
            yield _Sign(day, o.ref, "the estimated due date", weeks)


def _ends(p: PatientProfile) -> Iterator[date]:
    """Days on which the record says a pregnancy ended or was ruled out."""
    for pr in p.problems:
        if pr.verification in ("refuted", "entered-in-error"):
            continue
        if _is(pr, PREGNANCY.ended) and pr.onset is not None:
            yield pr.onset
        elif _is(pr, PREGNANCY.pregnancy) and pr.abatement is not None:
            yield pr.abatement
    for e in p.encounters:
        if e.start is not None and _coded((*e.types, *e.reasons), PREGNANCY.ended):
            yield e.start
    for o in p.observations:
        if o.effective is not None and _hcg_positive(o) is False:
            yield o.effective


def _trimester(weeks: int) -> int:
    """1, 2 or 3: the first trimester, and one more for each start passed."""
    t = PREGNANCY.pregnancy.trimester_from_weeks
    return 1 + sum(weeks >= start for start in (t.second, t.third))


def pregnancy_of(p: PatientProfile) -> Pregnancy | None:
    """The current pregnancy of a woman's record, or None."""
    if p.sex != "female":
        return None
    d = PREGNANCY.pregnancy
    ended = max(_ends(p), default=None)
    live: list[_Sign] = []
    weeks: float | None = None
    for s in sorted(_signs(p), key=lambda s: (s.day or p.as_of, s.ref), reverse=True):
        if s.day is not None and (s.day > p.as_of or (ended is not None and s.day <= ended)):
            continue
        since = 0 if s.day is None else (p.as_of - s.day).days
        if s.weeks is not None:
            now = s.weeks + since / DAYS_PER_WEEK
            if weeks is None:  # the latest dated gestational age governs
                if now > d.max_weeks:
                    return None
                weeks = now
        elif since > d.undated_days:
            continue
        live.append(s)
    if not live:
        return None
    whole = None if weeks is None else int(weeks)
    refs = set(s.ref for s in live)
    texts = [_words(pr) for pr in _current_conditions(p) if pr.ref in refs]
    quoted = [(stated_weeks(t), _approximate(t)) for t in texts]
    said = next((q for q in quoted if q[0] is not None), (None, False))
    return Pregnancy(
        whole,
        None if whole is None else _trimester(whole),
        "; ".join(dict.fromkeys(s.basis for s in live)),
        tuple(dict.fromkeys(s.ref for s in live)),
        said[0],
        said[1],
    )


def lactation_of(p: PatientProfile) -> Lactation | None:
    """Current breastfeeding in a woman's record, or None."""
    if p.sex != "female":
        return None
    d = PREGNANCY.lactation
    found: list[tuple[str, str]] = []
    for pr in p.problems:
        recent = pr.onset is None or 0 <= (p.as_of - pr.onset).days <= d.within_days
        if _current(pr) and recent and not _said(_words(pr), d.not_text) and _is(pr, d):
            found.append((pr.ref, f"a current Condition ({pr.text})"))
    for e in p.encounters:
        if e.start is None or not 0 <= (p.as_of - e.start).days <= d.within_days:
            continue
        if _said(" ".join((e.kind, e.reason_text)), d.encounter_text):
            found.append((e.ref, "a lactation visit"))
    if not found:
        return None
    return Lactation(
        "; ".join(dict.fromkeys(b for _, b in found)), tuple(dict.fromkeys(r for r, _ in found))
    )
