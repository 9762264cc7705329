"""The clinician summary: a plan in at most eight ranked lines a busy clinician can read.

Each line is one clinical problem in plan order (urgency class, priority class, then score):
its first, most urgent included activity, naming the later ones on the same medicine or problem;
the action with how soon to act ("urgent", "act soon", "routine"), a one-line reason (the
strongest supporting argument's first sentence), the key patient fact with its value and date
(the fact that decided it: never the very medicine the action changes when another is cited),
and the roles that proposed it; a line stays near ``LINE_CHARS`` characters, the rest is in
the detailed view. The heading names the patient (``Meta.patient``, words made at plan time)
and says how many actions there are and how many are shown. No FHIR ids, no strengths notation: the
full reasoning, with argument ids to contest, is the detailed view. ``fact_words`` turns the
cited facts of a profile into those words once, at plan time (kept in ``Meta.facts``), so a
stored deliberation summarises the same way later. ``coverage_lines`` says in one or two lines
what the plan checked and what it could not (``Meta.coverage``): silence is not safety.

Pure: frozen data in, text out; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache

from service.core.evaluation import Evaluation
from service.core.model import Argument, Coverage, CoverageGap, Deliberation, Option
from service.record.profile import Observation, PatientProfile
from service.record.vocabulary import LOINC_GROUPS, LOINC_SHORT_NAMES
from service.text.words import duration_words, ranking_label, timeframe_words, unit_words

__all__ = [
    "LINE_CHARS",
    "LINE_MAX",
    "MAX_LINES",
    "Summary",
    "SummaryLine",
    "UnitChange",
    "Wording",
    "coverage_detail",
    "coverage_lines",
    "display_names",
    "fact_words",
    "patient_words",
    "summarise",
    "summary_text",
]

MAX_LINES = 8
# A summary line reads at a glance: the reason is cut (at a word, with an ellipsis) so the line
# stays near this length; the whole reasoning is in the detailed view and the review app.
LINE_CHARS = 200
# ... and never longer than this: past it the later actions folded into the line are counted,
# not named, and then the reason gives way (it is in the detail); the fact never does.
LINE_MAX = 280
_REASON_FLOOR = 40
# A reason with less room than this is not shown at all: a stub of a clause explains nothing.
_REASON_MIN = 20
# A value further into the reason than this is detail, not what decided the line.
_VALUE_WITHIN = 90
# A number with the unit that follows it ("20 mg/mL", "9.9", "168/89 mmHg", "5 months",
# "71-year-old").
_VALUE = re.compile(
    r"(?:\d[\w.,/%-]*\d|\d)(?: ?(?:[mµnk]?g|m?mol|mL|mmHg|units|days?|weeks?|months?|years?)"
    r"(?:/[\w.]+)?\b|%|(?:-[a-z]+)+)?"
)
# A reference to a FHIR resource ("Observation/abc", "urn:uuid:...") never reaches the summary.
_FHIR_ID = re.compile(
    r"(?:urn:uuid:[0-9a-fA-F-]+|\b(?:Patient|Condition|MedicationRequest|Medication|Observation"
    r"|Encounter|AllergyIntolerance|Procedure|Practitioner|Organization|DiagnosticReport"
    r"|Immunization|CarePlan|Task|Provenance|Binary|Device)/[A-Za-z0-9\-.]{1,64})"
)
# SNOMED CT's semantic tags ("Anemia (disorder)"): a coding convention, not a clinician's words.
_SEMANTIC_TAG = re.compile(
    r" \((?:disorder|finding|situation|procedure|morphologic abnormality|event|observable entity"
    r"|regime/therapy|person|qualifier value)\)"
)
# RxNorm names a clinical drug "[quantity] ingredient strength [/ ingredient strength] dose form
# [brand]" ("24 HR metformin hydrochloride 500 MG Extended Release Oral Tablet"); the summary
# shows the ingredient and strength ("metformin hydrochloride 500 mg").
_RX_UNIT = r"(?:MG|MCG|UNT|MEQ|%)(?:/(?:MG|MCG|ML|UNT|ACTUAT|HR))?"
_RX_QUANTITY = r"\d+(?:\.\d+)?\s(?:HR|ML|ACTUAT)\s"
_RX_NAME = re.compile(
    rf"^(?:.*?{_RX_QUANTITY})?(?P<core>.+?\d+(?:\.\d+)?\s?{_RX_UNIT})(?:\s[A-Z\[].*)?$"
)
_RX_UNIT_WORDS = {"MG": "mg", "MCG": "mcg", "ML": "mL", "UNT": "units", "MEQ": "mEq"}
_RX_UNIT_WORDS |= {"ACTUAT": "dose", "HR": "h"}
# A LOINC long name is "component [property] in system --method": the component names it.
_LOINC_COMPONENT = re.compile(r" \[[^\]]*\].*$")
_LAB_NAMES = {
    code: LOINC_SHORT_NAMES[group]
    for group, codes in LOINC_GROUPS.items()
    if group in LOINC_SHORT_NAMES
    for code in codes
}
# Which cited fact best explains an activity: a measured value first, then a diagnosis, a
# medicine, a social fact, the person (age).
_FACT_ORDER = ("Observation/", "Condition/", "MedicationRequest/", "Patient/")


def _number(value: float) -> str:
    """A measured value as the summary prints it, never rounded across the precision the
    record states: two decimals at most below 20, one above, two significant digits below 1,
    so a suppressed TSH of 0.05 is not printed as 0.1 nor a creatinine of 1.25 as 1.2.

    >>> [_number(v) for v in (187.64, 7.25, 1.25, 0.48, 0.05, 0.0)]
    ['187.6', '7.25', '1.25', '0.48', '0.05', '0']
    """
    if value == 0 or abs(value) >= 1:
        text = f"{value:.2f}" if abs(value) < 20 else f"{value:.1f}"
        return text.rstrip("0").removesuffix(".")
    return f"{value:.2g}"


@dataclass(frozen=True, slots=True)
class SummaryLine:
    rank: int
    action: str
    priority: str  # priority class, "" for documents without one
    reason: str
    fact: str  # the key patient fact with value and date; "" when none is known
    proposed_by: tuple[str, ...]  # supporting roles, strongest first
    borderline: bool
    urgency_class: str = ""  # "" for documents without one
    # Titles of later actions on the same medicine or problem, folded into this line (one line
    # per problem: its first action is the most urgent; each keeps its reasons in the detail).
    also: tuple[str, ...] = ()
    timeframe: str = ""  # when to act (``TIMEFRAMES``), "" for documents without one

    @property
    def label(self) -> str:
        """When to act, in the clinician's words; the priority class in older documents."""
        return timeframe_words(self.timeframe) or self.priority

    def text(self) -> str:
        """The line as it reads: action — when — deciding fact — one clause of reason, then
        who proposed it, never over ``LINE_MAX``. The fact is always whole: the later actions
        folded in are counted rather than named where naming them would leave the reason no
        room (each is in the detail), then the reason gives way, and only then the action."""
        who = ", ".join(self.proposed_by) or "a clinician's decision"
        flag = " Borderline: needs your decision." if self.borderline else ""
        tail = f" Proposed by {who}.{flag}"
        also = _also(self.also)
        if also and len(self._head(also)) + len(tail) + _REASON_FLOOR > LINE_MAX:
            n = len(self.also)
            also = f"; also {n} related action{'s' if n != 1 else ''}"
        head = self._head(also)
        # the values the reason compares (two estimates that disagree) are kept whole too
        hard = LINE_MAX - len(head) - len(tail)
        keep = min(_value_end(self.reason), max(hard - 1, 0))
        room = min(max(LINE_CHARS - len(head) - len(tail), _REASON_FLOOR, keep + 1), hard)
        if room < _REASON_MIN and keep < _REASON_MIN:
            # no room for a clause: the line ends on its fact, the reason is in the detail,
            # and so are the proposers where even they would not fit
            short = head.removesuffix(" — ") + "."
            if len(short) + len(tail) <= LINE_MAX:
                return short + tail
            over = len(short) + len(flag) - LINE_MAX
            if over > 0:  # even the action is too long (a long quoted problem): it gives way
                action = _cut(self.action, len(self.action) - over)
                short = self._head(also, action).removesuffix(" — ") + "."
            return short + flag
        return head + _cut(self.reason, room, keep) + tail

    def _head(self, also: str, action: str = "") -> str:
        parts = [f"{self.rank}. {action or self.action}{also}", self.label, self.fact]
        return " — ".join(p for p in parts if p) + " — "


def _also(titles: tuple[str, ...]) -> str:
    return "".join(f"; also {a[:1].lower()}{a[1:]}" for a in titles)


def _value_end(text: str) -> int:
    """Where the values that justify the reason end: after the last number (with its unit)
    that starts in its first ``_VALUE_WITHIN`` characters (the eGFR, the dose, the date), with
    the parenthesis it stands in closed; 0 when it has none.

    >>> t = "Estimates disagree (reported eGFR 9.9, from creatinine 61) and so on."
    >>> t[: _value_end(t)]
    'Estimates disagree (reported eGFR 9.9, from creatinine 61)'
    """
    numbers = [m for m in _VALUE.finditer(text) if m.start() < _VALUE_WITHIN]
    if not numbers:
        return 0
    end = numbers[-1].end()
    if text.count("(", 0, end) > text.count(")", 0, end):
        close = text.find(")", end)
        end = close + 1 if close >= 0 else end
    return end


def _cut(text: str, room: int, keep: int = 0) -> str:
    """``text`` cut at a word to at most ``room`` characters, but never below
    ``_REASON_FLOOR`` nor before its first ``keep`` characters (the values that decided the
    line, when no fact stands before it), ending in an ellipsis when cut. Only a line's reason
    is cut: its deciding fact stands before it, whole.

    >>> _cut("Naproxen with clopidogrel in a man of 82 with a past peptic ulcer: the pair "
    ...      "more than doubles the risk of a stomach bleed.", 40)
    'Naproxen with clopidogrel in a man of…'
    """
    if len(text) <= room:
        return text
    head = text[: room - 1].rsplit(" ", 1)[0]
    if len(head) < keep:
        head = text[:keep]
    return head.rstrip(" ,;:") + "…"


@dataclass(frozen=True, slots=True)
class Summary:
    lines: tuple[SummaryLine, ...]
    more: int  # included activities beyond the first MAX_LINES
    awaiting: tuple[str, ...]  # titles of activities left out but flagged for a decision


@dataclass(frozen=True, slots=True)
class UnitChange:
    """A result shown in another unit than the record's: ``loinc`` codes of the quantity, the
    record's UCUM unit ``source``, the unit shown ``target`` and ``factor`` (shown value =
    recorded value x factor)."""

    loinc: frozenset[str]
    source: str
    target: str
    factor: float


@dataclass(frozen=True, slots=True)
class Wording:
    """How clinician text is worded where the plan is read: results in the locale's units and
    the locale's spellings ((written, shown) whole words). The default changes nothing."""

    units: tuple[UnitChange, ...] = ()
    spellings: tuple[tuple[str, str], ...] = ()

    def spell(self, text: str) -> str:
        """``text`` in the locale's spellings (whole words; a capital first letter kept).

        >>> Wording(spellings=(("anaemia", "anemia"),)).spell("Anaemia, not anaemias: anaemia.")
        'Anemia, not anaemias: anemia.'
        """
        if not self.spellings:
            return text
        table = {w: s for written, shown in self.spellings for w, s in _cases(written, shown)}
        return _spelling_pattern(tuple(table)).sub(lambda m: table[m[0]], text)

    def value(self, o: Observation) -> tuple[float | None, str]:
        """The observation's value and UCUM unit as shown."""
        for u in self.units:
            if o.loinc in u.loinc and o.unit == u.source and o.value is not None:
                return o.value * u.factor, u.target
        return o.value, o.unit


def _cases(written: str, shown: str) -> tuple[tuple[str, str], ...]:
    return ((written, shown), (written[:1].upper() + written[1:], shown[:1].upper() + shown[1:]))


@lru_cache(maxsize=8)
def _spelling_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    longest = "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
    return re.compile(rf"\b(?:{longest})\b")


def short_name(text: str) -> str:
    """A medicine's official RxNorm name as the summary prints it: ingredient and strength;
    ``text`` itself when it is not such a name.

    >>> short_name("24 HR metformin hydrochloride 500 MG Extended Release Oral Tablet")
    'metformin hydrochloride 500 mg'
    >>> short_name("1 ML DOCEtaxel 20 MG/ML Injection"), short_name("Diazepam [Valium]")
    ('DOCEtaxel 20 mg/mL', 'Diazepam [Valium]')
    """
    m = _RX_NAME.match(text)
    if m is None:
        return text
    return re.sub(rf"(?<=\d)\s?({_RX_UNIT})", _rx_unit_words, m["core"])


def _rx_unit_words(unit: re.Match[str]) -> str:
    return " " + "/".join(_RX_UNIT_WORDS.get(u, u) for u in unit[1].split("/"))


def display_names(profile: PatientProfile) -> tuple[tuple[str, str], ...]:
    """(full name, display name) of each medicine of the record whose name the summary
    shortens (``short_name``), longest first so that no name is cut inside a longer one.

    The short name's strength is the product's, not the dose: where every order of the name
    states one dose in the product's unit and it differs from the strength, the display name
    says the dose and the product ("prednisolone 10 mg per dose (5 mg tablets)"), so the
    strength is never read as what the patient takes."""
    doses: dict[str, set[tuple[float | None, str]]] = {}
    for m in profile.medications:  # one pass: a record may repeat one order thousands of times
        doses.setdefault(m.text, set()).add((m.dose_value, m.dose_unit.strip("{} ").lower()))
    names = {text: _with_dose(text, stated) for text, stated in doses.items()}
    pairs = [(n, s) for n, s in names.items() if s != n]
    return tuple(sorted(pairs, key=lambda p: (-len(p[0]), p[0])))


_STRENGTH = re.compile(r"^(?P<name>.+?) (?P<value>\d+(?:\.\d+)?) (?P<unit>mg|mcg)$")
_FORMS = (("tablet", "tablets"), ("capsule", "capsules"))
_COUNTED = frozenset({"tablet", "tab", "capsule", "cap"})


def _with_dose(text: str, doses: set[tuple[float | None, str]]) -> str:
    """``text``'s display name; ``doses``: the (value, unit) every order of it states."""
    short = short_name(text)
    m = _STRENGTH.match(short)
    if m is None:
        return short
    if len(doses) != 1:
        return short
    ((value, unit),) = doses
    if value is not None and unit.rstrip("s") in _COUNTED:  # "2 {tablet}": tablets of it
        value, unit = value * float(m["value"]), m["unit"]
    if value is None or unit != m["unit"] or value == float(m["value"]):
        return short
    form = next((plural for word, plural in _FORMS if word in text.lower()), "units")
    return f"{m['name']} {value:g} {unit} per dose ({m['value']} {unit} {form})"


def _date(d: object) -> str:
    return d.isoformat() if d is not None and hasattr(d, "isoformat") else ""


def _bp_words(readings: list[Observation]) -> str | None:
    """A blood pressure panel as a clinician writes it: "Blood pressure 189/102 mmHg on ..."
    (systolic first, whole mmHg), or None when the panel lacks either value."""
    by = {o.loinc: o for o in readings}
    sys_ = next((by[c] for c in LOINC_GROUPS["systolic_bp"] if c in by), None)
    dia = next((by[c] for c in LOINC_GROUPS["diastolic_bp"] if c in by), None)
    if sys_ is None or dia is None or sys_.value is None or dia.value is None:
        return None
    when = sys_.effective or dia.effective
    unit = unit_words(sys_.unit) or "mmHg"
    text = f"Blood pressure {sys_.value:.0f}/{dia.value:.0f} {unit}"
    return text + (f" on {_date(when)}" if when else "")


def fact_words(
    profile: PatientProfile, refs: Iterable[str], wording: Wording = Wording()
) -> tuple[tuple[str, str], ...]:
    """(reference, words with value and date) for each of ``refs`` the profile holds, results
    in ``wording``'s units and the words in its spellings."""
    words: dict[str, str] = {}
    shared: dict[str, list[Observation]] = {}
    for o in profile.observations:
        shared.setdefault(o.ref, []).append(o)
    for ref, obs in shared.items():
        bp = _bp_words(obs) if len(obs) > 1 else None
        if bp is not None:  # systolic and diastolic share one reference
            words[ref] = bp
            continue
        texts = []
        for o in obs:
            number, unit = wording.value(o)
            value = _number(number) if number is not None else o.value_text
            name = _LAB_NAMES.get(o.loinc) or _LOINC_COMPONENT.sub("", o.display)
            texts.append(f"{name} {value} {unit_words(unit)}".strip())
        when = next((o.effective for o in obs if o.effective), None)
        words[ref] = ", ".join(texts) + (f" on {_date(when)}" if when else "")
    for p in profile.problems:
        words[p.ref] = p.text + (f" (since {_date(p.onset)})" if p.onset else "")
    for m in profile.medications:
        prescribed = f" (prescribed {_date(m.authored)})" if m.authored else ""
        words[m.ref] = short_name(m.text) + prescribed
    for s in profile.social:
        words[s.ref] = s.text
    for e in profile.encounters:
        why = f" for {e.reason_text}" if e.reason_text else ""
        words[e.ref] = f"{e.kind}{why}" + (f" on {_date(e.start)}" if e.start else "")
    if profile.age is not None:
        words[profile.ref] = f"age {profile.age} on {_date(profile.plan_day)}"
    return tuple((r, wording.spell(words[r])) for r in dict.fromkeys(refs) if r in words)


# A record whose latest entry is older than this when the plan is made gets a plain warning: a
# plan is only as current as the record it was made from.
RECORD_STALE_DAYS = 90


def patient_words(profile: PatientProfile, created: str) -> str:
    """The heading a clinician expects: name, age, sex, the record's latest date and, when the
    record is older than ``RECORD_STALE_DAYS`` at ``created`` (an ISO time), a warning.

    >>> from datetime import date
    >>> p = PatientProfile("Patient/1", "female", date(1940, 5, 1), date(2019, 3, 2), name="Ann")
    >>> patient_words(p, "2026-01-01T00:00:00Z")  # doctest: +NORMALIZE_WHITESPACE
    'Ann, 78, female. Record up to 2019-03-02: 6 years older than this plan; the plan is
    only as current as the record.'
    """
    who = ", ".join(
        x for x in (profile.name, str(profile.age) if profile.age is not None else "") if x
    )
    out = f"{who or 'Patient'}, {profile.sex}. Record up to {profile.as_of.isoformat()}"
    try:
        made = date.fromisoformat(created[:10])
    except ValueError:
        return out + "."
    days = (made - profile.as_of).days
    if days <= RECORD_STALE_DAYS:
        return out + "."
    old = duration_words(days)
    return f"{out}: {old} older than this plan; the plan is only as current as the record."


def _clean(text: str, names: Iterable[tuple[str, str]] = ()) -> str:
    """``text`` without FHIR ids and SNOMED semantic tags, each long medicine name of ``names``
    (``Meta.names``) replaced by its display name."""
    text = _SEMANTIC_TAG.sub("", _FHIR_ID.sub("", text))
    for name, short in names:
        text = text.replace(name, short)
    return re.sub(r"\s+", " ", text).strip()


def _first_sentence(text: str, names: Iterable[tuple[str, str]]) -> str:
    text = _clean(text, names)
    m = re.search(r"(?<=[a-z0-9)%])\.\s+(?=[A-Z])", text)
    out = text[: m.start() + 1] if m else text
    return out if out.endswith((".", "!", "?")) else out + "."


def _line(
    rank: int, o: Option, ev: Evaluation, facts: dict[str, str], names: tuple[tuple[str, str], ...]
) -> SummaryLine:
    r = ev.option(o.id)
    live = [a for a in o.arguments if a.stance == "support" and a.status != "rejected"]
    live.sort(key=lambda a: (-(r.nodes[a.id].sigma or 0.0), a.id))
    roles = tuple(dict.fromkeys(a.role for a in live if a.role != "human"))
    if live:
        reason = _first_sentence(live[0].text, names)
    elif o.description:
        reason = _first_sentence(o.description, names)
    else:
        reason = "Included by a clinician's decision."
    reason = _unrepeated(reason, _clean(o.title, names))
    title = _clean(o.title, names)
    key = _key_fact(o, live, facts)
    fact = _clean(facts[key], names) if key is not None else ""
    if key is not None and key.startswith("MedicationRequest/"):
        # a medicine the line already names adds only its prescribing date
        medicine = fact.split(" (prescribed ", 1)[0].lower()
        if medicine in f"{title} {reason[:_REASON_FLOOR]}".lower():
            fact = ""
    fact = _unsaid(fact, title)
    return SummaryLine(
        rank,
        title,
        o.priority or "",
        reason,
        fact,
        roles,
        r.borderline,
        o.urgency_class or "",
        timeframe=o.timeframe or "",
    )


# The words of a problem's or a contact's fact (``fact_words``): the name or reason a line's action
# may already say, and the date it adds.
_PROBLEM_FACT = re.compile(r"(?P<said>.+) \((?P<kept>since [^()]+)\)")
_CONTACT_FACT = re.compile(r"(?P<kind>.+?) for (?P<said>.+) (?P<kept>on \d{4}-\d{2}-\d{2})")


def _unsaid(fact: str, action: str) -> str:
    """``fact`` less the problem or contact reason ``action`` already says, keeping its date.

    >>> _unsaid("Headache (since 2026-11-30)", "Not addressed: Headache (since 30 November 2026)")
    'since 2026-11-30'
    >>> _unsaid("Clinic review for Cough on 2026-11-30", "Not addressed by this plan: Cough")
    'Clinic review on 2026-11-30'
    >>> _unsaid("Headache (since 2026-11-30)", "Check blood pressure")
    'Headache (since 2026-11-30)'
    """
    said = action.lower()
    m = _PROBLEM_FACT.fullmatch(fact)
    if m is not None and m["said"].lower() in said:
        return m["kept"]
    m = _CONTACT_FACT.fullmatch(fact)
    if m is not None and m["said"].lower() in said:
        return f"{m['kind']} {m['kept']}"
    return fact


def _unrepeated(reason: str, title: str) -> str:
    """``reason`` without a lead-in that only repeats most of the title ("Liver tests on
    chemotherapy (last result 5 months ago): due every 3 months" under "Check liver tests on
    chemotherapy (last result 5 months ago)" keeps "Due every 3 months").

    >>> _unrepeated("Blood count on docetaxel: due every cycle.", "Check blood count on docetaxel")
    'Due every cycle.'
    """
    lead, colon, rest = reason.partition(": ")
    if colon and rest and lead.lower() in title.lower() and 2 * len(lead) >= len(title):
        return rest[:1].upper() + rest[1:]
    return reason


def _key_fact(o: Option, live: list[Argument], facts: dict[str, str]) -> str | None:
    """The reference of the fact that decided the line (None: none is known): among the
    strongest supporter's cited facts, a measured value first (``_FACT_ORDER``); then the other
    supporters' the same way. The medicine the action changes is what the line is about, not
    why: another cited fact (the partner drug of an interaction, the result) says why, when
    there is one. Only when no supporter cites a known fact, the option's own facts in the
    knowledge's order: what its trigger matched comes first there, context the criterion
    merely has at hand (a smoking status) last."""
    for cited in (a.facts for a in live):
        known = _known(cited, o, facts)
        ranked = sorted(
            known,
            key=lambda f: next(
                (k for k, p in enumerate(_FACT_ORDER) if f.startswith(p)), len(_FACT_ORDER)
            ),
        )
        if ranked:
            return ranked[0]
    known = _known(o.refs, o, facts)
    return known[0] if known else None


def _known(cited: Iterable[str], o: Option, facts: dict[str, str]) -> list[str]:
    known = [f for f in cited if f in facts]
    if len(known) > 1 and o.medication_ref in known:
        known.remove(o.medication_ref)
    return known


def summarise(d: Deliberation, ev: Evaluation, limit: int = MAX_LINES) -> Summary:
    options = {o.id: o for o in d.options}
    facts = dict(d.meta.facts)
    names = d.meta.names
    groups = _by_problem([options[oid] for oid in ev.plan], limit)
    lines = tuple(
        replace(_line(k, g[0], ev, facts, names), also=tuple(_clean(o.title, names) for o in g[1:]))
        for k, g in enumerate(groups, 1)
    )
    awaiting = tuple(
        _clean(o.title, names)
        for o in d.options
        if o.id not in ev.plan
        and ev.option(o.id).borderline
        and ev.option(o.id).decided_by != "human"
    )
    shown = sum(len(g) for g in groups)
    return Summary(lines, max(0, len(ev.plan) - shown), awaiting)


def _by_problem(included: list[Option], limit: int) -> list[list[Option]]:
    """The plan's actions in order, those on one medicine (the same ``medication_ref``) or for
    one clinical problem (the same ``treats``: the knowledge's own links) joined to the first,
    most urgent; at most ``limit`` groups."""
    groups: list[list[Option]] = []
    first: dict[str, list[Option]] = {}
    for o in included:
        keys = _problem_keys(o)
        group = next((first[k] for k in keys if k in first), None)
        if group is not None:
            group.append(o)
        elif len(groups) < limit:
            group = [o]
            groups.append(group)
        else:
            continue
        for k in keys:
            first.setdefault(k, group)
    return groups


def _problem_keys(o: Option) -> tuple[str, ...]:
    """What an action is about: its medicine and the problem it treats with others."""
    med = (f"medicine {o.medication_ref}",) if o.medication_ref is not None else ()
    return med + ((f"problem {o.treats}",) if o.treats is not None else ())


# What the coverage line says when nothing was found uncovered: what was verified, and no more
# (a check reading an item is not a finding that the item is safe).
NO_GAP = (
    "Every active medicine and condition, every problem of a recent encounter and every recent "
    "result is one some check of the knowledge reads."
)
UNCOVERED_LEAD = "No check covers"
# The one-line statement names this many uncovered results (after every other item, which it
# names all), then counts the rest: the line stays readable, the detail view names every one.
RESULTS_NAMED = 8


def _uncovered_names(gaps: Iterable[CoverageGap], results_named: int) -> str:
    """The uncovered items in their (risk) order, high-risk ones marked; results beyond
    ``results_named`` are counted, the detail view names them."""
    named: list[str] = []
    results = 0
    for g in gaps:
        if g.key == "uncovered-result":
            results += 1
            if results > results_named:
                continue
        named.append(f"{g.label} [high risk]" if g.high_risk else g.label)
    more = results - results_named
    if more > 0:
        named.append(f"{more} more result{'s' if more != 1 else ''} (named in the detail)")
    return "; ".join(named)


def coverage_lines(c: Coverage, results_named: int = RESULTS_NAMED) -> tuple[str, ...]:
    """The coverage statement in one to three lines, the same in every view: the checks that
    ran (and the knowledge version); what could not be checked, high-risk first; then each
    record item no check covers, by risk. ``results_named``: how many uncovered results the
    line names before counting the rest."""
    ran = [f.label for f in c.families if f.ran]
    first = f"Checked: {', '.join(ran) or 'nothing'} (knowledge {c.knowledge_version})."
    emptied = [f.label for f in c.families if f.site_emptied]
    not_run = [f"{f.label} ({f.why})" for f in c.families if not f.ran and not f.site_emptied]
    if emptied:
        # Said apart and first: the site chose not to run these, no record fact is missing.
        first += " Retired by the site's knowledge, not run: " + "; ".join(emptied) + "."
    if not_run:
        first += " Not run: " + "; ".join(not_run) + "."
    if not c.gaps:
        return (first + " " + NO_GAP,)
    out = [first]
    gaps = sorted((g for g in c.gaps if g.kind != "uncovered"), key=lambda g: not g.high_risk)
    if gaps:
        lead = "NOT CHECKED, needs a human" if c.high_risk else "Not checked"
        outside = [g.label for g in gaps if g.kind == "out-of-scope"]
        rest = [g.label for g in gaps if g.kind != "out-of-scope"]
        parts = [f"outside the validated population ({'; '.join(outside)})"] if outside else []
        out.append(f"{lead}: " + "; ".join(parts + rest) + ". See the detail for what to check.")
    # An item another gap names already (a presenting problem no line addresses) is not named
    # twice; the detail keeps both.
    named = {r for g in c.gaps if g.kind != "uncovered" for r in g.refs}
    items = [g for g in c.gaps if g.kind == "uncovered" and not (g.refs and set(g.refs) <= named)]
    if items:
        out.append(f"{UNCOVERED_LEAD}: {_uncovered_names(items, results_named)}.")
    return tuple(out)


def coverage_detail(c: Coverage) -> tuple[str, ...]:
    """The whole coverage statement, one line per item, for the detailed views."""
    out = [f"Knowledge: {c.knowledge_version}; built and validated for {c.population}."]
    out += [f"{f.label}: " + ("ran" if f.ran else f"not run ({f.why})") for f in c.families]
    out += [
        f"{'[high risk] ' if g.high_risk else ''}{g.label}: {g.check}."
        for g in sorted((g for g in c.gaps if g.kind != "uncovered"), key=lambda g: not g.high_risk)
    ]
    out += [
        f"{'[high risk] ' if g.high_risk else ''}{UNCOVERED_LEAD} {g.label}: {g.check}."
        for g in c.gaps
        if g.kind == "uncovered"
    ]
    if not c.gaps:
        out.append(
            "No gap found: in scope, every medicine recognised, no fact missing, and no "
            "record item outside what the checks read."
        )
    out += [f"Criterion {r.criterion} retired by the site: {r.reason}." for r in c.retired]
    if c.claims_checked:
        out.append(
            f"Statements checked against the record: {c.claims_checked}; "
            + (
                f"{len(c.withheld)} finding{'s' if len(c.withheld) != 1 else ''} not said, "
                "the record did not bear out what it rested on."
                if c.withheld
                else "none withheld."
            )
        )
    return tuple(out)


def summary_text(d: Deliberation, ev: Evaluation, summary: Summary | None = None) -> str:
    """The summary as plain text: a heading, the ranked lines, then what awaits a decision.
    ``summary``: ``summarise(d, ev)`` where the caller has it already."""
    s = summary if summary is not None else summarise(d, ev)
    n = len(ev.plan)
    shown = len(s.lines)
    out = [d.meta.patient] if d.meta.patient else []
    out.append(
        f"Care plan proposal, version {d.version}: {n} action{'s' if n != 1 else ''} in "
        f"{shown} line{'s' if shown != 1 else ''} shown. {ranking_label()}."
        if n
        else f"Care plan proposal, version {d.version}: no action cleared the threshold"
    )
    out += [line.text() for line in s.lines]
    if s.more:
        out.append(f"{s.more} more in the detailed view.")
    if s.awaiting:
        out.append("Awaiting your decision (borderline, not included): " + "; ".join(s.awaiting))
    if d.meta.coverage is not None:
        out += coverage_lines(d.meta.coverage)
    return "\n".join(out)
