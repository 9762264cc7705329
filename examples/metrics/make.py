"""Writes the labelled metrics set: eight synthetic patients (FHIR R4 bundles) and ``metrics.json``.

Run from the repository root: ``python3.11 examples/metrics/make.py``. Every patient is invented.
The labels (the reference plans under ``references/``, the problem lists and the rubric scores
of each reference plan) were written by hand from the records alone, before any plan was made;
this script writes the bundles and the label file from the tables below. The clinic date of
the set is 2026-11-30 (plan with ``--created 2026-11-30T09:00:00+00:00``).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SNOMED = "http://snomed.info/sct"
LOINC = "http://loinc.org"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
UCUM = "http://unitsofmeasure.org"
CLIN = "http://terminology.hl7.org/CodeSystem/condition-clinical"
VER = "http://terminology.hl7.org/CodeSystem/condition-ver-status"
CATS = "http://terminology.hl7.org/CodeSystem/condition-category"
OBSCAT = "http://terminology.hl7.org/CodeSystem/observation-category"

R = dict[str, Any]


class Bundle:
    def __init__(self, slug: str) -> None:
        self.slug = slug
        self.entries: list[R] = []
        self.n = 0
        self.pid = self._id()

    def _id(self) -> str:
        self.n += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"canoe-metrics/{self.slug}/{self.n}"))

    def add(self, r: R, rid: str | None = None) -> None:
        r["id"] = rid or self._id()
        self.entries.append({"fullUrl": f"urn:uuid:{r['id']}", "resource": r})

    @property
    def subj(self) -> R:
        return {"reference": f"urn:uuid:{self.pid}"}

    def patient(self, given: str, family: str, sex: str, birth: str) -> None:
        name = [{"use": "official", "family": family, "given": [given]}]
        self.add(
            {"resourceType": "Patient", "name": name, "gender": sex, "birthDate": birth},
            self.pid,
        )

    def cond(self, text: str, snomed: str | None, onset: str, status: str = "active") -> None:
        code: R = {"text": text}
        if snomed:
            code["coding"] = [{"system": SNOMED, "code": snomed, "display": text}]
        r: R = {
            "resourceType": "Condition",
            "clinicalStatus": {"coding": [{"system": CLIN, "code": status}]},
            "verificationStatus": {"coding": [{"system": VER, "code": "confirmed"}]},
            "category": [{"coding": [{"system": CATS, "code": "problem-list-item"}]}],
            "code": code,
            "subject": self.subj,
            "onsetDateTime": onset,
            "recordedDate": onset,
        }
        if status == "resolved":
            r["abatementDateTime"] = onset
        self.add(r)

    def med(
        self, text: str, rxcui: str | None, dose: float, unit: str, per_day: int, sig: str
    ) -> None:
        concept: R = {"text": text}
        if rxcui:
            concept["coding"] = [{"system": RXNORM, "code": rxcui, "display": text.split()[0]}]
        self.add(
            {
                "resourceType": "MedicationRequest",
                "status": "active",
                "intent": "order",
                "medicationCodeableConcept": concept,
                "subject": self.subj,
                "authoredOn": "2025-06-01",
                "dosageInstruction": [
                    {
                        "sequence": 1,
                        "text": sig,
                        "timing": {
                            "repeat": {"frequency": per_day, "period": 1, "periodUnit": "d"}
                        },
                        "doseAndRate": [
                            {
                                "doseQuantity": {
                                    "value": dose,
                                    "unit": unit,
                                    "system": UCUM,
                                    "code": unit,
                                }
                            }
                        ],
                    }
                ],
            }
        )

    def lab(self, loinc: str, display: str, value: float, unit: str, date: str) -> None:
        self.add(
            {
                "resourceType": "Observation",
                "status": "final",
                "category": [{"coding": [{"system": OBSCAT, "code": "laboratory"}]}],
                "code": {"coding": [{"system": LOINC, "code": loinc, "display": display}]},
                "subject": self.subj,
                "effectiveDateTime": f"{date}T09:00:00+00:00",
                "valueQuantity": {"value": value, "unit": unit, "system": UCUM, "code": unit},
            }
        )

    def bp(self, systolic: int, diastolic: int, date: str) -> None:
        def part(code: str, display: str, v: int) -> R:
            q = {"value": v, "unit": "mm[Hg]", "system": UCUM, "code": "mm[Hg]"}
            return {
                "code": {"coding": [{"system": LOINC, "code": code, "display": display}]},
                "valueQuantity": q,
            }

        self.add(
            {
                "resourceType": "Observation",
                "status": "final",
                "category": [{"coding": [{"system": OBSCAT, "code": "vital-signs"}]}],
                "code": {
                    "coding": [
                        {"system": LOINC, "code": "85354-9", "display": "Blood pressure panel"}
                    ]
                },
                "subject": self.subj,
                "effectiveDateTime": f"{date}T09:10:00+00:00",
                "component": [
                    part("8480-6", "Systolic blood pressure", systolic),
                    part("8462-4", "Diastolic blood pressure", diastolic),
                ],
            }
        )

    def write(self) -> str:
        path = HERE / "bundles" / f"{self.slug}.json"
        path.parent.mkdir(exist_ok=True)
        body = {"resourceType": "Bundle", "type": "collection", "entry": self.entries}
        path.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
        return f"bundles/{self.slug}.json"


EGFR, K, CREAT, HBA1C, INR, TSH = "33914-3", "2823-3", "2160-0", "4548-4", "6301-6", "3016-3"


def m01() -> Bundle:
    b = Bundle("m01_ckd_ibuprofen_ace_diuretic")
    b.patient("Maud", "Ellery", "female", "1947-04-02")
    b.cond("Chronic kidney disease stage 3B", "700379002", "2021-03-10")
    b.cond("Essential hypertension", "59621000", "2009-05-01")
    b.cond("Osteoarthritis of knee", "239873007", "2016-09-12")
    b.cond("Urinary tract infection", "68566005", "2026-08-04", status="resolved")
    b.med("ibuprofen 400 mg tablet", "5640", 400, "mg", 3, "400 mg three times daily")
    b.med("lisinopril 20 mg tablet", "29046", 20, "mg", 1, "20 mg once daily")
    b.med("furosemide 40 mg tablet", "4603", 40, "mg", 1, "40 mg each morning")
    b.lab(EGFR, "eGFR", 46, "mL/min/{1.73_m2}", "2026-05-18")
    b.lab(EGFR, "eGFR", 38, "mL/min/{1.73_m2}", "2026-11-20")
    b.lab(K, "Potassium", 5.4, "mmol/L", "2026-11-20")
    b.bp(148, 84, "2026-11-30")
    return b


def m02() -> Bundle:
    b = Bundle("m02_af_warfarin_diazepam_falls")
    b.patient("Cyril", "Draycott", "male", "1942-01-19")
    b.cond("Atrial fibrillation", "49436004", "2018-02-14")
    b.cond("Essential hypertension", "59621000", "2005-07-01")
    b.cond("Insomnia", "193462001", "2020-10-01")
    b.cond("Fall", None, "2026-10-28")
    b.med("warfarin 3 mg tablet", "11289", 3, "mg", 1, "3 mg in the evening, dose by INR")
    b.med("diazepam 5 mg tablet", "3322", 5, "mg", 1, "5 mg at night")
    b.med("amlodipine 10 mg tablet", "17767", 10, "mg", 1, "10 mg once daily")
    b.med("bisoprolol 2.5 mg tablet", "19484", 2.5, "mg", 1, "2.5 mg once daily")
    b.lab(INR, "INR", 2.4, "{INR}", "2026-11-24")
    b.lab(EGFR, "eGFR", 62, "mL/min/{1.73_m2}", "2026-09-02")
    b.bp(126, 72, "2026-11-30")
    return b


def m03() -> Bundle:
    b = Bundle("m03_diabetes_glimepiride_low_hba1c")
    b.patient("Edith", "Quarrie", "female", "1944-11-08")
    b.cond("Type 2 diabetes mellitus", "44054006", "2004-03-22")
    b.cond("Chronic kidney disease stage 3A", "700378005", "2022-06-30")
    b.cond("Essential hypertension", "59621000", "2006-01-15")
    b.cond("Cellulitis of leg", None, "2025-07-14", status="resolved")
    b.med("glimepiride 4 mg tablet", "25789", 4, "mg", 1, "4 mg with breakfast")
    b.med("metformin 1000 mg tablet", "6809", 1000, "mg", 2, "1000 mg twice daily")
    b.med("ramipril 5 mg capsule", "35296", 5, "mg", 1, "5 mg once daily")
    b.med("atorvastatin 20 mg tablet", "83367", 20, "mg", 1, "20 mg at night")
    b.lab(HBA1C, "Hemoglobin A1c", 6.0, "%", "2026-11-10")
    b.lab(EGFR, "eGFR", 41, "mL/min/{1.73_m2}", "2026-11-10")
    b.bp(134, 76, "2026-11-30")
    return b


def m04() -> Bundle:
    b = Bundle("m04_hfref_spironolactone_potassium")
    b.patient("Leonard", "Fairweather", "male", "1949-08-27")
    b.cond("Heart failure with reduced ejection fraction", "703272007", "2023-01-09")
    b.cond("Type 2 diabetes mellitus", "44054006", "2012-04-03")
    b.cond("Gout", "90560007", "2019-07-21")
    b.cond("Pneumonia", "233604007", "2024-01-30", status="resolved")
    b.med("ramipril 10 mg capsule", "35296", 10, "mg", 1, "10 mg once daily")
    b.med("spironolactone 25 mg tablet", "9997", 25, "mg", 1, "25 mg once daily")
    b.med("bisoprolol 5 mg tablet", "19484", 5, "mg", 1, "5 mg once daily")
    b.med("furosemide 40 mg tablet", "4603", 40, "mg", 1, "40 mg each morning")
    b.med("metformin 500 mg tablet", "6809", 500, "mg", 2, "500 mg twice daily")
    b.med("allopurinol 100 mg tablet", "519", 100, "mg", 1, "100 mg once daily")
    b.lab(K, "Potassium", 5.9, "mmol/L", "2026-11-25")
    b.lab(EGFR, "eGFR", 44, "mL/min/{1.73_m2}", "2026-11-25")
    b.lab(HBA1C, "Hemoglobin A1c", 7.1, "%", "2026-09-14")
    b.bp(118, 70, "2026-11-30")
    return b


def m05() -> Bundle:
    b = Bundle("m05_copd_depression_citalopram_polypharmacy")
    b.patient("Winifred", "Ashdown", "female", "1943-02-11")
    b.cond("Chronic obstructive pulmonary disease", "13645005", "2011-10-04")
    b.cond("Depressive disorder", "35489007", "2019-01-28")
    b.cond("Osteoporosis", "64859006", "2020-05-06")
    b.cond("Essential hypertension", "59621000", "2008-03-17")
    b.cond("Hypothyroidism", "40930008", "2010-09-09")
    b.cond("Acute bronchitis", "10509002", "2026-09-01", status="resolved")
    b.med("tiotropium 2.5 microgram inhaler", "69120", 5, "ug", 1, "2 puffs once daily")
    b.med("salbutamol 100 microgram inhaler", "435", 200, "ug", 4, "2 puffs when needed")
    b.med("citalopram 40 mg tablet", "2556", 40, "mg", 1, "40 mg once daily")
    b.med("amitriptyline 25 mg tablet", "704", 25, "mg", 1, "25 mg at night")
    b.med("alendronic acid 70 mg tablet", "46041", 70, "mg", 1, "70 mg once weekly")
    b.med("levothyroxine 100 microgram tablet", "10582", 100, "ug", 1, "100 micrograms daily")
    b.med("amlodipine 5 mg tablet", "17767", 5, "mg", 1, "5 mg once daily")
    b.med("omeprazole 20 mg capsule", "7646", 20, "mg", 1, "20 mg once daily")
    b.med("colecalciferol 800 unit tablet", "2418", 800, "[iU]", 1, "800 units daily")
    b.lab(TSH, "TSH", 2.3, "m[IU]/L", "2026-10-02")
    b.lab(EGFR, "eGFR", 68, "mL/min/{1.73_m2}", "2026-10-02")
    b.bp(136, 78, "2026-11-30")
    return b


def m06() -> Bundle:
    b = Bundle("m06_dementia_oxybutynin_donepezil")
    b.patient("Horace", "Penhallow", "male", "1940-06-30")
    b.cond("Alzheimer's disease", "26929004", "2023-04-12")
    b.cond("Overactive bladder", None, "2024-02-20")
    b.cond("Benign prostatic hyperplasia", "266569009", "2015-11-03")
    b.cond("Constipation", "14760008", "2025-08-19")
    b.cond("Herpes zoster", "4740000", "2022-03-08", status="resolved")
    b.med("donepezil 10 mg tablet", "135447", 10, "mg", 1, "10 mg at night")
    b.med("oxybutynin 5 mg tablet", "32675", 5, "mg", 3, "5 mg three times daily")
    b.med("tamsulosin 400 microgram capsule", "77492", 400, "ug", 1, "400 micrograms daily")
    b.med("senna 7.5 mg tablet", None, 15, "mg", 1, "two tablets at night")
    b.lab(EGFR, "eGFR", 58, "mL/min/{1.73_m2}", "2026-08-11")
    b.bp(132, 74, "2026-11-30")
    return b


def m07() -> Bundle:
    b = Bundle("m07_hypothyroid_statin_stable")
    b.patient("Rosalind", "Tebbutt", "female", "1958-09-05")
    b.cond("Hypothyroidism", "40930008", "2014-02-02")
    b.cond("Hypercholesterolemia", "13644009", "2021-07-19")
    b.cond("Fracture of radius", "12676007", "2019-01-10", status="resolved")
    b.med("levothyroxine 75 microgram tablet", "10582", 75, "ug", 1, "75 micrograms daily")
    b.med("atorvastatin 20 mg tablet", "83367", 20, "mg", 1, "20 mg at night")
    b.lab(TSH, "TSH", 2.1, "m[IU]/L", "2026-10-20")
    b.lab(EGFR, "eGFR", 82, "mL/min/{1.73_m2}", "2026-10-20")
    b.bp(124, 78, "2026-11-30")
    return b


def m08() -> Bundle:
    b = Bundle("m08_post_mi_dual_antiplatelet_naproxen")
    b.patient("Gilbert", "Marchbanks", "male", "1952-12-14")
    b.cond("Myocardial infarction", "22298006", "2026-06-03")
    b.cond("Essential hypertension", "59621000", "2010-04-08")
    b.cond("Type 2 diabetes mellitus", "44054006", "2016-10-25")
    b.cond("Chronic low back pain", "278860009", "2024-03-01")
    b.cond("Influenza", "6142004", "2025-01-20", status="resolved")
    b.med("aspirin 75 mg tablet", "1191", 75, "mg", 1, "75 mg once daily")
    b.med("clopidogrel 75 mg tablet", "32968", 75, "mg", 1, "75 mg once daily")
    b.med("atorvastatin 80 mg tablet", "83367", 80, "mg", 1, "80 mg at night")
    b.med("ramipril 5 mg capsule", "35296", 5, "mg", 1, "5 mg once daily")
    b.med("bisoprolol 5 mg tablet", "19484", 5, "mg", 1, "5 mg once daily")
    b.med("metformin 500 mg tablet", "6809", 500, "mg", 2, "500 mg twice daily")
    b.med("naproxen 500 mg tablet", "7258", 500, "mg", 2, "500 mg twice daily")
    b.lab(EGFR, "eGFR", 71, "mL/min/{1.73_m2}", "2026-11-05")
    b.lab(HBA1C, "Hemoglobin A1c", 7.4, "%", "2026-11-05")
    b.bp(138, 82, "2026-11-30")
    return b


# name -> (bundle maker, labelled problems, candidate problems, rubric of the reference plan).
# Problems are named by their record text; "prob-fall-risk" and "prob-polypharmacy" name the
# two problems a plan derives from the record rather than from one Condition. The candidates
# are the labelled problems and the distractors (resolved episodes a plan should not address);
# a problem the plan proposes outside them is not scored (CAMP scores a fixed candidate set).
LABELS: dict[str, tuple[Any, list[str], list[str], dict[str, int]]] = {
    "m01": (
        m01,
        ["Chronic kidney disease stage 3B", "Essential hypertension", "Osteoarthritis of knee"],
        ["Urinary tract infection"],
        {"completeness": 5, "validity": 5, "coherence": 5, "safety": 5},
    ),
    "m02": (
        m02,
        ["Atrial fibrillation", "Essential hypertension", "Insomnia", "Fall"],
        [],
        {"completeness": 4, "validity": 5, "coherence": 5, "safety": 5},
    ),
    "m03": (
        m03,
        ["Type 2 diabetes mellitus", "Chronic kidney disease stage 3A", "Essential hypertension"],
        ["Cellulitis of leg"],
        {"completeness": 3, "validity": 5, "coherence": 4, "safety": 5},
    ),
    "m04": (
        m04,
        ["Heart failure with reduced ejection fraction", "Type 2 diabetes mellitus", "Gout"],
        ["Pneumonia"],
        {"completeness": 4, "validity": 5, "coherence": 5, "safety": 5},
    ),
    "m05": (
        m05,
        [
            "Chronic obstructive pulmonary disease",
            "Depressive disorder",
            "Osteoporosis",
            "Essential hypertension",
            "Hypothyroidism",
            "prob-polypharmacy",
            "prob-fall-risk",
        ],
        ["Acute bronchitis"],
        {"completeness": 5, "validity": 5, "coherence": 4, "safety": 5},
    ),
    "m06": (
        m06,
        [
            "Alzheimer's disease",
            "Overactive bladder",
            "Benign prostatic hyperplasia",
            "Constipation",
        ],
        ["Herpes zoster"],
        {"completeness": 3, "validity": 4, "coherence": 3, "safety": 4},
    ),
    "m07": (
        m07,
        ["Hypothyroidism", "Hypercholesterolemia"],
        ["Fracture of radius"],
        {"completeness": 5, "validity": 5, "coherence": 5, "safety": 5},
    ),
    "m08": (
        m08,
        [
            "Myocardial infarction",
            "Essential hypertension",
            "Type 2 diabetes mellitus",
            "Chronic low back pain",
        ],
        ["Influenza"],
        {"completeness": 4, "validity": 5, "coherence": 5, "safety": 5},
    ),
}


def main() -> None:
    cases = []
    for key, (make, problems, distractors, rubric) in LABELS.items():
        b = make()
        reference = f"references/{b.slug}.txt"
        if not (HERE / reference).is_file():
            raise SystemExit(f"write {reference} first")
        cases.append(
            {
                "name": b.slug,
                "bundle": b.write(),
                "reference": reference,
                "problems": problems,
                "candidates": sorted({*problems, *distractors}),
                "reference_rubric": rubric,
            }
        )
        assert key == b.slug[:3]
    doc = {
        "format": "canoe.metrics/1",
        "description": (
            "Eight invented patients, labelled by hand from the records alone before any plan "
            "was made: a reference plan, the problems a plan should address among the "
            "candidates, and the labeller's rubric scores (1-5) of the reference plan."
        ),
        "cases": cases,
    }
    (HERE / "metrics.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
