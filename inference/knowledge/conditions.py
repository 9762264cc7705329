"""Condition knowledge as data: groups of SNOMED CT / ICD-10-CM codes and text patterns.

Every SNOMED code below was checked against the fixture bundles or is a well-known concept id.
``domains`` say which professional expertise a problem belongs to (used for votes and panel
matching); ``kind`` says how the attending treats an active entry: ``chronic`` (a real problem),
``acute`` (self-limiting; stale when still "active" long after onset), ``history`` (a "history
of" situation, not a current problem), ``noise`` (a known Synthea artefact), ``sdoh`` (a social
finding, not a medical diagnosis). Tables only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from service.core.profile import ICD10, SNOMED, Problem

__all__ = [
    "CONDITION_GROUPS",
    "GROUPS_BY_KEY",
    "SDOH_NEEDS",
    "ConditionGroup",
    "classify",
    "is_sdoh_need",
]


@dataclass(frozen=True, slots=True)
class ConditionGroup:
    key: str
    label: str
    kind: str  # chronic | acute | history | noise | sdoh
    domains: tuple[str, ...]
    snomed: tuple[str, ...] = ()
    icd10: tuple[str, ...] = ()  # code prefixes
    text: tuple[str, ...] = ()  # lower-case regex fragments matched on the problem text


CONDITION_GROUPS: tuple[ConditionGroup, ...] = (
    ConditionGroup(
        "history",
        "history of",
        "history",
        ("general",),
        ("428251008", "703151001", "429007001", "267020005"),
        (),
        (r"^history of",),
    ),
    ConditionGroup(
        "miscarriage",
        "miscarriage in first trimester",
        "noise",
        ("general",),
        ("19169002",),
        (),
        (r"miscarriage",),
    ),
    ConditionGroup(
        "dementia",
        "dementia",
        "chronic",
        ("cognition", "neuro"),
        ("26929004", "52448006", "230270009"),
        ("F01", "F02", "F03", "G30"),
        (r"alzheimer", r"dementia"),
    ),
    ConditionGroup(
        "diabetic-kidney",
        "diabetic kidney disease",
        "chronic",
        ("renal", "metabolic"),
        ("127013003", "90781000119102"),
        ("E11.2",),
        (r"diabetic renal", r"diabetic kidney", r"microalbuminuria"),
    ),
    ConditionGroup(
        "ckd",
        "chronic kidney disease",
        "chronic",
        ("renal",),
        ("431855005", "431856006", "433144002", "431857002", "433146000", "709044004"),
        ("N18",),
        (r"chronic kidney disease",),
    ),
    ConditionGroup(
        "diabetes",
        "diabetes",
        "chronic",
        ("metabolic",),
        ("44054006", "73211009", "46635009", "422034002", "1551000119108", "368581000119106"),
        ("E10", "E11"),
        (r"\bdiabet",),
    ),
    ConditionGroup(
        "prediabetes",
        "prediabetes",
        "chronic",
        ("metabolic",),
        ("15777000",),
        ("R73.03",),
        (r"prediabetes",),
    ),
    ConditionGroup(
        "hypertension",
        "hypertension",
        "chronic",
        ("cardiovascular",),
        ("38341003", "59621000"),
        ("I10",),
        (r"hypertension",),
    ),
    ConditionGroup(
        "af",
        "atrial fibrillation",
        "chronic",
        ("cardiovascular",),
        ("49436004",),
        ("I48",),
        (r"atrial fibrillation",),
    ),
    ConditionGroup(
        "heart-failure",
        "heart failure",
        "chronic",
        ("cardiovascular",),
        ("88805009", "84114007", "42343007"),
        ("I50",),
        (r"heart failure",),
    ),
    ConditionGroup(
        "stroke",
        "stroke",
        "chronic",
        ("cardiovascular", "neuro", "function"),
        ("230690007", "422504002"),
        ("I63",),
        (r"\bstroke\b", r"cerebral infarct"),
    ),
    ConditionGroup(
        "chd",
        "coronary heart disease",
        "chronic",
        ("cardiovascular",),
        ("53741008", "22298006", "414545008"),
        ("I25",),
        (r"coronary", r"myocardial infarction"),
    ),
    ConditionGroup(
        "cardiac-arrest",
        "cardiac arrest",
        "acute",
        ("cardiovascular",),
        ("410429000",),
        ("I46",),
        (r"cardiac arrest",),
    ),
    ConditionGroup(
        "osteoporosis",
        "osteoporosis",
        "chronic",
        ("musculoskeletal", "falls"),
        ("64859006",),
        ("M80", "M81"),
        (r"osteoporosis(?!.*fracture)",),
    ),
    ConditionGroup(
        "fracture",
        "fracture",
        "acute",
        ("musculoskeletal", "falls"),
        ("16114001", "65966004", "443165006", "263102004", "5913000", "33737001"),
        ("S72", "S52", "S82"),
        (r"fracture",),
    ),
    ConditionGroup(
        "fall",
        "fall",
        "acute",
        ("falls", "function"),
        ("217082002",),
        ("W19",),
        (r"\bfall\b", r"\bfalls\b"),
    ),
    ConditionGroup(
        "copd",
        "chronic obstructive pulmonary disease",
        "chronic",
        ("respiratory",),
        ("185086009", "13645005", "87433001"),
        ("J44",),
        (r"chronic obstructive", r"\bcopd\b", r"emphysema"),
    ),
    ConditionGroup(
        "epilepsy",
        "epilepsy or seizure disorder",
        "chronic",
        ("neuro",),
        ("84757009", "128613002"),
        ("G40",),
        (r"epilep", r"seizure disorder"),
    ),
    ConditionGroup(
        "depression",
        "depression",
        "chronic",
        ("mental",),
        ("35489007", "370143000", "36923009"),
        ("F32", "F33"),
        (r"depress",),
    ),
    ConditionGroup(
        "anxiety", "anxiety", "chronic", ("mental",), ("197480006",), ("F41",), (r"anxiety",)
    ),
    ConditionGroup(
        "hypothyroidism",
        "hypothyroidism",
        "chronic",
        ("endocrine",),
        ("83664006", "40930008"),
        ("E03",),
        (r"hypothyroid",),
    ),
    ConditionGroup(
        "hyperlipidemia",
        "hyperlipidaemia",
        "chronic",
        ("cardiovascular", "metabolic"),
        ("55822004", "302870006"),
        ("E78",),
        (r"hyperlipid", r"hypertriglycerid", r"hypercholesterol"),
    ),
    ConditionGroup(
        "metabolic-syndrome",
        "metabolic syndrome",
        "chronic",
        ("metabolic",),
        ("237602007",),
        (),
        (r"metabolic syndrome",),
    ),
    ConditionGroup(
        "hyperglycemia",
        "hyperglycaemia",
        "chronic",
        ("metabolic",),
        ("80394007",),
        (),
        (r"hyperglyc",),
    ),
    ConditionGroup(
        "anemia",
        "anaemia",
        "chronic",
        ("general",),
        ("271737000",),
        ("D64",),
        (r"anemia", r"anaemia"),
    ),
    ConditionGroup(
        "osteoarthritis",
        "osteoarthritis",
        "chronic",
        ("musculoskeletal",),
        ("239872002", "239873007", "396275006"),
        ("M15", "M16", "M17"),
        (r"osteoarthritis",),
    ),
    ConditionGroup(
        "obesity",
        "obesity",
        "chronic",
        ("nutrition", "metabolic"),
        ("162864005", "414916001"),
        ("E66",),
        (r"obesity",),
    ),
    ConditionGroup(
        "cancer",
        "cancer",
        "chronic",
        ("oncology",),
        ("126906006", "92691004", "109838007", "363406005"),
        ("C",),
        (r"neoplasm", r"carcinoma", r"cancer"),
    ),
    ConditionGroup(
        "brain-injury",
        "brain injury",
        "chronic",
        ("neuro", "cognition"),
        ("275272006",),
        (),
        (r"brain damage", r"brain injury"),
    ),
    ConditionGroup(
        "sdoh-need",
        "social need",
        "sdoh",
        ("social",),
        (
            "73595000",
            "706893006",
            "422650009",
            "423315002",
            "266948004",
            "105531004",
            "32911000",
            "424393004",
            "5251000175109",
            "160903007",
        ),
        ("Z55", "Z56", "Z59", "Z60", "Z63", "Z65"),
        (r"\(finding\)$",),
    ),
    ConditionGroup(
        "acute-infection",
        "acute infection",
        "acute",
        ("general",),
        ("74400008", "47693006", "36971009", "444814009", "195662009", "43878008", "10509002"),
        (),
        (
            r"^sinusitis",
            r"viral sinusitis",
            r"pharyngitis",
            r"appendicitis",
            r"rupture of appendix",
            r"sore throat",
            r"acute bronchitis",
        ),
    ),
    ConditionGroup(
        "injury",
        "injury",
        "acute",
        ("musculoskeletal",),
        ("44465007", "39848009", "403190006", "62106007", "62564004", "307731004"),
        (),
        (r"sprain", r"whiplash", r"burn", r"concussion", r"injury of"),
    ),
    ConditionGroup(
        "chronic-sinusitis",
        "chronic sinusitis",
        "chronic",
        ("respiratory",),
        ("40055000",),
        (),
        (r"chronic sinusitis",),
    ),
    ConditionGroup(
        "allergic-rhinitis",
        "allergic rhinitis",
        "chronic",
        ("respiratory",),
        ("446096008",),
        (),
        (r"allergic rhinitis",),
    ),
    ConditionGroup(
        "uti-recurrent",
        "recurrent urinary tract infection",
        "chronic",
        ("general",),
        ("197927001",),
        (),
        (r"urinary tract infection",),
    ),
)

# Social findings that are needs (the rest, e.g. employment, are context, not needs).
SDOH_NEEDS: dict[str, str] = {
    "73595000": "stress",
    "706893006": "intimate partner abuse",
    "422650009": "social isolation",
    "423315002": "limited social contact",
    "266948004": "criminal record",
    "105531004": "housing insecurity",
    "32911000": "homelessness",
    "424393004": "lack of transportation",
}
_NEED_TEXT = re.compile(
    r"stress|abuse|isolation|social contact|criminal|housing|homeless|transport"
)

_GROUP_PATTERNS = tuple((g, tuple(re.compile(t) for t in g.text)) for g in CONDITION_GROUPS)


@lru_cache(maxsize=4096)
def _classify(codes: tuple[tuple[str, str], ...], text: str) -> tuple[str, ...]:
    low = text.lower().strip()
    found: list[str] = []
    for g, pats in _GROUP_PATTERNS:
        hit = any(
            (s == SNOMED and c in g.snomed) or (s == ICD10 and c.startswith(g.icd10 or ("\0",)))
            for s, c in codes
        ) or any(p.search(low) for p in pats)
        if hit:
            found.append(g.key)
    # The first matching special kind wins over disease groups: "History of cardiac arrest"
    # is history, not a cardiac arrest; a "(finding)" is social unless a disease group matched.
    if "history" in found:
        return ("history",)
    if "sdoh-need" in found and len(found) > 1:
        found.remove("sdoh-need")
    if "diabetic-kidney" in found and "ckd" not in found:
        found.append("ckd")
    return tuple(found)


def classify(problem: Problem) -> tuple[str, ...]:
    """Group keys of one Condition, in table order (codes and text both count)."""
    codes = tuple((c.system, c.code) for c in problem.codes)
    return _classify(codes, problem.text)


def is_sdoh_need(problem: Problem) -> bool:
    if any(c.code in SDOH_NEEDS for c in problem.codes):
        return True
    return bool(_NEED_TEXT.search(problem.text.lower())) and "(finding)" in problem.text.lower()


GROUPS_BY_KEY: dict[str, ConditionGroup] = {g.key: g for g in CONDITION_GROUPS}
