"""Which Conditions are social or functional findings rather than problems, and of what kind.

Private to ``fhir_mapping``. Synthea (and many EHRs) record social determinants as Conditions
with a SNOMED CT "(finding)" or "(situation)" concept: "Stress (finding)", "Lives alone",
"History of fall". They describe the person's circumstances, not a disease to treat, so the
profile carries them as ``SocialFact`` and keeps them out of ``problems``. A clinical finding
such as "Body mass index 30+ - obesity (finding)" matches no rule and stays a problem.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from service.record.profile import Code
from service.record.vocabulary import SNOMED

__all__ = ["social_kind"]

# SNOMED CT concepts seen in the project's fixtures (Synthea SDOH findings).
_BY_CODE: Final[dict[str, str]] = {
    "73595000": "stress",
    "422650009": "social_isolation",
    "423315002": "limited_social_contact",
    "266948004": "criminal_record",
    "706893006": "intimate_partner_abuse",
    "160903007": "employment",
    "5251000175109": "education",
}

# Text rules, tried in order on the display text without its semantic tag, lower case.
_BY_TEXT: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(p), kind)
    for p, kind in (
        (r"\b(lives|living) alone\b", "lives_alone"),
        (r"\bsocial isolation\b", "social_isolation"),
        (r"\blimited social contact\b", "limited_social_contact"),
        (r"^(chronic )?stress$", "stress"),
        (r"\bunemploy", "unemployed"),
        (r"\bnot in labou?r force\b", "not_in_labor_force"),
        (r"\b(full|part)[- ]time employment\b", "employment"),
        (r"\bcriminal record\b", "criminal_record"),
        (r"\bviolence in the environment\b", "violence_in_environment"),
        (r"\b(intimate partner|domestic) (abuse|violence)\b", "intimate_partner_abuse"),
        (
            r"^(history of (a )?falls?|h/o:? falls?|(recurrent |repeated |frequent |accidental )?"
            r"falls?|(at )?risk (of|for) falls?|fall risk)$",
            "fall_history",
        ),
        (r"\b(caregiver|carer)\b", "caregiver"),
        (r"\b(homeless|housing)\b", "housing"),
        (r"\btransport", "transport"),
        (r"\breceived\b.*\b(education|school)\b|\bhigh school\b", "education"),
        (r"\b(misuse of drugs|drug abuse|unhealthy alcohol)", "substance_use"),
        (r"\b(refugee|armed forces|incarcerat|food insecurity|financial)\b", "sdoh"),
    )
)

_TAG: Final = re.compile(r"\s*\(([a-z /]+)\)\s*$")
# Semantic tags under which a social reading is plausible; "(disorder)" never is.
_SOCIAL_TAGS: Final = frozenset({"finding", "situation", "event", "person", "social concept"})


def _split_tag(text: str) -> tuple[str, str]:
    m = _TAG.search(text)
    if m is None:
        return text.strip(), ""
    return text[: m.start()].strip(), m.group(1)


def social_kind(codes: Iterable[Code], text: str) -> str | None:
    """The ``SocialFact.kind`` for a Condition, or None when it is a clinical problem."""
    displays = [text] if text else []
    for c in codes:
        if c.system == SNOMED and c.code in _BY_CODE:
            return _BY_CODE[c.code]
        if c.display:
            displays.append(c.display)
    for d in displays:
        core, tag = _split_tag(d)
        if tag and tag not in _SOCIAL_TAGS:
            continue
        low = core.lower()
        if low.startswith("history of") and "fall" not in low:
            continue  # "History of appendectomy": past history, a problem-list fact
        for pattern, kind in _BY_TEXT:
            if pattern.search(low):
                return kind
    return None
