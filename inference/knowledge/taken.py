"""Medicines the patient takes that no prescription here orders, by one rule
(``data/adherence.yaml``, ``taken``).

``with_taken`` returns the profile with each MedicationStatement that records a medicine as taken
(status active or intended), whose medicine the drug table knows and that no active
MedicationRequest prescribes (the same ingredients), added to ``medications`` as a medicine like
any other: every check (interactions, drug-disease, duplicates, burden counts, dose ceilings
where a dose is stated, coverage) reads it. It keeps the statement's reference and says how the
record has it (``Medication.taken``: bought over the counter, reported by the patient, or only
recorded), so every line about it can say it is not prescribed here. A medicine also prescribed
stays the prescription's (no double counting); a statement that it is not taken stays
``adherence``'s. Pure and idempotent: no I/O after import, no clock.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Final

from service.record.profile import Medication, MedicationStatement, PatientProfile

from . import drugs
from .actions import action_kind
from .adherence import ADHERENCE, AdherenceFile
from .analysis import Proposal

__all__ = ["ORIGINS", "origin_words", "said_as_taken", "taken_medicine", "with_taken"]

# How the record has a medicine taken but not prescribed here (``Medication.taken``), in the
# words every line about it uses.
ORIGINS: Final = {
    "over-the-counter": "bought over the counter, not prescribed here",
    "patient": "reported as taken by the patient, not prescribed here",
    "recorded": "recorded as taken, not prescribed here",
}
# Action kinds that change what the patient takes: for a medicine not prescribed here the
# clinician advises the patient, as no prescription of this organisation can be changed.
_ADVISED: Final = frozenset(
    {"stop-now", "stop-at-review", "hold", "taper", "lower", "raise", "switch", "end-course"}
)


def origin_words(m: Medication) -> str:
    """How a line names where ``m`` comes from ("" for a prescription)."""
    return ORIGINS.get(m.taken, ORIGINS["recorded"]) if m.taken else ""


def said_as_taken(proposals: tuple[Proposal, ...], p: PatientProfile) -> tuple[Proposal, ...]:
    """Each line acting on a medicine recorded as taken, not prescribed here, saying so: an
    action that changes what the patient takes is advice to the patient ("Advise the patient
    to stop ibuprofen (bought over the counter, not prescribed here)"), any other names where
    the medicine comes from; its description says it too. Other lines as they were."""
    taken = {m.ref: m for m in p.medications if m.taken}
    if not taken:
        return proposals
    return tuple(
        _as_taken(x, taken[x.medication_ref]) if x.medication_ref in taken else x for x in proposals
    )


def _as_taken(x: Proposal, m: Medication) -> Proposal:
    words = origin_words(m)
    kind = action_kind(x.id, x.urgency_class, x.action or None)
    lead = (
        f"Advise the patient to {x.title[:1].lower()}{x.title[1:]}" if kind in _ADVISED else x.title
    )
    return replace(
        x,
        title=f"{lead} ({words})",
        description=f"{x.description} {m.text}: {words}.".strip(),
    )


def _says(text: str, phrases: tuple[str, ...]) -> bool:
    low = " ".join(text.lower().split())
    return any(re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", low) for w in phrases)


def _origin(s: MedicationStatement, data: AdherenceFile) -> str:
    said = " ".join((s.reason, s.text, *s.categories))
    if _says(said, data.taken.over_the_counter.phrases):
        return "over-the-counter"
    if s.informant in data.taken.informants.values:
        return "patient"
    return "recorded"


def taken_medicine(s: MedicationStatement, data: AdherenceFile = ADHERENCE) -> Medication:
    """The statement ``s`` read as a medicine taken (whatever its status: the caller chooses)."""
    return Medication(
        ref=s.ref,
        text=s.text,
        codes=s.codes,
        status=s.status,
        intent="",
        authored=None,
        dose=s.dose,
        frequency=s.frequency,
        route=s.route,
        dose_value=s.dose_value,
        dose_unit=s.dose_unit,
        times_per_day=s.times_per_day,
        note=s.reason,
        taken=_origin(s, data),
    )


@lru_cache(maxsize=64)
def _head(text: str) -> str:
    """The first word of a medicine's name, lower case: how two unknown entries are matched."""
    return text.lower().split()[0] if text.split() else ""


def with_taken(p: PatientProfile) -> PatientProfile:
    """``p`` with the medicines its statements record as taken and nothing prescribes; ``p``
    itself when there is none (so the cache and every later identity check hold)."""
    held = {m.ref for m in p.medications}
    spoken = {n for m in p.active_medications for n in drugs.identify(m)}
    words = {_head(m.text) for m in p.active_medications}
    added: list[Medication] = []
    for s in reversed(p.statements):  # the latest statement of a medicine speaks for it
        m = taken_medicine(s)
        names = drugs.identify(m)
        if names and set(names) <= spoken:
            continue  # prescribed, or a later statement spoke for it
        if not names and _head(m.text) in words:
            continue  # unknown to the table, and named like a medicine already listed
        spoken.update(names)
        words.add(_head(m.text))
        # one the table does not know is still a medicine taken: no check reads it, and the
        # coverage statement names it as such (it must not vanish from the plan)
        if s.ref not in held and s.status in ADHERENCE.taken.statuses.values:
            added.append(m)
    if not added:
        return p
    return replace(p, medications=(*p.medications, *reversed(added)))
