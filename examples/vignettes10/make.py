#!/usr/bin/env python3.11
"""Regenerate the blind10 vignette bundles (FHIR R4 collection Bundles), stdlib only.

Run from anywhere: ``python3.11 examples/vignettes10/make.py``. Every patient is invented.
Clinic date 2026-12-02; plans are made with ``--created 2026-12-02T09:00:00+00:00``.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
NS = uuid.UUID("6b1f7c2e-3d0a-4f59-9a57-b10d10000000")

SCT = "http://snomed.info/sct"
LOINC = "http://loinc.org"
RXN = "http://www.nlm.nih.gov/research/umls/rxnorm"
UCUM = "http://unitsofmeasure.org"
CVX = "http://hl7.org/fhir/sid/cvx"
OBSCAT = "http://terminology.hl7.org/CodeSystem/observation-category"
INTERP = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"

UNITS_PER = {"d": 1, "wk": 7}


class Builder:
    """Collects the resources of one patient's Bundle."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.n = 0
        self.entries: list[dict] = []
        self.pid = ""

    def _id(self) -> str:
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.key}/{self.n}"))

    def add(self, res: dict) -> str:
        rid = self._id()
        res = {"resourceType": res.pop("resourceType"), "id": rid, **res}
        self.entries.append({"fullUrl": f"urn:uuid:{rid}", "resource": res})
        return f"urn:uuid:{rid}"

    @property
    def subj(self) -> dict:
        return {"reference": self.pid}

    def patient(self, given: str, family: str, gender: str, birth: str, city: str) -> None:
        self.pid = self.add(
            {
                "resourceType": "Patient",
                "name": [{"use": "official", "family": family, "given": [given]}],
                "gender": gender,
                "birthDate": birth,
                "address": [{"city": city, "country": "GB"}],
            }
        )

    def condition(
        self,
        code: str | None,
        display: str,
        onset: str,
        *,
        status: str = "active",
        recorded: str | None = None,
        category: str = "problem-list-item",
        abatement: str | None = None,
    ) -> str:
        cc: dict = {"text": display}
        if code:
            cc["coding"] = [{"system": SCT, "code": code, "display": display}]
        res: dict = {
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
                            "code": category,
                        }
                    ]
                }
            ],
            "code": cc,
            "subject": self.subj,
            "onsetDateTime": onset,
            "recordedDate": recorded or onset,
        }
        if abatement:
            res["abatementDateTime"] = abatement
        return self.add(res)

    def _dosage(
        self,
        text: str,
        dose: float | None,
        unit: str | None,
        freq: int,
        period: float,
        period_unit: str,
        prn: bool,
        route: str | None,
    ) -> dict:
        d: dict = {
            "text": text,
            "timing": {"repeat": {"frequency": freq, "period": period, "periodUnit": period_unit}},
        }
        if prn:
            d["asNeededBoolean"] = True
        if route:
            d["route"] = {"text": route}
        if dose is not None and unit:
            code = {"tablet": "{tbl}", "puff": "{puff}", "spray": "{spray}"}.get(unit, unit)
            d["doseAndRate"] = [
                {"doseQuantity": {"value": dose, "unit": unit, "system": UCUM, "code": code}}
            ]
        return d

    def med(
        self,
        name: str,
        rxcui: str | None,
        text: str,
        dose: float | None,
        unit: str | None,
        authored: str,
        *,
        freq: int = 1,
        period: float = 1,
        period_unit: str = "d",
        status: str = "active",
        prn: bool = False,
        route: str | None = None,
        reason: str | None = None,
        end: str | None = None,
        note: str | None = None,
    ) -> str:
        cc: dict = {"text": name}
        if rxcui:
            cc["coding"] = [{"system": RXN, "code": rxcui, "display": name.split(" ")[0]}]
        res: dict = {
            "resourceType": "MedicationRequest",
            "status": status,
            "intent": "order",
            "medicationCodeableConcept": cc,
            "subject": self.subj,
            "authoredOn": authored,
            "dosageInstruction": [
                self._dosage(text, dose, unit, freq, period, period_unit, prn, route)
            ],
        }
        if reason:
            res["reasonReference"] = [{"reference": reason}]
        if end:
            res["dispenseRequest"] = {"validityPeriod": {"start": authored[:10], "end": end}}
        if note:
            res["note"] = [{"text": note}]
        return self.add(res)

    def med_statement(
        self,
        name: str,
        rxcui: str | None,
        text: str,
        start: str,
        *,
        note: str | None = None,
        status: str = "active",
    ) -> str:
        cc: dict = {"text": name}
        if rxcui:
            cc["coding"] = [{"system": RXN, "code": rxcui, "display": name.split(" ")[0]}]
        res: dict = {
            "resourceType": "MedicationStatement",
            "status": status,
            "medicationCodeableConcept": cc,
            "subject": self.subj,
            "effectivePeriod": {"start": start},
            "dateAsserted": "2026-12-02",
            "dosage": [{"text": text}],
        }
        if note:
            res["note"] = [{"text": note}]
        return self.add(res)

    def obs(
        self,
        loinc: str | None,
        display: str,
        value: object,
        unit: str | None,
        when: str,
        *,
        cat: str = "laboratory",
        interp: str | None = None,
        low: float | None = None,
        high: float | None = None,
        note: str | None = None,
    ) -> str:
        cc: dict = {"text": display}
        if loinc:
            cc["coding"] = [{"system": LOINC, "code": loinc, "display": display}]
        res: dict = {
            "resourceType": "Observation",
            "status": "final",
            "category": [{"coding": [{"system": OBSCAT, "code": cat}]}],
            "code": cc,
            "subject": self.subj,
            "effectiveDateTime": when,
            "issued": when if "T" in when else f"{when}T08:00:00+00:00",
        }
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            res["valueQuantity"] = {"value": value, "unit": unit, "system": UCUM, "code": unit}
        elif isinstance(value, tuple):
            system, code, disp = value
            res["valueCodeableConcept"] = {
                "coding": [{"system": system, "code": code, "display": disp}],
                "text": disp,
            }
        else:
            res["valueString"] = str(value)
        if interp:
            res["interpretation"] = [{"coding": [{"system": INTERP, "code": interp}]}]
        if low is not None or high is not None:
            rr: dict = {}
            if low is not None:
                rr["low"] = {"value": low, "unit": unit, "system": UCUM, "code": unit}
            if high is not None:
                rr["high"] = {"value": high, "unit": unit, "system": UCUM, "code": unit}
            res["referenceRange"] = [rr]
        if note:
            res["note"] = [{"text": note}]
        return self.add(res)

    def bp(self, sys: int, dia: int, when: str) -> str:
        def comp(code: str, disp: str, v: int) -> dict:
            return {
                "code": {"coding": [{"system": LOINC, "code": code, "display": disp}]},
                "valueQuantity": {"value": v, "unit": "mm[Hg]", "system": UCUM, "code": "mm[Hg]"},
            }

        return self.add(
            {
                "resourceType": "Observation",
                "status": "final",
                "category": [{"coding": [{"system": OBSCAT, "code": "vital-signs"}]}],
                "code": {
                    "coding": [
                        {"system": LOINC, "code": "85354-9", "display": "Blood pressure panel"}
                    ],
                    "text": "Blood pressure",
                },
                "subject": self.subj,
                "effectiveDateTime": when,
                "component": [
                    comp("8480-6", "Systolic blood pressure", sys),
                    comp("8462-4", "Diastolic blood pressure", dia),
                ],
            }
        )

    def vital(self, kind: str, value: float, when: str, interp: str | None = None) -> str:
        loinc, disp, unit = {
            "hr": ("8867-4", "Heart rate", "/min"),
            "rr": ("9279-1", "Respiratory rate", "/min"),
            "temp": ("8310-5", "Body temperature", "Cel"),
            "spo2": ("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry", "%"),
            "wt": ("29463-7", "Body weight", "kg"),
            "ht": ("8302-2", "Body height", "cm"),
            "bmi": ("39156-5", "Body mass index (BMI) [Ratio]", "kg/m2"),
        }[kind]
        return self.obs(loinc, disp, value, unit, when, cat="vital-signs", interp=interp)

    def smoking(self, code: str, disp: str, when: str, note: str | None = None) -> str:
        return self.obs(
            "72166-2",
            "Tobacco smoking status",
            (SCT, code, disp),
            None,
            when,
            cat="social-history",
            note=note,
        )

    def encounter(
        self,
        kind: str,
        reason: str,
        start: str,
        end: str,
        cls: str = "AMB",
        reason_code: str | None = None,
    ) -> str:
        rc: dict = {"text": reason}
        if reason_code:
            rc["coding"] = [{"system": SCT, "code": reason_code, "display": reason}]
        return self.add(
            {
                "resourceType": "Encounter",
                "status": "finished",
                "class": {
                    "system": "http://terminology.hl7.org/CodeSystem/v3-ActCode",
                    "code": cls,
                },
                "type": [{"text": kind}],
                "subject": self.subj,
                "period": {"start": start, "end": end},
                "reasonCode": [rc],
            }
        )

    def report(
        self,
        code: str | None,
        display: str,
        issued: str,
        conclusion: str,
        *,
        status: str = "final",
        cat: str = "LAB",
        results: list[str] | None = None,
    ) -> str:
        cc: dict = {"text": display}
        if code:
            cc["coding"] = [{"system": LOINC, "code": code, "display": display}]
        res: dict = {
            "resourceType": "DiagnosticReport",
            "status": status,
            "category": [
                {
                    "coding": [
                        {"system": "http://terminology.hl7.org/CodeSystem/v2-0074", "code": cat}
                    ]
                }
            ],
            "code": cc,
            "subject": self.subj,
            "effectiveDateTime": issued,
            "issued": issued,
            "conclusion": conclusion,
        }
        if results:
            res["result"] = [{"reference": r} for r in results]
        return self.add(res)

    def request(
        self,
        text: str,
        authored: str,
        *,
        status: str = "active",
        intent: str = "order",
        code: str | None = None,
        note: str | None = None,
        priority: str | None = None,
        occurrence: str | None = None,
    ) -> str:
        cc: dict = {"text": text}
        if code:
            cc["coding"] = [{"system": SCT, "code": code, "display": text}]
        res: dict = {
            "resourceType": "ServiceRequest",
            "status": status,
            "intent": intent,
            "code": cc,
            "subject": self.subj,
            "authoredOn": authored,
        }
        if priority:
            res["priority"] = priority
        if occurrence:
            res["occurrenceDateTime"] = occurrence
        if note:
            res["note"] = [{"text": note}]
        return self.add(res)

    def allergy(
        self,
        substance: str,
        rxcui: str | None,
        reaction: str,
        reaction_code: str | None,
        recorded: str,
        criticality: str = "high",
    ) -> str:
        cc: dict = {"text": substance}
        if rxcui:
            cc["coding"] = [{"system": RXN, "code": rxcui, "display": substance}]
        man: dict = {"text": reaction}
        if reaction_code:
            man["coding"] = [{"system": SCT, "code": reaction_code, "display": reaction}]
        return self.add(
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
                "criticality": criticality,
                "code": cc,
                "patient": self.subj,
                "recordedDate": recorded,
                "reaction": [{"manifestation": [man]}],
            }
        )

    def procedure(self, code: str | None, text: str, performed: str) -> str:
        cc: dict = {"text": text}
        if code:
            cc["coding"] = [{"system": SCT, "code": code, "display": text}]
        return self.add(
            {
                "resourceType": "Procedure",
                "status": "completed",
                "code": cc,
                "subject": self.subj,
                "performedDateTime": performed,
            }
        )

    def immunization(self, cvx: str, text: str, when: str) -> str:
        return self.add(
            {
                "resourceType": "Immunization",
                "status": "completed",
                "vaccineCode": {
                    "coding": [{"system": CVX, "code": cvx, "display": text}],
                    "text": text,
                },
                "patient": self.subj,
                "occurrenceDateTime": when,
                "primarySource": True,
            }
        )

    def bundle(self) -> dict:
        return {
            "resourceType": "Bundle",
            "id": str(uuid.uuid5(NS, self.key)),
            "type": "collection",
            "timestamp": "2026-12-02T08:30:00+00:00",
            "entry": self.entries,
        }


# ---------------------------------------------------------------------------------------------
# 1. Chapter 8 (malignancy and immunosuppression): 73 M, kidney transplant on tacrolimus,
#    clarithromycin started for a chest infection.


def case01() -> Builder:
    b = Builder("01")
    b.patient("Aurelio", "Penwarden", "male", "1953-05-14", "Truro")
    b.procedure("70536003", "Transplantation of kidney (deceased-donor)", "2014-03-11")
    b.condition(None, "Kidney transplant recipient (deceased-donor graft 2014)", "2014-03-11")
    b.condition("433144002", "Chronic kidney disease stage 3", "2019-06-20")
    b.condition("38341003", "Hypertensive disorder", "2009-02-10")
    lrti = b.condition(
        "50417007", "Lower respiratory tract infection", "2026-11-27", recorded="2026-11-28"
    )
    b.condition(
        "95324001",
        "Non-healing scaly lesion on the scalp (suspected squamous cell carcinoma)",
        "2026-08-15",
        recorded="2026-10-05",
    )
    b.allergy("Penicillin", "7980", "Anaphylaxis", "39579001", "1998-07-01")
    b.med(
        "Tacrolimus prolonged-release (Advagraf) 4 mg",
        "42316",
        "4 mg once daily in the morning",
        4,
        "mg",
        "2025-06-10",
    )
    b.med(
        "Mycophenolate mofetil 500 mg tablets",
        "68149",
        "500 mg twice daily",
        500,
        "mg",
        "2014-04-02",
        freq=2,
    )
    b.med(
        "Prednisolone 5 mg tablets",
        "8638",
        "5 mg once daily (long-term since transplant)",
        5,
        "mg",
        "2014-04-02",
    )
    b.med("Amlodipine 5 mg tablets", "17767", "5 mg once daily", 5, "mg", "2012-05-18")
    b.med(
        "Clarithromycin 500 mg tablets",
        "21212",
        "500 mg twice daily for 7 days (started 28 Nov 2026; penicillin allergy)",
        500,
        "mg",
        "2026-11-28",
        freq=2,
        reason=lrti,
        end="2026-12-05",
    )
    b.encounter(
        "General practice consultation",
        "Productive cough and fever for 2 days",
        "2026-11-28T10:00:00+00:00",
        "2026-11-28T10:15:00+00:00",
        reason_code="50417007",
    )
    b.obs(
        "77348-1",
        "Tacrolimus [Mass/volume] in Blood --trough",
        6.2,
        "ug/L",
        "2026-09-01",
        low=4,
        high=8,
    )
    t = b.obs(
        "77348-1",
        "Tacrolimus [Mass/volume] in Blood --trough",
        15.1,
        "ug/L",
        "2026-12-01",
        interp="H",
        low=4,
        high=8,
        note="Target trough for this patient 4-8 ug/L",
    )
    for when, cr, egfr in (("2026-09-01", 129, 48), ("2026-12-01", 171, 34)):
        b.obs(
            "14682-9",
            "Creatinine [Moles/volume] in Serum or Plasma",
            cr,
            "umol/L",
            when,
            interp="H",
            low=60,
            high=110,
        )
        b.obs(
            "62238-1",
            "Glomerular filtration rate/1.73 sq M.predicted [CKD-EPI]",
            egfr,
            "mL/min/{1.73_m2}",
            when,
            interp="L",
        )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        4.7,
        "mmol/L",
        "2026-09-01",
        low=3.5,
        high=5.3,
    )
    k = b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        6.1,
        "mmol/L",
        "2026-12-01",
        interp="H",
        low=3.5,
        high=5.3,
    )
    b.obs(
        "718-7",
        "Hemoglobin [Mass/volume] in Blood",
        126,
        "g/L",
        "2026-12-01",
        low=130,
        high=170,
        interp="L",
    )
    b.report(
        None,
        "Renal transplant monitoring bloods",
        "2026-12-01T16:00:00+00:00",
        "Tacrolimus trough 15.1 ug/L (target 4-8), creatinine 171 umol/L up from 129, "
        "potassium 6.1 mmol/L. Renal transplant team informed by result only.",
        results=[t, k],
    )
    b.request(
        "Urgent suspected skin cancer referral to dermatology (scalp lesion)",
        "2026-10-05",
        priority="urgent",
        note="No appointment booked as of 2 Dec 2026",
    )
    b.bp(142, 84, "2026-12-02")
    b.vital("hr", 82, "2026-12-02")
    b.vital("temp", 37.4, "2026-12-02")
    b.vital("wt", 79, "2026-12-02")
    b.smoking("8517006", "Ex-smoker", "2026-12-02")
    return b


# 2. Chapter 10 (musculoskeletal): 70 M, gout flare on naproxen + high-dose colchicine with
#    ramipril and furosemide, now vomiting and diarrhoea and an acute kidney injury.


def case02() -> Builder:
    b = Builder("02")
    b.patient("Deverell", "Thorncastle", "male", "1956-02-20", "Hereford")
    gout = b.condition("90560007", "Gout", "2015-08-03")
    b.condition(
        None,
        "Acute gout flare, right first metatarsophalangeal joint",
        "2026-11-19",
        recorded="2026-11-20",
    )
    b.condition("433144002", "Chronic kidney disease stage 3", "2021-01-14")
    b.condition("38341003", "Hypertensive disorder", "2010-06-01")
    b.condition("414545008", "Ischemic heart disease", "2018-03-22")
    b.condition("239873007", "Osteoarthritis of knee", "2019-10-10")
    b.condition("14669001", "Acute kidney injury", "2026-12-01", recorded="2026-12-02")
    b.condition(None, "Vomiting and diarrhoea for 3 days", "2026-11-29", recorded="2026-12-02")
    b.med(
        "Allopurinol 100 mg tablets",
        "519",
        "100 mg once daily",
        100,
        "mg",
        "2022-04-12",
        reason=gout,
    )
    b.med(
        "Naproxen 500 mg tablets",
        "7258",
        "500 mg twice daily with food (gout flare and knee pain)",
        500,
        "mg",
        "2026-11-20",
        freq=2,
    )
    b.med(
        "Colchicine 500 microgram tablets",
        "2683",
        "500 micrograms four times daily",
        500,
        "ug",
        "2026-11-20",
        freq=4,
    )
    b.med("Ramipril 10 mg capsules", "35296", "10 mg once daily", 10, "mg", "2013-09-02")
    b.med(
        "Furosemide 40 mg tablets",
        "4603",
        "40 mg once daily in the morning",
        40,
        "mg",
        "2019-02-11",
    )
    b.med("Aspirin 75 mg dispersible tablets", "1191", "75 mg once daily", 75, "mg", "2018-03-25")
    b.med(
        "Atorvastatin 40 mg tablets", "83367", "40 mg once daily at night", 40, "mg", "2018-03-25"
    )
    b.encounter(
        "General practice consultation",
        "Vomiting and watery diarrhoea for 3 days, lightheaded on standing",
        "2026-12-02T08:40:00+00:00",
        "2026-12-02T09:00:00+00:00",
    )
    for when, cr, egfr in (
        ("2026-03-10", 136, 45),
        ("2026-08-18", 141, 43),
        ("2026-12-01", 204, 28),
    ):
        b.obs(
            "14682-9",
            "Creatinine [Moles/volume] in Serum or Plasma",
            cr,
            "umol/L",
            when,
            interp="H",
            low=60,
            high=110,
        )
        b.obs(
            "62238-1",
            "Glomerular filtration rate/1.73 sq M.predicted [CKD-EPI]",
            egfr,
            "mL/min/{1.73_m2}",
            when,
            interp="L",
        )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        5.4,
        "mmol/L",
        "2026-12-01",
        interp="H",
        low=3.5,
        high=5.3,
    )
    b.obs(
        "2951-2",
        "Sodium [Moles/volume] in Serum or Plasma",
        132,
        "mmol/L",
        "2026-12-01",
        interp="L",
        low=133,
        high=146,
    )
    b.obs(
        "3084-1",
        "Urate [Mass/volume] in Serum or Plasma",
        8.9,
        "mg/dL",
        "2026-08-18",
        interp="H",
        high=6.0,
        note="Treat-to-target urate below 6 mg/dL (360 umol/L) not reached",
    )
    b.bp(106, 62, "2026-12-02")
    b.bp(144, 86, "2026-08-18")
    b.vital("hr", 98, "2026-12-02")
    b.vital("temp", 37.0, "2026-12-02")
    b.vital("wt", 83, "2026-12-02")
    b.smoking("266919005", "Never smoked tobacco", "2026-08-18")
    return b


# 3. Chapter 1 (gastro-intestinal): 79 F, iron-deficiency anaemia with a positive FIT on
#    apixaban and aspirin; long-term omeprazole and low magnesium.


def case03() -> Builder:
    b = Builder("03")
    b.patient("Winifred", "Caddamore", "female", "1947-07-03", "Lincoln")
    af = b.condition("49436004", "Atrial fibrillation", "2019-05-28")
    b.condition("38341003", "Hypertensive disorder", "2008-11-04")
    b.condition("235595009", "Gastroesophageal reflux disease", "2012-02-16")
    b.condition("87522002", "Iron deficiency anemia", "2026-11-21", recorded="2026-11-24")
    b.condition("190855004", "Hypomagnesemia", "2026-11-21", recorded="2026-11-24")
    b.med(
        "Apixaban 5 mg tablets",
        "1364430",
        "5 mg twice daily",
        5,
        "mg",
        "2019-06-03",
        freq=2,
        reason=af,
    )
    b.med(
        "Aspirin 75 mg dispersible tablets",
        "1191",
        "75 mg once daily (started 2015 for primary prevention)",
        75,
        "mg",
        "2015-02-09",
    )
    b.med("Omeprazole 40 mg capsules", "7646", "40 mg once daily", 40, "mg", "2012-02-16")
    b.med("Bisoprolol 2.5 mg tablets", "19484", "2.5 mg once daily", 2.5, "mg", "2019-05-28")
    b.med("Amlodipine 5 mg tablets", "17767", "5 mg once daily", 5, "mg", "2008-11-04")
    b.encounter(
        "General practice consultation",
        "Tiredness and breathlessness on exertion for 2 months; no overt bleeding",
        "2026-11-20T11:00:00+00:00",
        "2026-11-20T11:20:00+00:00",
    )
    for when, hb in (("2025-11-12", 122), ("2026-06-04", 109), ("2026-11-21", 94)):
        b.obs(
            "718-7",
            "Hemoglobin [Mass/volume] in Blood",
            hb,
            "g/L",
            when,
            interp="L" if hb < 115 else None,
            low=115,
            high=155,
        )
    b.obs(
        "787-2",
        "MCV [Entitic volume] by Automated count",
        73,
        "fL",
        "2026-11-21",
        interp="L",
        low=80,
        high=100,
    )
    b.obs(
        "2276-4",
        "Ferritin [Mass/volume] in Serum or Plasma",
        6,
        "ug/L",
        "2026-11-21",
        interp="L",
        low=15,
        high=300,
    )
    b.obs(
        "2601-3",
        "Magnesium [Mass/volume] in Serum or Plasma",
        1.29,
        "mg/dL",
        "2026-11-21",
        interp="L",
        low=1.7,
        high=2.4,
        note="0.53 mmol/L",
    )
    b.obs(
        "14682-9",
        "Creatinine [Moles/volume] in Serum or Plasma",
        101,
        "umol/L",
        "2026-11-21",
        low=45,
        high=90,
        interp="H",
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted [CKD-EPI]",
        47,
        "mL/min/{1.73_m2}",
        "2026-11-21",
        interp="L",
    )
    b.obs("2823-3", "Potassium [Moles/volume] in Serum or Plasma", 4.2, "mmol/L", "2026-11-21")
    fit = b.obs(
        "27396-1",
        "Hemoglobin.gastrointestinal [Mass/mass] in Stool by Immunoassay",
        186,
        "ug/g",
        "2026-11-27",
        interp="H",
        high=10,
    )
    b.report(
        None,
        "Faecal immunochemical test (FIT)",
        "2026-11-28T09:00:00+00:00",
        "FIT 186 ug Hb/g faeces: positive (threshold 10). Meets criteria for a suspected "
        "colorectal cancer pathway referral.",
        results=[fit],
    )
    b.bp(128, 72, "2026-11-20")
    b.vital("hr", 74, "2026-11-20")
    b.vital("wt", 57, "2026-11-20")
    b.vital("ht", 158, "2026-11-20")
    b.smoking("266919005", "Never smoked tobacco", "2026-11-20")
    return b


# 4. Chapter 9 (nutrition and blood): 19 F, anorexia nervosa with hypokalaemia, low phosphate,
#    bradycardia and a long QTc on citalopram; laxative misuse.


def case04() -> Builder:
    b = Builder("04")
    b.patient("Saskia", "Oldenbrook", "female", "2007-04-22", "Norwich")
    an = b.condition("56882008", "Anorexia nervosa", "2024-09-10")
    b.condition("35489007", "Depressive disorder", "2025-02-18")
    b.condition("14302001", "Amenorrhea", "2025-06-01", recorded="2025-09-12")
    b.condition("34713006", "Vitamin D deficiency", "2026-11-30", recorded="2026-12-01")
    b.condition("43339004", "Hypokalemia", "2026-11-30", recorded="2026-12-01")
    b.med("Citalopram 20 mg tablets", "2556", "20 mg once daily", 20, "mg", "2025-03-04")
    b.med_statement(
        "Bisacodyl 5 mg tablets (bought over the counter)",
        None,
        "Up to 8 tablets a day, most days",
        "2026-08-01",
        note="Disclosed at eating disorder clinic on 1 Dec 2026",
    )
    b.encounter(
        "Community eating disorder service review",
        "Anorexia nervosa: continued weight loss, dizziness and cold intolerance",
        "2026-12-01T14:00:00+00:00",
        "2026-12-01T15:00:00+00:00",
        reason_code="56882008",
    )
    for when, wt, bmi in (
        ("2026-06-02", 45.2, 17.0),
        ("2026-09-08", 43.4, 16.3),
        ("2026-12-01", 40.1, 15.1),
    ):
        b.vital("wt", wt, when)
        b.vital("bmi", bmi, when, interp="L")
    b.vital("ht", 163, "2026-12-01")
    b.vital("hr", 42, "2026-12-01", interp="L")
    b.vital("temp", 35.3, "2026-12-01", interp="L")
    b.bp(84, 52, "2026-12-01")
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        3.4,
        "mmol/L",
        "2026-09-08",
        interp="L",
        low=3.5,
        high=5.3,
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        2.8,
        "mmol/L",
        "2026-11-30",
        interp="LL",
        low=3.5,
        high=5.3,
    )
    b.obs(
        "14879-1",
        "Phosphate [Moles/volume] in Serum or Plasma",
        0.68,
        "mmol/L",
        "2026-11-30",
        interp="L",
        low=0.8,
        high=1.5,
    )
    b.obs(
        "2601-3",
        "Magnesium [Mass/volume] in Serum or Plasma",
        1.6,
        "mg/dL",
        "2026-11-30",
        interp="L",
        low=1.7,
        high=2.4,
        note="0.66 mmol/L",
    )
    b.obs(
        "15074-8",
        "Glucose [Moles/volume] in Blood",
        3.4,
        "mmol/L",
        "2026-11-30",
        interp="L",
        low=3.9,
        high=7.8,
    )
    b.obs(
        "1989-3",
        "25-hydroxyvitamin D3 [Mass/volume] in Serum or Plasma",
        8.4,
        "ng/mL",
        "2026-11-30",
        interp="L",
        low=20,
    )
    qtc = b.obs(
        "8636-3",
        "QT interval corrected",
        478,
        "ms",
        "2026-12-01",
        cat="procedure",
        interp="H",
        high=460,
    )
    b.report(
        None,
        "12-lead ECG",
        "2026-12-01T15:10:00+00:00",
        "Sinus bradycardia 42/min, QTc 478 ms (prolonged). No previous ECG for comparison.",
        cat="EC",
        results=[qtc],
    )
    b.request(
        "DXA scan (bone density), hips and lumbar spine",
        "2026-06-10",
        note="Requested June 2026; not yet done",
    )
    b.smoking("266919005", "Never smoked tobacco", "2026-06-02")
    _ = an
    return b


# 5. Chapter 5 (infections): 85 F in a care home with dementia and heart failure, trimethoprim
#    for asymptomatic bacteriuria on ramipril + spironolactone; potassium 5.9.


def case05() -> Builder:
    b = Builder("05")
    b.patient("Ottilie", "Marchbanks", "female", "1941-06-09", "Shrewsbury")
    b.condition("26929004", "Alzheimer's disease", "2021-03-15")
    b.condition("84114007", "Heart failure", "2020-07-08")
    b.condition("38341003", "Hypertensive disorder", "2004-01-20")
    b.condition("433144002", "Chronic kidney disease stage 3", "2019-09-30")
    b.condition("193462001", "Insomnia", "2023-11-02")
    b.condition("161898004", "History of fall", "2026-11-12", recorded="2026-11-13")
    b.condition(
        None, "Positive urine dipstick in care home resident without urinary symptoms", "2026-11-29"
    )
    b.med("Ramipril 5 mg capsules", "35296", "5 mg once daily", 5, "mg", "2020-07-20")
    b.med("Spironolactone 25 mg tablets", "9997", "25 mg once daily", 25, "mg", "2021-01-11")
    b.med("Furosemide 40 mg tablets", "4603", "40 mg once daily", 40, "mg", "2020-07-08")
    b.med("Bisoprolol 2.5 mg tablets", "19484", "2.5 mg once daily", 2.5, "mg", "2020-08-01")
    b.med("Donepezil 10 mg tablets", "135447", "10 mg at night", 10, "mg", "2021-04-01")
    b.med("Zopiclone 7.5 mg tablets", None, "7.5 mg at night", 7.5, "mg", "2023-11-02")
    b.med(
        "Paracetamol 500 mg tablets",
        "161",
        "1 g four times daily",
        1000,
        "mg",
        "2022-05-01",
        freq=4,
    )
    b.med(
        "Trimethoprim 200 mg tablets",
        "10829",
        "200 mg twice daily for 7 days",
        200,
        "mg",
        "2026-11-29",
        freq=2,
        end="2026-12-06",
        note="Prescribed by out-of-hours service for positive urine dipstick",
    )
    b.encounter(
        "Care home visit (out-of-hours)",
        "Urine dipstick positive for nitrites and leucocytes on routine care home testing; "
        "no fever, no dysuria, behaviour unchanged",
        "2026-11-29T18:00:00+00:00",
        "2026-11-29T18:20:00+00:00",
        cls="HH",
    )
    cult = b.obs(
        "630-4",
        "Bacteria identified in Urine by Culture",
        "Escherichia coli >10^5 CFU/mL; resistant to trimethoprim; sensitive to "
        "nitrofurantoin, pivmecillinam, fosfomycin",
        None,
        "2026-12-01",
        interp="A",
    )
    b.report(
        "630-4",
        "Urine culture",
        "2026-12-01T14:00:00+00:00",
        "E. coli >10^5 CFU/mL, trimethoprim resistant. Interpret with clinical features: "
        "bacteriuria is common in older care home residents.",
        results=[cult],
    )
    for when, k, cr, egfr in (("2026-09-14", 5.0, 116, 38), ("2026-12-01", 5.9, 139, 30)):
        b.obs(
            "2823-3",
            "Potassium [Moles/volume] in Serum or Plasma",
            k,
            "mmol/L",
            when,
            interp="H" if k > 5.3 else None,
            low=3.5,
            high=5.3,
        )
        b.obs(
            "14682-9",
            "Creatinine [Moles/volume] in Serum or Plasma",
            cr,
            "umol/L",
            when,
            interp="H",
            low=45,
            high=90,
        )
        b.obs(
            "62238-1",
            "Glomerular filtration rate/1.73 sq M.predicted [CKD-EPI]",
            egfr,
            "mL/min/{1.73_m2}",
            when,
            interp="L",
        )
    b.obs("2951-2", "Sodium [Moles/volume] in Serum or Plasma", 136, "mmol/L", "2026-12-01")
    b.vital("temp", 36.7, "2026-11-29")
    b.bp(116, 64, "2026-11-29")
    b.vital("hr", 62, "2026-11-29")
    b.vital("wt", 52, "2026-11-29")
    return b


# 6. Chapter 14 (vaccines): 78 M with COPD, type 2 diabetes and psoriasis on weekly
#    methotrexate; annual review, vaccines due; nothing urgent.


def case06() -> Builder:
    b = Builder("06")
    b.patient("Brannoc", "Featherstonhaugh", "male", "1948-09-30", "Whitby")
    b.condition("13645005", "Chronic obstructive lung disease", "2016-04-12")
    b.condition("44054006", "Diabetes mellitus type 2", "2018-10-03")
    b.condition("9014002", "Psoriasis", "1995-05-20")
    b.condition("38341003", "Hypertensive disorder", "2014-07-07")
    b.med(
        "Methotrexate 2.5 mg tablets",
        "6851",
        "15 mg (6 tablets) once weekly on Mondays",
        15,
        "mg",
        "2020-02-17",
        period=1,
        period_unit="wk",
    )
    b.med(
        "Folic acid 5 mg tablets",
        "4511",
        "5 mg once weekly on Thursdays",
        5,
        "mg",
        "2020-02-17",
        period=1,
        period_unit="wk",
    )
    b.med(
        "Metformin 500 mg tablets",
        "6809",
        "500 mg twice daily with meals",
        500,
        "mg",
        "2018-10-03",
        freq=2,
    )
    b.med(
        "Tiotropium 18 microgram inhalation capsules",
        "69120",
        "18 micrograms inhaled once daily",
        18,
        "ug",
        "2016-04-12",
        route="inhaled",
    )
    b.med(
        "Salbutamol 100 micrograms/dose inhaler",
        "435",
        "2 puffs when needed for breathlessness",
        2,
        "puff",
        "2016-04-12",
        prn=True,
        freq=4,
        route="inhaled",
    )
    b.med("Ramipril 5 mg capsules", "35296", "5 mg once daily", 5, "mg", "2014-07-07")
    b.med(
        "Atorvastatin 20 mg tablets", "83367", "20 mg once daily at night", 20, "mg", "2018-10-20"
    )
    b.immunization("88", "Influenza virus vaccine, unspecified formulation", "2025-10-14")
    b.immunization("213", "SARS-COV-2 (COVID-19) vaccine, unspecified formulation", "2025-10-14")
    b.encounter(
        "Annual chronic disease review (COPD, diabetes)",
        "Annual review",
        "2026-12-02T08:20:00+00:00",
        "2026-12-02T08:50:00+00:00",
    )
    for when, a1c in (("2026-06-25", 52), ("2026-12-01", 54)):
        b.obs(
            "59261-8",
            "Hemoglobin A1c/Hemoglobin.total in Blood by IFCC protocol",
            a1c,
            "mmol/mol",
            when,
        )
    d = "2026-06-25"
    b.obs(
        "6690-2",
        "Leukocytes [#/volume] in Blood by Automated count",
        6.2,
        "10*9/L",
        d,
        low=4.0,
        high=11.0,
    )
    b.obs(
        "751-8",
        "Neutrophils [#/volume] in Blood by Automated count",
        3.8,
        "10*9/L",
        d,
        low=2.0,
        high=7.5,
    )
    b.obs(
        "777-3",
        "Platelets [#/volume] in Blood by Automated count",
        214,
        "10*9/L",
        d,
        low=150,
        high=400,
    )
    b.obs(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        24,
        "U/L",
        d,
        high=41,
    )
    b.obs(
        "14682-9", "Creatinine [Moles/volume] in Serum or Plasma", 94, "umol/L", d, low=60, high=110
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted [CKD-EPI]",
        69,
        "mL/min/{1.73_m2}",
        d,
    )
    b.obs(
        None,
        "Methotrexate monitoring blood tests (FBC, LFT, U&E)",
        "Last done 25 Jun 2026",
        None,
        "2026-12-02",
        cat="survey",
        note="Shared-care protocol: every 3 months when stable",
    )
    b.bp(132, 76, "2026-12-02")
    b.vital("hr", 72, "2026-12-02")
    b.vital("wt", 81, "2026-12-02")
    b.vital("spo2", 95, "2026-12-02")
    b.smoking("8517006", "Ex-smoker", "2026-12-02", note="Stopped 2012, 40 pack-years")
    return b


# 7. Chapter 9 (nutrition and blood): 75 F with type 2 diabetes on metformin, B12 deficiency,
#    new sertraline and sodium 125; alendronate for 7 years.


def case07() -> Builder:
    b = Builder("07")
    b.patient("Marguerite", "Fennimore", "female", "1951-01-17", "Kendal")
    b.condition("44054006", "Diabetes mellitus type 2", "2012-04-19")
    b.condition("230572002", "Diabetic neuropathy", "2024-03-06")
    b.condition("35489007", "Depressive disorder", "2026-10-21")
    b.condition("64859006", "Osteoporosis", "2019-05-14")
    b.condition("433144002", "Chronic kidney disease stage 3", "2023-02-10")
    b.condition("190634004", "Vitamin B12 deficiency", "2026-11-28", recorded="2026-11-29")
    b.condition("89627008", "Hyponatremia", "2026-11-28", recorded="2026-11-29")
    b.med(
        "Metformin 500 mg tablets",
        "6809",
        "1 g twice daily with meals",
        1000,
        "mg",
        "2016-08-01",
        freq=2,
    )
    b.med("Sertraline 50 mg tablets", "36437", "50 mg once daily", 50, "mg", "2026-10-21")
    b.med(
        "Alendronic acid 70 mg tablets",
        "46041",
        "70 mg once weekly",
        70,
        "mg",
        "2019-05-20",
        period=1,
        period_unit="wk",
    )
    b.med(
        "Calcium carbonate 1.5 g / colecalciferol 400 unit chewable tablets",
        None,
        "1 tablet twice daily",
        1,
        "tablet",
        "2019-05-20",
        freq=2,
    )
    b.med(
        "Atorvastatin 20 mg tablets", "83367", "20 mg once daily at night", 20, "mg", "2012-06-01"
    )
    b.encounter(
        "General practice consultation",
        "Depression follow-up; nausea, unsteadiness and new numbness of the feet",
        "2026-11-28T10:00:00+00:00",
        "2026-11-28T10:20:00+00:00",
    )
    b.obs(
        "2951-2",
        "Sodium [Moles/volume] in Serum or Plasma",
        139,
        "mmol/L",
        "2026-09-15",
        low=133,
        high=146,
    )
    b.obs(
        "2951-2",
        "Sodium [Moles/volume] in Serum or Plasma",
        125,
        "mmol/L",
        "2026-11-28",
        interp="LL",
        low=133,
        high=146,
    )
    b.obs(
        "2132-9",
        "Cobalamin (Vitamin B12) [Mass/volume] in Serum or Plasma",
        112,
        "pg/mL",
        "2026-11-28",
        interp="L",
        low=197,
    )
    b.obs("2284-8", "Folate [Mass/volume] in Serum or Plasma", 5.1, "ng/mL", "2026-11-28", low=3.0)
    b.obs(
        "718-7",
        "Hemoglobin [Mass/volume] in Blood",
        103,
        "g/L",
        "2026-11-28",
        interp="L",
        low=115,
        high=155,
    )
    b.obs(
        "787-2",
        "MCV [Entitic volume] by Automated count",
        106,
        "fL",
        "2026-11-28",
        interp="H",
        low=80,
        high=100,
    )
    for when, cr, egfr in (("2026-03-12", 104, 45), ("2026-11-28", 117, 39)):
        b.obs(
            "14682-9",
            "Creatinine [Moles/volume] in Serum or Plasma",
            cr,
            "umol/L",
            when,
            interp="H",
            low=45,
            high=90,
        )
        b.obs(
            "62238-1",
            "Glomerular filtration rate/1.73 sq M.predicted [CKD-EPI]",
            egfr,
            "mL/min/{1.73_m2}",
            when,
            interp="L",
        )
    b.obs(
        "59261-8",
        "Hemoglobin A1c/Hemoglobin.total in Blood by IFCC protocol",
        51,
        "mmol/mol",
        "2026-11-28",
    )
    b.request(
        "Intrinsic factor antibodies", "2026-11-28", note="Sample sent 28 Nov 2026; result awaited"
    )
    b.bp(134, 78, "2026-11-28")
    b.vital("hr", 76, "2026-11-28")
    b.vital("wt", 61, "2026-11-28")
    b.smoking("266919005", "Never smoked tobacco", "2026-11-28")
    return b


# 8. Chapter 1 (gastro-intestinal): 19 F with Crohn's disease on azathioprine (dose raised in
#    October), neutrophils 0.8; smoker; iron deficiency; MR enterography pending.


def case08() -> Builder:
    b = Builder("08")
    b.patient("Liesl", "Abernant", "female", "2007-08-05", "Swansea")
    b.condition("34000006", "Crohn's disease", "2023-05-09")
    b.condition("87522002", "Iron deficiency anemia", "2026-11-30", recorded="2026-12-01")
    b.condition("165517008", "Neutropenia", "2026-11-30", recorded="2026-12-01")
    b.med(
        "Azathioprine 50 mg tablets",
        "1256",
        "150 mg once daily (increased from 125 mg on 1 Oct 2026)",
        150,
        "mg",
        "2026-10-01",
    )
    b.med(
        "Azathioprine 25 mg / 50 mg tablets",
        "1256",
        "125 mg once daily",
        125,
        "mg",
        "2023-09-12",
        status="stopped",
    )
    b.med(
        "Loperamide 2 mg capsules",
        "6468",
        "2 mg when needed, up to 4 times a day",
        2,
        "mg",
        "2024-01-15",
        prn=True,
        freq=4,
    )
    b.med(
        "Levonorgestrel 150 microgram / ethinylestradiol 30 microgram tablets",
        None,
        "1 tablet daily for 21 days then 7-day break",
        1,
        "tablet",
        "2025-04-03",
    )
    b.encounter(
        "IBD nurse telephone review",
        "Crohn's disease: 4-5 loose stools a day, abdominal cramps; no fever, no sore throat",
        "2026-12-01T13:00:00+00:00",
        "2026-12-01T13:20:00+00:00",
        reason_code="34000006",
    )
    for when, neut, wbc in (("2026-09-20", 3.1, 5.6), ("2026-11-30", 0.8, 2.6)):
        b.obs(
            "751-8",
            "Neutrophils [#/volume] in Blood by Automated count",
            neut,
            "10*9/L",
            when,
            interp="LL" if neut < 1 else None,
            low=2.0,
            high=7.5,
        )
        b.obs(
            "6690-2",
            "Leukocytes [#/volume] in Blood by Automated count",
            wbc,
            "10*9/L",
            when,
            interp="L" if wbc < 4 else None,
            low=4.0,
            high=11.0,
        )
    b.obs(
        "718-7",
        "Hemoglobin [Mass/volume] in Blood",
        104,
        "g/L",
        "2026-11-30",
        interp="L",
        low=115,
        high=155,
    )
    b.obs(
        "787-2",
        "MCV [Entitic volume] by Automated count",
        77,
        "fL",
        "2026-11-30",
        interp="L",
        low=80,
        high=100,
    )
    b.obs(
        "2276-4",
        "Ferritin [Mass/volume] in Serum or Plasma",
        9,
        "ug/L",
        "2026-11-30",
        interp="L",
        low=15,
        high=150,
    )
    b.obs(
        "777-3",
        "Platelets [#/volume] in Blood by Automated count",
        188,
        "10*9/L",
        "2026-11-30",
        low=150,
        high=400,
    )
    b.obs(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        39,
        "U/L",
        "2026-11-30",
        high=33,
        interp="H",
    )
    b.obs(
        "1988-5",
        "C reactive protein [Mass/volume] in Serum or Plasma",
        18,
        "mg/L",
        "2026-11-30",
        interp="H",
        high=5,
    )
    b.obs(
        "38445-3",
        "Calprotectin [Mass/mass] in Stool",
        420,
        "ug/g",
        "2026-11-10",
        interp="H",
        high=50,
    )
    b.obs(
        None, "Thiopurine methyltransferase (TPMT) activity", "Normal activity", None, "2023-08-30"
    )
    b.request(
        "MR enterography (small bowel MRI)",
        "2026-11-10",
        note="Requested by IBD clinic for active disease; not yet scheduled",
    )
    b.smoking("449868002", "Smokes tobacco daily", "2026-12-01", note="About 10 cigarettes a day")
    b.vital("temp", 36.8, "2026-12-01")
    b.vital("wt", 52, "2026-12-01")
    return b


# 9. Chapter 2 (cardiovascular): 80 M with heart failure with reduced ejection fraction on
#    diltiazem and bisoprolol (heart rate 48), dabigatran 150 mg at 80, no SGLT2i or MRA.


def case09() -> Builder:
    b = Builder("09")
    b.patient("Everard", "Quillfeather", "male", "1946-03-12", "Bury St Edmunds")
    b.condition("703272007", "Heart failure with reduced ejection fraction", "2024-02-14")
    af = b.condition("49436004", "Atrial fibrillation", "2021-04-30")
    b.condition("38341003", "Hypertensive disorder", "2005-09-19")
    b.med(
        "Diltiazem 120 mg modified-release capsules",
        "3443",
        "120 mg once daily (rate control, started 2021)",
        120,
        "mg",
        "2021-05-04",
    )
    b.med("Bisoprolol 5 mg tablets", "19484", "5 mg once daily", 5, "mg", "2024-03-01")
    b.med("Ramipril 5 mg capsules", "35296", "5 mg once daily", 5, "mg", "2024-02-20")
    b.med("Furosemide 40 mg tablets", "4603", "40 mg once daily", 40, "mg", "2024-02-14")
    b.med(
        "Dabigatran etexilate 150 mg capsules",
        "1037042",
        "150 mg twice daily",
        150,
        "mg",
        "2021-05-04",
        freq=2,
        reason=af,
    )
    b.med(
        "Atorvastatin 40 mg tablets", "83367", "40 mg once daily at night", 40, "mg", "2021-05-04"
    )
    b.encounter(
        "Heart failure nurse clinic",
        "Two episodes of dizziness this week; no syncope",
        "2026-12-02T08:30:00+00:00",
        "2026-12-02T09:00:00+00:00",
    )
    ef = b.obs(
        "10230-1",
        "Left ventricular Ejection fraction",
        30,
        "%",
        "2024-02-14",
        cat="imaging",
        interp="L",
        low=52,
    )
    b.report(
        None,
        "Transthoracic echocardiogram",
        "2024-02-15T10:00:00+00:00",
        "Dilated left ventricle with global hypokinesia, LVEF 30%. Moderate functional mitral "
        "regurgitation.",
        cat="CUS",
        results=[ef],
    )
    b.vital("hr", 58, "2026-08-11")
    b.vital("hr", 48, "2026-12-02", interp="L")
    b.bp(108, 64, "2026-12-02")
    b.bp(118, 70, "2026-08-11")
    b.vital("wt", 78, "2026-12-02")
    b.vital("wt", 77.5, "2026-08-11")
    b.obs(
        "33762-6",
        "Natriuretic peptide.B prohormone N-Terminal [Mass/volume] in Serum or Plasma",
        2150,
        "pg/mL",
        "2026-11-25",
        interp="H",
        high=400,
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        4.5,
        "mmol/L",
        "2026-11-25",
        low=3.5,
        high=5.3,
    )
    b.obs("2951-2", "Sodium [Moles/volume] in Serum or Plasma", 138, "mmol/L", "2026-11-25")
    b.obs(
        "14682-9",
        "Creatinine [Moles/volume] in Serum or Plasma",
        112,
        "umol/L",
        "2026-11-25",
        interp="H",
        low=60,
        high=110,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted [CKD-EPI]",
        55,
        "mL/min/{1.73_m2}",
        "2026-11-25",
        interp="L",
    )
    b.obs(
        "59261-8",
        "Hemoglobin A1c/Hemoglobin.total in Blood by IFCC protocol",
        39,
        "mmol/mol",
        "2026-11-25",
    )
    b.obs(
        "8601-7",
        "EKG impression",
        "Atrial fibrillation, ventricular rate 46-52/min; no pauses "
        "over 2 s on the 10-second strip",
        None,
        "2026-12-02",
        cat="procedure",
    )
    b.smoking("8517006", "Ex-smoker", "2026-08-11")
    return b


# 10. Chapter 9 (nutrition and blood): 55 M, alcohol dependence and weight loss, no thiamine,
#     paracetamol 4 g/day at 49 kg, low folate and magnesium; detox booked; liver scan pending.


def case10() -> Builder:
    b = Builder("10")
    b.patient("Caspian", "Drewitt-Holme", "male", "1971-10-08", "Middlesbrough")
    b.condition("7200002", "Alcoholism", "2019-01-22")
    b.condition("50325005", "Alcoholic fatty liver", "2024-06-11")
    b.condition(
        None,
        "Malnutrition: weight loss 6 kg in 6 months, BMI 16.4",
        "2026-06-01",
        recorded="2026-12-02",
    )
    b.condition("279039007", "Low back pain", "2026-07-01")
    b.condition(None, "Folate deficiency", "2026-11-25", recorded="2026-11-26")
    b.med(
        "Paracetamol 500 mg tablets",
        "161",
        "1 g four times daily (regular, for back pain)",
        1000,
        "mg",
        "2026-07-14",
        freq=4,
    )
    b.med("Omeprazole 20 mg capsules", "7646", "20 mg once daily", 20, "mg", "2024-06-11")
    b.request(
        "Community assisted alcohol withdrawal (chlordiazepoxide regimen), start 7 Dec 2026",
        "2026-11-26",
        intent="plan",
        occurrence="2026-12-07T09:00:00+00:00",
        note="Agreed with drug and alcohol service; lives with sister who will supervise",
    )
    b.request(
        "Liver ultrasound and transient elastography (FibroScan)",
        "2026-10-20",
        note="Requested Oct 2026; not yet done",
    )
    b.encounter(
        "General practice consultation",
        "Alcohol dependence review before planned detox",
        "2026-12-02T08:15:00+00:00",
        "2026-12-02T08:40:00+00:00",
        reason_code="7200002",
    )
    b.obs(
        "11331-6",
        "History of Alcohol use",
        "About 60 UK units a week (mostly strong cider), drinks on waking",
        None,
        "2026-12-02",
        cat="social-history",
    )
    b.obs("75626-2", "Total score [AUDIT-C]", 12, "{score}", "2026-12-02", cat="survey")
    for when, wt in (("2026-06-03", 55), ("2026-12-02", 49)):
        b.vital("wt", wt, when)
    b.vital("ht", 173, "2026-12-02")
    b.vital("bmi", 16.4, "2026-12-02", interp="L")
    d = "2026-11-25"
    b.obs(
        "2324-2",
        "Gamma glutamyl transferase [Enzymatic activity/volume] in Serum or Plasma",
        412,
        "U/L",
        d,
        interp="H",
        high=71,
    )
    b.obs(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        78,
        "U/L",
        d,
        interp="H",
        high=41,
    )
    b.obs(
        "1920-8",
        "Aspartate aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        156,
        "U/L",
        d,
        interp="H",
        high=40,
    )
    b.obs(
        "14631-6",
        "Bilirubin.total [Moles/volume] in Serum or Plasma",
        28,
        "umol/L",
        d,
        interp="H",
        high=21,
    )
    b.obs("1751-7", "Albumin [Mass/volume] in Serum or Plasma", 31, "g/L", d, interp="L", low=35)
    b.obs("718-7", "Hemoglobin [Mass/volume] in Blood", 121, "g/L", d, interp="L", low=130)
    b.obs("787-2", "MCV [Entitic volume] by Automated count", 106, "fL", d, interp="H", high=100)
    b.obs(
        "777-3",
        "Platelets [#/volume] in Blood by Automated count",
        112,
        "10*9/L",
        d,
        interp="L",
        low=150,
        high=400,
    )
    b.obs("2284-8", "Folate [Mass/volume] in Serum or Plasma", 1.9, "ng/mL", d, interp="L", low=3.0)
    b.obs(
        "2601-3",
        "Magnesium [Mass/volume] in Serum or Plasma",
        1.41,
        "mg/dL",
        d,
        interp="L",
        low=1.7,
        high=2.4,
        note="0.58 mmol/L",
    )
    b.obs(
        "2823-3", "Potassium [Moles/volume] in Serum or Plasma", 3.6, "mmol/L", d, low=3.5, high=5.3
    )
    b.obs("6301-6", "INR in Platelet poor plasma by Coagulation assay", 1.2, "{INR}", d)
    b.bp(138, 86, "2026-12-02")
    b.vital("hr", 92, "2026-12-02")
    b.smoking("449868002", "Smokes tobacco daily", "2026-12-02")
    return b


# 11. Chapter 12 (ear, nose, oropharynx): 52 F with allergic rhinitis and nasal polyps,
#     daily decongestant spray for months and oral pseudoephedrine with a raised blood
#     pressure; aspirin-sensitive asthma; ENT referral pending. Nothing urgent.


def case11() -> Builder:
    b = Builder("11")
    b.patient("Rosalind", "Tregothnan", "female", "1974-05-27", "Bath")
    b.condition("61582004", "Allergic rhinitis", "2005-04-11")
    b.condition("40055000", "Chronic sinusitis", "2025-11-20")
    b.condition(None, "Nasal polyps, bilateral", "2025-11-20")
    b.condition("195967001", "Asthma", "2010-09-06")
    b.condition("38341003", "Hypertensive disorder", "2022-03-15")
    b.allergy("Aspirin", "1191", "Bronchospasm", "4386001", "2016-02-09")
    b.med(
        "Mometasone furoate 50 micrograms/dose nasal spray",
        "108118",
        "2 sprays into each nostril once daily",
        2,
        "spray",
        "2025-11-20",
        route="nasal",
    )
    b.med("Cetirizine 10 mg tablets", "20610", "10 mg once daily", 10, "mg", "2005-04-11")
    b.med(
        "Beclometasone 100 micrograms/dose inhaler",
        "1347",
        "2 puffs twice daily",
        2,
        "puff",
        "2010-09-06",
        freq=2,
        route="inhaled",
    )
    b.med(
        "Salbutamol 100 micrograms/dose inhaler",
        "435",
        "2 puffs when needed",
        2,
        "puff",
        "2010-09-06",
        prn=True,
        freq=4,
        route="inhaled",
    )
    b.med("Amlodipine 5 mg tablets", "17767", "5 mg once daily", 5, "mg", "2022-03-15")
    b.med_statement(
        "Oxymetazoline 0.05% nasal spray (bought over the counter)",
        "7812",
        "2 sprays each nostril three to four times a day",
        "2026-08-20",
        note="Used daily for over 3 months; nose feels blocked when she stops",
    )
    b.med_statement(
        "Pseudoephedrine 60 mg tablets (bought over the counter)",
        None,
        "60 mg three times a day",
        "2026-10-10",
    )
    b.encounter(
        "General practice consultation",
        "Persistent nasal blockage and reduced sense of smell despite nasal spray",
        "2026-12-02T08:00:00+00:00",
        "2026-12-02T08:15:00+00:00",
    )
    b.request(
        "Referral to ENT (otolaryngology): chronic rhinosinusitis with nasal polyps",
        "2026-10-14",
        note="Routine referral; appointment 19 Jan 2027",
        occurrence="2027-01-19T10:00:00+00:00",
    )
    b.bp(136, 82, "2026-05-12")
    b.bp(152, 94, "2026-12-02")
    b.vital("hr", 88, "2026-12-02")
    b.vital("wt", 70, "2026-12-02")
    b.obs(
        "33452-4",
        "Maximum expiratory gas flow Respiratory system airway by Peak flow meter",
        410,
        "L/min",
        "2026-12-02",
        cat="exam",
        note="Personal best 430 L/min",
    )
    b.smoking("266919005", "Never smoked tobacco", "2026-12-02")
    return b


# 12. Chapter 5 (infections): 88 F, frail, lives alone, CKD 4; shingles treated with full-dose
#     aciclovir and gabapentin 1.8 g/day; now confused and drowsy.


def case12() -> Builder:
    b = Builder("12")
    b.patient("Philippa", "Sandercock", "female", "1938-04-02", "Barnstaple")
    zos = b.condition(
        "4740000", "Herpes zoster (left T6 dermatome)", "2026-11-28", recorded="2026-11-29"
    )
    b.condition("431857002", "Chronic kidney disease stage 4", "2024-01-18")
    b.condition("248279007", "Frailty", "2025-05-02")
    b.condition("38341003", "Hypertensive disorder", "1999-06-01")
    b.condition("161898004", "History of fall", "2026-08-20")
    b.condition(None, "Acute confusion and drowsiness", "2026-12-01", recorded="2026-12-02")
    b.med(
        "Aciclovir 800 mg tablets",
        "281",
        "800 mg five times a day for 7 days",
        800,
        "mg",
        "2026-11-29",
        freq=5,
        reason=zos,
        end="2026-12-06",
    )
    b.med(
        "Gabapentin 300 mg capsules",
        "25480",
        "600 mg three times a day (shingles pain)",
        600,
        "mg",
        "2026-11-30",
        freq=3,
        reason=zos,
    )
    b.med("Amlodipine 5 mg tablets", "17767", "5 mg once daily", 5, "mg", "2015-03-02")
    b.med(
        "Paracetamol 500 mg tablets",
        "161",
        "1 g four times a day when needed",
        1000,
        "mg",
        "2026-11-29",
        freq=4,
        prn=True,
    )
    b.encounter(
        "Home visit",
        "Daughter reports confusion and drowsiness since yesterday, unsteady walking; lives alone",
        "2026-12-02T08:30:00+00:00",
        "2026-12-02T09:00:00+00:00",
        cls="HH",
    )
    for when, cr, egfr in (("2026-06-10", 158, 27), ("2026-11-29", 166, 25)):
        b.obs(
            "14682-9",
            "Creatinine [Moles/volume] in Serum or Plasma",
            cr,
            "umol/L",
            when,
            interp="H",
            low=45,
            high=90,
        )
        b.obs(
            "62238-1",
            "Glomerular filtration rate/1.73 sq M.predicted [CKD-EPI]",
            egfr,
            "mL/min/{1.73_m2}",
            when,
            interp="L",
        )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        4.8,
        "mmol/L",
        "2026-11-29",
        low=3.5,
        high=5.3,
    )
    b.obs("2951-2", "Sodium [Moles/volume] in Serum or Plasma", 137, "mmol/L", "2026-11-29")
    b.vital("temp", 37.1, "2026-12-02")
    b.vital("hr", 84, "2026-12-02")
    b.vital("rr", 16, "2026-12-02")
    b.vital("spo2", 96, "2026-12-02")
    b.bp(128, 70, "2026-12-02")
    b.vital("wt", 54, "2026-11-29")
    b.obs(None, "Clinical Frailty Scale", 6, "{score}", "2025-05-02", cat="survey")
    b.obs(
        None,
        "Living situation",
        "Lives alone; daughter visits daily; no care package",
        None,
        "2026-12-02",
        cat="social-history",
    )
    return b


CASES = {
    "01_malignancy_immunosuppression_transplant_clarithromycin.json": case01,
    "02_musculoskeletal_gout_nsaid_colchicine_aki.json": case02,
    "03_gastrointestinal_ida_fit_aspirin_apixaban.json": case03,
    "04_nutrition_blood_anorexia_refeeding.json": case04,
    "05_infections_carehome_bacteriuria_trimethoprim.json": case05,
    "06_vaccines_copd_methotrexate_annual_review.json": case06,
    "07_nutrition_blood_b12_metformin_hyponatraemia.json": case07,
    "08_gastrointestinal_crohns_azathioprine_neutropenia.json": case08,
    "09_cardiovascular_hfref_diltiazem_dabigatran.json": case09,
    "10_nutrition_blood_alcohol_thiamine_paracetamol.json": case10,
    "11_ear_nose_oropharynx_rhinitis_decongestants.json": case11,
    "12_infections_zoster_aciclovir_ckd4.json": case12,
}


def main() -> None:
    for name, make in CASES.items():
        path = HERE / name
        path.write_text(json.dumps(make().bundle(), indent=2) + "\n", encoding="utf-8")
        print(path.name)


if __name__ == "__main__":
    main()
