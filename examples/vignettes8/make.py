"""Writes the 24 blind vignettes of set 8 (synthetic patients, FHIR R4 bundles).

Run from the repository root: ``python3.11 examples/vignettes8/make.py``. Every patient is
invented; codes are given only where the author was sure of them, else the text carries the
concept (as in real records). The clinic date of the set is 2026-11-30.
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
OBSCAT = "http://terminology.hl7.org/CodeSystem/observation-category"
INTERP = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"

R = dict[str, Any]


class Case:
    def __init__(self, slug: str, kind: str = "collection") -> None:
        self.slug = slug
        self.kind = kind
        self.entries: list[R] = []
        self.n = 0
        self.pid = self._id("patient")

    def _id(self, what: str) -> str:
        self.n += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"canoe-vignettes8/{self.slug}/{what}/{self.n}"))

    @property
    def subj(self) -> R:
        return {"reference": f"urn:uuid:{self.pid}"}

    def add(self, r: R, rid: str | None = None) -> str:
        rid = rid or self._id(r["resourceType"])
        r["id"] = rid
        e: R = {"fullUrl": f"urn:uuid:{rid}", "resource": r}
        if self.kind == "transaction":
            e["request"] = {"method": "POST", "url": r["resourceType"]}
        self.entries.append(e)
        return rid

    def patient(self, given: str, family: str, sex: str, birth: str) -> None:
        self.add(
            {
                "resourceType": "Patient",
                "name": [{"use": "official", "family": family, "given": [given]}],
                "gender": sex,
                "birthDate": birth,
            },
            self.pid,
        )

    def cond(
        self,
        text: str,
        snomed: str | None = None,
        onset: str | None = None,
        status: str = "active",
        category: str = "problem-list-item",
    ) -> None:
        code: R = {"text": text}
        if snomed:
            code["coding"] = [{"system": SNOMED, "code": snomed, "display": text}]
        r: R = {
            "resourceType": "Condition",
            "clinicalStatus": {"coding": [{"system": CLIN, "code": status}]},
            "verificationStatus": {"coding": [{"system": VER, "code": "confirmed"}]},
            "category": [
                {
                    "coding": [
                        {
                            "system": "http://terminology.hl7.org/CodeSystem/condition-category",
                            "code": category,
                        }
                    ]
                }
            ],
            "code": code,
            "subject": self.subj,
        }
        if onset:
            r["onsetDateTime"] = onset
            r["recordedDate"] = onset
        self.add(r)

    def med(
        self,
        text: str,
        rxnorm: str | None = None,
        dose: tuple[float, str] | None = None,
        freq: tuple[int, float, str] | None = None,
        sig: str | None = None,
        authored: str = "2026-01-10",
        status: str = "active",
        prn: bool = False,
        route: str | None = None,
        note: str | None = None,
    ) -> None:
        concept: R = {"text": text}
        if rxnorm:
            concept["coding"] = [{"system": RXNORM, "code": rxnorm, "display": text.split()[0]}]
        di: R = {"sequence": 1}
        if sig:
            di["text"] = sig
        if freq:
            di["timing"] = {
                "repeat": {"frequency": freq[0], "period": freq[1], "periodUnit": freq[2]}
            }
        if dose:
            di["doseAndRate"] = [
                {
                    "doseQuantity": {
                        "value": dose[0],
                        "unit": dose[1],
                        "system": UCUM,
                        "code": dose[1],
                    }
                }
            ]
        if prn:
            di["asNeededBoolean"] = True
        if route:
            di["route"] = {"text": route}
        r: R = {
            "resourceType": "MedicationRequest",
            "status": status,
            "intent": "order",
            "medicationCodeableConcept": concept,
            "subject": self.subj,
            "authoredOn": authored,
        }
        if len(di) > 1:
            r["dosageInstruction"] = [di]
        if note:
            r["note"] = [{"text": note}]
        self.add(r)

    def obs(
        self,
        display: str,
        value: float | str,
        unit: str | None = None,
        date: str = "2026-11-27",
        loinc: str | None = None,
        low: float | None = None,
        high: float | None = None,
        flag: str | None = None,
        category: str = "laboratory",
    ) -> None:
        code: R = {"text": display}
        if loinc:
            code["coding"] = [{"system": LOINC, "code": loinc, "display": display}]
        r: R = {
            "resourceType": "Observation",
            "status": "final",
            "category": [{"coding": [{"system": OBSCAT, "code": category}]}],
            "code": code,
            "subject": self.subj,
            "effectiveDateTime": f"{date}T09:00:00+00:00",
        }
        if isinstance(value, str):
            r["valueString"] = value
        else:
            r["valueQuantity"] = {"value": value, "unit": unit, "system": UCUM, "code": unit}
        if low is not None or high is not None:
            rr: R = {}
            if low is not None:
                rr["low"] = {"value": low, "unit": unit, "system": UCUM, "code": unit}
            if high is not None:
                rr["high"] = {"value": high, "unit": unit, "system": UCUM, "code": unit}
            r["referenceRange"] = [rr]
        if flag:
            r["interpretation"] = [{"coding": [{"system": INTERP, "code": flag}]}]
        self.add(r)

    def bp(self, sys_: int, dia: int, date: str = "2026-11-30", note: str | None = None) -> None:
        def comp(code: str, disp: str, v: int) -> R:
            return {
                "code": {"coding": [{"system": LOINC, "code": code, "display": disp}]},
                "valueQuantity": {"value": v, "unit": "mm[Hg]", "system": UCUM, "code": "mm[Hg]"},
            }

        r: R = {
            "resourceType": "Observation",
            "status": "final",
            "category": [{"coding": [{"system": OBSCAT, "code": "vital-signs"}]}],
            "code": {
                "coding": [{"system": LOINC, "code": "85354-9", "display": "Blood pressure panel"}],
                "text": "Blood pressure",
            },
            "subject": self.subj,
            "effectiveDateTime": f"{date}T09:10:00+00:00",
            "component": [
                comp("8480-6", "Systolic blood pressure", sys_),
                comp("8462-4", "Diastolic blood pressure", dia),
            ],
        }
        if note:
            r["note"] = [{"text": note}]
        self.add(r)

    def vital(
        self, loinc: str, display: str, value: float, unit: str, date: str = "2026-11-30"
    ) -> None:
        self.obs(display, value, unit, date, loinc, category="vital-signs")

    def allergy(
        self, text: str, reaction: str, criticality: str = "low", snomed: str | None = None
    ) -> None:
        code: R = {"text": text}
        if snomed:
            code["coding"] = [{"system": SNOMED, "code": snomed, "display": text}]
        self.add(
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
                "criticality": criticality,
                "code": code,
                "patient": self.subj,
            }
        )
        if reaction != "none":
            self.entries[-1]["resource"]["reaction"] = [
                {"description": reaction, "manifestation": [{"text": reaction}]}
            ]

    def encounter(
        self,
        reason: str,
        date: str = "2026-11-30",
        kind: str = "AMB",
        text: str = "Outpatient clinic review",
    ) -> None:
        self.add(
            {
                "resourceType": "Encounter",
                "status": "finished" if date < "2026-11-30" else "in-progress",
                "class": {
                    "system": "http://terminology.hl7.org/CodeSystem/v3-ActCode",
                    "code": kind,
                },
                "type": [{"text": text}],
                "subject": self.subj,
                "period": {"start": f"{date}T09:00:00+00:00"},
                "reasonCode": [{"text": reason}],
            }
        )

    def report(
        self, text: str, conclusion: str, date: str = "2026-11-20", loinc: str | None = None
    ) -> None:
        code: R = {"text": text}
        if loinc:
            code["coding"] = [{"system": LOINC, "code": loinc, "display": text}]
        self.add(
            {
                "resourceType": "DiagnosticReport",
                "status": "final",
                "code": code,
                "subject": self.subj,
                "effectiveDateTime": f"{date}T10:00:00+00:00",
                "issued": f"{date}T16:00:00+00:00",
                "conclusion": conclusion,
            }
        )

    def order(
        self,
        text: str,
        authored: str = "2026-11-20",
        status: str = "active",
        reason: str | None = None,
    ) -> None:
        r: R = {
            "resourceType": "ServiceRequest",
            "status": status,
            "intent": "order",
            "code": {"text": text},
            "subject": self.subj,
            "authoredOn": authored,
        }
        if reason:
            r["reasonCode"] = [{"text": reason}]
        self.add(r)

    def immunization(self, vaccine: str, date: str) -> None:
        self.add(
            {
                "resourceType": "Immunization",
                "status": "completed",
                "vaccineCode": {"text": vaccine},
                "patient": self.subj,
                "occurrenceDateTime": date,
            }
        )

    def write(self) -> None:
        b = {"resourceType": "Bundle", "type": self.kind, "entry": self.entries}
        (HERE / f"{self.slug}.json").write_text(json.dumps(b, indent=1) + "\n", encoding="utf-8")


def v01() -> None:
    c = Case("v01_msk_oa_gout_naproxen_ckd", "transaction")
    c.patient("Harold", "Pemberton", "male", "1945-03-14")
    c.encounter("Bilateral knee pain, osteoarthritis follow-up; gout flare last month")
    c.cond("Osteoarthritis of both knees", "396275006", "2015-06-01")
    c.cond("Gout", "90560007", "2019-02-11")
    c.cond("Hypertension", "38341003", "2008-01-20")
    c.cond("Chronic kidney disease stage 3", "433144002", "2021-05-05")
    c.cond("Duodenal ulcer 2017, bled, endoscopy", None, "2017-09-01", status="resolved")
    c.med(
        "naproxen 500 mg tablet",
        "7258",
        (500, "mg"),
        (2, 1, "d"),
        "500 mg twice daily",
        "2026-09-15",
    )
    c.med(
        "lisinopril 20 mg tablet",
        "29046",
        (20, "mg"),
        (1, 1, "d"),
        "20 mg once daily",
        "2020-03-01",
    )
    c.med(
        "furosemide 40 mg tablet",
        "4603",
        (40, "mg"),
        (1, 1, "d"),
        "40 mg each morning",
        "2023-07-01",
    )
    c.med(
        "allopurinol 300 mg tablet", "519", (300, "mg"), (1, 1, "d"), "300 mg daily", "2019-05-01"
    )
    c.med(
        "colchicine 500 micrograms tablet",
        None,
        (500, "ug"),
        (2, 1, "d"),
        "500 micrograms twice daily",
        "2026-10-20",
    )
    c.med(
        "clarithromycin 500 mg tablet",
        "21212",
        (500, "mg"),
        (2, 1, "d"),
        "500 mg twice daily for 7 days (chest infection)",
        "2026-11-26",
    )
    c.obs("Creatinine", 1.9, "mg/dL", "2026-11-27", "2160-0", 0.7, 1.3, "H")
    c.obs("eGFR", 34, "mL/min/{1.73_m2}", "2026-11-27", "62238-1", 60, None, "L")
    c.obs("eGFR", 48, "mL/min/{1.73_m2}", "2026-05-10", "62238-1", 60, None, "L")
    c.obs("Potassium", 5.8, "mmol/L", "2026-11-27", "2823-3", 3.5, 5.1, "H")
    c.obs("Sodium", 138, "mmol/L", "2026-11-27", "2951-2", 135, 145)
    c.obs("Urate", 0.41, "mmol/L", "2026-11-27", None, 0.2, 0.42)
    c.obs("Haemoglobin", 13.1, "g/dL", "2026-11-27", "718-7", 13.0, 17.0)
    c.bp(142, 84)
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v02() -> None:
    c = Case("v02_blood_ida_menorrhagia_levothyroxine")
    c.patient("Priya", "Nair", "female", "1984-07-02")
    c.encounter("Tiredness and breathlessness on stairs; iron deficiency anaemia review")
    c.cond("Iron deficiency anaemia", "87522002", "2026-08-01")
    c.cond("Heavy menstrual bleeding", "386692008", "2025-01-01")
    c.cond("Hypothyroidism", "40930008", "2016-04-01")
    c.cond("Reflux", None, "2022-03-01")
    c.med(
        "ferrous sulfate 200 mg tablet",
        None,
        (200, "mg"),
        (3, 1, "d"),
        "200 mg three times a day with meals",
        "2026-08-05",
    )
    c.med(
        "levothyroxine 100 micrograms tablet",
        "10582",
        (100, "ug"),
        (1, 1, "d"),
        "100 micrograms each morning",
        "2018-01-01",
    )
    c.med("omeprazole 40 mg capsule", "7646", (40, "mg"), (1, 1, "d"), "40 mg daily", "2022-03-01")
    c.med(
        "mefenamic acid", None, sig="take as needed during periods", authored="2025-02-01", prn=True
    )
    c.obs("Haemoglobin", 7.1, "g/dL", "2026-11-26", "718-7", 11.5, 15.5, "LL")
    c.obs("Haemoglobin", 8.9, "g/dL", "2026-08-01", "718-7", 11.5, 15.5, "L")
    c.obs("MCV", 71, "fL", "2026-11-26", "787-2", 80, 100, "L")
    c.obs("Ferritin", 6, "ug/L", "2026-11-26", "2276-4", 15, 150, "L")
    c.obs("Platelets", 412, "10*9/L", "2026-11-26", "777-3", 150, 400, "H")
    c.obs("TSH", 7.8, "mU/L", "2026-11-26", "3016-3", 0.4, 4.0, "H")
    c.obs("Free T4", 11.5, "pmol/L", "2026-11-26", "3024-7", 12, 22, "L")
    c.vital("8867-4", "Heart rate", 104, "/min")
    c.bp(112, 68)
    c.order(
        "Coeliac serology (tissue transglutaminase IgA) and total IgA",
        "2026-08-01",
        reason="Iron deficiency anaemia",
    )
    c.order("Pelvic ultrasound", "2026-08-01", reason="Heavy menstrual bleeding")
    c.allergy("Latex", "contact urticaria")
    c.write()


def v03() -> None:
    c = Case("v03_anaes_preop_apixaban_sglt2_obesity", "transaction")
    c.patient("Deborah", "Okafor", "female", "1970-05-21")
    c.encounter(
        "Pre-operative assessment: elective laparoscopic cholecystectomy booked 2026-12-10",
        text="Pre-operative assessment clinic",
    )
    c.cond("Symptomatic gallstones", None, "2026-06-01")
    c.cond("Atrial fibrillation", "49436004", "2023-02-01")
    c.cond("Type 2 diabetes mellitus", "44054006", "2017-09-01")
    c.cond("Obesity", "414916001", "2010-01-01")
    c.cond("Depression", "35489007", "2021-01-01")
    c.cond(
        "Snores loudly, witnessed apnoeas, daytime sleepiness (STOP-BANG 6)",
        None,
        "2026-11-30",
        category="encounter-diagnosis",
    )
    c.med(
        "apixaban 5 mg tablet", "1364430", (5, "mg"), (2, 1, "d"), "5 mg twice daily", "2023-02-10"
    )
    c.med(
        "empagliflozin 10 mg tablet",
        None,
        (10, "mg"),
        (1, 1, "d"),
        "10 mg once daily",
        "2024-05-01",
    )
    c.med(
        "metformin 1 g tablet", "6809", (1000, "mg"), (2, 1, "d"), "1 g twice daily", "2017-10-01"
    )
    c.med(
        "sertraline 100 mg tablet", "36437", (100, "mg"), (1, 1, "d"), "100 mg daily", "2021-02-01"
    )
    c.med(
        "tramadol 50 mg capsule",
        "10689",
        (50, "mg"),
        (4, 1, "d"),
        "50-100 mg up to four times a day when required for biliary pain",
        "2026-07-01",
        prn=True,
    )
    c.med(
        "bisoprolol 2.5 mg tablet", "19484", (2.5, "mg"), (1, 1, "d"), "2.5 mg daily", "2023-02-10"
    )
    c.obs("Hemoglobin A1c", 9.4, "%", "2026-11-18", "4548-4", 4.0, 6.0, "H")
    c.obs("Creatinine", 0.8, "mg/dL", "2026-11-18", "2160-0", 0.5, 1.1)
    c.obs("eGFR", 84, "mL/min/{1.73_m2}", "2026-11-18", "62238-1", 60, None)
    c.obs("Haemoglobin", 13.2, "g/dL", "2026-11-18", "718-7", 11.5, 15.5)
    c.obs("Potassium", 4.3, "mmol/L", "2026-11-18", "2823-3", 3.5, 5.1)
    c.vital("39156-5", "Body mass index", 41.2, "kg/m2")
    c.vital("29463-7", "Body weight", 112, "kg")
    c.bp(138, 86)
    c.allergy("Penicillin", "anaphylaxis 2009", "high")
    c.write()


def v04() -> None:
    c = Case("v04_cv_hfref_digoxin_amiodarone_spiro")
    c.patient("Gerald", "Whitcombe", "male", "1955-01-09")
    c.encounter("Heart failure clinic: more tired, nausea, poor appetite for a week")
    c.cond("Heart failure with reduced ejection fraction (LVEF 30%)", "84114007", "2022-04-01")
    c.cond("Atrial fibrillation", "49436004", "2024-06-01")
    c.cond("Hypertension", "38341003", "2005-01-01")
    c.cond("Chronic kidney disease stage 3", "433144002", "2023-01-01")
    c.med(
        "digoxin 250 micrograms tablet",
        "3407",
        (250, "ug"),
        (1, 1, "d"),
        "250 micrograms daily",
        "2024-06-10",
    )
    c.med(
        "amiodarone 200 mg tablet",
        "703",
        (200, "mg"),
        (1, 1, "d"),
        "200 mg daily (after loading)",
        "2026-11-05",
    )
    c.med("bisoprolol 5 mg tablet", "19484", (5, "mg"), (1, 1, "d"), "5 mg daily", "2022-05-01")
    c.med(
        "ramipril 5 mg capsule", "35296", (5, "mg"), (2, 1, "d"), "5 mg twice daily", "2022-05-01"
    )
    c.med(
        "spironolactone 25 mg tablet", "9997", (25, "mg"), (1, 1, "d"), "25 mg daily", "2023-03-01"
    )
    c.med(
        "furosemide 40 mg tablet",
        "4603",
        (40, "mg"),
        (1, 1, "d"),
        "40 mg each morning",
        "2022-04-10",
    )
    c.med(
        "aspirin 75 mg dispersible tablet",
        "1191",
        (75, "mg"),
        (1, 1, "d"),
        "75 mg daily",
        "2024-06-10",
    )
    c.med(
        "warfarin",
        "11289",
        sig="as per INR clinic",
        authored="2024-06-10",
        status="stopped",
        note="Stopped 2025-03 after a fall; not restarted",
    )
    c.obs("Digoxin", 2.6, "ng/mL", "2026-11-27", "10535-3", 0.5, 2.0, "H")
    c.obs("Potassium", 5.9, "mmol/L", "2026-11-27", "2823-3", 3.5, 5.1, "H")
    c.obs("Sodium", 136, "mmol/L", "2026-11-27", "2951-2", 135, 145)
    c.obs("Creatinine", 1.8, "mg/dL", "2026-11-27", "2160-0", 0.7, 1.3, "H")
    c.obs("eGFR", 35, "mL/min/{1.73_m2}", "2026-11-27", "62238-1", 60, None, "L")
    c.obs("NT-proBNP", 3400, "pg/mL", "2026-11-27", "33762-6", None, 400, "H")
    c.vital("8867-4", "Heart rate", 46, "/min")
    c.bp(104, 62)
    c.report(
        "Transthoracic echocardiogram",
        "Dilated left ventricle, LVEF 30%. Moderate functional mitral regurgitation.",
        "2026-03-02",
    )
    c.allergy("Nitrofurantoin", "rash")
    c.write()


def v05() -> None:
    c = Case("v05_skin_psoriasis_methotrexate_trimethoprim", "transaction")
    c.patient("Sandra", "Kowalczyk", "female", "1972-10-30")
    c.encounter("Dermatology review of psoriasis on methotrexate; mouth ulcers this week")
    c.cond("Psoriasis", "9014002", "2005-01-01")
    c.cond("Urinary tract infection", "68566005", "2026-11-24", category="encounter-diagnosis")
    c.med(
        "methotrexate 2.5 mg tablet",
        "6851",
        (15, "mg"),
        (1, 1, "wk"),
        "15 mg once a week on Mondays",
        "2024-02-01",
    )
    c.med(
        "folic acid 5 mg tablet",
        None,
        (5, "mg"),
        (1, 1, "wk"),
        "5 mg once a week, not on methotrexate day",
        "2024-02-01",
    )
    c.med(
        "trimethoprim 200 mg tablet",
        "10829",
        (200, "mg"),
        (2, 1, "d"),
        "200 mg twice daily for 7 days",
        "2026-11-24",
    )
    c.med(
        "calcipotriol/betamethasone gel",
        None,
        sig="apply once daily to plaques",
        authored="2023-01-01",
    )
    c.obs("ALT", 128, "U/L", "2026-11-27", "1742-6", 7, 40, "H")
    c.obs("ALT", 35, "U/L", "2026-08-20", "1742-6", 7, 40)
    c.obs("White blood cell count", 2.9, "10*9/L", "2026-11-27", "6690-2", 4.0, 11.0, "L")
    c.obs("Neutrophils", 1.2, "10*9/L", "2026-11-27", "751-8", 2.0, 7.5, "L")
    c.obs("Platelets", 168, "10*9/L", "2026-11-27", "777-3", 150, 400)
    c.obs("Creatinine", 72, "umol/L", "2026-11-27", "2160-0", 45, 90)
    c.obs(
        "Alcohol intake",
        "about 30 units per week (wine)",
        None,
        "2026-11-30",
        None,
        category="social-history",
    )
    c.allergy("Sulfonamide antibiotics", "rash", "low")
    c.write()


def v06() -> None:
    c = Case("v06_msk_ra_methotrexate_pregnant")
    c.patient("Chloe", "Brennan", "female", "2001-04-18")
    c.encounter("Rheumatology review; period 6 weeks late, home pregnancy test positive")
    c.cond("Rheumatoid arthritis", "69896004", "2023-06-01")
    c.med(
        "methotrexate 2.5 mg tablet",
        "6851",
        (20, "mg"),
        (1, 1, "wk"),
        "20 mg once weekly (Fridays)",
        "2024-01-15",
    )
    c.med("folic acid 5 mg tablet", None, (5, "mg"), (1, 1, "wk"), "5 mg weekly", "2024-01-15")
    c.med(
        "naproxen 500 mg tablet",
        "7258",
        (500, "mg"),
        (2, 1, "d"),
        "500 mg twice daily when needed",
        "2025-05-01",
        prn=True,
    )
    c.med(
        "hydroxychloroquine 200 mg tablet",
        None,
        (200, "mg"),
        (1, 1, "d"),
        "200 mg daily",
        "2024-01-15",
    )
    c.med(
        "combined oral contraceptive",
        None,
        sig="stopped by patient in August",
        authored="2022-01-01",
        status="stopped",
    )
    c.obs("hCG pregnancy test, serum", "Positive", None, "2026-11-28", None, flag="POS")
    c.obs("C reactive protein", 24, "mg/L", "2026-11-28", "1988-5", None, 5, "H")
    c.obs("ESR", 41, "mm/h", "2026-11-28", "4537-7", None, 20, "H")
    c.obs("ALT", 22, "U/L", "2026-11-28", "1742-6", 7, 40)
    c.obs("Neutrophils", 4.1, "10*9/L", "2026-11-28", "751-8", 2.0, 7.5)
    c.obs("25-hydroxyvitamin D", 18, "nmol/L", "2026-11-28", "1989-3", 50, None, "L")
    c.bp(118, 72)
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v07() -> None:
    c = Case("v07_endo_t1dm_young_dka_albuminuria", "transaction")
    c.patient("Liam", "Doherty", "male", "2007-02-11")
    c.encounter(
        "Young adult diabetes clinic; vomiting since last night, abdominal pain, "
        "ran out of basal insulin"
    )
    c.cond("Type 1 diabetes mellitus", "46635009", "2015-03-01")
    c.cond("Diabetic ketoacidosis, admitted", None, "2026-06-12", status="resolved")
    c.med(
        "insulin glargine 100 units/mL",
        "274783",
        (24, "[iU]"),
        (1, 1, "d"),
        "24 units at night",
        "2023-01-01",
    )
    c.med(
        "insulin aspart 100 units/mL",
        None,
        sig="per carbohydrate ratio 1 unit:10 g",
        authored="2023-01-01",
        status="on-hold",
    )
    c.obs("Glucose", 28.4, "mmol/L", "2026-11-30", "2345-7", 3.9, 7.8, "HH")
    c.obs("Blood ketones (beta-hydroxybutyrate)", 3.8, "mmol/L", "2026-11-30", None, None, 0.6, "H")
    c.obs("Bicarbonate", 13, "mmol/L", "2026-11-30", "1963-8", 22, 29, "L")
    c.obs("Potassium", 5.3, "mmol/L", "2026-11-30", "2823-3", 3.5, 5.1, "H")
    c.obs("Hemoglobin A1c", 11.2, "%", "2026-10-01", "4548-4", 4.0, 6.0, "H")
    c.obs("Albumin/creatinine ratio, urine", 8.4, "mg/mmol", "2026-10-01", "9318-7", None, 3, "H")
    c.obs("Creatinine", 0.9, "mg/dL", "2026-10-01", "2160-0", 0.7, 1.3)
    c.obs(
        "Retinal screening",
        "Did not attend (2024, 2025)",
        None,
        "2025-09-01",
        None,
        category="exam",
    )
    c.vital("8867-4", "Heart rate", 118, "/min")
    c.vital("9279-1", "Respiratory rate", 28, "/min")
    c.bp(108, 64)
    c.allergy("No known allergies", "none", snomed="716186003")
    c.write()


def v08() -> None:
    c = Case("v08_blood_gastric_bypass_deficiencies_ibuprofen")
    c.patient("Janine", "Holloway", "female", "1978-12-03")
    c.encounter("Bariatric nutrition follow-up; tingling feet, fatigue, epigastric pain")
    c.cond("Roux-en-Y gastric bypass (2020)", None, "2020-05-01")
    c.cond(
        "Type 2 diabetes mellitus, in remission after surgery",
        None,
        "2014-01-01",
        status="remission",
    )
    c.cond("Low back pain", None, "2026-06-01")
    c.med(
        "ibuprofen 400 mg tablet",
        "5640",
        (400, "mg"),
        (3, 1, "d"),
        "400 mg three times a day",
        "2026-06-10",
    )
    c.med("omeprazole 20 mg capsule", "7646", (20, "mg"), (1, 1, "d"), "20 mg daily", "2020-05-10")
    c.med(
        "multivitamin and mineral tablet",
        None,
        sig="one daily (patient says she stopped it last year)",
        authored="2020-05-10",
    )
    c.med(
        "metformin 500 mg tablet",
        "6809",
        (500, "mg"),
        (2, 1, "d"),
        "500 mg twice daily",
        "2015-01-01",
    )
    c.obs("Haemoglobin", 9.8, "g/dL", "2026-11-25", "718-7", 11.5, 15.5, "L")
    c.obs("MCV", 96, "fL", "2026-11-25", "787-2", 80, 100)
    c.obs("Ferritin", 9, "ug/L", "2026-11-25", "2276-4", 15, 150, "L")
    c.obs("Vitamin B12", 98, "ng/L", "2026-11-25", "2132-9", 200, 900, "L")
    c.obs("Folate", 5.1, "ug/L", "2026-11-25", "2284-8", 3.0, 20)
    c.obs("25-hydroxyvitamin D", 21, "nmol/L", "2026-11-25", "1989-3", 50, None, "L")
    c.obs("Magnesium", 0.52, "mmol/L", "2026-11-25", "19123-9", 0.7, 1.0, "L")
    c.obs("Calcium (adjusted)", 2.18, "mmol/L", "2026-11-25", "17861-6", 2.2, 2.6, "L")
    c.obs("Hemoglobin A1c", 5.6, "%", "2026-11-25", "4548-4", 4.0, 6.0)
    c.vital("39156-5", "Body mass index", 29.8, "kg/m2")
    c.allergy("Codeine", "vomiting")
    c.write()


def v09() -> None:
    c = Case("v09_resp_copd_theophylline_cipro_hypoxia", "transaction")
    c.patient("Margaret", "Ellison", "female", "1946-08-08")
    c.encounter("COPD review after exacerbation; nausea and palpitations since starting antibiotic")
    c.cond("Chronic obstructive pulmonary disease", "13645005", "2012-01-01")
    c.cond("Osteoporosis", "64859006", "2024-03-01")
    c.cond(
        "Current smoker, 10 cigarettes per day", None, "1964-01-01", category="encounter-diagnosis"
    )
    c.med(
        "theophylline modified release 200 mg tablet",
        None,
        (200, "mg"),
        (2, 1, "d"),
        "200 mg twice daily",
        "2019-01-01",
    )
    c.med(
        "ciprofloxacin 500 mg tablet",
        "2551",
        (500, "mg"),
        (2, 1, "d"),
        "500 mg twice daily for 7 days",
        "2026-11-25",
    )
    c.med(
        "budesonide/glycopyrronium/formoterol inhaler",
        None,
        sig="2 puffs twice daily",
        authored="2023-01-01",
    )
    c.med(
        "salbutamol 100 micrograms inhaler",
        None,
        sig="2 puffs as needed",
        authored="2012-01-01",
        prn=True,
    )
    c.med(
        "prednisolone 5 mg tablet",
        "8638",
        (5, "mg"),
        (1, 1, "d"),
        "5 mg daily (long term)",
        "2022-06-01",
    )
    c.obs("Theophylline", 24, "mg/L", "2026-11-28", None, 10, 20, "H")
    c.obs(
        "Oxygen saturation (pulse oximetry), on room air at rest",
        86,
        "%",
        "2026-11-30",
        "59408-5",
        94,
        98,
        "L",
        category="vital-signs",
    )
    c.obs(
        "Oxygen saturation (pulse oximetry), on room air",
        87,
        "%",
        "2026-10-12",
        "59408-5",
        94,
        98,
        "L",
        category="vital-signs",
    )
    c.obs("Potassium", 3.4, "mmol/L", "2026-11-28", "2823-3", 3.5, 5.1, "L")
    c.obs("Sodium", 139, "mmol/L", "2026-11-28", "2951-2", 135, 145)
    c.obs("FEV1 % predicted", 38, "%", "2026-09-01", None)
    c.vital("8867-4", "Heart rate", 112, "/min")
    c.report(
        "DXA scan",
        "Lumbar spine T-score -3.1, femoral neck T-score -2.8: osteoporosis.",
        "2024-03-01",
    )
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v10() -> None:
    c = Case("v10_obs_pregnant_epilepsy_valproate_ramipril")
    c.patient("Aisha", "Rahman", "female", "1988-02-25")
    c.encounter("Booking visit, 14 weeks pregnant (second pregnancy)", text="Antenatal clinic")
    c.cond("Pregnancy, 14 weeks", "77386006", "2026-08-24")
    c.cond("Epilepsy (generalised tonic-clonic)", "84757009", "2006-01-01")
    c.cond("Hypertension", "38341003", "2023-01-01")
    c.med(
        "sodium valproate modified release 500 mg tablet",
        None,
        (500, "mg"),
        (2, 1, "d"),
        "500 mg twice daily",
        "2010-01-01",
    )
    c.med("ramipril 5 mg capsule", "35296", (5, "mg"), (1, 1, "d"), "5 mg daily", "2023-02-01")
    c.med(
        "folic acid 400 micrograms tablet",
        None,
        (400, "ug"),
        (1, 1, "d"),
        "400 micrograms daily",
        "2026-10-20",
    )
    c.bp(148, 96)
    c.obs(
        "Urine culture (midstream)",
        "Escherichia coli >10^5 CFU/mL, sensitive to nitrofurantoin and cefalexin",
        None,
        "2026-11-26",
        None,
        flag="A",
    )
    c.obs("Urine dipstick protein", "trace", None, "2026-11-30", None)
    c.obs("Haemoglobin", 11.8, "g/dL", "2026-11-26", "718-7", 11.0, 15.0)
    c.obs("Platelets", 233, "10*9/L", "2026-11-26", "777-3", 150, 400)
    c.obs("Creatinine", 58, "umol/L", "2026-11-26", "2160-0", 45, 90)
    c.order("Dating and nuchal translucency ultrasound", "2026-11-10", status="completed")
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v11() -> None:
    c = Case("v11_cns_parkinsons_metoclopramide_falls", "transaction")
    c.patient("Eileen", "Marsh", "female", "1952-06-19")
    c.encounter(
        "Movement disorders clinic: worse stiffness and tremor, two falls this month, "
        "confused at night"
    )
    c.cond("Parkinson's disease", "49049000", "2016-01-01")
    c.cond("Dementia (Parkinson's disease dementia)", "52448006", "2024-09-01")
    c.cond("Nausea", None, "2026-11-05", category="encounter-diagnosis")
    c.cond("Falls", None, "2026-11-01", category="encounter-diagnosis")
    c.med(
        "co-careldopa 25/100 tablet", None, sig="one tablet four times a day", authored="2016-03-01"
    )
    c.med(
        "metoclopramide 10 mg tablet",
        None,
        (10, "mg"),
        (3, 1, "d"),
        "10 mg three times a day",
        "2026-11-06",
    )
    c.med(
        "amitriptyline 25 mg tablet", None, (25, "mg"), (1, 1, "d"), "25 mg at night", "2025-02-01"
    )
    c.med("donepezil 10 mg tablet", None, (10, "mg"), (1, 1, "d"), "10 mg at night", "2024-10-01")
    c.bp(134, 78, note="lying")
    c.bp(96, 58, note="standing after 3 minutes, dizzy")
    c.vital("8867-4", "Heart rate", 49, "/min")
    c.obs("Sodium", 137, "mmol/L", "2026-11-20", "2951-2", 135, 145)
    c.obs("eGFR", 66, "mL/min/{1.73_m2}", "2026-11-20", "62238-1", 60, None)
    c.allergy("Haloperidol", "severe rigidity", "high")
    c.write()


def v12() -> None:
    c = Case("v12_eye_ocular_hypertension_timolol_asthma")
    c.patient("Tomasz", "Nowak", "male", "1987-01-30")
    c.encounter("Glaucoma clinic: IOP check; wheezy and short of breath at night since new drops")
    c.cond("Ocular hypertension, both eyes", None, "2026-10-01")
    c.cond("Asthma", "195967001", "1995-01-01")
    c.cond("Trabeculectomy right eye 2026-11-10", None, "2026-11-10")
    c.med(
        "timolol 0.5% eye drops", None, sig="one drop both eyes twice daily", authored="2026-11-02"
    )
    c.med(
        "acetazolamide 250 mg tablet",
        None,
        (250, "mg"),
        (4, 1, "d"),
        "250 mg four times a day",
        "2026-11-10",
    )
    c.med(
        "latanoprost 0.005% eye drops",
        None,
        sig="one drop at night left eye",
        authored="2026-10-01",
        status="on-hold",
    )
    c.med(
        "beclometasone 100 micrograms inhaler",
        None,
        sig="2 puffs twice daily",
        authored="2018-01-01",
    )
    c.med(
        "salbutamol 100 micrograms inhaler",
        None,
        sig="2 puffs as needed",
        authored="1995-01-01",
        prn=True,
    )
    c.obs(
        "Intraocular pressure, left eye",
        27,
        "mm[Hg]",
        "2026-11-30",
        None,
        10,
        21,
        "H",
        category="exam",
    )
    c.obs(
        "Intraocular pressure, right eye", 12, "mm[Hg]", "2026-11-30", None, 10, 21, category="exam"
    )
    c.obs("Potassium", 3.0, "mmol/L", "2026-11-27", "2823-3", 3.5, 5.1, "L")
    c.obs("Bicarbonate", 17, "mmol/L", "2026-11-27", "1963-8", 22, 29, "L")
    c.obs("Peak expiratory flow", 390, "L/min", "2026-11-30", None, category="exam")
    c.order(
        "Visual field test (Humphrey 24-2), both eyes", "2026-10-01", reason="Ocular hypertension"
    )
    c.allergy("Sulfonamide antibiotics", "rash", "low")
    c.write()


def v13() -> None:
    c = Case("v13_inf_osteomyelitis_linezolid_sertraline", "transaction")
    c.patient("Raymond", "Achterberg", "male", "1960-09-04")
    c.encounter(
        "OPAT / infection clinic: diabetic foot osteomyelitis, week 4 of oral antibiotic; "
        "agitated, sweaty, shaky"
    )
    c.cond("Osteomyelitis of left first metatarsal (MRSA)", None, "2026-10-28")
    c.cond("Type 2 diabetes mellitus", "44054006", "2009-01-01")
    c.cond("Depression", "35489007", "2020-01-01")
    c.cond("Peripheral neuropathy, diabetic", None, "2018-01-01")
    c.med(
        "linezolid 600 mg tablet",
        None,
        (600, "mg"),
        (2, 1, "d"),
        "600 mg twice daily",
        "2026-11-02",
    )
    c.med(
        "sertraline 100 mg tablet", "36437", (100, "mg"), (1, 1, "d"), "100 mg daily", "2020-02-01"
    )
    c.med(
        "metformin 1 g tablet", "6809", (1000, "mg"), (2, 1, "d"), "1 g twice daily", "2009-02-01"
    )
    c.med("insulin glargine", "274783", sig="units per diabetes team", authored="2021-01-01")
    c.med(
        "flucloxacillin",
        None,
        sig="1 g four times a day",
        authored="2026-10-20",
        status="stopped",
        note="Switched after MRSA grown",
    )
    c.obs("Platelets", 72, "10*9/L", "2026-11-27", "777-3", 150, 400, "L")
    c.obs("Platelets", 214, "10*9/L", "2026-11-01", "777-3", 150, 400)
    c.obs("Haemoglobin", 11.6, "g/dL", "2026-11-27", "718-7", 13.0, 17.0, "L")
    c.obs("C reactive protein", 18, "mg/L", "2026-11-27", "1988-5", None, 5, "H")
    c.obs("Hemoglobin A1c", 72, "mmol/mol", "2026-10-28", "4548-4", None, 48, "H")
    c.obs("eGFR", 52, "mL/min/{1.73_m2}", "2026-11-27", "62238-1", 60, None, "L")
    c.vital("8310-5", "Body temperature", 38.1, "Cel")
    c.vital("8867-4", "Heart rate", 108, "/min")
    c.order("MRI left foot", "2026-11-20", reason="Response of osteomyelitis")
    c.allergy("Penicillin", "mild rash in childhood (unconfirmed)", "low")
    c.write()


def v14() -> None:
    c = Case("v14_vacc_pmr_prednisolone_live_zoster")
    c.patient("Kenneth", "Barlow", "male", "1947-04-02")
    c.encounter("Practice nurse vaccination review (winter programme)", text="Vaccination clinic")
    c.cond("Polymyalgia rheumatica", "65323003", "2026-09-01")
    c.cond("Chronic obstructive pulmonary disease", "13645005", "2015-01-01")
    c.cond("Type 2 diabetes mellitus", "44054006", "2012-01-01")
    c.med(
        "prednisolone 5 mg tablet",
        "8638",
        (20, "mg"),
        (1, 1, "d"),
        "20 mg daily (taper planned)",
        "2026-09-05",
    )
    c.med(
        "metformin 500 mg tablet",
        "6809",
        (500, "mg"),
        (2, 1, "d"),
        "500 mg twice daily",
        "2012-02-01",
    )
    c.med("tiotropium inhaler", None, sig="2 puffs once daily", authored="2016-01-01")
    c.med(
        "shingles vaccine live (Zostavax) 0.65 mL",
        None,
        sig="single subcutaneous dose today",
        authored="2026-11-30",
        route="subcutaneous",
    )
    c.immunization("Influenza vaccine (2025-26 season)", "2025-10-14")
    c.immunization("COVID-19 vaccine booster", "2025-10-14")
    c.obs("Hemoglobin A1c", 63, "mmol/mol", "2026-11-10", "4548-4", None, 48, "H")
    c.obs("ESR", 18, "mm/h", "2026-11-10", "4537-7", None, 20)
    c.obs("C reactive protein", 4, "mg/L", "2026-11-10", "1988-5", None, 5)
    c.bp(136, 80)
    c.allergy("Egg", "hives as a child", "low")
    c.write()


def v15() -> None:
    c = Case("v15_msk_ra_hydroxychloroquine_leflunomide_alt")
    c.patient("Helen", "Castellano", "female", "1973-03-12")
    c.encounter("Rheumatology follow-up for rheumatoid arthritis; headaches")
    c.cond("Rheumatoid arthritis", "69896004", "2018-01-01")
    c.cond("Breast cancer, treated 2023, on tamoxifen", None, "2023-02-01")
    c.med(
        "hydroxychloroquine 200 mg tablet",
        None,
        (400, "mg"),
        (1, 1, "d"),
        "400 mg daily",
        "2019-06-01",
    )
    c.med("leflunomide 20 mg tablet", None, (20, "mg"), (1, 1, "d"), "20 mg daily", "2025-09-01")
    c.med("tamoxifen 20 mg tablet", None, (20, "mg"), (1, 1, "d"), "20 mg daily", "2023-05-01")
    c.med("paracetamol 1 g", None, sig="as needed", authored="2018-01-01", prn=True)
    c.vital("29463-7", "Body weight", 52, "kg")
    c.bp(164, 98)
    c.bp(158, 96, "2026-09-01")
    c.obs("ALT", 142, "U/L", "2026-11-24", "1742-6", 7, 40, "H")
    c.obs("ALT", 61, "U/L", "2026-09-01", "1742-6", 7, 40, "H")
    c.obs("Neutrophils", 3.4, "10*9/L", "2026-11-24", "751-8", 2.0, 7.5)
    c.obs("Creatinine", 0.8, "mg/dL", "2026-11-24", "2160-0", 0.5, 1.1)
    c.obs(
        "Retinal screening (SD-OCT and visual fields)",
        "no record of screening",
        None,
        "2026-11-30",
        None,
        category="exam",
    )
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v16() -> None:
    c = Case("v16_inf_hiv_ritonavir_simvastatin_cd4", "transaction")
    c.patient("Grace", "Mensah", "female", "1979-08-15")
    c.encounter("HIV clinic review; muscle aches and dark urine; missed doses")
    c.cond("HIV infection", "86406008", "2011-01-01")
    c.cond("Hypercholesterolaemia", None, "2022-01-01")
    c.cond("Allergic rhinitis", "61582004", "2018-01-01")
    c.med(
        "darunavir 800 mg / ritonavir 100 mg",
        None,
        sig="once daily with food",
        authored="2019-01-01",
    )
    c.med("emtricitabine/tenofovir disoproxil tablet", None, sig="one daily", authored="2019-01-01")
    c.med(
        "simvastatin 40 mg tablet", "36567", (40, "mg"), (1, 1, "d"), "40 mg at night", "2026-10-15"
    )
    c.med("fluticasone propionate nasal spray", None, authored="2026-09-01")
    c.obs("HIV-1 RNA viral load", 1200, "{copies}/mL", "2026-11-20", None, None, 50, "H")
    c.obs("HIV-1 RNA viral load", 40, "{copies}/mL", "2026-05-01", None, None, 50)
    c.obs("CD4 count", 180, "/uL", "2026-11-20", "24467-3", 500, 1500, "L")
    c.obs("Creatine kinase", 4800, "U/L", "2026-11-27", "2157-6", 25, 200, "H")
    c.obs("Creatinine", 1.1, "mg/dL", "2026-11-27", "2160-0", 0.5, 1.1)
    c.obs("ALT", 38, "U/L", "2026-11-27", "1742-6", 7, 40)
    c.obs("LDL cholesterol", 4.1, "mmol/L", "2026-10-01", "13457-7", None, 3.0, "H")
    c.allergy("Co-trimoxazole", "rash (2012), mild", "low")
    c.write()


def v17() -> None:
    c = Case("v17_anaes_preop_hip_recent_des_metformin")
    c.patient("Walter", "Fenwick", "male", "1951-11-22")
    c.encounter(
        "Pre-operative assessment: elective left total hip replacement listed for 2026-12-14",
        text="Pre-operative assessment clinic",
    )
    c.cond("Osteoarthritis of left hip", "396275006", "2020-01-01")
    c.cond(
        "Non-ST elevation myocardial infarction, drug-eluting stent to LAD 2026-08-10",
        "22298006",
        "2026-08-10",
    )
    c.cond("Type 2 diabetes mellitus", "44054006", "2010-01-01")
    c.cond("Chronic kidney disease stage 4", "431857002", "2025-01-01")
    c.cond("Hypertension", "38341003", "2004-01-01")
    c.med("aspirin 75 mg tablet", "1191", (75, "mg"), (1, 1, "d"), "75 mg daily", "2026-08-10")
    c.med(
        "ticagrelor 90 mg tablet", None, (90, "mg"), (2, 1, "d"), "90 mg twice daily", "2026-08-10"
    )
    c.med(
        "atorvastatin 80 mg tablet",
        "83367",
        (80, "mg"),
        (1, 1, "d"),
        "80 mg at night",
        "2026-08-10",
    )
    c.med(
        "metformin 1 g tablet", "6809", (1000, "mg"), (2, 1, "d"), "1 g twice daily", "2010-02-01"
    )
    c.med(
        "bendroflumethiazide 2.5 mg tablet",
        None,
        (2.5, "mg"),
        (1, 1, "d"),
        "2.5 mg daily",
        "2004-02-01",
    )
    c.med(
        "bisoprolol 2.5 mg tablet", "19484", (2.5, "mg"), (1, 1, "d"), "2.5 mg daily", "2026-08-10"
    )
    c.obs("Haemoglobin", 10.9, "g/dL", "2026-11-24", "718-7", 13.0, 17.0, "L")
    c.obs("Ferritin", 25, "ug/L", "2026-11-24", "2276-4", 30, 400, "L")
    c.obs("Potassium", 3.0, "mmol/L", "2026-11-24", "2823-3", 3.5, 5.1, "L")
    c.obs("eGFR", 28, "mL/min/{1.73_m2}", "2026-11-24", "62238-1", 60, None, "L")
    c.obs("Creatinine", 2.2, "mg/dL", "2026-11-24", "2160-0", 0.7, 1.3, "H")
    c.obs("Hemoglobin A1c", 7.2, "%", "2026-11-24", "4548-4", 4.0, 6.0, "H")
    c.report("12-lead ECG", "Sinus rhythm 64/min, old anterior Q waves, QTc 430 ms.", "2026-11-24")
    c.allergy("Latex", "anaphylaxis during surgery 1998", "high")
    c.write()


def v18() -> None:
    c = Case("v18_resp_asthma_propranolol_saba_nodule", "transaction")
    c.patient("Daniel", "Osei", "male", "1993-05-09")
    c.encounter("Asthma clinic after emergency department attendance last week")
    c.cond("Asthma", "195967001", "2005-01-01")
    c.cond("Migraine", "37796009", "2024-01-01")
    c.cond("Anxiety", "197480006", "2024-01-01")
    c.med(
        "salbutamol 100 micrograms inhaler",
        None,
        sig="2 puffs when needed; issued 3 inhalers in the last month",
        authored="2005-01-01",
        prn=True,
    )
    c.med(
        "propranolol 40 mg tablet", None, (40, "mg"), (2, 1, "d"), "40 mg twice daily", "2026-09-10"
    )
    c.med(
        "beclometasone 100 micrograms inhaler",
        None,
        sig="2 puffs twice daily",
        authored="2019-01-01",
        status="stopped",
        note="Stopped by patient 2025",
    )
    c.med(
        "prednisolone 40 mg",
        "8638",
        (40, "mg"),
        (1, 1, "d"),
        "40 mg daily for 5 days (ED)",
        "2026-11-22",
        status="completed",
    )
    c.obs("Peak expiratory flow", 310, "L/min", "2026-11-30", None, category="exam")
    c.obs("Peak expiratory flow, best", 560, "L/min", "2024-01-01", None, category="exam")
    c.obs("Eosinophils", 0.6, "10*9/L", "2026-11-22", None, 0.0, 0.4, "H")
    c.obs("Fractional exhaled nitric oxide", 55, "ppb", "2026-11-30", None, None, 25, "H")
    c.vital("59408-5", "Oxygen saturation", 96, "%")
    c.report(
        "Chest X-ray",
        "No consolidation or pneumothorax. Incidental 9 mm nodule in the right upper lobe; "
        "recommend CT chest follow-up.",
        "2026-11-22",
    )
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v19() -> None:
    c = Case("v19_blood_dvt_rivaroxaban_coc_stjohns")
    c.patient("Natalie", "Fairbrother", "female", "1986-09-27")
    c.encounter("Anticoagulation clinic: 3-month review after deep vein thrombosis; heavy periods")
    c.cond("Deep vein thrombosis of left leg (unprovoked)", "128053003", "2026-08-28")
    c.cond("Obesity", "414916001", "2015-01-01")
    c.cond("Low mood", None, "2026-10-01")
    c.med(
        "rivaroxaban 20 mg tablet",
        "1114195",
        (20, "mg"),
        (1, 1, "d"),
        "20 mg once daily with food",
        "2026-09-18",
    )
    c.med(
        "rivaroxaban 15 mg tablet",
        "1114195",
        (15, "mg"),
        (2, 1, "d"),
        "15 mg twice daily for 21 days",
        "2026-08-28",
        status="completed",
    )
    c.med(
        "ethinylestradiol/levonorgestrel 30/150 microgram tablet",
        None,
        sig="one daily, 21 days in 28",
        authored="2019-01-01",
    )
    c.med("St John's wort", None, authored="2026-10-15", note="Self-bought, reported by patient")
    c.obs("Haemoglobin", 10.8, "g/dL", "2026-11-26", "718-7", 11.5, 15.5, "L")
    c.obs("Ferritin", 11, "ug/L", "2026-11-26", "2276-4", 15, 150, "L")
    c.obs("Creatinine", 0.7, "mg/dL", "2026-11-26", "2160-0", 0.5, 1.1)
    c.obs("Platelets", 254, "10*9/L", "2026-11-26", "777-3", 150, 400)
    c.vital("39156-5", "Body mass index", 34, "kg/m2")
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v20() -> None:
    c = Case("v20_blood_crohns_azathioprine_allopurinol", "transaction")
    c.patient("Marcus", "Lindqvist", "male", "1993-02-14")
    c.encounter("IBD clinic: sore throat and fever for 2 days")
    c.cond("Crohn's disease, ileal resection 2022", "34000006", "2015-01-01")
    c.cond("Gout", "90560007", "2026-10-01")
    c.med(
        "azathioprine 50 mg tablet", "1256", (150, "mg"), (1, 1, "d"), "150 mg daily", "2023-01-01"
    )
    c.med(
        "allopurinol 100 mg tablet", "519", (100, "mg"), (1, 1, "d"), "100 mg daily", "2026-11-03"
    )
    c.med("mesalazine", None, status="stopped", authored="2016-01-01")
    c.obs("TPMT activity", "intermediate (heterozygous)", None, "2022-12-01", None, flag="A")
    c.obs("White blood cell count", 2.1, "10*9/L", "2026-11-28", "6690-2", 4.0, 11.0, "L")
    c.obs("Neutrophils", 0.6, "10*9/L", "2026-11-28", "751-8", 2.0, 7.5, "LL")
    c.obs("Haemoglobin", 12.1, "g/dL", "2026-11-28", "718-7", 13.0, 17.0, "L")
    c.obs("Platelets", 121, "10*9/L", "2026-11-28", "777-3", 150, 400, "L")
    c.obs("Vitamin B12", 140, "ng/L", "2026-09-01", "2132-9", 200, 900, "L")
    c.obs("C reactive protein", 6, "mg/L", "2026-09-01", "1988-5", None, 5, "H")
    c.vital("8310-5", "Body temperature", 38.4, "Cel")
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v21() -> None:
    c = Case("v21_cv_frail_af_apixaban_dose_hyponatraemia")
    c.patient("Dorothy", "Sallis", "female", "1937-07-07")
    c.encounter("Cardiology follow-up for atrial fibrillation; confusion and unsteady for a week")
    c.cond("Atrial fibrillation", "49436004", "2019-01-01")
    c.cond("Hypertension", "38341003", "1990-01-01")
    c.cond("Chronic kidney disease stage 4", "431857002", "2024-01-01")
    c.cond("Recurrent urinary tract infection", None, "2025-01-01")
    c.med(
        "apixaban 5 mg tablet", "1364430", (5, "mg"), (2, 1, "d"), "5 mg twice daily", "2019-02-01"
    )
    c.med("aspirin 75 mg tablet", "1191", (75, "mg"), (1, 1, "d"), "75 mg daily", "2009-01-01")
    c.med(
        "bendroflumethiazide 2.5 mg tablet",
        None,
        (2.5, "mg"),
        (1, 1, "d"),
        "2.5 mg daily",
        "1995-01-01",
    )
    c.med(
        "nitrofurantoin 50 mg capsule",
        None,
        (50, "mg"),
        (1, 1, "d"),
        "50 mg at night (prophylaxis)",
        "2025-03-01",
    )
    c.med("amlodipine 5 mg tablet", "17767", (5, "mg"), (1, 1, "d"), "5 mg daily", "2015-01-01")
    c.med("digoxin", "3407", authored="2019-02-01", status="stopped")
    c.obs("Sodium", 124, "mmol/L", "2026-11-27", "2951-2", 135, 145, "LL")
    c.obs("Potassium", 3.6, "mmol/L", "2026-11-27", "2823-3", 3.5, 5.1)
    c.obs("Creatinine", 1.9, "mg/dL", "2026-11-27", "2160-0", 0.5, 1.1, "H")
    c.obs("eGFR", 24, "mL/min/{1.73_m2}", "2026-11-27", "62238-1", 60, None, "L")
    c.obs("Haemoglobin", 11.9, "g/dL", "2026-11-27", "718-7", 11.5, 15.5)
    c.vital("29463-7", "Body weight", 48, "kg")
    c.bp(128, 70)
    c.allergy("Penicillin", "rash", "low")
    c.write()


def v22() -> None:
    c = Case("v22_endo_addisons_vomiting_thyroid")
    c.patient("Rebecca", "Tan", "female", "1999-01-05")
    c.encounter("Endocrine clinic: vomiting and diarrhoea since yesterday, dizzy on standing")
    c.cond("Primary adrenal insufficiency (Addison's disease)", None, "2021-01-01")
    c.cond("Hypothyroidism (autoimmune)", "40930008", "2020-01-01")
    c.cond("Gastroenteritis", None, "2026-11-29", category="encounter-diagnosis")
    c.med(
        "hydrocortisone 10 mg tablet",
        None,
        sig="10 mg on waking, 5 mg at noon, 5 mg at 4 pm",
        authored="2021-01-01",
    )
    c.med(
        "fludrocortisone 50 micrograms tablet",
        None,
        (50, "ug"),
        (1, 1, "d"),
        "50 micrograms daily",
        "2021-01-01",
    )
    c.med(
        "levothyroxine 125 micrograms tablet",
        "10582",
        (125, "ug"),
        (1, 1, "d"),
        "125 micrograms daily",
        "2024-06-01",
    )
    c.obs("Sodium", 129, "mmol/L", "2026-11-30", "2951-2", 135, 145, "L")
    c.obs("Potassium", 5.6, "mmol/L", "2026-11-30", "2823-3", 3.5, 5.1, "H")
    c.obs("Glucose", 3.6, "mmol/L", "2026-11-30", "2345-7", 3.9, 7.8, "L")
    c.obs("TSH", 0.05, "mU/L", "2026-10-15", "3016-3", 0.4, 4.0, "L")
    c.obs("Free T4", 26, "pmol/L", "2026-10-15", "3024-7", 12, 22, "H")
    c.bp(92, 56)
    c.vital("8867-4", "Heart rate", 112, "/min")
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v23() -> None:
    c = Case("v23_skin_transplant_tacrolimus_clarithro_scc", "transaction")
    c.patient("Alan", "Greaves", "male", "1963-10-10")
    c.encounter(
        "Transplant dermatology clinic: skin check; chest infection treated by GP last week"
    )
    c.cond("Kidney transplant recipient (2012)", None, "2012-01-01")
    c.cond("Cutaneous squamous cell carcinoma, scalp", None, "2026-10-30")
    c.cond("Actinic keratoses", None, "2020-01-01")
    c.med(
        "tacrolimus modified release 1 mg capsule",
        None,
        (4, "mg"),
        (1, 1, "d"),
        "4 mg once daily",
        "2018-01-01",
    )
    c.med(
        "mycophenolate mofetil 500 mg tablet",
        None,
        (500, "mg"),
        (2, 1, "d"),
        "500 mg twice daily",
        "2012-01-01",
    )
    c.med("prednisolone 5 mg tablet", "8638", (5, "mg"), (1, 1, "d"), "5 mg daily", "2012-01-01")
    c.med(
        "clarithromycin 500 mg tablet",
        "21212",
        (500, "mg"),
        (2, 1, "d"),
        "500 mg twice daily for 7 days",
        "2026-11-24",
    )
    c.obs("Tacrolimus trough level", 18.2, "ug/L", "2026-11-28", None, 5, 8, "H")
    c.obs("Creatinine", 2.1, "mg/dL", "2026-11-28", "2160-0", 0.7, 1.3, "H")
    c.obs("Creatinine", 1.4, "mg/dL", "2026-09-01", "2160-0", 0.7, 1.3, "H")
    c.obs("Potassium", 5.4, "mmol/L", "2026-11-28", "2823-3", 3.5, 5.1, "H")
    c.obs("Hemoglobin A1c", 7.1, "%", "2026-11-28", "4548-4", 4.0, 6.0, "H")
    c.report(
        "Histopathology, excision scalp lesion",
        "Moderately differentiated invasive squamous cell carcinoma, 2.4 cm, depth 5 mm. "
        "Deep margin involved (incomplete excision).",
        "2026-11-12",
    )
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


def v24() -> None:
    c = Case("v24_anaes_preop_lithium_sux_family")
    c.patient("Margot", "Verhoeven", "female", "1962-12-20")
    c.encounter(
        "Pre-operative assessment: wide local excision breast, listed 2026-12-08",
        text="Pre-operative assessment clinic",
    )
    c.cond("Bipolar affective disorder", "13746004", "1990-01-01")
    c.cond("Breast cancer (left), awaiting surgery", "254837009", "2026-10-20")
    c.cond("Hypertension", "38341003", "2019-01-01")
    c.cond(
        "Father and brother had prolonged paralysis after suxamethonium",
        None,
        "2010-01-01",
        category="encounter-diagnosis",
    )
    c.med(
        "lithium carbonate 400 mg modified release tablet",
        "6448",
        (800, "mg"),
        (1, 1, "d"),
        "800 mg at night",
        "2000-01-01",
    )
    c.med("lisinopril 10 mg tablet", "29046", (10, "mg"), (1, 1, "d"), "10 mg daily", "2026-09-15")
    c.med(
        "bendroflumethiazide 2.5 mg tablet",
        None,
        (2.5, "mg"),
        (1, 1, "d"),
        "2.5 mg daily",
        "2019-01-01",
    )
    c.obs("Lithium level (12 h post dose)", 1.4, "mmol/L", "2026-11-25", "14334-7", 0.4, 1.0, "H")
    c.obs("Lithium level", 0.7, "mmol/L", "2026-06-01", "14334-7", 0.4, 1.0)
    c.obs("TSH", 9.2, "mU/L", "2026-11-25", "3016-3", 0.4, 4.0, "H")
    c.obs("Calcium (adjusted)", 2.78, "mmol/L", "2026-11-25", "17861-6", 2.2, 2.6, "H")
    c.obs("Creatinine", 1.2, "mg/dL", "2026-11-25", "2160-0", 0.5, 1.1, "H")
    c.obs("eGFR", 49, "mL/min/{1.73_m2}", "2026-11-25", "62238-1", 60, None, "L")
    c.obs("Sodium", 136, "mmol/L", "2026-11-25", "2951-2", 135, 145)
    c.bp(132, 80)
    c.allergy("No known drug allergies", "none", snomed="409137002")
    c.write()


if __name__ == "__main__":
    for f in (
        v01,
        v02,
        v03,
        v04,
        v05,
        v06,
        v07,
        v08,
        v09,
        v10,
        v11,
        v12,
        v13,
        v14,
        v15,
        v16,
        v17,
        v18,
        v19,
        v20,
        v21,
        v22,
        v23,
        v24,
    ):
        f()
