#!/usr/bin/env python3.11
"""Regenerate the vignettes9 bundles and blind_expectations.json (stdlib only, python3.11).

Usage: python3.11 examples/vignettes9/make.py
"""

from __future__ import annotations

import uuid

UCUM = "http://unitsofmeasure.org"
SCT = "http://snomed.info/sct"
LOINC = "http://loinc.org"
RXN = "http://www.nlm.nih.gov/research/umls/rxnorm"
NS = uuid.UUID("6b1f6a52-9c1e-4c61-b0d2-9e51a7c0f009")

UNITS = {  # display -> UCUM code
    "g/L": "g/L",
    "10^9/L": "10*9/L",
    "ug/L": "ug/L",
    "mg/L": "mg/L",
    "umol/L": "umol/L",
    "mmol/L": "mmol/L",
    "mmol/mol": "mmol/mol",
    "U/L": "U/L",
    "fL": "fL",
    "%": "%",
    "mL/min/1.73m2": "mL/min/{1.73_m2}",
    "mU/L": "m[IU]/L",
    "pmol/L": "pmol/L",
    "ng/mL": "ng/mL",
    "ug/g": "ug/g",
    "mg/g": "mg/g",
    "pg/mL": "pg/mL",
    "cells/uL": "/uL",
    "copies/mL": "{copies}/mL",
    "IU/L": "[IU]/L",
    "kg": "kg",
    "cm": "cm",
    "kg/m2": "kg/m2",
    "Cel": "Cel",
    "/min": "/min",
    "mm[Hg]": "mm[Hg]",
    "L/min": "L/min",
    "score": "{score}",
    "nmol/L/h": "nmol/L/h",
    "s": "s",
    "{INR}": "{INR}",
    # dose units
    "mg": "mg",
    "ug": "ug",
    "g": "g",
    "mL": "mL",
    "units": "[iU]",
    "tablet": "{tablet}",
    "puff": "{puff}",
    "capsule": "{capsule}",
    "application": "{application}",
}


class Builder:
    def __init__(self, key: str) -> None:
        self.key = key
        self.n = 0
        self.entries: list[dict] = []
        self.patient_ref = ""

    def _id(self) -> str:
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.key}/{self.n}"))

    def add(self, resource: dict) -> str:
        rid = resource.get("id") or self._id()
        resource["id"] = rid
        self.entries.append({"fullUrl": f"urn:uuid:{rid}", "resource": resource})
        return f"urn:uuid:{rid}"

    def subj(self) -> dict:
        return {"reference": self.patient_ref}

    # ---- resources -------------------------------------------------------------------------
    def patient(self, given: str, family: str, gender: str, birth: str, city: str) -> None:
        self.patient_ref = self.add(
            {
                "resourceType": "Patient",
                "identifier": [
                    {"system": "urn:oid:2.16.840.1.113883.2.1.4.1.vignettes9", "value": self.key}
                ],
                "name": [{"use": "official", "family": family, "given": [given]}],
                "gender": gender,
                "birthDate": birth,
                "address": [{"city": city, "country": "GB"}],
            }
        )

    def condition(
        self,
        code: str | None,
        text: str,
        onset: str,
        status: str = "active",
        abated: str | None = None,
        recorded: str | None = None,
        verification: str = "confirmed",
    ) -> str:
        cc: dict = {"text": text}
        if code:
            cc["coding"] = [{"system": SCT, "code": code, "display": text}]
        r = {
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
                        "code": verification,
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
            "code": cc,
            "subject": self.subj(),
            "onsetDateTime": onset,
            "recordedDate": recorded or onset,
        }
        if abated:
            r["abatementDateTime"] = abated
        return self.add(r)

    @staticmethod
    def _med_cc(rx: str | None, text: str) -> dict:
        cc: dict = {"text": text}
        if rx:
            cc["coding"] = [{"system": RXN, "code": rx, "display": text.split(" ")[0]}]
        return cc

    @staticmethod
    def _dosage(
        sig: str,
        dose: float | None,
        unit: str | None,
        freq: int | None = 1,
        period: float = 1,
        period_unit: str = "d",
        prn: bool = False,
        route: str | None = None,
    ) -> dict:
        d: dict = {"text": sig}
        if freq:
            d["timing"] = {
                "repeat": {"frequency": freq, "period": period, "periodUnit": period_unit}
            }
        if prn:
            d["asNeededBoolean"] = True
        if route:
            d["route"] = {"text": route}
        if dose is not None and unit:
            d["doseAndRate"] = [
                {"doseQuantity": {"value": dose, "unit": unit, "system": UCUM, "code": UNITS[unit]}}
            ]
        return d

    def med(
        self,
        rx: str | None,
        text: str,
        sig: str,
        dose: float | None,
        unit: str | None,
        authored: str,
        freq: int | None = 1,
        period: float = 1,
        period_unit: str = "d",
        status: str = "active",
        prn: bool = False,
        note: str | None = None,
        reason: str | None = None,
        route: str | None = None,
        end: str | None = None,
    ) -> str:
        dosage = self._dosage(sig, dose, unit, freq, period, period_unit, prn, route)
        if end:
            dosage.setdefault("timing", {}).setdefault("repeat", {})["boundsPeriod"] = {
                "start": authored[:10],
                "end": end,
            }
        r: dict = {
            "resourceType": "MedicationRequest",
            "status": status,
            "intent": "order",
            "medicationCodeableConcept": self._med_cc(rx, text),
            "subject": self.subj(),
            "authoredOn": authored,
            "dosageInstruction": [dosage],
        }
        if reason:
            r["reasonCode"] = [{"text": reason}]
        if note:
            r["note"] = [{"text": note}]
        return self.add(r)

    def med_statement(
        self,
        rx: str | None,
        text: str,
        sig: str,
        dose: float | None,
        unit: str | None,
        start: str,
        asserted: str,
        freq: int | None = 1,
        status: str = "active",
        prn: bool = False,
        note: str | None = None,
    ) -> str:
        r: dict = {
            "resourceType": "MedicationStatement",
            "status": status,
            "medicationCodeableConcept": self._med_cc(rx, text),
            "subject": self.subj(),
            "effectivePeriod": {"start": start},
            "dateAsserted": asserted,
            "dosage": [self._dosage(sig, dose, unit, freq, prn=prn)],
        }
        if note:
            r["note"] = [{"text": note}]
        return self.add(r)

    def obs(
        self,
        loinc: str | None,
        text: str,
        value,
        unit: str | None,
        date: str,
        category: str = "laboratory",
        history: tuple = (),
        low: float | None = None,
        high: float | None = None,
        comparator: str | None = None,
        status: str = "final",
        note: str | None = None,
    ) -> None:
        """One Observation per (date, value): the current one and any earlier ones."""
        for d, v in ((date, value), *history):
            cc: dict = {"text": text}
            if loinc:
                cc["coding"] = [{"system": LOINC, "code": loinc, "display": text}]
            r: dict = {
                "resourceType": "Observation",
                "status": status,
                "category": [
                    {
                        "coding": [
                            {
                                "system": "http://terminology.hl7.org/CodeSystem/observation-category",
                                "code": category,
                            }
                        ]
                    }
                ],
                "code": cc,
                "subject": self.subj(),
                "effectiveDateTime": d,
                "issued": d if "T" in d and d.endswith("+00:00") else None,
            }
            if r["issued"] is None:
                del r["issued"]
            if isinstance(v, str):
                r["valueString"] = v
            elif isinstance(v, dict):
                r["valueCodeableConcept"] = v
            else:
                q = {"value": v, "unit": unit, "system": UCUM, "code": UNITS[unit]}
                if comparator and d == date:
                    q["comparator"] = comparator
                r["valueQuantity"] = q
            if (low is not None or high is not None) and unit and not isinstance(v, (str, dict)):
                rr: dict = {}
                if low is not None:
                    rr["low"] = {"value": low, "unit": unit, "system": UCUM, "code": UNITS[unit]}
                if high is not None:
                    rr["high"] = {"value": high, "unit": unit, "system": UCUM, "code": UNITS[unit]}
                r["referenceRange"] = [rr]
            if note and d == date:
                r["note"] = [{"text": note}]
            self.add(r)

    def bp(self, sys: int, dia: int, date: str, position: str | None = None) -> None:
        codes = {
            None: (
                "85354-9",
                "Blood pressure panel",
                "8480-6",
                "Systolic blood pressure",
                "8462-4",
                "Diastolic blood pressure",
            ),
            "standing": (
                "85354-9",
                "Blood pressure panel - standing",
                "8460-8",
                "Systolic blood pressure--standing",
                "8454-1",
                "Diastolic blood pressure--standing",
            ),
            "supine": (
                "85354-9",
                "Blood pressure panel - supine",
                "8461-6",
                "Systolic blood pressure--supine",
                "8455-8",
                "Diastolic blood pressure--supine",
            ),
        }[position]
        q = lambda v: {"value": v, "unit": "mm[Hg]", "system": UCUM, "code": "mm[Hg]"}  # noqa
        self.add(
            {
                "resourceType": "Observation",
                "status": "final",
                "category": [
                    {
                        "coding": [
                            {
                                "system": "http://terminology.hl7.org/CodeSystem/observation-category",
                                "code": "vital-signs",
                            }
                        ]
                    }
                ],
                "code": {
                    "coding": [{"system": LOINC, "code": codes[0], "display": codes[1]}],
                    "text": codes[1],
                },
                "subject": self.subj(),
                "effectiveDateTime": date,
                "component": [
                    {
                        "code": {
                            "coding": [{"system": LOINC, "code": codes[2], "display": codes[3]}],
                            "text": codes[3],
                        },
                        "valueQuantity": q(sys),
                    },
                    {
                        "code": {
                            "coding": [{"system": LOINC, "code": codes[4], "display": codes[5]}],
                            "text": codes[5],
                        },
                        "valueQuantity": q(dia),
                    },
                ],
            }
        )

    def smoking(self, code: str, text: str, date: str) -> None:
        self.obs(
            "72166-2",
            "Tobacco smoking status",
            {"coding": [{"system": SCT, "code": code, "display": text}], "text": text},
            None,
            date,
            category="social-history",
        )

    def encounter(
        self,
        klass: str,
        reason: str,
        start: str,
        end: str | None = None,
        status: str = "finished",
        type_text: str | None = None,
    ) -> str:
        names = {
            "AMB": "ambulatory",
            "IMP": "inpatient encounter",
            "EMER": "emergency",
            "VR": "virtual",
            "HH": "home health",
        }
        r: dict = {
            "resourceType": "Encounter",
            "status": status,
            "class": {
                "system": "http://terminology.hl7.org/CodeSystem/v3-ActCode",
                "code": klass,
                "display": names[klass],
            },
            "subject": self.subj(),
            "period": {"start": start, **({"end": end} if end else {})},
            "reasonCode": [{"text": reason}],
        }
        if type_text:
            r["type"] = [{"text": type_text}]
        return self.add(r)

    def report(
        self,
        code: str | None,
        text: str,
        status: str,
        date: str,
        conclusion: str,
        issued: str | None = None,
        category: str = "LAB",
    ) -> str:
        cc: dict = {"text": text}
        if code:
            cc["coding"] = [{"system": LOINC, "code": code, "display": text}]
        r: dict = {
            "resourceType": "DiagnosticReport",
            "status": status,
            "category": [
                {
                    "coding": [
                        {
                            "system": "http://terminology.hl7.org/CodeSystem/v2-0074",
                            "code": category,
                        }
                    ]
                }
            ],
            "code": cc,
            "subject": self.subj(),
            "effectiveDateTime": date,
            "conclusion": conclusion,
        }
        if issued:
            r["issued"] = issued
        return self.add(r)

    def service_request(
        self,
        text: str,
        status: str,
        authored: str,
        reason: str,
        occurrence: str | None = None,
        code: str | None = None,
        system: str = SCT,
        priority: str | None = None,
    ) -> str:
        cc: dict = {"text": text}
        if code:
            cc["coding"] = [{"system": system, "code": code, "display": text}]
        r: dict = {
            "resourceType": "ServiceRequest",
            "status": status,
            "intent": "order",
            "code": cc,
            "subject": self.subj(),
            "authoredOn": authored,
            "reasonCode": [{"text": reason}],
        }
        if occurrence:
            r["occurrenceDateTime"] = occurrence
        if priority:
            r["priority"] = priority
        return self.add(r)

    def procedure(
        self,
        code: str | None,
        text: str,
        date: str,
        status: str = "completed",
        note: str | None = None,
    ) -> str:
        cc: dict = {"text": text}
        if code:
            cc["coding"] = [{"system": SCT, "code": code, "display": text}]
        r: dict = {
            "resourceType": "Procedure",
            "status": status,
            "code": cc,
            "subject": self.subj(),
            "performedDateTime": date,
        }
        if note:
            r["note"] = [{"text": note}]
        return self.add(r)

    def allergy(
        self,
        text: str,
        reaction: str,
        recorded: str,
        code: str | None = None,
        rx: bool = False,
        category: str = "medication",
        criticality: str = "high",
    ) -> str:
        cc: dict = {"text": text}
        if code:
            cc["coding"] = [{"system": RXN if rx else SCT, "code": code, "display": text}]
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
                "category": [category],
                "criticality": criticality,
                "code": cc,
                "patient": self.subj(),
                "recordedDate": recorded,
                "reaction": [{"manifestation": [{"text": reaction}]}],
            }
        )

    def bundle(self) -> dict:
        return {
            "resourceType": "Bundle",
            "id": str(uuid.uuid5(NS, self.key)),
            "type": "collection",
            "timestamp": "2026-12-02T08:00:00+00:00",
            "entry": self.entries,
        }


# ============================================================================================
# The cases. Clinic date 2026-12-02; every patient is invented.
# ============================================================================================
T = "T09:00:00+00:00"


def d(day: str) -> str:
    return day + T


def case01(b: Builder) -> None:
    """1 GI, 19 M: Crohn's disease on azathioprine with new neutropenia, flare, iron deficiency."""
    b.patient("Kieran", "Moltby", "male", "2007-03-14", "Leeds")
    b.condition("34000006", "Crohn's disease", d("2024-05-10"))
    b.condition("87522002", "Iron deficiency anaemia", d("2026-11-28"))
    b.condition(None, "Vitamin D deficiency", d("2026-11-28"))
    b.med(
        "1256",
        "Azathioprine 50 mg tablets",
        "150 mg (three tablets) once daily",
        150,
        "mg",
        d("2026-08-20"),
        reason="Crohn's disease",
        note="Dose increased from 100 mg to 150 mg daily on 2026-08-20. TPMT activity normal.",
    )
    b.med(
        "1256",
        "Azathioprine 50 mg tablets",
        "100 mg once daily",
        100,
        "mg",
        d("2025-02-03"),
        status="stopped",
        reason="Crohn's disease",
    )
    b.med(
        None,
        "Prednisolone 5 mg tablets (reducing course)",
        "40 mg daily reducing by 5 mg weekly",
        40,
        "mg",
        d("2026-03-02"),
        status="stopped",
        reason="Crohn's flare",
    )
    b.encounter(
        "AMB",
        "IBD clinic review: two weeks of diarrhoea 5-6 times a day, abdominal pain, weight loss",
        d("2026-11-28"),
        "2026-11-28T09:40:00+00:00",
        type_text="Gastroenterology outpatient",
    )
    b.obs(
        "751-8",
        "Neutrophils [#/volume] in Blood",
        0.8,
        "10^9/L",
        d("2026-11-28"),
        history=((d("2026-08-15"), 4.1), (d("2026-05-12"), 4.6)),
        low=2.0,
        high=7.5,
    )
    b.obs(
        "6690-2",
        "Leukocytes [#/volume] in Blood",
        2.4,
        "10^9/L",
        d("2026-11-28"),
        history=((d("2026-08-15"), 6.2),),
        low=4.0,
        high=11.0,
    )
    b.obs(
        "718-7",
        "Hemoglobin [Mass/volume] in Blood",
        112,
        "g/L",
        d("2026-11-28"),
        history=((d("2026-08-15"), 128),),
        low=130,
        high=170,
    )
    b.obs(
        "787-2",
        "MCV [Entitic volume] by Automated count",
        74,
        "fL",
        d("2026-11-28"),
        low=80,
        high=100,
    )
    b.obs(
        "777-3", "Platelets [#/volume] in Blood", 412, "10^9/L", d("2026-11-28"), low=150, high=400
    )
    b.obs(
        "2276-4",
        "Ferritin [Mass/volume] in Serum or Plasma",
        9,
        "ug/L",
        d("2026-11-28"),
        low=30,
        high=400,
    )
    b.obs(
        "1988-5",
        "C reactive protein [Mass/volume] in Serum or Plasma",
        34,
        "mg/L",
        d("2026-11-28"),
        history=((d("2026-08-15"), 6),),
        high=5,
    )
    b.obs(
        "38445-3",
        "Calprotectin [Mass/mass] in Stool",
        860,
        "ug/g",
        d("2026-11-28"),
        history=((d("2026-08-15"), 210),),
        high=50,
    )
    b.obs(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        31,
        "U/L",
        d("2026-11-28"),
        high=45,
    )
    b.obs(
        "1989-3",
        "25-hydroxyvitamin D3+25-hydroxyvitamin D2 [Mass/volume] in Serum or Plasma",
        9,
        "ng/mL",
        d("2026-11-28"),
        low=20,
    )
    b.obs(
        "29463-7",
        "Body weight",
        57.8,
        "kg",
        d("2026-11-28"),
        category="vital-signs",
        history=((d("2026-08-15"), 61.5),),
    )
    b.obs("39156-5", "Body mass index", 18.4, "kg/m2", d("2026-11-28"), category="vital-signs")
    b.smoking("449868002", "Smokes tobacco daily (about 10 cigarettes a day)", d("2026-11-28"))
    b.service_request(
        "MR enterography",
        "active",
        d("2026-11-28"),
        "Assess small bowel Crohn's activity",
        occurrence=d("2026-12-15"),
    )


def case02(b: Builder) -> None:
    """2 Skin, 72 F: psoriasis on weekly methotrexate, trimethoprim just started, no folic acid,
    falling eGFR and rising ALT."""
    b.patient("Marguerite", "Ellacott", "female", "1954-06-02", "Shrewsbury")
    b.condition("9014002", "Psoriasis (chronic plaque)", d("1998-04-01"))
    b.condition("38341003", "Hypertension", d("2012-09-17"))
    b.condition("433144002", "Chronic kidney disease stage 3", d("2025-11-03"))
    b.condition("68566005", "Urinary tract infection", d("2026-11-29"))
    b.med(
        "6851",
        "Methotrexate 2.5 mg tablets",
        "15 mg (six tablets) once a week on Mondays",
        15,
        "mg",
        d("2023-04-10"),
        freq=1,
        period=1,
        period_unit="wk",
        reason="Psoriasis",
        note="Prescribed by dermatology; shared care with the practice.",
    )
    b.med(
        "10829",
        "Trimethoprim 200 mg tablets",
        "200 mg twice daily for 7 days",
        200,
        "mg",
        d("2026-11-29"),
        freq=2,
        reason="Urinary tract infection",
        end="2026-12-06",
        note="Prescribed by the out-of-hours service.",
    )
    b.med(
        "35296",
        "Ramipril 5 mg capsules",
        "5 mg once daily",
        5,
        "mg",
        d("2019-03-11"),
        reason="Hypertension",
    )
    b.med(
        None,
        "Emollient cream (50% white soft paraffin)",
        "apply twice daily",
        None,
        None,
        d("2023-04-10"),
        freq=2,
        route="topical",
    )
    b.encounter(
        "AMB",
        "Out-of-hours: dysuria and frequency for 2 days",
        d("2026-11-29"),
        "2026-11-29T09:20:00+00:00",
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        48,
        "mL/min/1.73m2",
        d("2026-11-27"),
        history=((d("2026-05-20"), 61), (d("2025-11-03"), 63)),
        low=60,
    )
    b.obs(
        "14682-9",
        "Creatinine [Moles/volume] in Serum or Plasma",
        102,
        "umol/L",
        d("2026-11-27"),
        history=((d("2026-05-20"), 84),),
        low=45,
        high=90,
    )
    b.obs(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        88,
        "U/L",
        d("2026-11-27"),
        history=((d("2026-05-20"), 32),),
        high=35,
    )
    b.obs(
        "6690-2",
        "Leukocytes [#/volume] in Blood",
        3.6,
        "10^9/L",
        d("2026-11-27"),
        history=((d("2026-05-20"), 5.4),),
        low=4.0,
        high=11.0,
    )
    b.obs(
        "751-8",
        "Neutrophils [#/volume] in Blood",
        2.1,
        "10^9/L",
        d("2026-11-27"),
        low=2.0,
        high=7.5,
    )
    b.obs(
        "777-3",
        "Platelets [#/volume] in Blood",
        142,
        "10^9/L",
        d("2026-11-27"),
        history=((d("2026-05-20"), 221),),
        low=150,
        high=400,
    )
    b.obs(
        "787-2",
        "MCV [Entitic volume] by Automated count",
        104,
        "fL",
        d("2026-11-27"),
        low=80,
        high=100,
    )
    b.obs(
        "1751-7",
        "Albumin [Mass/volume] in Serum or Plasma",
        36,
        "g/L",
        d("2026-11-27"),
        low=35,
        high=50,
    )
    b.obs(
        "630-4",
        "Bacteria identified in Urine by Culture",
        "Escherichia coli >10^5 CFU/mL; sensitive to nitrofurantoin, cefalexin; "
        "resistant to amoxicillin",
        None,
        d("2026-11-30"),
    )
    b.obs(
        "11331-6",
        "History of Alcohol use",
        "about 14 units a week",
        None,
        d("2026-05-20"),
        category="social-history",
    )
    b.bp(134, 78, d("2026-11-27"))


def case03(b: Builder) -> None:
    """3 Cardiovascular, 42 M: probable familial hypercholesterolaemia, untreated raised blood
    pressure, smoker. Nothing urgent."""
    b.patient("Desmond", "Aucklin", "male", "1984-09-19", "Swindon")
    b.condition(
        "398036000",
        "Familial hypercholesterolaemia (probable; Simon Broome, tendon xanthomata)",
        d("2026-11-18"),
        verification="provisional",
    )
    b.condition("59621000", "Essential hypertension", d("2026-11-18"))
    b.condition(None, "Family history: father had a myocardial infarction aged 46", d("2026-11-18"))
    b.condition(None, "Allergic rhinitis (seasonal)", d("2005-05-01"))
    b.med(
        None,
        "Cetirizine 10 mg tablets",
        "10 mg once daily in the hay fever season",
        10,
        "mg",
        d("2026-04-02"),
        reason="Allergic rhinitis",
    )
    b.med(
        "5640",
        "Ibuprofen 400 mg tablets",
        "400 mg three times daily with food",
        400,
        "mg",
        d("2025-07-14"),
        freq=3,
        status="stopped",
        reason="Ankle sprain",
    )
    b.encounter(
        "AMB",
        "NHS Health Check: raised cholesterol and blood pressure",
        d("2026-11-18"),
        "2026-11-18T09:30:00+00:00",
    )
    b.obs(
        "14647-2",
        "Cholesterol [Moles/volume] in Serum or Plasma",
        8.4,
        "mmol/L",
        d("2026-11-18"),
        history=((d("2026-10-29"), 8.6),),
        high=5.0,
    )
    b.obs(
        "22748-8",
        "Cholesterol in LDL [Moles/volume] in Serum or Plasma",
        6.1,
        "mmol/L",
        d("2026-11-18"),
        history=((d("2026-10-29"), 6.3),),
        high=3.0,
    )
    b.obs(
        "14646-4",
        "Cholesterol in HDL [Moles/volume] in Serum or Plasma",
        1.2,
        "mmol/L",
        d("2026-11-18"),
        low=1.0,
    )
    b.obs(
        "14927-8",
        "Triglyceride [Moles/volume] in Serum or Plasma",
        1.6,
        "mmol/L",
        d("2026-11-18"),
        high=1.7,
    )
    b.obs(
        "59261-8",
        "Hemoglobin A1c/Hemoglobin.total in Blood by IFCC protocol",
        38,
        "mmol/mol",
        d("2026-11-18"),
        high=42,
    )
    b.obs(
        "3016-3",
        "Thyrotropin [Units/volume] in Serum or Plasma",
        1.8,
        "mU/L",
        d("2026-11-18"),
        low=0.3,
        high=4.2,
    )
    b.obs(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        28,
        "U/L",
        d("2026-11-18"),
        high=45,
    )
    b.obs(
        "2157-6",
        "Creatine kinase [Enzymatic activity/volume] in Serum or Plasma",
        110,
        "U/L",
        d("2026-11-18"),
        high=200,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        96,
        "mL/min/1.73m2",
        d("2026-11-18"),
    )
    b.obs(
        "9318-7", "Albumin/Creatinine [Mass Ratio] in Urine", 12, "mg/g", d("2026-11-18"), high=30
    )
    b.bp(152, 96, d("2026-11-18"))
    b.bp(148, 94, d("2026-10-29"))
    b.obs(
        None,
        "Ambulatory blood pressure, daytime average",
        "144/91 mmHg (24-hour ABPM)",
        None,
        d("2026-11-25"),
        category="vital-signs",
    )
    b.obs("29463-7", "Body weight", 88, "kg", d("2026-11-18"), category="vital-signs")
    b.obs("39156-5", "Body mass index", 27.6, "kg/m2", d("2026-11-18"), category="vital-signs")
    b.smoking("449868002", "Smokes tobacco daily (15 cigarettes a day)", d("2026-11-18"))
    b.obs(
        None,
        "QRISK3 10-year cardiovascular risk",
        11.8,
        "%",
        d("2026-11-18"),
        category="survey",
        note="Underestimates risk in familial hypercholesterolaemia.",
    )


def case04(b: Builder) -> None:
    """4 Cardiovascular, 35 M: mechanical aortic valve on warfarin, INR 6.4 after clarithromycin,
    over-the-counter ibuprofen."""
    b.patient("Lucan", "Ferriday", "male", "1991-02-07", "Carlisle")
    b.condition("72352009", "Bicuspid aortic valve", d("2008-06-01"))
    b.condition(
        None, "Mechanical aortic valve prosthesis in situ (replacement 2019)", d("2019-03-21")
    )
    b.condition(None, "Acute sinusitis", d("2026-11-26"))
    b.condition(None, "Mechanical low back pain", d("2026-11-20"))
    b.procedure(None, "Aortic valve replacement with mechanical prosthesis", d("2019-03-21"))
    b.med(
        "11289",
        "Warfarin 1 mg and 3 mg tablets",
        "as directed by anticoagulation clinic: currently 7 mg daily at 18:00; target INR 3.0 "
        "(range 2.5-3.5)",
        7,
        "mg",
        d("2026-11-10"),
        reason="Mechanical aortic valve",
    )
    b.med(
        "21212",
        "Clarithromycin 500 mg tablets",
        "500 mg twice daily for 7 days",
        500,
        "mg",
        d("2026-11-26"),
        freq=2,
        reason="Acute sinusitis",
        end="2026-12-03",
        note="Prescribed at a walk-in centre; anticoagulation clinic not informed.",
    )
    b.med_statement(
        "5640",
        "Ibuprofen 400 mg tablets (bought over the counter)",
        "400 mg three times a day",
        400,
        "mg",
        d("2026-11-20"),
        d("2026-12-01"),
        freq=3,
        note="Taking for back pain since 20 November.",
    )
    b.encounter(
        "AMB",
        "Anticoagulation clinic: INR 6.4; reports bleeding gums when brushing "
        "teeth, no other bleeding",
        d("2026-12-01"),
        "2026-12-01T09:15:00+00:00",
    )
    b.obs(
        "6301-6",
        "INR in Platelet poor plasma by Coagulation assay",
        6.4,
        "{INR}",
        d("2026-12-01"),
        history=((d("2026-11-10"), 3.1), (d("2026-10-13"), 2.8), (d("2026-09-15"), 3.2)),
    )
    b.obs(
        "718-7", "Hemoglobin [Mass/volume] in Blood", 141, "g/L", d("2026-12-01"), low=130, high=170
    )
    b.obs("777-3", "Platelets [#/volume] in Blood", 236, "10^9/L", d("2026-12-01"))
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        104,
        "mL/min/1.73m2",
        d("2026-06-02"),
    )
    b.bp(128, 76, d("2026-12-01"))
    b.obs("8867-4", "Heart rate", 74, "/min", d("2026-12-01"), category="vital-signs")
    b.smoking("266919005", "Never smoked tobacco", d("2026-06-02"))


def case05(b: Builder) -> None:
    """5 Urinary tract, 90 F: desmopressin for nocturia with sodium 124, oxybutynin with
    dementia on donepezil, nitrofurantoin prophylaxis at eGFR 27, falls."""
    b.patient("Winifred", "Hallowes", "female", "1936-04-22", "Ludlow")
    b.condition("26929004", "Alzheimer's disease dementia", d("2023-02-14"))
    b.condition("87557004", "Urge incontinence of urine (overactive bladder)", d("2019-05-08"))
    b.condition("139394000", "Nocturia", d("2026-09-30"))
    b.condition("68566005", "Recurrent urinary tract infection", d("2025-06-02"))
    b.condition("431857002", "Chronic kidney disease stage 4", d("2026-03-10"))
    b.condition("1912002", "Fall (two falls at home in October and November 2026)", d("2026-11-12"))
    b.condition("248279007", "Frailty (Clinical Frailty Scale 6)", d("2026-03-10"))
    b.med(
        "32675",
        "Oxybutynin 5 mg tablets",
        "5 mg three times daily",
        5,
        "mg",
        d("2019-05-08"),
        freq=3,
        reason="Overactive bladder",
    )
    b.med(
        "135447",
        "Donepezil 10 mg tablets",
        "10 mg at night",
        10,
        "mg",
        d("2023-03-01"),
        reason="Alzheimer's disease",
    )
    b.med(
        "3251",
        "Desmopressin 100 microgram tablets",
        "100 micrograms at bedtime",
        100,
        "ug",
        d("2026-10-15"),
        reason="Nocturia",
    )
    b.med(
        "7454",
        "Nitrofurantoin 50 mg tablets",
        "50 mg at night",
        50,
        "mg",
        d("2025-06-02"),
        reason="Prophylaxis of recurrent urinary tract infection",
    )
    b.med(
        "161",
        "Paracetamol 500 mg tablets",
        "1 g four times daily when required",
        1000,
        "mg",
        d("2024-01-15"),
        freq=4,
        prn=True,
        reason="Osteoarthritis pain",
    )
    b.encounter(
        "HH",
        "Home visit: more confused and drowsy for 4 days, poor appetite, "
        "headache; daughter concerned",
        d("2026-11-30"),
        "2026-11-30T10:00:00+00:00",
    )
    b.obs(
        "2951-2",
        "Sodium [Moles/volume] in Serum or Plasma",
        124,
        "mmol/L",
        d("2026-11-30"),
        history=((d("2026-09-20"), 138), (d("2026-03-10"), 139)),
        low=133,
        high=146,
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        4.4,
        "mmol/L",
        d("2026-11-30"),
        low=3.5,
        high=5.3,
    )
    b.obs(
        "14682-9",
        "Creatinine [Moles/volume] in Serum or Plasma",
        148,
        "umol/L",
        d("2026-11-30"),
        history=((d("2026-03-10"), 136),),
        high=90,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        27,
        "mL/min/1.73m2",
        d("2026-11-30"),
        history=((d("2026-03-10"), 30),),
        low=60,
    )
    b.obs("29463-7", "Body weight", 49, "kg", d("2026-11-30"), category="vital-signs")
    b.bp(128, 70, d("2026-11-30"))
    b.obs("8310-5", "Body temperature", 36.6, "Cel", d("2026-11-30"), category="vital-signs")
    b.obs(
        None,
        "Abbreviated Mental Test Score",
        5,
        "score",
        d("2026-11-30"),
        category="survey",
        history=((d("2026-03-10"), 7),),
    )


def case06(b: Builder) -> None:
    """6 Musculoskeletal, 78 F: hip fracture without bone protection, naproxen with ramipril and
    furosemide at eGFR 32, vitamin D deficiency, falls."""
    b.patient("Edith", "Carrowmore", "female", "1948-01-30", "Whitby")
    b.condition("5913000", "Fracture of neck of femur (left, fall from standing)", d("2026-09-14"))
    b.condition("64859006", "Osteoporosis", d("2026-11-05"))
    b.condition("396275006", "Osteoarthritis of both knees", d("2015-02-20"))
    b.condition("38341003", "Hypertension", d("2009-06-12"))
    b.condition("84114007", "Heart failure with preserved ejection fraction", d("2022-01-18"))
    b.condition("433144002", "Chronic kidney disease stage 3b", d("2024-04-02"))
    b.procedure(None, "Hemiarthroplasty of left hip", d("2026-09-15"))
    b.med(
        "7258",
        "Naproxen 500 mg tablets",
        "500 mg twice daily",
        500,
        "mg",
        d("2026-10-20"),
        freq=2,
        reason="Knee osteoarthritis pain",
        note="Started at orthopaedic follow-up for knee pain.",
    )
    b.med(
        "35296",
        "Ramipril 10 mg capsules",
        "10 mg once daily",
        10,
        "mg",
        d("2015-08-01"),
        reason="Hypertension",
    )
    b.med(
        "4603",
        "Furosemide 40 mg tablets",
        "40 mg each morning",
        40,
        "mg",
        d("2022-01-18"),
        reason="Heart failure",
    )
    b.med(
        "161",
        "Paracetamol 500 mg tablets",
        "1 g four times daily",
        1000,
        "mg",
        d("2026-09-20"),
        freq=4,
    )
    b.report(
        None,
        "DXA bone density scan (hip and lumbar spine)",
        "final",
        d("2026-11-05"),
        "Lumbar spine T-score -3.1, left femoral neck (contralateral) T-score -2.9: osteoporosis.",
        issued="2026-11-06T12:00:00+00:00",
        category="RAD",
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        32,
        "mL/min/1.73m2",
        d("2026-11-25"),
        history=((d("2026-09-20"), 41), (d("2026-03-02"), 42)),
        low=60,
    )
    b.obs(
        "14682-9",
        "Creatinine [Moles/volume] in Serum or Plasma",
        142,
        "umol/L",
        d("2026-11-25"),
        history=((d("2026-09-20"), 118),),
        high=90,
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        5.6,
        "mmol/L",
        d("2026-11-25"),
        history=((d("2026-09-20"), 4.8),),
        low=3.5,
        high=5.3,
    )
    b.obs("2951-2", "Sodium [Moles/volume] in Serum or Plasma", 137, "mmol/L", d("2026-11-25"))
    b.obs(
        "2000-8",
        "Calcium [Moles/volume] in Serum or Plasma",
        2.21,
        "mmol/L",
        d("2026-11-25"),
        low=2.2,
        high=2.6,
    )
    b.obs(
        "1989-3",
        "25-hydroxyvitamin D3+25-hydroxyvitamin D2 [Mass/volume] in Serum or Plasma",
        10,
        "ng/mL",
        d("2026-11-25"),
        low=20,
    )
    b.obs(
        "6768-6",
        "Alkaline phosphatase [Enzymatic activity/volume] in Serum or Plasma",
        96,
        "U/L",
        d("2026-11-25"),
        high=130,
    )
    b.bp(142, 74, d("2026-11-25"))
    b.obs("29463-7", "Body weight", 61, "kg", d("2026-11-25"), category="vital-signs")
    b.obs(None, "Timed up and go test", 19, "s", d("2026-11-25"), category="exam")


def case07(b: Builder) -> None:
    """7 GI, 64 F: long-term omeprazole with clopidogrel, magnesium 0.38 on citalopram, new iron
    deficiency anaemia, overdue Barrett's surveillance."""
    b.patient("Philippa", "Dunsmoor", "female", "1962-08-11", "Taunton")
    b.condition("235595009", "Gastro-oesophageal reflux disease", d("2012-03-05"))
    b.condition("302914006", "Barrett's oesophagus (non-dysplastic, 4 cm)", d("2018-10-22"))
    b.condition(
        "414545008",
        "Ischaemic heart disease (PCI with drug-eluting stent March 2025)",
        d("2025-03-08"),
    )
    b.condition("35489007", "Depressive disorder", d("2021-01-12"))
    b.condition("87522002", "Iron deficiency anaemia", d("2026-11-26"))
    b.med(
        "7646",
        "Omeprazole 40 mg capsules",
        "40 mg once daily",
        40,
        "mg",
        d("2018-10-22"),
        reason="Barrett's oesophagus",
    )
    b.med(
        "32968",
        "Clopidogrel 75 mg tablets",
        "75 mg once daily",
        75,
        "mg",
        d("2025-03-08"),
        reason="Coronary stent",
        note="Aspirin stopped March 2026; clopidogrel long term.",
    )
    b.med(
        "1191",
        "Aspirin 75 mg dispersible tablets",
        "75 mg once daily",
        75,
        "mg",
        d("2025-03-08"),
        status="stopped",
        reason="Coronary stent",
    )
    b.med(
        "2556",
        "Citalopram 20 mg tablets",
        "20 mg once daily",
        20,
        "mg",
        d("2021-01-12"),
        reason="Depression",
    )
    b.med("83367", "Atorvastatin 80 mg tablets", "80 mg at night", 80, "mg", d("2025-03-08"))
    b.med("19484", "Bisoprolol 2.5 mg tablets", "2.5 mg once daily", 2.5, "mg", d("2025-03-08"))
    b.encounter(
        "AMB",
        "Leg cramps and palpitations for three weeks; tired",
        d("2026-11-26"),
        "2026-11-26T09:20:00+00:00",
    )
    b.obs(
        "2601-3",
        "Magnesium [Moles/volume] in Serum or Plasma",
        0.38,
        "mmol/L",
        d("2026-11-26"),
        history=((d("2025-11-14"), 0.62),),
        low=0.7,
        high=1.0,
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        3.4,
        "mmol/L",
        d("2026-11-26"),
        low=3.5,
        high=5.3,
    )
    b.obs(
        "2000-8",
        "Calcium [Moles/volume] in Serum or Plasma",
        2.12,
        "mmol/L",
        d("2026-11-26"),
        low=2.2,
        high=2.6,
    )
    b.obs(
        "718-7",
        "Hemoglobin [Mass/volume] in Blood",
        101,
        "g/L",
        d("2026-11-26"),
        history=((d("2025-11-14"), 128),),
        low=115,
        high=160,
    )
    b.obs(
        "787-2",
        "MCV [Entitic volume] by Automated count",
        76,
        "fL",
        d("2026-11-26"),
        low=80,
        high=100,
    )
    b.obs(
        "2276-4",
        "Ferritin [Mass/volume] in Serum or Plasma",
        7,
        "ug/L",
        d("2026-11-26"),
        low=30,
        high=300,
    )
    b.obs(None, "Tissue transglutaminase IgA antibody", "negative", None, d("2026-11-26"))
    b.obs(
        None,
        "QTc interval (ECG)",
        "QTc 486 ms, sinus rhythm 64/min",
        None,
        d("2026-11-26"),
        category="exam",
    )
    b.report(
        None,
        "Upper GI endoscopy with biopsies",
        "final",
        d("2023-06-14"),
        "Non-dysplastic Barrett's oesophagus C2M4. Repeat surveillance endoscopy in 2-3 years.",
        issued="2023-06-20T12:00:00+00:00",
        category="GE",
    )


def case08(b: Builder) -> None:
    """8 Infections, 59 F: HIV on dolutegravir-based ART; rifampicin-isoniazid for latent TB
    started without doubling dolutegravir; viral load rebound, CD4 180, no pyridoxine."""
    b.patient("Nomvula", "Ashgrove", "female", "1967-05-03", "Croydon")
    b.condition("86406008", "HIV infection", d("2009-07-20"))
    b.condition(
        None,
        "Latent tuberculosis infection (interferon-gamma release assay positive)",
        d("2026-10-28"),
    )
    b.condition("44054006", "Type 2 diabetes mellitus", d("2020-02-11"))
    b.condition("87522002", "Iron deficiency anaemia", d("2026-08-03"))
    b.med(
        "1433868",
        "Dolutegravir 50 mg tablets",
        "50 mg once daily in the morning",
        50,
        "mg",
        d("2019-04-15"),
        reason="HIV infection",
    )
    b.med(
        None,
        "Emtricitabine 200 mg / tenofovir alafenamide 25 mg tablets",
        "one tablet once daily in the morning",
        1,
        "tablet",
        d("2019-04-15"),
        reason="HIV infection",
    )
    b.med(
        None,
        "Rifampicin 600 mg / isoniazid 300 mg (Rifinah 300/150, two tablets)",
        "two tablets once daily before breakfast for 3 months",
        2,
        "tablet",
        d("2026-11-05"),
        reason="Latent tuberculosis",
        end="2027-02-05",
        note="Started by the TB clinic. HIV clinic not yet informed.",
    )
    b.med(
        "24947",
        "Ferrous sulfate 200 mg tablets",
        "200 mg once daily with breakfast",
        200,
        "mg",
        d("2026-08-03"),
        reason="Iron deficiency anaemia",
        note="Takes all morning tablets together.",
    )
    b.med(
        "1897",
        "Calcium carbonate 1.25 g / colecalciferol 10 microgram chewable tablets",
        "one tablet once daily in the morning",
        1,
        "tablet",
        d("2025-01-20"),
    )
    b.med(
        "6809",
        "Metformin 500 mg tablets",
        "500 mg twice daily",
        500,
        "mg",
        d("2020-02-11"),
        freq=2,
        reason="Type 2 diabetes",
    )
    b.obs(
        "20447-9",
        "HIV 1 RNA [#/volume] (viral load) in Serum or Plasma",
        2400,
        "copies/mL",
        d("2026-11-25"),
        history=((d("2026-05-12"), 50), (d("2025-11-10"), 50)),
        note="Previous results below 50 copies/mL (undetectable).",
    )
    b.obs(
        "24467-3",
        "CD3+CD4+ (T4 helper) cells [#/volume] in Blood",
        180,
        "cells/uL",
        d("2026-11-25"),
        history=((d("2026-05-12"), 410),),
        low=500,
    )
    b.obs(
        "718-7",
        "Hemoglobin [Mass/volume] in Blood",
        109,
        "g/L",
        d("2026-11-25"),
        history=((d("2026-08-03"), 98),),
        low=115,
    )
    b.obs(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        38,
        "U/L",
        d("2026-11-25"),
        history=((d("2026-10-28"), 22),),
        high=35,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        78,
        "mL/min/1.73m2",
        d("2026-11-25"),
    )
    b.obs(
        "59261-8",
        "Hemoglobin A1c/Hemoglobin.total in Blood by IFCC protocol",
        53,
        "mmol/mol",
        d("2026-11-25"),
    )
    b.encounter(
        "AMB", "HIV clinic: routine monitoring bloods", d("2026-11-25"), "2026-11-25T09:30:00+00:00"
    )
    b.service_request(
        "HIV-1 genotypic resistance test",
        "active",
        d("2026-11-28"),
        "Viral load rebound",
        code=None,
    )


def case09(b: Builder) -> None:
    """9 Endocrine, 31 M: type 1 diabetes with recurrent morning hypoglycaemia and impaired
    awareness, drives a van for work, albuminuria, overdue eye screening."""
    b.patient("Callum", "Brightwater", "male", "1995-10-27", "Stoke-on-Trent")
    b.condition("46635009", "Type 1 diabetes mellitus", d("2008-01-15"))
    b.condition(
        "420422005",
        "Diabetic ketoacidosis (admission, resolved)",
        d("2026-09-03"),
        status="resolved",
        abated=d("2026-09-06"),
    )
    b.condition(
        "302866003", "Hypoglycaemia with impaired awareness (Gold score 5)", d("2026-11-20")
    )
    b.condition(None, "Background diabetic retinopathy", d("2024-08-12"))
    b.condition(None, "Occupation: delivery van driver", d("2026-11-20"))
    b.med(
        "274783",
        "Insulin glargine 100 units/mL (pre-filled pen)",
        "34 units at 22:00",
        34,
        "units",
        d("2026-09-06"),
        route="subcutaneous",
        note="Increased from 26 to 34 units at discharge after DKA.",
    )
    b.med(
        "86009",
        "Insulin aspart 100 units/mL (pre-filled pen)",
        "with meals, 1 unit per 10 g carbohydrate plus correction",
        None,
        None,
        d("2019-02-01"),
        freq=3,
        route="subcutaneous",
    )
    b.med(
        None,
        "Blood ketone test strips",
        "use when glucose above 14 mmol/L or unwell",
        None,
        None,
        d("2026-09-06"),
        freq=None,
        prn=True,
    )
    b.encounter("IMP", "Diabetic ketoacidosis", d("2026-09-03"), "2026-09-06T15:00:00+00:00")
    b.encounter(
        "AMB",
        "Diabetes review: hypoglycaemia most mornings, one episode needing help "
        "from partner; still driving for work",
        d("2026-11-20"),
        "2026-11-20T09:30:00+00:00",
    )
    b.obs(
        "14743-9",
        "Glucose [Moles/volume] in Capillary blood by Glucometer",
        2.4,
        "mmol/L",
        "2026-11-29T06:40:00+00:00",
        history=(
            ("2026-11-26T07:10:00+00:00", 2.9),
            ("2026-11-22T06:50:00+00:00", 2.8),
            ("2026-11-18T07:00:00+00:00", 3.1),
        ),
        low=4.0,
    )
    b.obs(
        "59261-8",
        "Hemoglobin A1c/Hemoglobin.total in Blood by IFCC protocol",
        84,
        "mmol/mol",
        d("2026-11-20"),
        history=((d("2026-05-14"), 79), (d("2025-11-10"), 75)),
        high=48,
    )
    b.obs(
        "9318-7",
        "Albumin/Creatinine [Mass Ratio] in Urine",
        72,
        "mg/g",
        d("2026-11-20"),
        history=((d("2026-05-14"), 41),),
        high=30,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        98,
        "mL/min/1.73m2",
        d("2026-11-20"),
    )
    b.obs(
        "22748-8",
        "Cholesterol in LDL [Moles/volume] in Serum or Plasma",
        3.4,
        "mmol/L",
        d("2026-11-20"),
    )
    b.bp(138, 86, d("2026-11-20"))
    b.bp(140, 88, d("2026-05-14"))
    b.report(
        None,
        "Diabetic eye screening (retinal photography)",
        "final",
        d("2024-08-12"),
        "Background retinopathy both eyes (R1M0). Rescreen in 12 months.",
        issued="2024-08-20T12:00:00+00:00",
        category="OPH",
    )
    b.smoking("266919005", "Never smoked tobacco", d("2026-11-20"))


def case10(b: Builder) -> None:
    """10 Endocrine, 58 F: levothyroxine over-replacement (TSH 0.03), taken with calcium;
    metformin 1 g twice daily with eGFR 27 and falling."""
    b.patient("Rosalind", "Quennell", "female", "1968-02-16", "Harrogate")
    b.condition("40930008", "Hypothyroidism (autoimmune)", d("2010-05-19"))
    b.condition("44054006", "Type 2 diabetes mellitus", d("2016-09-07"))
    b.condition(
        "431857002", "Chronic kidney disease stage 4 (diabetic kidney disease)", d("2026-11-25")
    )
    b.condition(None, "Osteopenia", d("2024-02-01"))
    b.med(
        "10582",
        "Levothyroxine 150 microgram daily (100 + 50 microgram tablets)",
        "150 micrograms each morning",
        150,
        "ug",
        d("2026-06-03"),
        reason="Hypothyroidism",
        note="Increased from 125 micrograms in June 2026 when TSH was 5.8. Takes it with her "
        "calcium tablet at breakfast.",
    )
    b.med(
        "6809",
        "Metformin 500 mg tablets",
        "1 g twice daily",
        1000,
        "mg",
        d("2017-03-01"),
        freq=2,
        reason="Type 2 diabetes",
    )
    b.med(
        None,
        "Calcium carbonate 1.5 g / colecalciferol 10 microgram chewable tablets",
        "one tablet twice daily",
        1,
        "tablet",
        d("2024-02-01"),
        freq=2,
        reason="Osteopenia",
    )
    b.med("35296", "Ramipril 5 mg capsules", "5 mg once daily", 5, "mg", d("2019-04-15"))
    b.med("83367", "Atorvastatin 20 mg tablets", "20 mg at night", 20, "mg", d("2018-01-10"))
    b.obs(
        "3016-3",
        "Thyrotropin [Units/volume] in Serum or Plasma",
        0.03,
        "mU/L",
        d("2026-11-25"),
        history=((d("2026-06-01"), 5.8), (d("2025-06-09"), 2.1)),
        low=0.3,
        high=4.2,
    )
    b.obs(
        "14920-3",
        "Thyroxine (T4) free [Moles/volume] in Serum or Plasma",
        27,
        "pmol/L",
        d("2026-11-25"),
        low=12,
        high=22,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        27,
        "mL/min/1.73m2",
        d("2026-11-25"),
        history=((d("2026-08-12"), 34), (d("2026-02-16"), 41)),
        low=60,
    )
    b.obs(
        "14682-9",
        "Creatinine [Moles/volume] in Serum or Plasma",
        184,
        "umol/L",
        d("2026-11-25"),
        history=((d("2026-02-16"), 132),),
        high=90,
    )
    b.obs("2823-3", "Potassium [Moles/volume] in Serum or Plasma", 5.1, "mmol/L", d("2026-11-25"))
    b.obs(
        "9318-7", "Albumin/Creatinine [Mass Ratio] in Urine", 410, "mg/g", d("2026-11-25"), high=30
    )
    b.obs(
        "59261-8",
        "Hemoglobin A1c/Hemoglobin.total in Blood by IFCC protocol",
        55,
        "mmol/mol",
        d("2026-11-25"),
        history=((d("2026-05-20"), 57),),
    )
    b.obs("8867-4", "Heart rate", 98, "/min", d("2026-11-25"), category="vital-signs")
    b.bp(136, 80, d("2026-11-25"))
    b.obs(
        "29463-7",
        "Body weight",
        71,
        "kg",
        d("2026-11-25"),
        category="vital-signs",
        history=((d("2026-06-01"), 74.5),),
    )


def case11(b: Builder) -> None:
    """11 CNS, 79 M: Parkinson's disease given haloperidol out of hours; amitriptyline;
    orthostatic hypotension on tamsulosin; constipation untreated; falls."""
    b.patient("Bertram", "Oakhanger", "male", "1947-07-09", "Kendal")
    b.condition("49049000", "Parkinson's disease", d("2017-04-03"))
    b.condition(None, "Visual hallucinations", d("2026-11-27"))
    b.condition("28651003", "Orthostatic hypotension", d("2026-11-28"))
    b.condition("14760008", "Constipation", d("2026-10-02"))
    b.condition("1912002", "Fall (three falls in the last two months)", d("2026-11-28"))
    b.condition("266569009", "Benign prostatic hyperplasia", d("2014-06-19"))
    b.med(
        None,
        "Co-careldopa 25 mg/100 mg tablets",
        "two tablets at 07:00, 12:00 and 17:00",
        2,
        "tablet",
        d("2024-10-01"),
        freq=3,
        reason="Parkinson's disease",
        note="Time-critical medicine.",
    )
    b.med(
        "5093",
        "Haloperidol 1.5 mg tablets",
        "1.5 mg twice daily",
        1.5,
        "mg",
        d("2026-11-28"),
        freq=2,
        reason="Agitation and hallucinations",
        note="Started by the out-of-hours doctor.",
    )
    b.med(
        "704",
        "Amitriptyline 25 mg tablets",
        "25 mg at night",
        25,
        "mg",
        d("2022-03-14"),
        reason="Poor sleep",
    )
    b.med(
        "77492",
        "Tamsulosin 400 microgram capsules",
        "400 micrograms once daily",
        400,
        "ug",
        d("2014-06-19"),
        reason="Benign prostatic hyperplasia",
    )
    b.encounter(
        "HH",
        "Out-of-hours home visit: seeing people in the room at night, agitated",
        "2026-11-28T22:00:00+00:00",
        "2026-11-28T22:45:00+00:00",
    )
    b.bp(142, 80, "2026-11-28T22:10:00+00:00", position="supine")
    b.bp(98, 58, "2026-11-28T22:15:00+00:00", position="standing")
    b.obs(
        "8310-5",
        "Body temperature",
        36.8,
        "Cel",
        "2026-11-28T22:10:00+00:00",
        category="vital-signs",
    )
    b.obs(
        "1988-5",
        "C reactive protein [Mass/volume] in Serum or Plasma",
        4,
        "mg/L",
        d("2026-11-30"),
        high=5,
    )
    b.obs("2951-2", "Sodium [Moles/volume] in Serum or Plasma", 139, "mmol/L", d("2026-11-30"))
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        64,
        "mL/min/1.73m2",
        d("2026-11-30"),
    )
    b.obs(
        "630-4",
        "Bacteria identified in Urine by Culture",
        "No significant growth",
        None,
        d("2026-11-30"),
    )
    b.obs(
        None,
        "Bowel habit",
        "bowels open once a week, hard stools",
        None,
        d("2026-11-28"),
        category="exam",
    )


def case12(b: Builder) -> None:
    """12 Musculoskeletal, 58 M: gout flare on colchicine, then clarithromycin (also with
    simvastatin); allopurinol never titrated; thiazide."""
    b.patient("Gideon", "Farthingale", "male", "1968-11-05", "Grimsby")
    b.condition("90560007", "Gout (recurrent flares, 4 in the last year)", d("2019-08-14"))
    b.condition("38341003", "Hypertension", d("2015-02-02"))
    b.condition("433144002", "Chronic kidney disease stage 3a", d("2024-09-10"))
    b.condition("414916001", "Obesity", d("2015-02-02"))
    b.condition(None, "Lower respiratory tract infection", d("2026-11-30"))
    b.med(
        "519",
        "Allopurinol 100 mg tablets",
        "100 mg once daily",
        100,
        "mg",
        d("2024-02-20"),
        reason="Gout",
        note="Dose unchanged since started.",
    )
    b.med(
        "2683",
        "Colchicine 500 microgram tablets",
        "500 micrograms twice daily",
        500,
        "ug",
        d("2026-11-29"),
        freq=2,
        reason="Acute gout flare",
    )
    b.med(
        "21212",
        "Clarithromycin 500 mg tablets",
        "500 mg twice daily for 7 days",
        500,
        "mg",
        d("2026-11-30"),
        freq=2,
        reason="Lower respiratory tract infection",
        end="2026-12-07",
        note="Penicillin allergy recorded.",
    )
    b.med("36567", "Simvastatin 40 mg tablets", "40 mg at night", 40, "mg", d("2016-05-11"))
    b.med(
        "1369",
        "Bendroflumethiazide 2.5 mg tablets",
        "2.5 mg each morning",
        2.5,
        "mg",
        d("2015-02-02"),
        reason="Hypertension",
    )
    b.allergy("Penicillin", "Urticarial rash", d("1990-01-01"))
    b.obs(
        "14933-6",
        "Urate [Moles/volume] in Serum or Plasma",
        540,
        "umol/L",
        d("2026-11-29"),
        history=((d("2026-05-18"), 560), (d("2025-06-02"), 580)),
        high=360,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        52,
        "mL/min/1.73m2",
        d("2026-11-29"),
        history=((d("2026-05-18"), 55),),
        low=60,
    )
    b.obs("2823-3", "Potassium [Moles/volume] in Serum or Plasma", 4.2, "mmol/L", d("2026-11-29"))
    b.obs(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        34,
        "U/L",
        d("2026-11-29"),
    )
    b.obs(
        "1988-5",
        "C reactive protein [Mass/volume] in Serum or Plasma",
        48,
        "mg/L",
        d("2026-11-30"),
        high=5,
    )
    b.obs("8310-5", "Body temperature", 37.6, "Cel", d("2026-11-30"), category="vital-signs")
    b.obs(
        "59408-5",
        "Oxygen saturation in Arterial blood by Pulse oximetry",
        96,
        "%",
        d("2026-11-30"),
        category="vital-signs",
    )
    b.bp(146, 88, d("2026-11-30"))
    b.obs("39156-5", "Body mass index", 33.2, "kg/m2", d("2026-11-30"), category="vital-signs")


def case13(b: Builder) -> None:
    """13 Respiratory, 51 F: uncontrolled asthma after an A&E visit, propranolol for migraine,
    reliever overuse, preventer not collected."""
    b.patient("Imelda", "Sowerthwaite", "female", "1975-03-28", "Blackburn")
    b.condition("195967001", "Asthma", d("1982-01-01"))
    b.condition("37796009", "Migraine", d("2001-05-15"))
    b.condition(
        None,
        "Acute exacerbation of asthma (A&E attendance)",
        d("2026-11-18"),
        status="resolved",
        abated=d("2026-11-25"),
    )
    b.med(
        "435",
        "Salbutamol 100 micrograms/dose inhaler",
        "2 puffs when required",
        2,
        "puff",
        d("2015-06-01"),
        freq=4,
        prn=True,
        route="inhaled",
        note="12 inhalers issued in the last 12 months.",
    )
    b.med(
        "1347",
        "Beclometasone 100 micrograms/dose inhaler",
        "2 puffs twice daily",
        2,
        "puff",
        d("2019-09-09"),
        freq=2,
        route="inhaled",
        note="Last issued March 2026 (one inhaler in 12 months).",
    )
    b.med(
        "8787",
        "Propranolol 40 mg tablets",
        "40 mg twice daily",
        40,
        "mg",
        d("2026-10-20"),
        freq=2,
        reason="Migraine prophylaxis",
    )
    b.med(
        "8638",
        "Prednisolone 5 mg tablets",
        "40 mg once daily for 5 days",
        40,
        "mg",
        d("2026-11-18"),
        status="stopped",
        reason="Asthma exacerbation",
        end="2026-11-22",
    )
    b.encounter(
        "EMER",
        "Acute asthma: wheeze and breathlessness for 2 days, peak flow 45% of best",
        d("2026-11-18"),
        "2026-11-18T14:00:00+00:00",
    )
    b.obs(
        "33452-4",
        "Maximum expiratory gas flow Respiratory system airway by Peak flow meter",
        290,
        "L/min",
        d("2026-12-01"),
        history=(("2026-11-18T10:00:00+00:00", 190), (d("2026-01-12"), 420)),
        note="Best recorded 420 L/min (January 2026).",
        category="exam",
    )
    b.obs(
        None,
        "Asthma Control Test score",
        12,
        "score",
        d("2026-12-01"),
        category="survey",
        history=((d("2026-01-12"), 19),),
    )
    b.obs(
        "59408-5",
        "Oxygen saturation in Arterial blood by Pulse oximetry",
        96,
        "%",
        d("2026-12-01"),
        category="vital-signs",
    )
    b.obs("8867-4", "Heart rate", 64, "/min", d("2026-12-01"), category="vital-signs")
    b.obs("9279-1", "Respiratory rate", 18, "/min", d("2026-12-01"), category="vital-signs")
    b.smoking("8517006", "Ex-smoker (stopped 2010)", d("2026-12-01"))
    b.obs("29463-7", "Body weight", 69, "kg", d("2026-12-01"), category="vital-signs")


def case14(b: Builder) -> None:
    """14 Skin, 77 M: bullous pemphigoid on prednisolone 40 mg for 8 weeks with naproxen, no
    gastro or bone protection, steroid hyperglycaemia; skin cancer histology pending."""
    b.patient("Hartley", "Penwarden", "male", "1949-09-12", "Truro")
    b.condition("77090002", "Bullous pemphigoid", d("2026-10-05"))
    b.condition("396275006", "Osteoarthritis of hips", d("2012-05-03"))
    b.condition("38341003", "Hypertension", d("2010-03-22"))
    b.condition(
        None,
        "Lesion of scalp, excised 2026-11-20 (clinically basal cell carcinoma)",
        d("2026-11-20"),
    )
    b.med(
        "8638",
        "Prednisolone 5 mg tablets",
        "40 mg once daily in the morning",
        40,
        "mg",
        d("2026-10-07"),
        reason="Bullous pemphigoid",
        note="No reduction plan recorded.",
    )
    b.med(
        None,
        "Clobetasol propionate 0.05% cream",
        "apply to blisters once daily",
        None,
        None,
        d("2026-10-07"),
        route="topical",
    )
    b.med(
        "7258",
        "Naproxen 500 mg tablets",
        "500 mg twice daily",
        500,
        "mg",
        d("2019-01-14"),
        freq=2,
        reason="Osteoarthritis",
    )
    b.med("17767", "Amlodipine 10 mg tablets", "10 mg once daily", 10, "mg", d("2014-07-01"))
    b.encounter(
        "AMB",
        "Thirsty, passing urine often, blurred vision for a week",
        d("2026-11-28"),
        "2026-11-28T09:20:00+00:00",
    )
    b.obs(
        "14749-6",
        "Glucose [Moles/volume] in Serum or Plasma",
        19.2,
        "mmol/L",
        d("2026-11-28"),
        note="Random, non-fasting.",
        high=11.0,
    )
    b.obs(
        "59261-8",
        "Hemoglobin A1c/Hemoglobin.total in Blood by IFCC protocol",
        58,
        "mmol/mol",
        d("2026-11-28"),
        history=((d("2025-11-03"), 43),),
        high=48,
    )
    b.obs(
        None, "Ketones [Moles/volume] in Capillary blood", 0.3, "mmol/L", d("2026-11-28"), high=0.6
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        3.3,
        "mmol/L",
        d("2026-11-28"),
        low=3.5,
        high=5.3,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        66,
        "mL/min/1.73m2",
        d("2026-11-28"),
    )
    b.obs("718-7", "Hemoglobin [Mass/volume] in Blood", 131, "g/L", d("2026-11-28"))
    b.bp(162, 92, d("2026-11-28"))
    b.obs("29463-7", "Body weight", 80, "kg", d("2026-11-28"), category="vital-signs")
    b.report(
        "22637-3",
        "Pathology report final diagnosis",
        "preliminary",
        d("2026-11-20"),
        "Specimen received: ellipse of scalp skin 14 mm. Final histology report to follow.",
        issued="2026-11-21T12:00:00+00:00",
        category="PAT",
    )


def case15(b: Builder) -> None:
    """15 GI, 23 M: ulcerative colitis flare meeting acute severe criteria, taking loperamide and
    codeine; stool tests pending."""
    b.patient("Oisin", "Kettleby", "male", "2003-06-18", "Bristol")
    b.condition("64766004", "Ulcerative colitis (extensive)", d("2023-02-09"))
    b.med(
        "52582",
        "Mesalazine 1.2 g gastro-resistant tablets",
        "2.4 g once daily",
        2.4,
        "g",
        d("2023-03-01"),
        reason="Ulcerative colitis",
    )
    b.med(
        "6468",
        "Loperamide 2 mg capsules",
        "2 mg after each loose stool, up to 16 mg a day",
        2,
        "mg",
        d("2026-11-25"),
        freq=8,
        prn=True,
        reason="Diarrhoea",
        note="Prescribed by a pharmacy minor ailments service.",
    )
    b.med(
        "2670",
        "Codeine phosphate 30 mg tablets",
        "30 mg four times daily when required",
        30,
        "mg",
        d("2026-11-27"),
        freq=4,
        prn=True,
        reason="Abdominal pain",
    )
    b.encounter(
        "VR",
        "Telephone consultation: 9 bloody stools a day for 5 days, night-time "
        "stools, cramping pain, feels feverish",
        d("2026-12-01"),
        "2026-12-01T16:40:00+00:00",
    )
    b.obs("8867-4", "Heart rate", 108, "/min", d("2026-12-01"), category="vital-signs")
    b.obs("8310-5", "Body temperature", 38.0, "Cel", d("2026-12-01"), category="vital-signs")
    b.bp(112, 68, d("2026-12-01"))
    b.obs(
        None,
        "Stool frequency",
        "9 bloody stools per 24 hours",
        None,
        d("2026-12-01"),
        category="exam",
    )
    b.obs(
        "1988-5",
        "C reactive protein [Mass/volume] in Serum or Plasma",
        72,
        "mg/L",
        d("2026-12-01"),
        history=((d("2026-06-10"), 3),),
        high=5,
    )
    b.obs(
        "718-7",
        "Hemoglobin [Mass/volume] in Blood",
        104,
        "g/L",
        d("2026-12-01"),
        history=((d("2026-06-10"), 142),),
        low=130,
    )
    b.obs("1751-7", "Albumin [Mass/volume] in Serum or Plasma", 29, "g/L", d("2026-12-01"), low=35)
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        3.3,
        "mmol/L",
        d("2026-12-01"),
        low=3.5,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        112,
        "mL/min/1.73m2",
        d("2025-06-04"),
        note="Last kidney function test June 2025.",
    )
    b.service_request(
        "Stool culture and Clostridioides difficile toxin",
        "active",
        d("2026-12-01"),
        "Bloody diarrhoea",
        priority="urgent",
    )
    b.smoking("266919005", "Never smoked tobacco", d("2026-06-10"))


def case16(b: Builder) -> None:
    """16 Cardiovascular, 31 M: alcohol-related dilated cardiomyopathy, EF 30%; ibuprofen;
    3.5 kg weight gain in a week; no MRA or SGLT2 inhibitor."""
    b.patient("Jory", "Tallentire", "male", "1995-01-25", "Sunderland")
    b.condition("399020009", "Dilated cardiomyopathy (probably alcohol-related)", d("2026-08-19"))
    b.condition("703272007", "Heart failure with reduced ejection fraction", d("2026-08-19"))
    b.condition("7200002", "Alcohol dependence", d("2026-08-19"))
    b.condition(None, "Sprain of right knee", d("2026-11-21"))
    b.med(
        "35296",
        "Ramipril 2.5 mg capsules",
        "2.5 mg twice daily",
        2.5,
        "mg",
        d("2026-08-25"),
        freq=2,
        reason="Heart failure",
    )
    b.med(
        "19484",
        "Bisoprolol 2.5 mg tablets",
        "2.5 mg once daily",
        2.5,
        "mg",
        d("2026-09-10"),
        reason="Heart failure",
    )
    b.med(
        "4603",
        "Furosemide 40 mg tablets",
        "40 mg each morning",
        40,
        "mg",
        d("2026-08-25"),
        reason="Heart failure",
    )
    b.med(
        None,
        "Thiamine 100 mg tablets",
        "100 mg three times daily",
        100,
        "mg",
        d("2026-08-25"),
        freq=3,
    )
    b.med_statement(
        "5640",
        "Ibuprofen 400 mg tablets (bought over the counter)",
        "400 mg three times a day",
        400,
        "mg",
        d("2026-11-21"),
        d("2026-12-01"),
        freq=3,
        note="For knee sprain.",
    )
    b.report(
        None,
        "Echocardiogram",
        "final",
        d("2026-08-22"),
        "Dilated left ventricle, global hypokinesia, ejection fraction 30%.",
        issued="2026-08-23T12:00:00+00:00",
        category="CUS",
    )
    b.encounter(
        "AMB",
        "Heart failure nurse review: more breathless, ankles swollen, sleeping on three pillows",
        d("2026-12-01"),
        "2026-12-01T10:30:00+00:00",
    )
    b.obs(
        "29463-7",
        "Body weight",
        84.1,
        "kg",
        d("2026-12-01"),
        category="vital-signs",
        history=((d("2026-11-24"), 80.6), (d("2026-10-27"), 80.2)),
    )
    b.bp(108, 70, d("2026-12-01"))
    b.obs("8867-4", "Heart rate", 92, "/min", d("2026-12-01"), category="vital-signs")
    b.obs(
        "59408-5",
        "Oxygen saturation in Arterial blood by Pulse oximetry",
        95,
        "%",
        d("2026-12-01"),
        category="vital-signs",
    )
    b.obs(
        "33762-6",
        "Natriuretic peptide.B prohormone N-Terminal [Mass/volume] in Serum or Plasma",
        2400,
        "pg/mL",
        d("2026-12-01"),
        history=((d("2026-10-27"), 900),),
        high=125,
    )
    b.obs("2823-3", "Potassium [Moles/volume] in Serum or Plasma", 4.6, "mmol/L", d("2026-12-01"))
    b.obs("2951-2", "Sodium [Moles/volume] in Serum or Plasma", 136, "mmol/L", d("2026-12-01"))
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        88,
        "mL/min/1.73m2",
        d("2026-12-01"),
        history=((d("2026-10-27"), 95),),
    )
    b.obs(
        "75624-7",
        "Total score [AUDIT]",
        24,
        "score",
        d("2026-12-01"),
        category="survey",
        history=((d("2026-08-19"), 29),),
    )
    b.service_request(
        "Transthoracic echocardiogram (repeat)",
        "active",
        d("2026-11-10"),
        "Reassess left ventricular function",
        occurrence=d("2027-01-12"),
    )


def case17(b: Builder) -> None:
    """17 Endocrine, 22 M: Addison's disease, wisdom teeth out under general anaesthetic next
    week, no emergency injection kit, under-replaced mineralocorticoid."""
    b.patient("Ewan", "Castlemead", "male", "2004-04-09", "Inverness")
    b.condition("363732003", "Primary adrenal insufficiency (Addison's disease)", d("2024-01-22"))
    b.condition(None, "Impacted lower wisdom teeth (recurrent pericoronitis)", d("2026-07-14"))
    b.med(
        "5492",
        "Hydrocortisone 10 mg tablets",
        "10 mg on waking, 5 mg at noon, 5 mg at 16:00",
        10,
        "mg",
        d("2024-01-25"),
        freq=3,
        reason="Addison's disease",
    )
    b.med(
        "4452",
        "Fludrocortisone 100 microgram tablets",
        "50 micrograms once daily",
        50,
        "ug",
        d("2024-01-25"),
        reason="Addison's disease",
    )
    b.service_request(
        "Surgical removal of lower wisdom teeth under general anaesthetic",
        "active",
        d("2026-09-30"),
        "Recurrent pericoronitis",
        occurrence="2026-12-09T08:30:00+00:00",
    )
    b.encounter(
        "AMB",
        "Pre-operative assessment (oral surgery): salt craving, light-headed on standing",
        d("2026-11-27"),
        "2026-11-27T11:00:00+00:00",
    )
    b.obs(
        "2951-2",
        "Sodium [Moles/volume] in Serum or Plasma",
        132,
        "mmol/L",
        d("2026-11-27"),
        history=((d("2026-05-11"), 135),),
        low=133,
        high=146,
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        5.4,
        "mmol/L",
        d("2026-11-27"),
        history=((d("2026-05-11"), 4.9),),
        low=3.5,
        high=5.3,
    )
    b.obs(
        None,
        "Renin activity [Enzymatic activity/volume] in Plasma",
        8.4,
        "nmol/L/h",
        d("2026-11-27"),
        high=2.8,
    )
    b.bp(104, 64, d("2026-11-27"), position="supine")
    b.bp(90, 56, d("2026-11-27"), position="standing")
    b.obs("29463-7", "Body weight", 68, "kg", d("2026-11-27"), category="vital-signs")
    b.obs(
        None,
        "Steroid emergency card",
        "not recorded as issued",
        None,
        d("2026-11-27"),
        category="exam",
    )


def case18(b: Builder) -> None:
    """18 Immunosuppression, 50 M: kidney transplant on tacrolimus; fluconazole started by GP;
    tacrolimus trough 17.8, creatinine up 40%; overdue skin surveillance."""
    b.patient("Anselm", "Garrowby", "male", "1976-08-30", "Norwich")
    b.condition("236407003", "IgA nephropathy", d("2012-03-01"))
    b.condition(None, "Kidney transplant recipient (deceased donor, 2021)", d("2021-05-17"))
    b.condition("38341003", "Hypertension", d("2012-03-01"))
    b.condition(None, "Oesophageal candidiasis", d("2026-11-24"))
    b.procedure("70536003", "Transplantation of kidney", d("2021-05-17"))
    b.med(
        "42316",
        "Tacrolimus (Adoport) 1 mg capsules",
        "3 mg twice daily",
        3,
        "mg",
        d("2025-10-01"),
        freq=2,
        reason="Kidney transplant",
    )
    b.med(
        "68149",
        "Mycophenolate mofetil 250 mg capsules",
        "750 mg twice daily",
        750,
        "mg",
        d("2021-05-20"),
        freq=2,
        reason="Kidney transplant",
    )
    b.med("8638", "Prednisolone 5 mg tablets", "5 mg once daily", 5, "mg", d("2021-05-20"))
    b.med(
        "4450",
        "Fluconazole 200 mg capsules",
        "200 mg once daily for 14 days",
        200,
        "mg",
        d("2026-11-24"),
        reason="Oesophageal candidiasis",
        end="2026-12-08",
        note="Prescribed by the GP practice.",
    )
    b.med("17767", "Amlodipine 10 mg tablets", "10 mg once daily", 10, "mg", d("2021-08-02"))
    b.obs(
        "77348-1",
        "Tacrolimus [Mass/volume] in Blood --trough",
        17.8,
        "ug/L",
        d("2026-11-30"),
        history=((d("2026-10-20"), 7.2), (d("2026-07-14"), 6.8)),
        note="Target 5-8.",
    )
    b.obs(
        "14682-9",
        "Creatinine [Moles/volume] in Serum or Plasma",
        168,
        "umol/L",
        d("2026-11-30"),
        history=((d("2026-10-20"), 118), (d("2026-07-14"), 121)),
        high=110,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        42,
        "mL/min/1.73m2",
        d("2026-11-30"),
        history=((d("2026-10-20"), 63),),
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        5.7,
        "mmol/L",
        d("2026-11-30"),
        history=((d("2026-10-20"), 4.8),),
        high=5.3,
    )
    b.obs("14749-6", "Glucose [Moles/volume] in Serum or Plasma", 7.9, "mmol/L", d("2026-11-30"))
    b.bp(156, 94, d("2026-11-30"))
    b.obs(None, "Tremor", "fine tremor of both hands, new", None, d("2026-11-30"), category="exam")
    b.report(
        None,
        "Dermatology transplant skin surveillance",
        "final",
        d("2024-09-18"),
        "Two actinic keratoses treated. Annual skin check advised.",
        issued="2024-09-18T15:00:00+00:00",
        category="OTH",
    )


def case19(b: Builder) -> None:
    """19 GI, 69 M: alcohol-related cirrhosis with ascites after encephalopathy; zopiclone and
    oral morphine; sodium 126 and rising creatinine on diuretics; no lactulose; surveillance
    overdue."""
    b.patient("Reginald", "Sparrowby", "male", "1957-05-15", "Hartlepool")
    b.condition("420054005", "Alcoholic cirrhosis (Child-Pugh C)", d("2024-02-06"))
    b.condition("389026000", "Ascites", d("2025-11-20"))
    b.condition(
        "13920009",
        "Hepatic encephalopathy (admission August 2026)",
        d("2026-08-11"),
        status="resolved",
        abated=d("2026-08-19"),
    )
    b.condition("15167005", "Alcohol misuse (about 30 units a week)", d("2015-01-01"))
    b.condition(None, "Lives alone", d("2026-08-19"))
    b.condition(None, "Low back pain", d("2026-11-10"))
    b.med(
        "9997",
        "Spironolactone 100 mg tablets",
        "200 mg once daily",
        200,
        "mg",
        d("2026-08-19"),
        reason="Ascites",
    )
    b.med(
        "4603",
        "Furosemide 40 mg tablets",
        "80 mg once daily",
        80,
        "mg",
        d("2026-08-19"),
        reason="Ascites",
    )
    b.med(
        None,
        "Zopiclone 7.5 mg tablets",
        "7.5 mg at night",
        7.5,
        "mg",
        d("2026-11-10"),
        reason="Insomnia",
    )
    b.med(
        "7052",
        "Morphine sulfate 10 mg/5 mL oral solution",
        "5-10 mg every 4 hours when required",
        10,
        "mg",
        d("2026-11-10"),
        freq=6,
        prn=True,
        reason="Low back pain",
    )
    b.med(
        "6218",
        "Lactulose 3.3 g/5 mL oral solution",
        "15 mL twice daily, adjust to 2-3 soft stools a day",
        15,
        "mL",
        d("2026-08-19"),
        freq=2,
        status="stopped",
        reason="Hepatic encephalopathy",
        note="Stopped by patient in September (diarrhoea).",
    )
    b.med(
        None,
        "Thiamine 100 mg tablets",
        "100 mg three times daily",
        100,
        "mg",
        d("2024-02-06"),
        freq=3,
    )
    b.encounter("IMP", "Hepatic encephalopathy", d("2026-08-11"), "2026-08-19T12:00:00+00:00")
    b.obs(
        "2951-2",
        "Sodium [Moles/volume] in Serum or Plasma",
        126,
        "mmol/L",
        d("2026-11-30"),
        history=((d("2026-10-05"), 133), (d("2026-08-19"), 135)),
        low=133,
    )
    b.obs(
        "14682-9",
        "Creatinine [Moles/volume] in Serum or Plasma",
        134,
        "umol/L",
        d("2026-11-30"),
        history=((d("2026-10-05"), 88), (d("2026-08-19"), 79)),
        high=110,
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        5.4,
        "mmol/L",
        d("2026-11-30"),
        high=5.3,
    )
    b.obs(
        "14631-6",
        "Bilirubin.total [Moles/volume] in Serum or Plasma",
        48,
        "umol/L",
        d("2026-11-30"),
        high=21,
    )
    b.obs("1751-7", "Albumin [Mass/volume] in Serum or Plasma", 28, "g/L", d("2026-11-30"), low=35)
    b.obs(
        "6301-6", "INR in Platelet poor plasma by Coagulation assay", 1.6, "{INR}", d("2026-11-30")
    )
    b.obs("777-3", "Platelets [#/volume] in Blood", 78, "10^9/L", d("2026-11-30"), low=150)
    b.obs(
        "1834-1",
        "Alpha-1-Fetoprotein [Mass/volume] in Serum or Plasma",
        6,
        "ng/mL",
        d("2025-10-14"),
    )
    b.obs(
        "11331-6",
        "History of Alcohol use",
        "about 30 units a week; not engaged with alcohol services",
        None,
        d("2026-11-30"),
        category="social-history",
    )
    b.report(
        None,
        "Ultrasound abdomen (liver)",
        "final",
        d("2025-10-14"),
        "Cirrhotic liver, no focal lesion, moderate ascites, splenomegaly 15 cm. Repeat in "
        "6 months.",
        issued="2025-10-15T12:00:00+00:00",
        category="RAD",
    )
    b.obs(
        None,
        "Oesophago-gastro-duodenoscopy",
        "never performed (declined 2024)",
        None,
        d("2026-08-19"),
        category="exam",
    )


def case20(b: Builder) -> None:
    """20 Endocrine, 63 F: type 2 diabetes after MI; new foot ulcer with spreading redness;
    metformin full dose at eGFR 38; gliclazide hypos; no SGLT2i or GLP-1; low-dose statin."""
    b.patient("Glenys", "Rookwood", "female", "1963-10-04", "Wrexham")
    b.condition("44054006", "Type 2 diabetes mellitus", d("2011-06-20"))
    b.condition(
        "22298006",
        "Myocardial infarction (PCI April 2024)",
        d("2024-04-02"),
        status="resolved",
        abated=d("2024-04-09"),
    )
    b.condition("230572002", "Diabetic peripheral neuropathy", d("2019-11-11"))
    b.condition("433144002", "Chronic kidney disease stage 3b", d("2025-09-01"))
    b.condition("371087003", "Ulcer of right big toe (diabetic foot ulcer)", d("2026-11-26"))
    b.med(
        "6809",
        "Metformin 500 mg tablets",
        "1 g twice daily",
        1000,
        "mg",
        d("2012-01-10"),
        freq=2,
        reason="Type 2 diabetes",
    )
    b.med(
        None,
        "Gliclazide 80 mg tablets",
        "160 mg twice daily",
        160,
        "mg",
        d("2018-03-02"),
        freq=2,
        reason="Type 2 diabetes",
    )
    b.med("83367", "Atorvastatin 20 mg tablets", "20 mg at night", 20, "mg", d("2024-04-09"))
    b.med(
        "1191", "Aspirin 75 mg dispersible tablets", "75 mg once daily", 75, "mg", d("2024-04-09")
    )
    b.med("35296", "Ramipril 5 mg capsules", "5 mg once daily", 5, "mg", d("2024-04-09"))
    b.med("19484", "Bisoprolol 2.5 mg tablets", "2.5 mg once daily", 2.5, "mg", d("2024-04-09"))
    b.encounter(
        "AMB",
        "Practice nurse: painless ulcer under right big toe, 1.5 cm, probes to "
        "tendon, redness spreading 3 cm onto the foot, warm",
        d("2026-11-30"),
        "2026-11-30T10:00:00+00:00",
    )
    b.obs("8310-5", "Body temperature", 37.8, "Cel", d("2026-11-30"), category="vital-signs")
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        38,
        "mL/min/1.73m2",
        d("2026-11-26"),
        history=((d("2026-05-18"), 43), (d("2025-09-01"), 44)),
        low=60,
    )
    b.obs(
        "59261-8",
        "Hemoglobin A1c/Hemoglobin.total in Blood by IFCC protocol",
        68,
        "mmol/mol",
        d("2026-11-26"),
        history=((d("2026-05-18"), 64),),
        high=48,
    )
    b.obs(
        "14743-9",
        "Glucose [Moles/volume] in Capillary blood by Glucometer",
        3.1,
        "mmol/L",
        "2026-11-22T11:30:00+00:00",
        history=(("2026-11-09T12:00:00+00:00", 3.4),),
        low=4.0,
        note="Sweaty and shaky before lunch; two episodes this month.",
    )
    b.obs(
        "22748-8",
        "Cholesterol in LDL [Moles/volume] in Serum or Plasma",
        2.4,
        "mmol/L",
        d("2026-11-26"),
        high=1.8,
    )
    b.obs(
        "1988-5",
        "C reactive protein [Mass/volume] in Serum or Plasma",
        46,
        "mg/L",
        d("2026-11-30"),
        high=5,
    )
    b.obs("6690-2", "Leukocytes [#/volume] in Blood", 12.8, "10^9/L", d("2026-11-30"), high=11.0)
    b.obs(
        "9318-7", "Albumin/Creatinine [Mass Ratio] in Urine", 260, "mg/g", d("2026-11-26"), high=30
    )
    b.bp(134, 76, d("2026-11-30"))
    b.obs("39156-5", "Body mass index", 34.1, "kg/m2", d("2026-11-30"), category="vital-signs")


def case21(b: Builder) -> None:
    """21 Anaesthesia, 36 F: elective laparoscopic cholecystectomy in 8 days; pre-op hCG
    positive; on phenelzine and the combined pill; family history of suxamethonium apnoea;
    probable sleep apnoea."""
    b.patient("Tamsin", "Lowerby", "female", "1990-07-21", "Exeter")
    b.condition("235919008", "Symptomatic gallstones (biliary colic)", d("2026-07-03"))
    b.condition(
        "77386006",
        "Pregnancy (about 5 weeks; last menstrual period 2026-10-24)",
        d("2026-11-30"),
        verification="confirmed",
    )
    b.condition("35489007", "Recurrent depressive disorder (treatment-resistant)", d("2016-04-11"))
    b.condition("414916001", "Obesity (BMI 41)", d("2020-01-01"))
    b.condition(
        None,
        "Family history: brother had prolonged apnoea after suxamethonium "
        "(butyrylcholinesterase deficiency)",
        d("2026-11-30"),
    )
    b.med(
        "8123",
        "Phenelzine 15 mg tablets",
        "15 mg three times daily",
        15,
        "mg",
        d("2022-09-05"),
        freq=3,
        reason="Depression",
        note="Started by community psychiatry.",
    )
    b.med(
        None,
        "Ethinylestradiol 30 microgram / levonorgestrel 150 microgram tablets",
        "one tablet daily for 21 days then 7-day break",
        1,
        "tablet",
        d("2021-02-10"),
        reason="Contraception",
    )
    b.service_request(
        "Laparoscopic cholecystectomy (day case, general anaesthetic)",
        "active",
        d("2026-09-14"),
        "Symptomatic gallstones",
        occurrence="2026-12-10T08:00:00+00:00",
        code="38102005",
    )
    b.encounter(
        "AMB", "Pre-operative assessment clinic", d("2026-11-30"), "2026-11-30T11:00:00+00:00"
    )
    b.obs(
        "19080-1",
        "Choriogonadotropin [Units/volume] in Serum or Plasma",
        1850,
        "IU/L",
        d("2026-11-30"),
        high=5,
    )
    b.obs("718-7", "Hemoglobin [Mass/volume] in Blood", 118, "g/L", d("2026-11-30"))
    b.obs(
        None,
        "STOP-Bang score",
        5,
        "score",
        d("2026-11-30"),
        category="survey",
        note="Loud snoring, witnessed apnoeas, daytime sleepiness (Epworth 14).",
    )
    b.obs("39156-5", "Body mass index", 41.2, "kg/m2", d("2026-11-30"), category="vital-signs")
    b.bp(136, 84, d("2026-11-30"))
    b.obs("44261-6", "PHQ-9 total score", 6, "score", d("2026-11-30"), category="survey")
    b.smoking("266919005", "Never smoked tobacco", d("2026-11-30"))


def case22(b: Builder) -> None:
    """22 Cardiovascular, 89 M: frail man with AF; digoxin level 2.8 with nausea and
    bradycardia, potassium 3.2 on a thiazide; apixaban 5 mg twice daily despite age, weight
    and creatinine; postural drop; no advance care plan."""
    b.patient("Cuthbert", "Elmsworth", "male", "1937-11-20", "Berwick-upon-Tweed")
    b.condition("49436004", "Atrial fibrillation (permanent)", d("2015-03-09"))
    b.condition("38341003", "Hypertension", d("2001-01-01"))
    b.condition("433144002", "Chronic kidney disease stage 3b", d("2023-06-14"))
    b.condition("248279007", "Frailty (Clinical Frailty Scale 6)", d("2026-06-01"))
    b.condition("1912002", "Fall (found on floor November 2026)", d("2026-11-16"))
    b.condition(None, "Lives alone; daughter visits twice a week", d("2026-06-01"))
    b.med(
        "1364430",
        "Apixaban 5 mg tablets",
        "5 mg twice daily",
        5,
        "mg",
        d("2016-01-11"),
        freq=2,
        reason="Atrial fibrillation",
    )
    b.med(
        "3407",
        "Digoxin 250 microgram tablets",
        "250 micrograms once daily",
        250,
        "ug",
        d("2015-03-09"),
        reason="Atrial fibrillation",
    )
    b.med(
        "17767",
        "Amlodipine 10 mg tablets",
        "10 mg once daily",
        10,
        "mg",
        d("2008-05-20"),
        reason="Hypertension",
    )
    b.med(
        "1369",
        "Bendroflumethiazide 2.5 mg tablets",
        "2.5 mg each morning",
        2.5,
        "mg",
        d("2001-01-01"),
        reason="Hypertension",
    )
    b.encounter(
        "HH",
        "Home visit: nausea and poor appetite for 10 days, 'yellowish' vision, more unsteady",
        d("2026-11-30"),
        "2026-11-30T11:00:00+00:00",
    )
    b.obs(
        "10535-3",
        "Digoxin [Mass/volume] in Serum or Plasma",
        2.8,
        "ug/L",
        d("2026-11-30"),
        history=((d("2025-12-01"), 1.1),),
        low=0.5,
        high=2.0,
        note="Sampled 7 hours after the morning dose.",
    )
    b.obs(
        "2823-3",
        "Potassium [Moles/volume] in Serum or Plasma",
        3.2,
        "mmol/L",
        d("2026-11-30"),
        history=((d("2026-06-01"), 3.8),),
        low=3.5,
        high=5.3,
    )
    b.obs(
        "14682-9",
        "Creatinine [Moles/volume] in Serum or Plasma",
        141,
        "umol/L",
        d("2026-11-30"),
        history=((d("2026-06-01"), 128),),
        high=110,
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        38,
        "mL/min/1.73m2",
        d("2026-11-30"),
        history=((d("2026-06-01"), 43),),
    )
    b.obs(
        "29463-7",
        "Body weight",
        57,
        "kg",
        d("2026-11-30"),
        category="vital-signs",
        history=((d("2026-06-01"), 62),),
    )
    b.obs("8867-4", "Heart rate", 48, "/min", d("2026-11-30"), category="vital-signs")
    b.bp(118, 64, d("2026-11-30"), position="supine")
    b.bp(94, 54, d("2026-11-30"), position="standing")
    b.obs("718-7", "Hemoglobin [Mass/volume] in Blood", 122, "g/L", d("2026-11-30"))


def case23(b: Builder) -> None:
    """23 Infections, 89 M: care home resident with dementia; positive urine culture without
    symptoms; omeprazole after C. difficile; weight loss; no advance care plan. Nothing
    urgent."""
    b.patient("Percival", "Hanbury-Lisle", "male", "1937-02-14", "Malvern")
    b.condition("429998004", "Vascular dementia", d("2021-09-01"))
    b.condition("266569009", "Benign prostatic hyperplasia", d("2010-02-01"))
    b.condition(
        "186431008",
        "Clostridioides difficile infection",
        d("2026-06-04"),
        status="resolved",
        abated=d("2026-06-20"),
    )
    b.condition(None, "Care home resident", d("2024-03-01"))
    b.med(
        "7646",
        "Omeprazole 20 mg capsules",
        "20 mg once daily",
        20,
        "mg",
        d("2019-05-10"),
        note="No indication recorded.",
    )
    b.med("135447", "Donepezil 5 mg tablets", "5 mg at night", 5, "mg", d("2021-10-01"))
    b.med(
        "77492",
        "Tamsulosin 400 microgram capsules",
        "400 micrograms once daily",
        400,
        "ug",
        d("2010-02-01"),
    )
    b.med(
        "161",
        "Paracetamol 500 mg tablets",
        "1 g four times daily when required",
        1000,
        "mg",
        d("2024-03-01"),
        freq=4,
        prn=True,
    )
    b.med(
        None,
        "Vancomycin 125 mg capsules",
        "125 mg four times daily for 10 days",
        125,
        "mg",
        d("2026-06-04"),
        freq=4,
        status="stopped",
        reason="C. difficile infection",
        end="2026-06-14",
    )
    b.encounter(
        "AMB",
        "Care home request: urine smells strong; urine sample sent. Staff report no "
        "fever, no new confusion, no pain, eating and drinking as usual",
        d("2026-11-28"),
        "2026-11-28T14:00:00+00:00",
    )
    b.obs(
        "630-4",
        "Bacteria identified in Urine by Culture",
        "Escherichia coli >10^5 CFU/mL",
        None,
        d("2026-11-30"),
    )
    b.obs("5802-4", "Nitrite [Presence] in Urine by Test strip", "positive", None, d("2026-11-28"))
    b.obs("8310-5", "Body temperature", 36.7, "Cel", d("2026-12-01"), category="vital-signs")
    b.obs("8867-4", "Heart rate", 74, "/min", d("2026-12-01"), category="vital-signs")
    b.bp(132, 74, d("2026-12-01"))
    b.obs(
        "29463-7",
        "Body weight",
        58.5,
        "kg",
        d("2026-12-01"),
        category="vital-signs",
        history=((d("2026-09-01"), 62.4), (d("2026-06-01"), 63.0)),
    )
    b.obs(
        "62238-1",
        "Glomerular filtration rate/1.73 sq M.predicted (CKD-EPI)",
        52,
        "mL/min/1.73m2",
        d("2026-09-01"),
    )
    b.obs("1751-7", "Albumin [Mass/volume] in Serum or Plasma", 33, "g/L", d("2026-09-01"))


def case24(b: Builder) -> None:
    """24 Skin, 39 M: isotretinoin with doxycycline added, headaches and blurred vision; PHQ-9
    from 4 to 17; triglycerides and ALT up."""
    b.patient("Fergus", "Aldwinckle", "male", "1987-06-20", "Lincoln")
    b.condition("88616000", "Acne vulgaris (severe nodulocystic, scarring)", d("2025-04-10"))
    b.condition(
        "35489007",
        "Depressive episode (2019, recovered)",
        d("2019-02-01"),
        status="resolved",
        abated=d("2020-01-01"),
    )
    b.med(
        "6064",
        "Isotretinoin 20 mg capsules",
        "40 mg once daily with food",
        40,
        "mg",
        d("2026-09-01"),
        reason="Severe acne",
        note="Dermatology-initiated.",
    )
    b.med(
        "3640",
        "Doxycycline 100 mg capsules",
        "100 mg once daily",
        100,
        "mg",
        d("2026-11-20"),
        reason="Acne flare",
        note="Prescribed by a locum GP.",
    )
    b.encounter(
        "AMB",
        "Headaches for a week, worse in the morning, blurred vision; low mood, not sleeping",
        d("2026-11-30"),
        "2026-11-30T09:20:00+00:00",
    )
    b.obs(
        "44261-6",
        "PHQ-9 total score",
        17,
        "score",
        d("2026-11-30"),
        category="survey",
        history=((d("2026-08-25"), 4),),
        note="Item 9 (thoughts of self-harm): several days.",
    )
    b.obs(
        "14927-8",
        "Triglyceride [Moles/volume] in Serum or Plasma",
        5.9,
        "mmol/L",
        d("2026-11-27"),
        history=((d("2026-08-25"), 1.6),),
        high=1.7,
    )
    b.obs(
        "14647-2",
        "Cholesterol [Moles/volume] in Serum or Plasma",
        6.8,
        "mmol/L",
        d("2026-11-27"),
        history=((d("2026-08-25"), 4.9),),
        high=5.0,
    )
    b.obs(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        96,
        "U/L",
        d("2026-11-27"),
        history=((d("2026-08-25"), 30),),
        high=45,
    )
    b.bp(128, 80, d("2026-11-30"))
    b.obs(
        None,
        "Fundoscopy",
        "not performed (no ophthalmoscope available)",
        None,
        d("2026-11-30"),
        category="exam",
    )


# ============================================================================================
# Expectations (canoe.eval/1). Each: (critical, alternatives, reason, source).
# A finding is found when one included activity holds every term of one alternative.
# ============================================================================================
def E(crit: bool, alts: list, reason: str, source: str = "") -> tuple:
    return (crit, alts, reason, source)


EXPECT: dict[str, dict] = {
    "case01": {
        "inc": [
            E(
                True,
                [
                    ["azathioprine", "neutrop"],
                    ["azathioprine", "white cell"],
                    ["azathioprine", "leucopen"],
                    ["azathioprine", "leukopen"],
                ],
                "Neutrophils 0.8 x10^9/L on azathioprine 150 mg: withhold and repeat FBC urgently "
                "(sepsis risk).",
                "BNF azathioprine: monitoring; bone-marrow suppression",
            ),
            E(
                False,
                [["smoking"], ["smoke"]],
                "Current smoker with Crohn's disease: smoking cessation improves the course.",
                "NICE NG129",
            ),
            E(
                False,
                [["iron", "deficien"], ["ferritin"], ["iron", "anaemia"], ["iron", "anemia"]],
                "Hb 112, MCV 74, ferritin 9: iron deficiency anaemia to treat (IV iron in active "
                "IBD).",
            ),
            E(
                False,
                [["vitamin d"], ["colecalciferol"], ["cholecalciferol"]],
                "25-OH vitamin D 9 ng/mL: replace.",
            ),
            E(
                False,
                [
                    ["calprotectin"],
                    ["crohn", "flare"],
                    ["crohn", "active"],
                    ["crohn", "relapse"],
                    ["enterography"],
                ],
                "Calprotectin 860 and CRP 34: active Crohn's; MR enterography pending; needs "
                "gastroenterology review of treatment.",
            ),
        ],
        "not": [
            E(
                False,
                [["increase", "azathioprine"]],
                "Raising the azathioprine dose with neutropenia would be harmful.",
            ),
        ],
    },
    "case02": {
        "inc": [
            E(
                True,
                [["trimethoprim", "methotrexate"]],
                "Trimethoprim with methotrexate: additive antifolate effect, pancytopenia; stop "
                "trimethoprim and choose another antibiotic.",
                "BNF methotrexate interactions",
            ),
            E(False, [["folic acid"]], "Weekly methotrexate without folic acid (MCV 104)."),
            E(
                False,
                [["methotrexate", "egfr"], ["methotrexate", "renal"], ["methotrexate", "kidney"]],
                "eGFR 63 -> 48 on methotrexate: dose review and closer monitoring.",
            ),
            E(
                False,
                [
                    ["methotrexate", "alanine"],
                    ["methotrexate", "liver"],
                    ["methotrexate", "transaminase"],
                    ["methotrexate", "hepat"],
                ],
                "ALT 32 -> 88 on methotrexate: liver toxicity to review with dermatology.",
            ),
            E(
                False,
                [["nitrofurantoin"], ["cefalexin"], ["alternative antibiotic"], ["pivmecillinam"]],
                "The UTI still needs treating: E. coli sensitive to nitrofurantoin and cefalexin "
                "(eGFR 48).",
            ),
        ],
        "not": [
            E(
                False,
                [["increase", "methotrexate"]],
                "Methotrexate must not be increased with falling eGFR, rising ALT and low counts.",
            ),
        ],
    },
    "case03": {
        "inc": [
            E(
                False,
                [
                    ["atorvastatin"],
                    ["rosuvastatin"],
                    ["high-intensity", "statin"],
                    ["high intensity", "statin"],
                    ["statin", "ldl"],
                    ["statin", "cholesterol"],
                    ["lipid-lowering"],
                    ["lipid lowering"],
                ],
                "LDL 6.1 mmol/L, probable FH: start high-intensity statin.",
                "NICE CG71",
            ),
            E(
                False,
                [["familial hypercholesterol"], ["lipid clinic"], ["genetic test"], ["cascade"]],
                "Probable FH (tendon xanthomata, father MI at 46): specialist referral, genetic "
                "testing and cascade testing of relatives.",
                "NICE CG71",
            ),
            E(
                False,
                [["blood pressure"], ["hypertension"], ["antihypertensive"]],
                "ABPM 144/91 with high cardiovascular risk: start antihypertensive treatment.",
                "NICE NG136",
            ),
            E(False, [["smoking"], ["smoke"]], "Smokes 15 a day: cessation support."),
        ],
        "not": [
            E(False, [["aspirin 75"]], "No indication for aspirin in primary prevention."),
        ],
    },
    "case04": {
        "inc": [
            E(
                True,
                [["inr", "warfarin"], ["inr", "6.4"]],
                "INR 6.4 (target 3.0) with gum bleeding: withhold warfarin, consider low-dose "
                "vitamin K, recheck INR within 24-48 h.",
                "BNF warfarin: haemorrhage; BSH",
            ),
            E(
                True,
                [["clarithromycin", "warfarin"], ["clarithromycin", "inr"]],
                "Clarithromycin potentiates warfarin: the cause of the INR rise.",
            ),
            E(
                True,
                [["ibuprofen"], ["nsaid"], ["anti-inflammator"]],
                "Over-the-counter ibuprofen with warfarin and INR 6.4: stop, use paracetamol.",
            ),
            E(
                False,
                [
                    ["repeat", "inr"],
                    ["recheck", "inr"],
                    ["inr", "check"],
                    ["inr", "monitor"],
                    ["anticoagulation clinic"],
                ],
                "Daily or alternate-day INR checks until stable, then after the antibiotic ends.",
            ),
        ],
        "not": [
            E(
                False,
                [["apixaban 5"], ["rivaroxaban 20"], ["dabigatran 150"], ["edoxaban 60"]],
                "DOACs are contraindicated with a mechanical valve: no DOAC prescription.",
            ),
        ],
    },
    "case05": {
        "inc": [
            E(
                True,
                [["desmopressin", "sodium"], ["desmopressin", "hyponatr"]],
                "Sodium 124 (from 138) after desmopressin started for nocturia in a 90-year-old, "
                "now drowsy and confused: stop desmopressin, urgent repeat sodium.",
                "BNF desmopressin: avoid for nocturia over 65",
            ),
            E(
                False,
                [
                    ["oxybutynin", "anticholinergic"],
                    ["oxybutynin", "dementia"],
                    ["oxybutynin", "donepezil"],
                    ["oxybutynin", "cognit"],
                    ["oxybutynin", "confusion"],
                ],
                "Oxybutynin in Alzheimer's dementia on donepezil: anticholinergic burden and "
                "opposing actions; stop or switch (e.g. mirabegron).",
            ),
            E(
                False,
                [
                    ["nitrofurantoin", "egfr"],
                    ["nitrofurantoin", "renal"],
                    ["nitrofurantoin", "kidney"],
                ],
                "Nitrofurantoin prophylaxis at eGFR 27: ineffective and toxic below 45; stop.",
            ),
            E(
                False,
                [["falls"], ["fall risk"], ["fall prevention"], ["recent fall"], ["fallen"]],
                "Two recent falls with frailty, confusion and anticholinergic: falls assessment.",
            ),
        ],
        "not": [
            E(False, [["increase", "desmopressin"]], "Desmopressin caused the hyponatraemia."),
        ],
    },
    "case06": {
        "inc": [
            E(
                True,
                [
                    ["naproxen", "kidney"],
                    ["naproxen", "renal"],
                    ["naproxen", "egfr"],
                    ["nsaid", "kidney"],
                    ["nsaid", "renal"],
                    ["nsaid", "egfr"],
                    ["naproxen", "ramipril"],
                    ["naproxen", "furosemide"],
                    ["naproxen", "stop"],
                ],
                "Naproxen with ramipril and furosemide (triple whammy) in heart failure: eGFR 41 -> "  # noqa: E501
                "32, potassium 5.6; stop naproxen.",
                "BNF NSAIDs; MHRA",
            ),
            E(
                False,
                [
                    ["osteoporosis"],
                    ["bone protection"],
                    ["denosumab"],
                    ["zoledron"],
                    ["bisphosphonate"],
                    ["fragility fracture"],
                ],
                "Hip fracture and DXA T-score -3.1 with no bone treatment.",
                "NICE TA464 / NOGG",
            ),
            E(
                False,
                [["vitamin d"], ["colecalciferol"], ["cholecalciferol"]],
                "Vitamin D 10 ng/mL: replace before antiresorptive treatment.",
            ),
            E(
                False,
                [["falls"], ["fall risk"], ["fall prevention"], ["recent fall"], ["fallen"]],
                "Hip fracture from a fall, TUG 19 s: falls prevention.",
            ),
            E(
                False,
                [["potassium"], ["hyperkal"]],
                "Potassium 5.6 on ramipril with NSAID: recheck.",
            ),
        ],
        "not": [
            E(
                False,
                [["alendronate 70"], ["alendronic acid 70"]],
                "Oral alendronate is not recommended at eGFR 32 (below 35).",
            ),
        ],
    },
    "case07": {
        "inc": [
            E(
                True,
                [["magnesium"], ["hypomagnes"]],
                "Magnesium 0.38 with cramps, palpitations, QTc 486 on citalopram: replace and "
                "review the PPI.",
                "MHRA: PPIs and hypomagnesaemia",
            ),
            E(
                False,
                [["omeprazole", "clopidogrel"]],
                "Omeprazole reduces clopidogrel activation: switch to lansoprazole or pantoprazole.",  # noqa: E501
                "MHRA 2010",
            ),
            E(
                False,
                [
                    ["iron deficiency"],
                    ["anaemia", "endoscop"],
                    ["anemia", "endoscop"],
                    ["anaemia", "colonoscop"],
                    ["anemia", "colonoscop"],
                    ["ferritin"],
                    ["anaemia", "refer"],
                    ["anemia", "refer"],
                ],
                "New iron deficiency anaemia at 64 (Hb 128 -> 101, ferritin 7): suspected cancer "
                "pathway for lower and upper GI investigation.",
                "NICE NG12",
            ),
            E(
                False,
                [["barrett"]],
                "Barrett's surveillance endoscopy due mid-2026 and not booked.",
            ),
            E(
                False,
                [["citalopram", "qt"], ["citalopram", "magnes"]],
                "Citalopram with QTc 486 and low magnesium and potassium.",
            ),
        ],
        "not": [
            E(False, [["stop clopidogrel"]], "Clopidogrel after coronary stenting must continue."),
        ],
    },
    "case08": {
        "inc": [
            E(
                True,
                [
                    ["rifampicin", "dolutegravir"],
                    ["rifampin", "dolutegravir"],
                    ["rifinah", "dolutegravir"],
                ],
                "Rifampicin halves dolutegravir exposure: dolutegravir must be 50 mg twice daily "
                "(and tenofovir alafenamide reviewed); viral load has rebounded.",
                "BNF dolutegravir interactions",
            ),
            E(
                False,
                [["viral load"], ["resistance"]],
                "Viral load 2400 copies/mL after years undetectable: adherence and resistance "
                "testing (pending).",
            ),
            E(
                False,
                [["co-trimoxazole"], ["cotrimoxazole"], ["pneumocystis"], ["pcp"]],
                "CD4 180: start PCP prophylaxis.",
                "BHIVA",
            ),
            E(
                False,
                [["pyridoxine"], ["vitamin b6"]],
                "Isoniazid without pyridoxine in HIV and diabetes (neuropathy risk).",
            ),
            E(
                False,
                [
                    ["dolutegravir", "iron"],
                    ["dolutegravir", "calcium"],
                    ["dolutegravir", "ferrous"],
                    ["dolutegravir", "antacid"],
                ],
                "Iron and calcium taken with dolutegravir reduce its absorption: separate doses.",
            ),
        ],
        "not": [
            E(False, [["stop dolutegravir"]], "ART must continue."),
        ],
    },
    "case09": {
        "inc": [
            E(
                True,
                [
                    ["hypoglyc", "insulin"],
                    ["hypoglyc", "glargine"],
                    ["hypo", "basal"],
                    ["glargine", "reduce"],
                ],
                "Morning glucose 2.4-3.1 after glargine raised to 34 units, with impaired awareness "  # noqa: E501
                "and a severe episode: reduce basal insulin.",
                "NICE NG17",
            ),
            E(
                True,
                [["driv"], ["dvla"]],
                "Drives a van for work with impaired awareness and a severe hypo: must not drive "
                "and must inform DVLA.",
                "DVLA assessing fitness to drive",
            ),
            E(
                False,
                [
                    ["albuminuria"],
                    ["albumin"],
                    ["urine acr"],
                    ["ace inhibitor"],
                    ["ramipril"],
                    ["lisinopril"],
                    ["nephropathy"],
                ],
                "ACR rising to 72 mg/g with BP 138/86: start an ACE inhibitor.",
                "NICE NG17",
            ),
            E(
                False,
                [["retina"], ["eye screening"], ["retinopathy"]],
                "Eye screening due August 2025, not done; background retinopathy.",
            ),
            E(
                False,
                [
                    ["continuous glucose"],
                    ["cgm"],
                    ["flash glucose"],
                    ["dafne"],
                    ["structured education"],
                    ["glycaemic control"],
                    ["glycemic control"],
                    ["sensor"],
                ],
                "HbA1c 84 with hypoglycaemia: CGM and structured education.",
                "NICE NG17",
            ),
        ],
        "not": [
            E(False, [["stop insulin"]], "Type 1 diabetes: insulin must never stop."),
        ],
    },
    "case10": {
        "inc": [
            E(
                True,
                [
                    ["metformin", "egfr"],
                    ["metformin", "renal"],
                    ["metformin", "kidney"],
                    ["metformin", "stop"],
                ],
                "Metformin 2 g/day at eGFR 27: stop (contraindicated below 30).",
                "BNF metformin: renal impairment",
            ),
            E(
                False,
                [
                    ["levothyroxine", "tsh"],
                    ["levothyroxine", "reduce"],
                    ["levothyroxine", "over-replace"],
                    ["levothyroxine", "excess"],
                    ["levothyroxine", "suppress"],
                    ["levothyroxine", "dose"],
                ],
                "TSH 0.03, fT4 27, HR 98 on 150 micrograms: reduce and recheck in 6-8 weeks.",
            ),
            E(
                False,
                [["levothyroxine", "calcium"]],
                "Calcium taken with levothyroxine impairs absorption: separate by 4 hours.",
            ),
            E(
                False,
                [
                    ["nephrolog"],
                    ["kidney", "refer"],
                    ["renal", "refer"],
                    ["sglt2"],
                    ["dapagliflozin"],
                    ["empagliflozin"],
                    ["kidney", "progress"],
                    ["egfr", "declin"],
                ],
                "eGFR 41 -> 27 in a year with ACR 410 mg/g: nephrology referral and kidney "
                "protection (SGLT2 inhibitor).",
                "NICE NG203",
            ),
        ],
        "not": [
            E(False, [["increase", "levothyroxine"]], "She is over-replaced."),
        ],
    },
    "case11": {
        "inc": [
            E(
                True,
                [["haloperidol"]],
                "Haloperidol in Parkinson's disease: severe parkinsonism and neuroleptic "
                "sensitivity; stop (quetiapine or clozapine only under specialist advice).",
                "BNF antipsychotics; NICE NG71",
            ),
            E(
                False,
                [["amitriptyline"]],
                "Amitriptyline: anticholinergic, worsens hallucinations, confusion and postural "
                "hypotension.",
            ),
            E(
                False,
                [["orthostatic"], ["postural"], ["tamsulosin"]],
                "Supine 142/80, standing 98/58 with falls: review tamsulosin and other causes.",
            ),
            E(
                False,
                [["constipation"], ["laxative"], ["macrogol"]],
                "Bowels open weekly, no laxative; constipation worsens PD and confusion.",
            ),
            E(
                False,
                [["falls"], ["fall risk"], ["fall prevention"], ["recent fall"], ["fallen"]],
                "Three falls in two months.",
            ),
        ],
        "not": [
            E(False, [["metoclopramide 10"]], "Dopamine antagonist, contraindicated in PD."),
            E(False, [["increase", "haloperidol"]], "Haloperidol is contraindicated."),
        ],
    },
    "case12": {
        "inc": [
            E(
                True,
                [["colchicine", "clarithromycin"]],
                "Clarithromycin (CYP3A4/P-gp inhibitor) with colchicine, eGFR 52: colchicine "
                "toxicity; stop one.",
                "BNF colchicine interactions; MHRA",
            ),
            E(
                True,
                [["simvastatin", "clarithromycin"]],
                "Clarithromycin with simvastatin: contraindicated (myopathy); suspend simvastatin "
                "or change antibiotic.",
                "BNF simvastatin interactions",
            ),
            E(
                False,
                [
                    ["allopurinol", "urate"],
                    ["allopurinol", "titrat"],
                    ["allopurinol", "increase"],
                    ["allopurinol", "dose"],
                    ["treat to target"],
                ],
                "Urate 540 on 100 mg for 2 years with 4 flares: titrate to urate below 360.",
                "NICE NG219",
            ),
            E(
                False,
                [["bendroflumethiazide"], ["thiazide"], ["losartan"]],
                "Thiazide raises urate: consider an alternative antihypertensive (e.g. losartan).",
            ),
            E(
                False,
                [["doxycycline"], ["amoxicillin"], ["alternative antibiotic"]],
                "A non-interacting antibiotic is available (penicillin allergy: doxycycline).",
            ),
        ],
        "not": [
            E(False, [["stop allopurinol"]], "Allopurinol should not be stopped during a flare."),
        ],
    },
    "case13": {
        "inc": [
            E(
                True,
                [["propranolol"], ["beta-blocker", "asthma"], ["beta blocker", "asthma"]],
                "Propranolol started in October in a patient with asthma: bronchospasm; A&E "
                "exacerbation followed. Stop and choose another migraine preventive.",
                "BNF beta-blockers: contraindicated in asthma",
            ),
            E(
                False,
                [
                    ["inhaled corticosteroid"],
                    ["inhaled steroid"],
                    ["beclometasone"],
                    ["budesonide"],
                    ["preventer"],
                    ["maintenance and reliever"],
                ],
                "One preventer inhaler collected in 12 months: adherence and step-up (MART).",
                "BTS/SIGN/NICE NG245",
            ),
            E(
                False,
                [["salbutamol"], ["saba"], ["reliever"]],
                "12 reliever inhalers a year: over-reliance, high risk.",
            ),
            E(
                False,
                [["action plan"], ["asthma review"], ["inhaler technique"]],
                "Review after A&E attendance with personal action plan.",
                "NRAD",
            ),
            E(
                False,
                [["migraine"], ["topiramate"], ["amitriptyline"], ["candesartan"]],
                "Migraine prophylaxis still needed once propranolol stops.",
            ),
        ],
        "not": [
            E(False, [["increase", "propranolol"]], "Propranolol is contraindicated in asthma."),
        ],
    },
    "case14": {
        "inc": [
            E(
                True,
                [["glucose"], ["hyperglyc"], ["diabetes"]],
                "Random glucose 19.2 with osmotic symptoms, HbA1c 43 -> 58 on prednisolone 40 mg: "
                "steroid-induced hyperglycaemia to treat now.",
                "JBDS steroid guidance",
            ),
            E(
                True,
                [
                    ["naproxen"],
                    ["nsaid"],
                    ["gastroprotect"],
                    ["proton pump"],
                    ["omeprazole"],
                    ["lansoprazole"],
                ],
                "Naproxen with high-dose prednisolone at 77, no PPI: high GI bleeding risk.",
            ),
            E(
                False,
                [
                    ["bone protection"],
                    ["alendron"],
                    ["bisphosphonate"],
                    ["osteoporosis"],
                    ["bone health"],
                ],
                "Prednisolone 40 mg for 8 weeks at 77 with no bone protection.",
                "NOGG",
            ),
            E(
                False,
                [["histolog"], ["basal cell"], ["pathology"]],
                "Scalp excision histology still pending.",
            ),
            E(
                False,
                [
                    ["taper"],
                    ["steroid-sparing"],
                    ["steroid sparing"],
                    ["doxycycline"],
                    ["reduce", "prednisolone"],
                    ["prednisolone", "dose"],
                ],
                "No prednisolone reduction plan after 8 weeks: taper or steroid-sparing agent.",
            ),
        ],
        "not": [
            E(False, [["increase", "prednisolone"]], "Steroid dose should come down, not up."),
        ],
    },
    "case15": {
        "inc": [
            E(
                True,
                [
                    ["admission"],
                    ["admit"],
                    ["acute severe"],
                    ["same-day"],
                    ["same day"],
                    ["hospital"],
                ],
                "9 bloody stools, HR 108, temp 38.0, CRP 72, Hb 104: acute severe ulcerative "
                "colitis (Truelove and Witts) needs same-day admission.",
                "NICE NG130; BSG",
            ),
            E(
                True,
                [["loperamide"], ["codeine"], ["antimotility"], ["anti-motility"], ["opioid"]],
                "Loperamide and codeine in acute severe colitis: toxic megacolon risk; stop.",
            ),
            E(
                False,
                [["stool"], ["difficile"], ["clostridi"]],
                "Stool culture and C. difficile toxin pending: exclude infection.",
            ),
            E(
                False,
                [["thromboprophylaxis"], ["vte"], ["venous thromboembolism"], ["heparin"]],
                "Acute severe UC: VTE prophylaxis.",
            ),
            E(
                False,
                [
                    ["mesalazine", "renal"],
                    ["mesalazine", "kidney"],
                    ["mesalazine", "egfr"],
                    ["mesalazine", "monitor"],
                ],
                "No kidney function test for 18 months on mesalazine.",
            ),
        ],
        "not": [
            E(False, [["increase", "loperamide"]], "Antimotility drugs are dangerous here."),
        ],
    },
    "case16": {
        "inc": [
            E(
                True,
                [["ibuprofen"], ["nsaid"], ["anti-inflammator"]],
                "Ibuprofen in HFrEF: fluid retention, worsening failure and kidney injury; stop.",
                "BNF NSAIDs; NICE NG106",
            ),
            E(
                True,
                [
                    ["weight", "gain"],
                    ["weight", "diuretic"],
                    ["decompens"],
                    ["fluid", "diuretic"],
                    ["furosemide"],
                    ["congestion"],
                    ["fluid overload"],
                ],
                "3.5 kg weight gain in a week, orthopnoea, NT-proBNP 900 -> 2400: decompensation; "
                "increase diuretic and review within days.",
            ),
            E(
                False,
                [["spironolactone"], ["eplerenone"], ["mineralocorticoid"]],
                "HFrEF EF 30% without an MRA.",
                "NICE NG106",
            ),
            E(
                False,
                [["sglt2"], ["dapagliflozin"], ["empagliflozin"]],
                "HFrEF without an SGLT2 inhibitor.",
                "NICE TA679",
            ),
            E(
                False,
                [["alcohol"]],
                "AUDIT 24 with alcohol-related cardiomyopathy: abstinence support.",
            ),
        ],
        "not": [
            E(
                False,
                [["verapamil 40"], ["verapamil 80"], ["diltiazem 60"], ["diltiazem 120"]],
                "Rate-limiting calcium-channel blockers worsen HFrEF.",
            ),
        ],
    },
    "case17": {
        "inc": [
            E(
                True,
                [
                    ["surgery", "hydrocortisone"],
                    ["steroid cover"],
                    ["operation", "hydrocortisone"],
                    ["anaesthe", "hydrocortisone"],
                    ["surgery", "steroid"],
                    ["peri-operative", "steroid"],
                    ["perioperative", "steroid"],
                    ["procedure", "hydrocortisone"],
                ],
                "Surgery under general anaesthetic on 9 December: needs peri-operative "
                "hydrocortisone cover; anaesthetist must know.",
                "Society for Endocrinology 2020",
            ),
            E(
                True,
                [
                    ["emergency", "injection"],
                    ["hydrocortisone injection"],
                    ["emergency card"],
                    ["steroid card"],
                    ["emergency kit"],
                ],
                "No steroid emergency card or hydrocortisone injection kit recorded.",
            ),
            E(
                False,
                [["fludrocortisone"], ["mineralocorticoid"]],
                "Sodium 132, potassium 5.4, high renin, postural drop: increase fludrocortisone.",
            ),
            E(
                False,
                [["sick day"], ["sick-day"], ["intercurrent illness"]],
                "Sick-day rules education.",
            ),
        ],
        "not": [
            E(False, [["stop hydrocortisone"]], "Stopping hydrocortisone causes adrenal crisis."),
        ],
    },
    "case18": {
        "inc": [
            E(
                True,
                [
                    ["tacrolimus", "fluconazole"],
                    ["tacrolimus", "level"],
                    ["tacrolimus", "trough"],
                    ["tacrolimus", "toxic"],
                ],
                "Fluconazole raised tacrolimus trough 7.2 -> 17.8 (target 5-8) with tremor: "
                "nephrotoxicity; urgent dose action with the transplant team.",
                "BNF tacrolimus interactions",
            ),
            E(
                True,
                [
                    ["transplant team"],
                    ["transplant unit"],
                    ["transplant clinic"],
                    ["graft"],
                    ["creatinine"],
                    ["transplant", "kidney function"],
                ],
                "Creatinine 118 -> 168: acute graft dysfunction needs same-week transplant review.",
            ),
            E(False, [["potassium"], ["hyperkal"]], "Potassium 5.7 (tacrolimus)."),
            E(
                False,
                [
                    ["skin cancer"],
                    ["skin check"],
                    ["skin surveillance"],
                    ["dermatolog"],
                    ["skin", "examination"],
                ],
                "Annual transplant skin surveillance overdue since September 2025.",
            ),
            E(
                False,
                [["blood pressure"], ["hypertension"]],
                "BP 156/94 in a transplant recipient.",
            ),
            E(
                False,
                [["shingrix"], ["shingles"], ["zoster"]],
                "Eligible for the non-live shingles vaccine (immunosuppressed, 50).",
            ),
        ],
        "not": [
            E(False, [["increase", "tacrolimus"]], "Tacrolimus level is already toxic."),
        ],
    },
    "case19": {
        "inc": [
            E(
                True,
                [["zopiclone"], ["morphine"], ["sedat"], ["opioid"], ["hypnotic"]],
                "Zopiclone and oral morphine in decompensated cirrhosis after hepatic "
                "encephalopathy: can precipitate encephalopathy; stop.",
                "BNF hepatic impairment",
            ),
            E(
                True,
                [
                    ["hyponatr"],
                    ["sodium", "diuretic"],
                    ["spironolactone"],
                    ["furosemide"],
                    ["kidney", "diuretic"],
                    ["renal", "diuretic"],
                ],
                "Sodium 126 and creatinine 79 -> 134 on spironolactone 200 mg and furosemide "
                "80 mg: hold or reduce diuretics, urgent review.",
                "EASL/BSG ascites",
            ),
            E(
                False,
                [["lactulose"], ["rifaximin"], ["encephalopathy"]],
                "Secondary prophylaxis of encephalopathy stopped: restart lactulose (rifaximin).",
            ),
            E(
                False,
                [["ultrasound"], ["hepatocellular"], ["hcc"], ["surveillance"]],
                "Six-monthly liver ultrasound overdue since April 2026.",
            ),
            E(
                False,
                [["varice"], ["endoscopy"], ["gastroscopy"], ["ogd"]],
                "Platelets 78, never had variceal screening.",
            ),
            E(False, [["alcohol"]], "Still drinking 30 units a week, not engaged."),
        ],
        "not": [
            E(False, [["increase", "spironolactone"]], "Diuretic complications present."),
            E(False, [["increase", "furosemide"]], "Diuretic complications present."),
        ],
    },
    "case20": {
        "inc": [
            E(
                True,
                [["foot"]],
                "Diabetic foot ulcer probing to tendon with spreading cellulitis, fever, CRP 46: "
                "same-day foot protection/multidisciplinary referral and antibiotics.",
                "NICE NG19",
            ),
            E(
                False,
                [
                    ["metformin", "egfr"],
                    ["metformin", "renal"],
                    ["metformin", "kidney"],
                    ["metformin", "reduce"],
                    ["metformin", "dose"],
                ],
                "Metformin 2 g/day at eGFR 38: maximum 1 g/day below 45.",
                "BNF metformin",
            ),
            E(
                False,
                [
                    ["sglt2"],
                    ["dapagliflozin"],
                    ["empagliflozin"],
                    ["glp-1"],
                    ["semaglutide"],
                    ["liraglutide"],
                    ["dulaglutide"],
                ],
                "Previous MI and CKD with ACR 260: SGLT2 inhibitor indicated.",
                "NICE NG28",
            ),
            E(
                True,
                [["gliclazide"], ["sulfonylurea"], ["sulphonylurea"]],
                "Gliclazide 320 mg/day with hypoglycaemia (3.1) and falling eGFR: reduce.",
            ),
            E(
                False,
                [
                    ["atorvastatin", "80"],
                    ["high-intensity"],
                    ["high intensity"],
                    ["statin", "ldl"],
                    ["statin", "increase"],
                    ["ezetimibe"],
                ],
                "After MI on atorvastatin 20 with LDL 2.4: increase to 80 mg.",
                "NICE CG181",
            ),
        ],
        "not": [
            E(False, [["increase", "gliclazide"]], "She is already having hypos."),
        ],
    },
    "case21": {
        "inc": [
            E(
                True,
                [
                    ["pregnan", "surgery"],
                    ["pregnan", "cholecystectomy"],
                    ["pregnan", "postpone"],
                    ["pregnan", "operation"],
                    ["pregnan", "anaesthe"],
                    ["pregnan", "defer"],
                ],
                "hCG 1850 IU/L on pre-op testing: elective cholecystectomy on 10 December must be "
                "reviewed (defer) and the surgical and anaesthetic teams told.",
                "NICE NG45 pregnancy testing before surgery",
            ),
            E(
                True,
                [["phenelzine"], ["maoi"], ["monoamine oxidase"]],
                "Phenelzine (MAOI): dangerous interactions with pethidine, indirect "
                "sympathomimetics and serotonergic drugs at anaesthesia; also pregnancy review by "
                "perinatal psychiatry.",
            ),
            E(False, [["folic acid"]], "Early pregnancy without folic acid."),
            E(
                False,
                [["contracepti"], ["ethinylestradiol"], ["levonorgestrel"], ["combined pill"]],
                "Combined pill still prescribed in pregnancy: stop.",
            ),
            E(
                False,
                [["suxamethonium"], ["cholinesterase"]],
                "Family history of suxamethonium apnoea: test and alert the anaesthetist.",
            ),
            E(
                False,
                [["sleep apn"], ["stop-bang"]],
                "STOP-Bang 5 with witnessed apnoeas: probable OSA.",
            ),
        ],
        "not": [
            E(False, [["continue", "combined oral contraceptive"]], "She is pregnant."),
        ],
    },
    "case22": {
        "inc": [
            E(
                True,
                [["digoxin"]],
                "Digoxin 2.8 with nausea, xanthopsia, HR 48, potassium 3.2, eGFR 38 at 57 kg: "
                "digoxin toxicity; withhold, check ECG and potassium.",
                "BNF digoxin",
            ),
            E(
                True,
                [["apixaban", "2.5"], ["apixaban", "dose"], ["apixaban", "reduce"]],
                "Apixaban 5 mg twice daily but age 89, weight 57 kg, creatinine 141: meets all "
                "three criteria; 2.5 mg twice daily.",
                "BNF apixaban; SmPC",
            ),
            E(
                False,
                [["potassium"], ["hypokal"], ["bendroflumethiazide"], ["thiazide"]],
                "Potassium 3.2 on bendroflumethiazide, worsening digoxin toxicity.",
            ),
            E(
                False,
                [["orthostatic"], ["postural"], ["amlodipine"], ["antihypertensive"]],
                "Supine 118/64, standing 94/54 with a fall: deprescribe antihypertensives.",
            ),
            E(
                False,
                [
                    ["advance care"],
                    ["goals of care"],
                    ["treatment escalation"],
                    ["future care"],
                    ["care planning"],
                ],
                "Frail (CFS 6), lives alone, declining: advance care planning.",
            ),
        ],
        "not": [
            E(False, [["add aspirin"]], "No indication; adds bleeding risk to apixaban."),
            E(False, [["increase", "digoxin"]], "Toxic level."),
        ],
    },
    "case23": {
        "inc": [
            E(
                False,
                [
                    ["asymptomatic bacteriuria"],
                    ["bacteriuria"],
                    ["urine", "antibiotic"],
                    ["urine culture"],
                ],
                "Positive culture without symptoms, fever or delirium: asymptomatic bacteriuria; "
                "no antibiotics (recent C. difficile).",
                "NICE NG109; SIGN 160",
            ),
            E(
                False,
                [["omeprazole"], ["proton pump"]],
                "Omeprazole with no indication after C. difficile infection: deprescribe.",
            ),
            E(
                False,
                [
                    ["weight loss"],
                    ["weight", "loss"],
                    ["losing weight"],
                    ["nutrition"],
                    ["dietitian"],
                    ["malnutrition"],
                ],
                "Weight 63 -> 58.5 kg in 6 months: nutrition screening.",
            ),
            E(
                False,
                [
                    ["advance care"],
                    ["goals of care"],
                    ["treatment escalation"],
                    ["future care"],
                    ["care planning"],
                ],
                "Dementia in a care home, no advance care plan.",
            ),
        ],
        "not": [
            E(
                False,
                [["nitrofurantoin 50"], ["nitrofurantoin 100"]],
                "No antibiotic for asymptomatic bacteriuria.",
            ),
            E(False, [["trimethoprim 200"]], "No antibiotic for asymptomatic bacteriuria."),
            E(
                False,
                [["pivmecillinam 400"], ["cefalexin 500"]],
                "No antibiotic for asymptomatic bacteriuria.",
            ),
        ],
    },
    "case24": {
        "inc": [
            E(
                True,
                [["doxycycline", "isotretinoin"], ["intracranial"]],
                "Doxycycline with isotretinoin: benign intracranial hypertension; morning headache "
                "and blurred vision now. Stop doxycycline; same-day eye/fundal assessment.",
                "BNF isotretinoin interactions",
            ),
            E(
                True,
                [["phq"], ["depress"], ["mood"], ["suicid"], ["self-harm"]],
                "PHQ-9 4 -> 17 with thoughts of self-harm on isotretinoin: urgent mental-health "
                "assessment; stop or review isotretinoin with dermatology.",
                "MHRA isotretinoin 2023",
            ),
            E(False, [["triglycerid"], ["lipid"]], "Triglycerides 1.6 -> 5.9 on isotretinoin."),
            E(False, [["liver"], ["transaminase"], ["alanine"]], "ALT 30 -> 96 on isotretinoin."),
        ],
        "not": [
            E(False, [["increase", "isotretinoin"]], "Adverse effects present."),
        ],
    },
}


# ============================================================================================
# Output
# ============================================================================================
CASES = [
    # (function, file, chapter number, chapter, age, sex)
    (case01, "01_gi_crohns_azathioprine_neutropenia.json", 1, "Gastro-intestinal", 19, "male"),
    (case02, "02_skin_psoriasis_methotrexate_trimethoprim.json", 13, "Skin", 72, "female"),
    (case03, "03_cv_familial_hypercholesterolaemia.json", 2, "Cardiovascular", 42, "male"),
    (case04, "04_cv_mechanical_valve_warfarin_inr.json", 2, "Cardiovascular", 35, "male"),
    (
        case05,
        "05_urinary_desmopressin_hyponatraemia.json",
        7,
        "Obstetrics, gynaecology and urinary tract",
        90,
        "female",
    ),
    (case06, "06_msk_hip_fracture_naproxen_ckd.json", 10, "Musculoskeletal", 78, "female"),
    (case07, "07_gi_ppi_hypomagnesaemia_ida.json", 1, "Gastro-intestinal", 64, "female"),
    (case08, "08_inf_hiv_rifampicin_dolutegravir.json", 5, "Infections", 59, "female"),
    (case09, "09_endo_t1dm_hypo_unawareness_driver.json", 6, "Endocrine", 31, "male"),
    (case10, "10_endo_levothyroxine_excess_metformin_ckd4.json", 6, "Endocrine", 58, "female"),
    (case11, "11_cns_parkinsons_haloperidol.json", 4, "Central nervous system", 79, "male"),
    (case12, "12_msk_gout_colchicine_clarithromycin.json", 10, "Musculoskeletal", 58, "male"),
    (case13, "13_resp_asthma_propranolol.json", 3, "Respiratory", 51, "female"),
    (case14, "14_skin_pemphigoid_prednisolone.json", 13, "Skin", 77, "male"),
    (case15, "15_gi_acute_severe_ulcerative_colitis.json", 1, "Gastro-intestinal", 23, "male"),
    (case16, "16_cv_hfref_alcohol_ibuprofen.json", 2, "Cardiovascular", 31, "male"),
    (case17, "17_endo_addisons_surgery.json", 6, "Endocrine", 22, "male"),
    (
        case18,
        "18_immuno_kidney_transplant_tacrolimus.json",
        8,
        "Malignancy and immunosuppression",
        50,
        "male",
    ),
    (case19, "19_gi_cirrhosis_sedatives_hyponatraemia.json", 1, "Gastro-intestinal", 69, "male"),
    (case20, "20_endo_t2dm_foot_ulcer_post_mi.json", 6, "Endocrine", 63, "female"),
    (case21, "21_anaes_preop_pregnant_maoi.json", 15, "Anaesthesia", 36, "female"),
    (case22, "22_cv_af_digoxin_toxicity_apixaban_dose.json", 2, "Cardiovascular", 89, "male"),
    (case23, "23_inf_asymptomatic_bacteriuria_care_home.json", 5, "Infections", 89, "male"),
    (case24, "24_skin_isotretinoin_doxycycline_mood.json", 13, "Skin", 39, "male"),
]

CLINIC_DATE = (2026, 12, 2)


def age_on_clinic_date(birth: str) -> int:
    y, m, dd = (int(x) for x in birth.split("-"))
    cy, cm, cd = CLINIC_DATE
    return cy - y - ((cm, cd) < (m, dd))


def expectation_json(e: tuple) -> dict:
    crit, alts, reason, source = e
    out: dict = {"terms": alts[0]} if len(alts) == 1 else {"any_of": alts}
    out["reason"] = ("[critical] " if crit else "") + reason
    if source:
        out["source"] = source
    return out


def main() -> None:
    import json
    from pathlib import Path

    here = Path(__file__).resolve().parent
    cases = []
    for fn, fname, chap, _chapter, age, sex in CASES:
        key = fn.__name__
        b = Builder(f"vignettes9/{key}")
        fn(b)
        bundle = b.bundle()
        patient = bundle["entry"][0]["resource"]
        assert patient["gender"] == sex, key
        assert age_on_clinic_date(patient["birthDate"]) == age, (key, patient["birthDate"])
        (here / fname).write_text(
            json.dumps(bundle, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        ex = EXPECT[key]
        cases.append(
            {
                "name": fname.removesuffix(".json"),
                "bundle": fname,
                "chapter": chap,
                "critical": [i for i, e in enumerate(ex["inc"]) if e[0]],
                "must_include": [expectation_json(e) for e in ex["inc"]],
                "must_not_include": [expectation_json(e) for e in ex["not"]],
            }
        )
    doc = {
        "format": "canoe.eval/1",
        "description": "vignettes9: blind set of 24 invented adult patients (BNF chapters drawn "
        "at random, seed 1796205121). Plans made with --created "
        "2026-12-02T09:00:00+00:00. An expectation whose reason starts with "
        "[critical] can harm within days if missed; each case's 'critical' "
        "lists their indices in must_include.",
        "cases": cases,
    }
    (here / "blind_expectations.json").write_text(
        json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    n_inc = sum(len(c["must_include"]) for c in cases)
    n_crit = sum(len(c["critical"]) for c in cases)
    print(
        f"{len(cases)} bundles; {n_inc} expectations ({n_crit} critical); "
        f"{sum(len(c['must_not_include']) for c in cases)} must_not_include"
    )
    for c in cases:
        print(f"{c['bundle']}: {len(c['must_include'])} ({len(c['critical'])})")


if __name__ == "__main__":
    main()
