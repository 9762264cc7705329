"""Writes the clinical vignettes of this folder: ten hand-written FHIR R4 Bundles of patients
that none of the shared Synthea fixtures resembles, each built to test one common prescribing
problem on a new patient (the fixtures' expectations were tuned on those fixtures; these were
not). Run from the repository root: ``python3.11 examples/vignettes/make.py``.

Deterministic: every id is a UUID5 of the vignette and the resource's position, every date is
fixed relative to the reference date of the eval (2026-11-30), so the output never changes
unless this script does. Codes are real: RxNorm clinical drugs (SCD) from
inference/knowledge/data/clinical_drugs.json or public RxNorm lists (noted where so), SNOMED CT
concepts from inference/knowledge/data/conditions.yaml, LOINC codes of service/record/vocabulary.py
(LOINC_GROUPS), UCUM units, CVX vaccine codes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NS = uuid.UUID("6f1c2b8e-5d0a-4f4e-9a57-13a0c0de0013")

SCT = "http://snomed.info/sct"
RXN = "http://www.nlm.nih.gov/research/umls/rxnorm"
LNC = "http://loinc.org"
UCUM = "http://unitsofmeasure.org"
CVX = "http://hl7.org/fhir/sid/cvx"
ACT = "http://terminology.hl7.org/CodeSystem/v3-ActCode"
OBSCAT = "http://terminology.hl7.org/CodeSystem/observation-category"

# Medicines: (RxNorm SCD, display). Codes from clinical_drugs.json unless marked.
METFORMIN_1000 = ("861004", "metformin hydrochloride 1000 MG Oral Tablet")
METFORMIN_500 = ("861007", "metformin hydrochloride 500 MG Oral Tablet")
IBUPROFEN_200 = ("310965", "Ibuprofen 200 MG Oral Tablet")
SPIRONOLACTONE_25 = ("313096", "spironolactone 25 MG Oral Tablet")
AMLODIPINE_5 = ("197361", "Amlodipine 5 MG Oral Tablet")
ATORVASTATIN_20 = ("617310", "atorvastatin 20 MG Oral Tablet")
ATORVASTATIN_40 = ("617311", "atorvastatin 40 MG Oral Tablet")
# public RxNorm lists (FHIR examples, RxNav-derived tables): 197444, 311666, 833528, 997223,
# 197889, 863619
CARBIDOPA_LEVODOPA = ("197444", "carbidopa 25 MG / levodopa 100 MG Oral Tablet")
METOCLOPRAMIDE_10 = ("311666", "metoclopramide 10 MG Oral Tablet")
AMIODARONE_200 = ("833528", "amiodarone hydrochloride 200 MG Oral Tablet")
DONEPEZIL_10 = ("997223", "donepezil hydrochloride 10 MG Oral Tablet")
LITHIUM_300 = ("197889", "lithium carbonate 300 MG Oral Capsule")
OXYBUTYNIN_5 = ("863619", "oxybutynin chloride 5 MG Oral Tablet")
HALOPERIDOL_1 = ("310671", "haloperidol 1 MG Oral Tablet")
NAPROXEN_500 = ("105899", "naproxen 500 MG Oral Tablet [Naprosyn]")
NAPROXEN_220 = ("849574", "Naproxen sodium 220 MG Oral Tablet")
PIOGLITAZONE_30 = ("312440", "pioglitazone 30 MG Oral Tablet")
DILTIAZEM_180 = ("830877", "24 HR diltiazem hydrochloride 180 MG Extended Release Oral Tablet")
FUROSEMIDE_40 = ("313988", "furosemide 40 MG Oral Tablet")
LISINOPRIL_10 = ("314076", "lisinopril 10 MG Oral Tablet")
LISINOPRIL_20 = ("314077", "lisinopril 20 MG Oral Tablet")
HCTZ_25 = ("310798", "Hydrochlorothiazide 25 MG Oral Tablet")
AMITRIPTYLINE_25 = ("856834", "amitriptyline hydrochloride 25 MG Oral Tablet")
ESZOPICLONE_2 = ("485442", "eszopiclone 2 MG Oral Tablet")
OXYCODONE_10 = ("1049683", "oxycodone hydrochloride 10 MG Oral Tablet")
GABAPENTIN_600 = ("310433", "gabapentin 600 MG Oral Tablet")
DIAZEPAM_5 = ("197591", "diazepam 5 MG Oral Tablet")
ASPIRIN_81 = ("243670", "aspirin 81 MG Oral Tablet")
METOPROLOL_50 = ("866514", "metoprolol tartrate 50 MG Oral Tablet")
LEVOTHYROXINE_75 = ("966222", "Levothyroxine Sodium 0.075 MG Oral Tablet")
APIXABAN_5 = ("1364445", "apixaban 5 MG Oral Tablet")
GLIMEPIRIDE_4 = ("199247", "glimepiride 4 MG Oral Tablet")
GLARGINE_PEN = ("847230", "3 ML insulin glargine 100 UNT/ML Pen Injector")
PARACETAMOL_325 = ("313782", "Acetaminophen 325 MG Oral Tablet")


class Record:
    """One patient's Bundle under construction. ``ns``: the UUID5 namespace of its ids (each
    vignette set names its own, so the sets never share an id)."""

    ns = NS

    def __init__(self, slug: str, given: str, family: str, gender: str, birth: str) -> None:
        self.slug = slug
        self.entries: list[dict[str, Any]] = []
        self.pid = self._id("Patient")
        self._add(
            {
                "resourceType": "Patient",
                "id": self.pid,
                "name": [{"use": "official", "family": family, "given": [given]}],
                "gender": gender,
                "birthDate": birth,
            }
        )

    def _id(self, kind: str) -> str:
        return str(uuid.uuid5(self.ns, f"{self.slug}/{kind}/{len(self.entries)}"))

    def _add(self, resource: dict[str, Any]) -> str:
        rid = resource.get("id") or self._id(resource["resourceType"])
        resource["id"] = rid
        self.entries.append(
            {
                "fullUrl": f"urn:uuid:{rid}",
                "resource": resource,
                "request": {"method": "POST", "url": resource["resourceType"]},
            }
        )
        return rid

    @property
    def subject(self) -> dict[str, str]:
        return {"reference": f"urn:uuid:{self.pid}"}

    def condition(
        self, code: str, display: str, onset: str, status: str = "active", abated: str = ""
    ) -> str:
        r: dict[str, Any] = {
            "resourceType": "Condition",
            "clinicalStatus": {
                "coding": [
                    {
                        "system": "http://terminology.hl7.org/CodeSystem/condition-clinical",
                        "code": status,
                    }
                ]
            },
            "verificationStatus": {
                "coding": [
                    {
                        "system": "http://terminology.hl7.org/CodeSystem/condition-ver-status",
                        "code": "confirmed",
                    }
                ]
            },
            "category": [
                {
                    "coding": [
                        {
                            "system": "http://terminology.hl7.org/CodeSystem/condition-category",
                            "code": "problem-list-item",
                        }
                    ]
                }
            ],
            "code": {
                "coding": [{"system": SCT, "code": code, "display": display}],
                "text": display,
            },
            "subject": self.subject,
            "onsetDateTime": onset,
            "recordedDate": onset,
        }
        if abated:
            r["abatementDateTime"] = abated
        return self._add(r)

    def med(
        self,
        drug: tuple[str, str],
        authored: str,
        dose: float,
        unit: str,
        per_day: int,
        text: str,
        *,
        prn: bool = False,
        reason: str = "",
    ) -> str:
        code, display = drug
        ucum = {"mg": "mg", "[iU]": "[iU]", "ug": "ug", "tablet": "{tablet}"}[unit]
        dosage: dict[str, Any] = {
            "sequence": 1,
            "text": text,
            "timing": {"repeat": {"frequency": per_day, "period": 1, "periodUnit": "d"}},
            "route": {
                "coding": [
                    {
                        "system": SCT,
                        "code": "34206005" if unit == "[iU]" else "26643006",
                        "display": "Subcutaneous route" if unit == "[iU]" else "Oral route",
                    }
                ]
            },
            "doseAndRate": [
                {
                    "doseQuantity": {
                        "value": dose,
                        "unit": "U" if unit == "[iU]" else unit,
                        "system": UCUM,
                        "code": ucum,
                    }
                }
            ],
        }
        if prn:
            dosage["asNeededBoolean"] = True
        r: dict[str, Any] = {
            "resourceType": "MedicationRequest",
            "status": "active",
            "intent": "order",
            "medicationCodeableConcept": {
                "coding": [{"system": RXN, "code": code, "display": display}],
                "text": display,
            },
            "subject": self.subject,
            "authoredOn": authored,
            "dosageInstruction": [dosage],
        }
        if reason:
            r["reasonReference"] = [{"reference": f"urn:uuid:{reason}"}]
        return self._add(r)

    def lab(
        self, loinc: str, display: str, value: float, unit: str, when: str, cat: str = "laboratory"
    ) -> str:
        return self._add(
            {
                "resourceType": "Observation",
                "status": "final",
                "category": [{"coding": [{"system": OBSCAT, "code": cat}]}],
                "code": {
                    "coding": [{"system": LNC, "code": loinc, "display": display}],
                    "text": display,
                },
                "subject": self.subject,
                "effectiveDateTime": when,
                "issued": f"{when}T12:00:00+00:00",
                "valueQuantity": {"value": value, "unit": unit, "system": UCUM, "code": unit},
            }
        )

    def bp(self, when: str, systolic: int, diastolic: int) -> str:
        def comp(code: str, display: str, v: int) -> dict[str, Any]:
            return {
                "code": {"coding": [{"system": LNC, "code": code, "display": display}]},
                "valueQuantity": {"value": v, "unit": "mm[Hg]", "system": UCUM, "code": "mm[Hg]"},
            }

        return self._add(
            {
                "resourceType": "Observation",
                "status": "final",
                "category": [{"coding": [{"system": OBSCAT, "code": "vital-signs"}]}],
                "code": {
                    "coding": [
                        {"system": LNC, "code": "85354-9", "display": "Blood pressure panel"}
                    ],
                    "text": "Blood pressure",
                },
                "subject": self.subject,
                "effectiveDateTime": when,
                "component": [
                    comp("8480-6", "Systolic blood pressure", systolic),
                    comp("8462-4", "Diastolic blood pressure", diastolic),
                ],
            }
        )

    def vitals(self, when: str, weight: float, height: float, hr: int) -> None:
        self.lab("29463-7", "Body weight", weight, "kg", when, "vital-signs")
        self.lab("8302-2", "Body height", height, "cm", when, "vital-signs")
        self.lab(
            "39156-5",
            "Body mass index",
            round(weight / (height / 100) ** 2, 1),
            "kg/m2",
            when,
            "vital-signs",
        )
        self.lab("8867-4", "Heart rate", hr, "/min", when, "vital-signs")

    def renal(self, when: str, egfr: float, creatinine: float, k: float, na: float) -> None:
        self.lab(
            "33914-3",
            "Glomerular filtration rate/1.73 sq M.predicted",
            egfr,
            "mL/min/{1.73_m2}",
            when,
        )
        self.lab("2160-0", "Creatinine [Mass/volume] in Serum or Plasma", creatinine, "mg/dL", when)
        self.lab("6298-4", "Potassium [Moles/volume] in Blood", k, "mmol/L", when)
        self.lab("2951-2", "Sodium [Moles/volume] in Serum or Plasma", na, "mmol/L", when)

    def encounter(
        self, cls: str, code: str, display: str, start: str, reason: tuple[str, str] | None = None
    ) -> str:
        r: dict[str, Any] = {
            "resourceType": "Encounter",
            "status": "finished",
            "class": {"system": ACT, "code": cls},
            "type": [
                {"coding": [{"system": SCT, "code": code, "display": display}], "text": display}
            ],
            "subject": self.subject,
            "period": {"start": f"{start}T09:00:00+00:00", "end": f"{start}T15:00:00+00:00"},
        }
        if reason:
            r["reasonCode"] = [
                {"coding": [{"system": SCT, "code": reason[0], "display": reason[1]}]}
            ]
        return self._add(r)

    def vaccine(self, cvx: str, display: str, when: str) -> str:
        return self._add(
            {
                "resourceType": "Immunization",
                "status": "completed",
                "vaccineCode": {
                    "coding": [{"system": CVX, "code": cvx, "display": display}],
                    "text": display,
                },
                "patient": self.subject,
                "occurrenceDateTime": when,
                "primarySource": True,
            }
        )

    def allergy(self, code: str, display: str) -> str:
        return self._add(
            {
                "resourceType": "AllergyIntolerance",
                "clinicalStatus": {
                    "coding": [
                        {
                            "system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical",
                            "code": "active",
                        }
                    ]
                },
                "verificationStatus": {
                    "coding": [
                        {
                            "system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification",
                            "code": "confirmed",
                        }
                    ]
                },
                "type": "allergy",
                "category": ["medication"],
                "code": {
                    "coding": [{"system": SCT, "code": code, "display": display}],
                    "text": display,
                },
                "patient": self.subject,
            }
        )

    def bundle(self) -> dict[str, Any]:
        return {
            "resourceType": "Bundle",
            "id": str(uuid.uuid5(self.ns, self.slug)),
            "type": "transaction",
            "entry": self.entries,
        }


FLU = ("197", "influenza, high-dose, quadrivalent")


def ckd4_metformin_nsaid_hyperkalaemia() -> Record:
    """(a) 82, CKD stage 4 (eGFR 22 twice, four months apart), metformin 2 g/day, regular
    ibuprofen, spironolactone with potassium 5.8."""
    r = Record("ckd4_metformin", "Edith", "Marlowe", "female", "1944-03-12")
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "2006-05-02")
    r.condition("59621000", "Essential hypertension (disorder)", "2001-09-18")
    r.condition("431857002", "Chronic kidney disease stage 4 (disorder)", "2026-06-10")
    r.condition("396275006", "Osteoarthritis (disorder)", "2015-02-11")
    r.med(METFORMIN_1000, "2016-03-01", 1000, "mg", 2, "1000 mg twice daily with meals")
    r.med(IBUPROFEN_200, "2025-11-20", 400, "mg", 3, "400 mg three times daily for knee pain")
    r.med(SPIRONOLACTONE_25, "2023-04-05", 25, "mg", 1, "25 mg once daily")
    r.med(AMLODIPINE_5, "2019-01-15", 5, "mg", 1, "5 mg once daily")
    r.med(ATORVASTATIN_20, "2012-07-09", 20, "mg", 1, "20 mg at night")
    r.renal("2026-06-10", 22, 2.2, 5.4, 139)
    r.renal("2026-10-14", 22, 2.2, 5.8, 138)
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 7.1, "%", "2026-10-14")
    r.bp("2026-10-14", 138, 76)
    r.vitals("2026-10-14", 68.0, 158.0, 74)
    r.vaccine(*FLU, "2025-10-08")
    return r


def parkinsons_dopamine_blockers() -> Record:
    """(b) 78, Parkinson's disease on levodopa, given haloperidol for hallucinations and
    metoclopramide for nausea."""
    r = Record("parkinsons_blockers", "Walter", "Brennan", "male", "1948-07-22")
    r.condition("49049000", "Parkinson's disease (disorder)", "2019-04-03")
    r.condition("59621000", "Essential hypertension (disorder)", "2010-11-30")
    r.condition("14760008", "Constipation (disorder)", "2022-02-14")
    r.med(
        CARBIDOPA_LEVODOPA, "2019-04-03", 1, "tablet", 3, "1 tablet (25/100 mg) three times daily"
    )
    r.med(HALOPERIDOL_1, "2026-08-19", 1, "mg", 2, "1 mg twice daily for visual hallucinations")
    r.med(
        METOCLOPRAMIDE_10,
        "2026-09-10",
        10,
        "mg",
        3,
        "10 mg three times daily before meals for nausea",
    )
    r.med(AMLODIPINE_5, "2014-06-01", 5, "mg", 1, "5 mg once daily")
    r.renal("2026-09-10", 68, 1.1, 4.3, 140)
    r.bp("2026-09-10", 128, 74)
    r.vitals("2026-09-10", 71.0, 174.0, 70)
    r.vaccine(*FLU, "2025-10-20")
    return r


def hfref_harmful_drugs() -> Record:
    """(c) 75, HFrEF (LVEF 30%) on naproxen, pioglitazone and diltiazem; no ACE inhibitor, ARB
    or ARNI, no beta-blocker."""
    r = Record("hfref_harmful", "Gordon", "Achebe", "male", "1951-02-14")
    r.condition(
        "703272007", "Heart failure with reduced ejection fraction (disorder)", "2025-02-10"
    )
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "2009-08-21")
    r.condition("59621000", "Essential hypertension (disorder)", "2004-03-03")
    r.condition("396275006", "Osteoarthritis (disorder)", "2018-05-17")
    r.med(NAPROXEN_500, "2024-06-12", 500, "mg", 2, "500 mg twice daily for hip pain")
    r.med(PIOGLITAZONE_30, "2017-10-02", 30, "mg", 1, "30 mg once daily")
    r.med(DILTIAZEM_180, "2015-01-20", 180, "mg", 1, "180 mg once daily")
    r.med(FUROSEMIDE_40, "2025-02-10", 40, "mg", 1, "40 mg each morning")
    r.med(METFORMIN_500, "2009-08-21", 500, "mg", 2, "500 mg twice daily with meals")
    r.med(ATORVASTATIN_40, "2016-04-11", 40, "mg", 1, "40 mg at night")
    r.lab("10230-1", "Left ventricular Ejection fraction", 30, "%", "2025-02-10")
    r.lab(
        "33762-6",
        "Natriuretic peptide.B prohormone N-Terminal [Mass/volume] in Serum or Plasma",
        2450,
        "pg/mL",
        "2026-10-02",
    )
    r.renal("2026-10-02", 58, 1.3, 4.4, 137)
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 7.4, "%", "2026-10-02")
    r.bp("2026-10-02", 134, 82)
    r.vitals("2026-10-02", 92.0, 178.0, 88)
    r.vaccine(*FLU, "2025-10-14")
    return r


def lithium_interactions() -> Record:
    """(d) 68, bipolar disorder on lithium with lisinopril, hydrochlorothiazide and naproxen;
    last lithium level seven months ago."""
    r = Record("lithium_interactions", "Maureen", "Salinas", "female", "1958-05-30")
    r.condition("13746004", "Bipolar disorder (disorder)", "1996-02-01")
    r.condition("59621000", "Essential hypertension (disorder)", "2024-11-05")
    r.condition("396275006", "Osteoarthritis (disorder)", "2025-03-18")
    r.med(LITHIUM_300, "2004-06-15", 600, "mg", 1, "600 mg at night")
    r.med(HCTZ_25, "2024-11-05", 25, "mg", 1, "25 mg each morning")
    r.med(LISINOPRIL_20, "2025-09-22", 20, "mg", 1, "20 mg once daily")
    r.med(
        NAPROXEN_220,
        "2026-07-08",
        440,
        "mg",
        2,
        "440 mg twice daily as needed for knee pain",
        prn=True,
    )
    r.lab("14334-7", "Lithium [Moles/volume] in Serum or Plasma", 0.7, "mmol/L", "2026-04-15")
    r.renal("2026-04-15", 64, 0.95, 4.1, 139)
    r.lab("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma", 2.4, "m[IU]/L", "2026-04-15")
    r.bp("2026-09-22", 136, 84)
    r.vitals("2026-09-22", 74.0, 163.0, 76)
    r.allergy("91936005", "Allergy to penicillin (finding)")
    return r


def dementia_anticholinergic_falls() -> Record:
    """(e) 79, dementia on donepezil with amitriptyline, oxybutynin and a Z-drug; a fall."""
    r = Record("dementia_anticholinergic", "Dorothy", "Pembroke", "female", "1947-01-09")
    r.condition("26929004", "Alzheimer's disease (disorder)", "2023-05-16")
    r.condition("165232002", "Urinary incontinence (finding)", "2021-08-02")
    r.condition("193462001", "Insomnia (disorder)", "2019-03-27")
    r.condition("59621000", "Essential hypertension (disorder)", "2008-10-10")
    r.condition("217082002", "Accidental fall (event)", "2026-09-21")
    r.encounter(
        "EMER",
        "50849002",
        "Emergency room admission (procedure)",
        "2026-09-21",
        ("217082002", "Accidental fall (event)"),
    )
    r.med(DONEPEZIL_10, "2023-06-01", 10, "mg", 1, "10 mg at night")
    r.med(AMITRIPTYLINE_25, "2019-03-27", 25, "mg", 1, "25 mg at night for sleep")
    r.med(OXYBUTYNIN_5, "2021-08-02", 5, "mg", 2, "5 mg twice daily")
    r.med(ESZOPICLONE_2, "2022-01-12", 2, "mg", 1, "2 mg at bedtime")
    r.med(AMLODIPINE_5, "2008-10-10", 5, "mg", 1, "5 mg once daily")
    r.lab("72106-8", "Total score [MMSE]", 18, "{score}", "2026-06-03", "survey")
    r.renal("2026-06-03", 64, 0.9, 4.2, 138)
    r.bp("2026-09-21", 124, 70)
    r.vitals("2026-09-21", 58.0, 160.0, 68)
    r.vaccine(*FLU, "2025-10-03")
    return r


def opioid_gabapentin_benzo_fall() -> Record:
    """(f) 72, regular oxycodone with gabapentin 1.8 g/day and diazepam, a fall three weeks ago;
    creatinine clearance about 55 mL/min."""
    r = Record("opioid_gabapentin_benzo", "Raymond", "Okafor", "male", "1954-09-03")
    r.condition("279039007", "Low back pain (finding)", "2021-01-12")
    r.condition("197480006", "Anxiety disorder (disorder)", "2016-07-07")
    r.condition("59621000", "Essential hypertension (disorder)", "2012-02-02")
    r.condition("217082002", "Accidental fall (event)", "2026-11-08")
    r.encounter(
        "EMER",
        "50849002",
        "Emergency room admission (procedure)",
        "2026-11-08",
        ("217082002", "Accidental fall (event)"),
    )
    r.med(OXYCODONE_10, "2024-02-20", 10, "mg", 2, "10 mg every 12 hours")
    r.med(GABAPENTIN_600, "2023-05-09", 600, "mg", 3, "600 mg three times daily")
    r.med(DIAZEPAM_5, "2016-07-07", 5, "mg", 2, "5 mg twice daily")
    r.med(AMLODIPINE_5, "2012-02-02", 5, "mg", 1, "5 mg once daily")
    r.renal("2026-11-08", 52, 1.4, 4.5, 140)
    r.bp("2026-11-08", 118, 68)
    r.vitals("2026-11-08", 82.0, 177.0, 72)
    return r


def af_aspirin_only() -> Record:
    """(g) 76, atrial fibrillation with hypertension and diabetes (CHA2DS2-VASc 4), on aspirin,
    no anticoagulant."""
    r = Record("af_aspirin_only", "Harold", "Lindqvist", "male", "1950-06-18")
    r.condition("49436004", "Atrial fibrillation (disorder)", "2024-05-07")
    r.condition("59621000", "Essential hypertension (disorder)", "2007-09-12")
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "2013-01-25")
    r.med(ASPIRIN_81, "2024-05-07", 81, "mg", 1, "81 mg once daily")
    r.med(METOPROLOL_50, "2024-05-07", 50, "mg", 2, "50 mg twice daily")
    r.med(METFORMIN_1000, "2015-03-03", 1000, "mg", 2, "1000 mg twice daily with meals")
    r.med(LISINOPRIL_10, "2007-09-12", 10, "mg", 1, "10 mg once daily")
    r.med(ATORVASTATIN_20, "2013-02-11", 20, "mg", 1, "20 mg at night")
    r.renal("2026-09-15", 68, 1.1, 4.6, 139)
    r.lab("718-7", "Hemoglobin [Mass/volume] in Blood", 13.9, "g/dL", "2026-09-15")
    r.lab("777-3", "Platelets [#/volume] in Blood by Automated count", 230, "10*3/uL", "2026-09-15")
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 7.0, "%", "2026-09-15")
    r.bp("2026-09-15", 136, 78)
    r.vitals("2026-09-15", 84.0, 176.0, 78)
    r.vaccine(*FLU, "2025-10-21")
    return r


def hip_fracture_no_bone_protection() -> Record:
    """(h) 81, hip fracture six months ago, no bone-protecting treatment, vitamin D low."""
    r = Record("hip_fracture", "Margaret", "Holloway", "female", "1945-04-25")
    r.condition("5913000", "Fracture of neck of femur (disorder)", "2026-05-28")
    r.encounter(
        "IMP",
        "32485007",
        "Hospital admission (procedure)",
        "2026-05-28",
        ("5913000", "Fracture of neck of femur (disorder)"),
    )
    r.condition("59621000", "Essential hypertension (disorder)", "2005-06-14")
    r.condition("235595009", "Gastroesophageal reflux disease (disorder)", "2017-09-09")
    r.med(AMLODIPINE_5, "2005-06-14", 5, "mg", 1, "5 mg once daily")
    r.med(
        PARACETAMOL_325,
        "2026-06-05",
        650,
        "mg",
        4,
        "650 mg up to four times daily as needed for hip pain",
        prn=True,
    )
    r.lab(
        "1989-3", "25-hydroxyvitamin D3 [Mass/volume] in Serum or Plasma", 11, "ng/mL", "2026-06-02"
    )
    r.lab("17861-6", "Calcium [Mass/volume] in Serum or Plasma", 9.3, "mg/dL", "2026-06-02")
    r.renal("2026-06-02", 58, 0.92, 4.3, 138)
    r.lab("718-7", "Hemoglobin [Mass/volume] in Blood", 12.1, "g/dL", "2026-06-02")
    r.bp("2026-10-20", 132, 74)
    r.vitals("2026-10-20", 55.0, 157.0, 72)
    r.vaccine(*FLU, "2025-10-11")
    return r


def levothyroxine_amiodarone_no_tsh() -> Record:
    """(i) 72, hypothyroidism on levothyroxine, amiodarone for AF; last TSH over two years ago."""
    r = Record("levothyroxine_amiodarone", "Irene", "Castellano", "female", "1953-12-01")
    r.condition("40930008", "Hypothyroidism (disorder)", "2010-03-22")
    r.condition("49436004", "Atrial fibrillation (disorder)", "2023-11-14")
    r.condition("59621000", "Essential hypertension (disorder)", "2012-05-05")
    r.med(LEVOTHYROXINE_75, "2010-03-22", 75, "ug", 1, "75 micrograms each morning")
    r.med(AMIODARONE_200, "2024-01-09", 200, "mg", 1, "200 mg once daily")
    r.med(APIXABAN_5, "2023-11-14", 5, "mg", 2, "5 mg twice daily")
    r.med(AMLODIPINE_5, "2012-05-05", 5, "mg", 1, "5 mg once daily")
    r.lab("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma", 2.2, "m[IU]/L", "2024-09-12")
    r.lab(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        24,
        "U/L",
        "2024-09-12",
    )
    r.renal("2026-05-19", 70, 0.85, 4.4, 140)
    r.lab("718-7", "Hemoglobin [Mass/volume] in Blood", 13.2, "g/dL", "2026-05-19")
    r.bp("2026-05-19", 130, 78)
    r.vitals("2026-05-19", 66.0, 162.0, 64)
    r.vaccine(*FLU, "2025-10-30")
    return r


def diabetes_overtreated_hypoglycaemia() -> Record:
    """(j) 84, type 2 diabetes with HbA1c 6.1% on glimepiride and basal insulin; an emergency
    visit for hypoglycaemia last month."""
    r = Record("diabetes_hypo", "Arthur", "Fenwick", "male", "1942-08-08")
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "1998-10-19")
    r.condition("59621000", "Essential hypertension (disorder)", "2003-04-04")
    r.condition("302866003", "Hypoglycemia (disorder)", "2026-10-05", "resolved", "2026-10-05")
    r.encounter(
        "EMER",
        "50849002",
        "Emergency room admission (procedure)",
        "2026-10-05",
        ("302866003", "Hypoglycemia (disorder)"),
    )
    r.lab("2339-0", "Glucose [Mass/volume] in Blood", 42, "mg/dL", "2026-10-05")
    r.med(GLIMEPIRIDE_4, "2012-02-17", 4, "mg", 1, "4 mg once daily with breakfast")
    r.med(GLARGINE_PEN, "2018-06-26", 22, "[iU]", 1, "22 units subcutaneously at night")
    r.med(METFORMIN_500, "1998-10-19", 500, "mg", 2, "500 mg twice daily with meals")
    r.med(LISINOPRIL_10, "2003-04-04", 10, "mg", 1, "10 mg once daily")
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.3, "%", "2026-04-20")
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.1, "%", "2026-10-20")
    r.renal("2026-10-20", 61, 1.15, 4.5, 139)
    r.bp("2026-10-20", 128, 70)
    r.vitals("2026-10-20", 70.0, 172.0, 70)
    r.vaccine(*FLU, "2025-10-15")
    return r


VIGNETTES = (
    ckd4_metformin_nsaid_hyperkalaemia,
    parkinsons_dopamine_blockers,
    hfref_harmful_drugs,
    lithium_interactions,
    dementia_anticholinergic_falls,
    opioid_gabapentin_benzo_fall,
    af_aspirin_only,
    hip_fracture_no_bone_protection,
    levothyroxine_amiodarone_no_tsh,
    diabetes_overtreated_hypoglycaemia,
)


def write(vignettes: tuple[Callable[[], Record], ...], folder: Path) -> None:
    """Write each vignette's Bundle as ``<slug>.json`` in ``folder`` (every set's ``main``)."""
    for build in vignettes:
        record = build()
        path = folder / f"{record.slug}.json"
        path.write_text(json.dumps(record.bundle(), indent=1) + "\n", encoding="utf-8")
        print(path.relative_to(folder.parent.parent))


def main() -> None:
    write(VIGNETTES, HERE)


if __name__ == "__main__":
    main()
