"""Drug knowledge as data: ingredients, their classes, and how to recognise them in a record.

A MedicationRequest is recognised by its RxNorm code (the codes below are the ones our Synthea
fixtures carry, checked against their display text) and, independently, by ingredient or brand
names found in its text (Synthea writes "Diazepam [Valium]", "Simvistatin 10 MG" (sic),
"Lasix 40mg"). Tables only: no rules, no patient logic, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from service.core.profile import RXNORM, Medication

__all__ = ["CLASS_LABELS", "DRUGS", "Drug", "drug", "identify"]


@dataclass(frozen=True, slots=True)
class Drug:
    """One ingredient. ``names`` are lower-case words or phrases matched on word boundaries."""

    name: str
    classes: tuple[str, ...]
    names: tuple[str, ...] = ()
    rxnorm: tuple[str, ...] = ()


# Class keys used by the rules; labels are what texts and retrieval queries say.
CLASS_LABELS: dict[str, str] = {
    "benzodiazepine": "benzodiazepine",
    "z-drug": "non-benzodiazepine hypnotic",
    "sedating-antihistamine": "first-generation sedating antihistamine",
    "strong-anticholinergic": "strongly anticholinergic drug",
    "antipsychotic": "antipsychotic",
    "opioid": "opioid",
    "nsaid": "NSAID",
    "anticoagulant": "oral anticoagulant",
    "vka": "vitamin K antagonist",
    "doac": "direct oral anticoagulant",
    "antiplatelet": "antiplatelet",
    "ssri": "SSRI antidepressant",
    "tca": "tricyclic antidepressant",
    "acei": "ACE inhibitor",
    "arb": "angiotensin receptor blocker",
    "potassium-sparing": "potassium-sparing diuretic",
    "potassium-supplement": "potassium supplement",
    "thiazide": "thiazide diuretic",
    "loop-diuretic": "loop diuretic",
    "beta-blocker": "beta-blocker",
    "rate-limiting-ccb": "rate-limiting calcium-channel blocker",
    "dhp-ccb": "dihydropyridine calcium-channel blocker",
    "cardiac-glycoside": "cardiac glycoside",
    "amiodarone": "amiodarone",
    "statin": "statin",
    "metformin": "biguanide",
    "sulfonylurea": "sulfonylurea",
    "long-acting-sulfonylurea": "long-acting sulfonylurea",
    "insulin": "insulin",
    "sglt2i": "SGLT2 inhibitor",
    "cholinesterase-inhibitor": "cholinesterase inhibitor",
    "nmda-antagonist": "NMDA receptor antagonist",
    "bisphosphonate": "bisphosphonate",
    "thyroid-hormone": "thyroid hormone",
    "antiepileptic": "antiepileptic",
    "nitrate": "nitrate",
    "inhaled-corticosteroid": "inhaled corticosteroid",
    "bronchodilator": "bronchodilator",
    "interacting-antibiotic": "antibiotic that raises INR",
    "chemotherapy": "cytotoxic chemotherapy",
    "analgesic": "simple analgesic",
}

DRUGS: tuple[Drug, ...] = (
    Drug("diazepam", ("benzodiazepine", "antiepileptic"), ("diazepam", "valium"), ("563026",)),
    Drug("lorazepam", ("benzodiazepine",), ("lorazepam", "ativan")),
    Drug("alprazolam", ("benzodiazepine",), ("alprazolam", "xanax")),
    Drug("clonazepam", ("benzodiazepine", "antiepileptic"), ("clonazepam", "klonopin")),
    Drug("temazepam", ("benzodiazepine",), ("temazepam",)),
    Drug("zolpidem", ("z-drug",), ("zolpidem", "ambien")),
    Drug(
        "diphenhydramine",
        ("sedating-antihistamine", "strong-anticholinergic"),
        ("diphenhydramine", "benadryl"),
        ("1049630",),
    ),
    Drug(
        "chlorpheniramine",
        ("sedating-antihistamine", "strong-anticholinergic"),
        ("chlorpheniramine", "chlorphenamine"),
        ("477045",),
    ),
    Drug("doxylamine", ("sedating-antihistamine", "strong-anticholinergic"), ("doxylamine",)),
    Drug("hydroxyzine", ("sedating-antihistamine", "strong-anticholinergic"), ("hydroxyzine",)),
    Drug("promethazine", ("sedating-antihistamine", "strong-anticholinergic"), ("promethazine",)),
    Drug("oxybutynin", ("strong-anticholinergic",), ("oxybutynin",)),
    Drug("amitriptyline", ("tca", "strong-anticholinergic"), ("amitriptyline",)),
    Drug("haloperidol", ("antipsychotic",), ("haloperidol",)),
    Drug("quetiapine", ("antipsychotic",), ("quetiapine", "seroquel")),
    Drug("risperidone", ("antipsychotic",), ("risperidone",)),
    Drug("olanzapine", ("antipsychotic", "strong-anticholinergic"), ("olanzapine",)),
    Drug("hydrocodone", ("opioid",), ("hydrocodone",), ("857005",)),
    Drug("oxycodone", ("opioid",), ("oxycodone",)),
    Drug("morphine", ("opioid",), ("morphine",)),
    Drug("tramadol", ("opioid",), ("tramadol",)),
    Drug(
        "meperidine", ("opioid", "strong-anticholinergic"), ("meperidine", "pethidine"), ("861467",)
    ),
    Drug("fentanyl", ("opioid",), ("fentanyl",)),
    Drug("naproxen", ("nsaid",), ("naproxen", "aleve"), ("849574",)),
    Drug("ibuprofen", ("nsaid",), ("ibuprofen",), ("310965",)),
    Drug("diclofenac", ("nsaid",), ("diclofenac",)),
    Drug("celecoxib", ("nsaid",), ("celecoxib",)),
    Drug("meloxicam", ("nsaid",), ("meloxicam",)),
    Drug("acetaminophen", ("analgesic",), ("acetaminophen", "paracetamol"), ("313782",)),
    Drug("warfarin", ("anticoagulant", "vka"), ("warfarin", "coumadin"), ("855332",)),
    Drug("apixaban", ("anticoagulant", "doac"), ("apixaban", "eliquis")),
    Drug("rivaroxaban", ("anticoagulant", "doac"), ("rivaroxaban", "xarelto")),
    Drug("dabigatran", ("anticoagulant", "doac"), ("dabigatran",)),
    Drug("clopidogrel", ("antiplatelet",), ("clopidogrel", "plavix"), ("309362",)),
    Drug("aspirin", ("antiplatelet",), ("aspirin",)),
    Drug("ticagrelor", ("antiplatelet",), ("ticagrelor",)),
    Drug("sertraline", ("ssri",), ("sertraline",)),
    Drug("citalopram", ("ssri",), ("citalopram",)),
    Drug("escitalopram", ("ssri",), ("escitalopram",)),
    Drug("fluoxetine", ("ssri",), ("fluoxetine",)),
    Drug("paroxetine", ("ssri", "strong-anticholinergic"), ("paroxetine",)),
    Drug("lisinopril", ("acei",), ("lisinopril",), ("314076",)),
    Drug("enalapril", ("acei",), ("enalapril",)),
    Drug("ramipril", ("acei",), ("ramipril",)),
    Drug("losartan", ("arb",), ("losartan",)),
    Drug("valsartan", ("arb",), ("valsartan",)),
    Drug("spironolactone", ("potassium-sparing",), ("spironolactone",)),
    Drug("eplerenone", ("potassium-sparing",), ("eplerenone",)),
    Drug("amiloride", ("potassium-sparing",), ("amiloride",)),
    Drug("triamterene", ("potassium-sparing",), ("triamterene",)),
    Drug("potassium chloride", ("potassium-supplement",), ("potassium chloride",)),
    Drug("hydrochlorothiazide", ("thiazide",), ("hydrochlorothiazide",), ("316049", "310798")),
    Drug("chlorthalidone", ("thiazide",), ("chlorthalidone",)),
    Drug("furosemide", ("loop-diuretic",), ("furosemide", "lasix"), ("315971",)),
    Drug("metoprolol", ("beta-blocker",), ("metoprolol", "toprol"), ("866414",)),
    Drug("atenolol", ("beta-blocker",), ("atenolol",)),
    Drug("bisoprolol", ("beta-blocker",), ("bisoprolol",)),
    Drug("carvedilol", ("beta-blocker",), ("carvedilol",)),
    Drug("verapamil", ("rate-limiting-ccb",), ("verapamil",), ("897718",)),
    Drug("diltiazem", ("rate-limiting-ccb",), ("diltiazem",)),
    Drug("amlodipine", ("dhp-ccb",), ("amlodipine",), ("197361",)),
    Drug("digoxin", ("cardiac-glycoside",), ("digoxin", "lanoxin"), ("197604",)),
    Drug("amiodarone", ("amiodarone",), ("amiodarone",)),
    Drug("simvastatin", ("statin",), ("simvastatin", "simvistatin", "zocor"), ("312961", "316672")),
    Drug("atorvastatin", ("statin",), ("atorvastatin", "lipitor")),
    Drug("rosuvastatin", ("statin",), ("rosuvastatin",)),
    Drug("pravastatin", ("statin",), ("pravastatin",)),
    Drug("metformin", ("metformin",), ("metformin",), ("860975",)),
    Drug("glyburide", ("sulfonylurea", "long-acting-sulfonylurea"), ("glyburide", "glibenclamide")),
    Drug("glimepiride", ("sulfonylurea", "long-acting-sulfonylurea"), ("glimepiride",)),
    Drug("glipizide", ("sulfonylurea",), ("glipizide",)),
    Drug("insulin", ("insulin",), ("insulin", "humulin"), ("106892",)),
    Drug("empagliflozin", ("sglt2i",), ("empagliflozin", "jardiance")),
    Drug("dapagliflozin", ("sglt2i",), ("dapagliflozin", "farxiga")),
    Drug("canagliflozin", ("sglt2i",), ("canagliflozin",)),
    Drug("donepezil", ("cholinesterase-inhibitor",), ("donepezil", "aricept"), ("1599803",)),
    Drug("galantamine", ("cholinesterase-inhibitor",), ("galantamine",), ("310436",)),
    Drug("rivastigmine", ("cholinesterase-inhibitor",), ("rivastigmine",)),
    Drug("memantine", ("nmda-antagonist",), ("memantine",), ("1599803",)),
    Drug("alendronate", ("bisphosphonate",), ("alendronate", "alendronic acid"), ("904419",)),
    Drug("levothyroxine", ("thyroid-hormone",), ("levothyroxine",), ("966222",)),
    Drug("levetiracetam", ("antiepileptic",), ("levetiracetam",)),
    Drug("phenytoin", ("antiepileptic",), ("phenytoin",)),
    Drug("carbamazepine", ("antiepileptic",), ("carbamazepine",)),
    Drug("gabapentin", ("antiepileptic",), ("gabapentin",)),
    Drug("nitroglycerin", ("nitrate",), ("nitroglycerin", "glyceryl trinitrate"), ("705129",)),
    Drug("fluticasone", ("inhaled-corticosteroid",), ("fluticasone",), ("895994", "896209")),
    Drug("salmeterol", ("bronchodilator",), ("salmeterol",), ("896209",)),
    Drug("albuterol", ("bronchodilator",), ("albuterol", "salbutamol"), ("745679",)),
    Drug("ciprofloxacin", ("interacting-antibiotic",), ("ciprofloxacin",)),
    Drug("sulfamethoxazole", ("interacting-antibiotic",), ("sulfamethoxazole",)),
    Drug("metronidazole", ("interacting-antibiotic",), ("metronidazole",)),
    Drug("docetaxel", ("chemotherapy",), ("docetaxel",), ("1860480",)),
    Drug("oxaliplatin", ("chemotherapy",), ("oxaliplatin",), ("1736776",)),
)

_BY_NAME = {d.name: d for d in DRUGS}
_PATTERNS = tuple(
    (d, re.compile(r"\b(" + "|".join(re.escape(n) for n in d.names) + r")\b")) for d in DRUGS
)
_BY_CODE: dict[str, tuple[Drug, ...]] = {}
for _d in DRUGS:
    for _c in _d.rxnorm:
        _BY_CODE[_c] = (*_BY_CODE.get(_c, ()), _d)


def drug(name: str) -> Drug:
    return _BY_NAME[name]


@lru_cache(maxsize=4096)
def _from_text(text: str) -> tuple[str, ...]:
    low = text.lower()
    return tuple(d.name for d, pat in _PATTERNS if pat.search(low))


def identify(med: Medication) -> tuple[str, ...]:
    """Ingredient names of one MedicationRequest: RxNorm codes and text both count."""
    names: set[str] = set()
    for code in med.codes:
        if code.system in (RXNORM, "") and code.code in _BY_CODE:
            names.update(d.name for d in _BY_CODE[code.code])
        names.update(_from_text(code.display))
    names.update(_from_text(med.text))
    # Topical hydrocortisone and the like are not in the table; nothing to do for them.
    return tuple(sorted(names))
