"""The patient version of a plan: what the patient is told, in plain words, beside the
clinician summary (``service.text.summary``), never instead of it.

It tells only the activities the plan includes now (a rejected or contested-out activity is not
told), each in the wording (one line or more) rendered at plan time from the knowledge's patient
templates
(``Meta.patient_wordings``), grouped as the patient asks: what changes in my medicines, which
tests, who do I see, what do I watch for. An activity without a wording (a clinician's added
activity, a document written before wordings existed) gets a generic line that names no number,
dose or date. Nothing here rewrites clinical text: the patient never reads an argument or a title.

Pure: frozen data in, text out; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from service.core.evaluation import Evaluation
from service.core.model import Deliberation, Option, PatientWording
from service.text.words import ranking_label, timeframe_words

__all__ = [
    "SECTIONS",
    "PatientSection",
    "PatientVersion",
    "generic_wording",
    "patient_text",
    "patient_version",
]

# (key, heading) in the order the patient reads them.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("medicines", "Changes to your medicines"),
    ("tests", "Tests"),
    ("visits", "Who to see"),
    ("other", "Other care"),
    ("watch", "What to watch for and when to call"),
)
TITLE = "Your care plan"
INTRO = (
    "Your care team made this plan with you in mind. Do not stop or change a medicine "
    "before you talk with them."
)
# The last line of "what to watch for" when the knowledge gave none for the whole plan (a
# document written before wordings existed); the knowledge's own plan-wide lines replace it.
ALWAYS_WATCH = "Call your care team if you feel worse or have a question."
EMPTY = "Your care team found nothing in your plan that needs to change now."
# The sections whose plan-wide lines are said as lines; the others (intro, title, headings,
# the empty plan's line) word the frame, where the knowledge gives them.
_LINE_SECTIONS: Final = frozenset(key for key, _ in SECTIONS)
# What the generic line is about, by the activity's category: no clinical text is rewritten.
_TOPIC: dict[str, tuple[str, str]] = {
    "immediate-safety": ("medicines", "a change to keep you safe"),
    "medication": ("medicines", "one of your medicines"),
    "monitoring": ("tests", "a test to check on your health"),
    "mental-health": ("visits", "how you feel and your mood"),
    "rehabilitation": ("other", "help to keep you moving and safe at home"),
    "caregiver-support": ("other", "support for you and the people who care for you"),
    "referral": ("visits", "seeing another member of your care team"),
    "follow-up": ("visits", "a follow-up visit"),
}


@dataclass(frozen=True, slots=True)
class PatientSection:
    key: str
    heading: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PatientVersion:
    title: str
    intro: str
    sections: tuple[PatientSection, ...]  # only the sections with something to say
    # Each section lists its steps soonest first (the plan's order), and says so.
    ranked: bool = False

    def text(self) -> str:
        out = [self.title, self.intro]
        if self.sections and self.ranked:
            out.append(f"{ranking_label()}.")
        for s in self.sections:
            out.append(f"{s.heading}:")
            out += [f"- {line}" for line in s.lines]
        return "\n".join(out)


def generic_wording(option: Option) -> PatientWording:
    """The safe line for an activity with no patient template: its topic, from its category."""
    section, topic = _TOPIC.get(option.category, ("other", "a change to your care"))
    return PatientWording(option.id, section, f"Your care team will talk with you about {topic}.")


def patient_version(d: Deliberation, ev: Evaluation) -> PatientVersion:
    """The included activities of this version in the patient's words, by section."""
    options = {o.id: o for o in d.options}
    words: dict[str, list[PatientWording]] = {}
    for w in d.meta.patient_wordings:
        if w.option_id:
            words.setdefault(w.option_id, []).append(w)
    chosen = [
        _timed(w, options[oid])
        for oid in ev.plan
        for w in words.get(oid) or [generic_wording(options[oid])]
    ]
    # Plan-wide lines (no option id): said whatever the plan holds; the intro among them (a
    # child's plan speaks to the parent) replaces the one every plan has.
    plan_wide = [w for w in d.meta.patient_wordings if not w.option_id]
    frame = {w.section: w.text for w in plan_wide if w.section not in _LINE_SECTIONS}
    intro = frame.get("intro", INTRO)
    chosen += [w for w in plan_wide if w.section in _LINE_SECTIONS] or [
        PatientWording("", "watch", ALWAYS_WATCH)
    ]
    lines: dict[str, list[str]] = {key: [] for key, _ in SECTIONS}
    for w in chosen:
        target = lines[w.section] if w.section in lines else lines["other"]
        if w.text not in target:
            target.append(w.text)
        if w.watch and w.watch not in lines["watch"]:
            lines["watch"].append(w.watch)
    if not ev.plan:
        lines["other"].append(frame.get("empty", EMPTY))
    sections = tuple(
        PatientSection(key, frame.get(f"heading-{key}", heading), tuple(lines[key]))
        for key, heading in SECTIONS
        if lines[key]
    )
    return PatientVersion(frame.get("title", TITLE), intro, sections, bool(ev.plan))


def _timed(w: PatientWording, option: Option) -> PatientWording:
    """The wording led by when to do it ("Within 3 days: ..."), where the activity states it;
    the watch line, which is not a step to take, stays as it is."""
    when = timeframe_words(option.timeframe, patient=True)
    if not when:
        return w
    return PatientWording(
        w.option_id, w.section, f"{when[:1].upper()}{when[1:]}: {w.text}", w.watch
    )


def patient_text(d: Deliberation, ev: Evaluation) -> str:
    """The patient version as plain text (``canoe plan --for patient``, the FHIR payload)."""
    return patient_version(d, ev).text()
