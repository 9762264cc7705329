"""Writes the sixth set of clinical vignettes (transitions of care): hand-written FHIR R4 Bundles
of adults seen in primary care two to ten days after a hospital stay (heart failure, COPD,
pneumonia in frailty, myocardial infarction with a stent, stroke, hip fracture, sepsis with acute
kidney injury, joint replacement, a new anticoagulant, hypoglycaemia, a duplicate between the
home and discharge lists, a gastrointestinal bleed), and three negative controls (a day case
with no medicine change, an outpatient with no admission, an emergency visit whose antibiotic
course has ended). Written blind, before any plan of these patients was read, to measure what
the plans make of a discharge. Run from the repository root:
``python3.11 examples/vignettes6/make.py``.

It reuses the fifth set's ``Record`` (../vignettes5/make.py, itself the earlier sets' builder)
under a namespace of its own, and adds the shapes a discharge carries: an inpatient, emergency,
observation or short-stay Encounter with its period, reasonCode, diagnosis (a reference to the
Condition, use "DD" discharge diagnosis) and ``hospitalization.dischargeDisposition``; and a
MedicationRequest with category (community = the home list, discharge = the discharge list,
inpatient), status (active, on-hold for a held drug, stopped, completed), ``statusReason``,
``courseOfTherapyType`` (acute for a time-limited course, continuous otherwise), a dosage
``boundsPeriod`` (the course's first and last day), ``dispenseRequest`` (quantity and expected
supply), ``priorPrescription`` (a dose change points to the request it replaces) and the stay as
its ``encounter``. Some of these fields are not read by today's ingest (statusReason,
courseOfTherapyType, dispenseRequest, boundsPeriod, priorPrescription, category,
Encounter.diagnosis); they are sent anyway because a real EHR sends them, and the text of each
request says the same in words.

Deterministic: ids are UUID5s of the vignette and the resource's position, dates are fixed
around the eval's reference date (2026-11-30; each patient's latest fact is the primary-care
contact, 2026-11-30 unless said). Codes are real: RxNorm clinical drugs (SCD) already used by the
earlier sets, RxNorm ingredient codes (IN, marked "ingredient") where no product code was
confirmed, with the product, strength and regimen in the text; SNOMED CT; LOINC; UCUM; CVX.
"""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_FIFTH = HERE.parent / "vignettes5" / "make.py"
_spec = importlib.util.spec_from_file_location("vignettes5_make", _FIFTH)
assert _spec is not None and _spec.loader is not None
fifth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fifth)
base = fifth.base

NS = uuid.UUID("d6c2f0a9-3e71-4b8a-9d14-25c0c0de0025")
SCT, RXN, LNC, UCUM = base.SCT, base.RXN, base.LNC, base.UCUM
ACT = base.ACT
FLU_STANDARD = fifth.FLU_STANDARD
DISPOSITION = "http://terminology.hl7.org/CodeSystem/discharge-disposition"
DIAGNOSIS_ROLE = "http://terminology.hl7.org/CodeSystem/diagnosis-role"
MR_CATEGORY = "http://terminology.hl7.org/CodeSystem/medicationrequest-category"
COURSE = "http://terminology.hl7.org/CodeSystem/medicationrequest-course-of-therapy"
VISIT = "2026-11-30"

# Medicines: (RxNorm code, display). SCDs already used by the earlier vignette sets:
FUROSEMIDE_40 = fifth.FUROSEMIDE_40
SPIRONOLACTONE_25 = ("313096", "spironolactone 25 MG Oral Tablet")
RAMIPRIL_5 = fifth.RAMIPRIL_5
BISOPROLOL_25 = fifth.BISOPROLOL_25
BISOPROLOL_5 = fifth.BISOPROLOL_5
AMLODIPINE_5 = fifth.AMLODIPINE_5
ATORVASTATIN_20 = fifth.ATORVASTATIN_20
ATORVASTATIN_40 = fifth.ATORVASTATIN_40
ASPIRIN_81 = fifth.ASPIRIN_81
CLOPIDOGREL_75 = fifth.CLOPIDOGREL_75
APIXABAN_5 = fifth.APIXABAN_5
METFORMIN_500 = ("861007", "metformin hydrochloride 500 MG Oral Tablet")
METFORMIN_1000 = fifth.METFORMIN_1000
GLARGINE_PEN = fifth.GLARGINE_PEN
LISINOPRIL_20 = ("314077", "lisinopril 20 MG Oral Tablet")
NAPROXEN_500 = fifth.NAPROXEN_500
IBUPROFEN_200 = ("310965", "Ibuprofen 200 MG Oral Tablet")
PREDNISOLONE_5 = fifth.PREDNISOLONE_5
ALBUTEROL_MDI = ("745679", "200 ACTUAT Albuterol 0.09 MG/ACTUAT Metered Dose Inhaler")
ZOLPIDEM_5 = ("854876", "zolpidem tartrate 5 MG Oral Tablet")
AMITRIPTYLINE_25 = ("856834", "amitriptyline hydrochloride 25 MG Oral Tablet")
PARACETAMOL_325 = ("313782", "Acetaminophen 325 MG Oral Tablet")
METOPROLOL_50 = ("866514", "metoprolol tartrate 50 MG Oral Tablet")
LEVOTHYROXINE_75 = ("966222", "Levothyroxine Sodium 0.075 MG Oral Tablet")
NITROFURANTOIN_50 = ("311995", "nitrofurantoin, macrocrystals 50 MG Oral Capsule")
# public RxNorm lists: 259255 (atorvastatin 80 mg tablet)
ATORVASTATIN_80 = ("259255", "atorvastatin 80 MG Oral Tablet")
# RxNorm ingredients (IN): the product, strength and regimen are in the request's text
TIOTROPIUM = ("69120", "tiotropium")
DOXYCYCLINE = ("3640", "doxycycline")
AMOXICILLIN = ("723", "amoxicillin")
TICAGRELOR = ("1116632", "ticagrelor")
RAMIPRIL = ("35296", "ramipril")
NITROGLYCERIN = ("4917", "nitroglycerin")
ENOXAPARIN = ("67108", "enoxaparin")
OXYCODONE = ("7804", "oxycodone")
CEFALEXIN = ("2231", "cephalexin")
RIVAROXABAN = fifth.RIVAROXABAN
WARFARIN = ("11289", "warfarin")
GLICLAZIDE = fifth.GLICLAZIDE
OMEPRAZOLE = fifth.OMEPRAZOLE
FERROUS_SULFATE = ("24947", "ferrous sulfate")
DAPAGLIFLOZIN = ("1488564", "dapagliflozin")

ORAL = ("26643006", "Oral route")
SUBCUT = ("34206005", "Subcutaneous route")
SUBLINGUAL = ("37161004", "Sublingual route")
INHALED = fifth.INHALED

ADMISSION = ("32485007", "Hospital admission (procedure)")
EMERGENCY = ("50849002", "Emergency room admission (procedure)")

# LOINC
WEIGHT = ("29463-7", "Body weight")
LVEF = ("10230-1", "Left ventricular Ejection fraction")
NT_PROBNP = (
    "33762-6",
    "Natriuretic peptide.B prohormone N-Terminal [Mass/volume] in Serum or Plasma",
)
INR = ("6301-6", "INR in Platelet poor plasma by Coagulation assay")
GLUCOSE = ("2339-0", "Glucose [Mass/volume] in Blood")
HBA1C = fifth.HBA1C
VITAMIN_D = ("62292-8", "25-Hydroxyvitamin D2+D3 [Mass/volume] in Serum or Plasma")
TROPONIN = (
    "89579-7",
    "Troponin I.cardiac [Mass/volume] in Serum or Plasma by High sensitivity method",
)
LDL = ("18262-6", "Cholesterol in LDL [Mass/volume] in Serum or Plasma by Direct assay")
TSH = ("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma")
SPO2 = ("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry")
CRP = ("1988-5", "C reactive protein [Mass/volume] in Serum or Plasma")


class Record(fifth.Record):  # type: ignore[misc,name-defined]
    """The fifth set's builder with this set's namespace, a hospital stay and the medicine
    requests around it."""

    ns = NS

    def stay(
        self,
        cls: str,
        start: str,
        end: str,
        diagnoses: list[tuple[str, tuple[str, str]]],
        disposition: tuple[str, str] = ("home", "Home"),
        kind: tuple[str, str] = ADMISSION,
    ) -> str:
        """A finished hospital stay (class IMP, EMER, OBSENC or SS) from ``start`` to ``end``;
        ``diagnoses`` are (Condition id, its code), the first is the reason for the stay."""
        return str(
            self._add(
                {
                    "resourceType": "Encounter",
                    "status": "finished",
                    "class": {"system": ACT, "code": cls},
                    "type": [
                        {
                            "coding": [{"system": SCT, "code": kind[0], "display": kind[1]}],
                            "text": kind[1],
                        }
                    ],
                    "subject": self.subject,
                    "period": {"start": f"{start}T10:00:00+00:00", "end": f"{end}T16:00:00+00:00"},
                    "reasonCode": [
                        {
                            "coding": [
                                {
                                    "system": SCT,
                                    "code": diagnoses[0][1][0],
                                    "display": diagnoses[0][1][1],
                                }
                            ],
                            "text": diagnoses[0][1][1],
                        }
                    ],
                    "diagnosis": [
                        {
                            "condition": {"reference": f"urn:uuid:{cid}", "display": code[1]},
                            "use": {
                                "coding": [
                                    {
                                        "system": DIAGNOSIS_ROLE,
                                        "code": "DD",
                                        "display": "Discharge diagnosis",
                                    }
                                ]
                            },
                            "rank": k + 1,
                        }
                        for k, (cid, code) in enumerate(diagnoses)
                    ],
                    "hospitalization": {
                        "dischargeDisposition": {
                            "coding": [
                                {
                                    "system": DISPOSITION,
                                    "code": disposition[0],
                                    "display": disposition[1],
                                }
                            ],
                            "text": disposition[1],
                        }
                    },
                }
            )
        )

    def dx(
        self, code: tuple[str, str], onset: str, status: str = "active", abated: str = ""
    ) -> tuple[str, tuple[str, str]]:
        """A Condition, returned with its code for ``stay``'s diagnoses."""
        return str(self.condition(code[0], code[1], onset, status, abated)), code

    def rx(
        self,
        drug: tuple[str, str],
        authored: str,
        dose: float,
        unit: str,
        text: str,
        *,
        times: int = 1,
        period: str = "d",
        route: tuple[str, str] = ORAL,
        prn: bool = False,
        status: str = "active",
        why: str = "",
        category: str = "community",
        course: str = "continuous",
        bounds: tuple[str, str] | None = None,
        supply: tuple[float, str, int] | None = None,
        prior: str = "",
        stay: str = "",
    ) -> str:
        """A MedicationRequest. ``why``: its statusReason (held, stopped); ``bounds``: the first
        and last day of a course; ``supply``: (quantity, UCUM unit, days) dispensed; ``prior``:
        the request a dose change replaces; ``stay``: the Encounter it was written in."""
        code, display = drug
        unit_name = {"[iU]": "U", "{puff}": "puff"}.get(unit, unit)
        timing: dict[str, Any] = {"repeat": {"frequency": times, "period": 1, "periodUnit": period}}
        if bounds is not None:
            timing["repeat"]["boundsPeriod"] = {"start": bounds[0], "end": bounds[1]}
        dosage: dict[str, Any] = {
            "sequence": 1,
            "text": text,
            "timing": timing,
            "route": {"coding": [{"system": SCT, "code": route[0], "display": route[1]}]},
            "doseAndRate": [
                {
                    "doseQuantity": {
                        "value": dose,
                        "unit": unit_name,
                        "system": UCUM,
                        "code": unit,
                    }
                }
            ],
        }
        if prn:
            dosage["asNeededBoolean"] = True
        r: dict[str, Any] = {
            "resourceType": "MedicationRequest",
            "status": status,
            "intent": "order",
            "category": [{"coding": [{"system": MR_CATEGORY, "code": category}]}],
            "medicationCodeableConcept": {
                "coding": [{"system": RXN, "code": code, "display": display}],
                "text": display,
            },
            "subject": self.subject,
            "authoredOn": authored,
            "courseOfTherapyType": {
                "coding": [
                    {
                        "system": COURSE,
                        "code": course,
                        "display": {
                            "acute": "Short course (acute) therapy",
                            "continuous": "Continuous long term therapy",
                        }[course],
                    }
                ]
            },
            "dosageInstruction": [dosage],
        }
        if why:
            r["statusReason"] = {"text": why}
        if stay:
            r["encounter"] = {"reference": f"urn:uuid:{stay}"}
        if prior:
            r["priorPrescription"] = {"reference": f"urn:uuid:{prior}"}
        if supply is not None:
            qty, qty_unit, days = supply
            r["dispenseRequest"] = {
                "quantity": {
                    "value": qty,
                    "unit": qty_unit.strip("{}"),
                    "system": UCUM,
                    "code": qty_unit,
                },
                "expectedSupplyDuration": {
                    "value": days,
                    "unit": "days",
                    "system": UCUM,
                    "code": "d",
                },
            }
        return str(self._add(r))

    def obs(self, test: tuple[str, str], value: float, unit: str, when: str) -> str:
        return str(self.lab(test[0], test[1], value, unit, when))

    def weight(self, kg: float, when: str) -> str:
        return str(self.lab(WEIGHT[0], WEIGHT[1], kg, "kg", when, "vital-signs"))


# --- problems -----------------------------------------------------------------------------------

HFREF = ("703272007", "Heart failure with reduced ejection fraction (disorder)")
HEART_FAILURE = ("84114007", "Heart failure (disorder)")
HYPERTENSION = ("59621000", "Essential hypertension (disorder)")
DIABETES = ("44054006", "Diabetes mellitus type 2 (disorder)")
COPD = ("13645005", "Chronic obstructive lung disease (disorder)")
COPD_EXACERBATION = (
    "195951007",
    "Acute exacerbation of chronic obstructive airways disease (disorder)",
)
PNEUMONIA = ("385093006", "Community acquired pneumonia (disorder)")
DELIRIUM = ("2776000", "Delirium (disorder)")
FRAILTY = ("248279007", "Frailty (finding)")
LIVES_ALONE = ("105529008", "Lives alone (finding)")
FALL = ("217082002", "Accidental fall (event)")
NSTEMI = ("401314000", "Acute non-ST segment elevation myocardial infarction (disorder)")
PCI = ("415070008", "Percutaneous coronary intervention (procedure)")
HYPERLIPIDAEMIA = ("55822004", "Hyperlipidemia (disorder)")
STROKE = ("422504002", "Ischemic stroke (disorder)")
DYSPHAGIA = ("40739000", "Dysphagia (disorder)")
NECK_OF_FEMUR = ("5913000", "Fracture of neck of femur (disorder)")
HIP_REPLACEMENT = ("52734007", "Total replacement of hip (procedure)")
OSTEOPOROSIS = ("64859006", "Osteoporosis (disorder)")
SEPSIS = ("91302008", "Sepsis (disorder)")
UTI = ("68566005", "Urinary tract infectious disease (disorder)")
AKI = ("14669001", "Acute renal failure syndrome (disorder)")
OSTEOARTHRITIS = ("396275006", "Osteoarthritis (disorder)")
KNEE_OA = ("239873007", "Osteoarthritis of knee (disorder)")
KNEE_REPLACEMENT = ("609588000", "Total knee replacement (procedure)")
AF = ("49436004", "Atrial fibrillation (disorder)")
PE = ("59282003", "Pulmonary embolism (disorder)")
HYPOGLYCAEMIA = fifth.HYPOGLYCAEMIA
CKD3 = ("433144002", "Chronic kidney disease stage 3 (disorder)")
CELLULITIS = ("128045006", "Cellulitis (disorder)")
GI_BLEED = ("74474003", "Gastrointestinal hemorrhage (disorder)")
DUODENAL_ULCER = ("51868009", "Duodenal ulcer (disorder)")
CATARACT = ("193570009", "Cataract (disorder)")
CYSTITIS = ("38822007", "Cystitis (disorder)")
ANAEMIA = ("271737000", "Anemia (disorder)")

CURRENT_SMOKER = ("449868002", "Smokes tobacco daily (finding)")
FORMER_SMOKER = ("8517006", "Ex-smoker (finding)")
NEVER_SMOKER = ("266919005", "Never smoked tobacco (finding)")


# --- heart failure ------------------------------------------------------------------------------


def heart_failure_diuretic_increased() -> Record:
    """79, HFrEF (LVEF 30 %), admitted 19-25 November with decompensated heart failure; 5.5 kg
    off; furosemide 40 -> 80 mg, spironolactone started; creatinine 1.1 -> 1.5 and potassium
    4.1 -> 4.9 at discharge; no SGLT2 inhibitor; seen five days after discharge."""
    r = Record("heart_failure_diuretic_increased", "Margaret", "Doyle", "female", "1947-05-14")
    hf = r.dx(HFREF, "2023-03-02")
    r.condition(*HYPERTENSION, "2008-06-11")
    stay = r.stay("IMP", "2026-11-19", "2026-11-25", [hf])
    old = r.rx(
        FUROSEMIDE_40,
        "2023-03-02",
        40,
        "mg",
        "furosemide 40 mg each morning",
        status="stopped",
        why="dose increased at discharge (decompensated heart failure)",
    )
    r.rx(
        FUROSEMIDE_40,
        "2026-11-25",
        80,
        "mg",
        "furosemide 80 mg (two 40 mg tablets) each morning",
        category="discharge",
        prior=old,
        stay=stay,
    )
    r.rx(
        SPIRONOLACTONE_25,
        "2026-11-25",
        25,
        "mg",
        "spironolactone 25 mg once daily, new in hospital",
        category="discharge",
        stay=stay,
    )
    r.rx(RAMIPRIL_5, "2023-03-02", 5, "mg", "ramipril 5 mg once daily")
    r.rx(BISOPROLOL_5, "2023-05-10", 5, "mg", "bisoprolol 5 mg once daily")
    r.obs(LVEF, 30, "%", "2026-11-20")
    r.obs(NT_PROBNP, 6840, "pg/mL", "2026-11-19")
    r.renal("2026-11-19", 49, 1.1, 4.1, 137)
    r.renal("2026-11-25", 34, 1.5, 4.9, 135)
    r.weight(84.5, "2026-11-19")
    r.weight(79.0, "2026-11-25")
    r.bp(VISIT, 112, 68)
    r.weight(79.6, VISIT)
    r.lab("8867-4", "Heart rate", 68, "/min", VISIT, "vital-signs")
    r.vaccine(*FLU_STANDARD, "2026-10-09")
    return r


# --- COPD ---------------------------------------------------------------------------------------


def copd_exacerbation_courses_ended() -> Record:
    """68, COPD on tiotropium alone, smoker; admitted 21-25 November with an exacerbation;
    prednisolone 30 mg for 5 days and doxycycline for 5 days, both ended 26-27 November; no
    pulmonary rehabilitation on record; seen five days after discharge."""
    r = Record("copd_exacerbation_courses_ended", "Raymond", "Pike", "male", "1958-08-02")
    r.condition(*COPD, "2019-02-14")
    ex = r.dx(COPD_EXACERBATION, "2026-11-21", "resolved", "2026-11-27")
    stay = r.stay("IMP", "2026-11-21", "2026-11-25", [ex])
    r.rx(
        TIOTROPIUM,
        "2019-02-14",
        18,
        "ug",
        "tiotropium 18 micrograms inhalation capsule, one inhaled once daily",
        route=INHALED,
    )
    r.rx(
        ALBUTEROL_MDI,
        "2019-02-14",
        2,
        "{puff}",
        "salbutamol 100 micrograms, 2 puffs when needed",
        route=INHALED,
        prn=True,
    )
    r.rx(
        PREDNISOLONE_5,
        "2026-11-22",
        30,
        "mg",
        "prednisolone 30 mg (six 5 mg tablets) each morning for 5 days, then stop",
        status="completed",
        category="discharge",
        course="acute",
        bounds=("2026-11-22", "2026-11-26"),
        supply=(30, "{tablet}", 5),
        stay=stay,
    )
    r.rx(
        DOXYCYCLINE,
        "2026-11-22",
        100,
        "mg",
        "doxycycline 100 mg capsules: 200 mg on day 1, then 100 mg once daily, 5 days in all",
        status="completed",
        category="discharge",
        course="acute",
        bounds=("2026-11-23", "2026-11-27"),
        supply=(6, "{capsule}", 5),
        stay=stay,
    )
    r.smoking(VISIT, CURRENT_SMOKER)
    r.obs(SPO2, 93, "%", VISIT)
    r.blood_count("2026-11-21", 15.1, 13.2, 268)
    r.bp(VISIT, 134, 80)
    r.vitals(VISIT, 71.0, 175.0, 88)
    r.vaccine(*FLU_STANDARD, "2026-10-20")
    return r


# --- pneumonia in frailty -----------------------------------------------------------------------


def pneumonia_frail_lives_alone() -> Record:
    """87, frail, lives alone, a fall before admission; pneumonia 17-27 November with delirium;
    amoxicillin course ended 29 November; zolpidem started on the ward for sleep and on the
    discharge list; discharged home with no care package on record."""
    r = Record("pneumonia_frail_lives_alone", "Dorothy", "Hale", "female", "1939-03-21")
    r.condition(*HYPERTENSION, "2004-09-01")
    r.condition(*OSTEOARTHRITIS, "2010-05-17")
    r.condition(*FRAILTY, "2025-06-30")
    r.condition(*LIVES_ALONE, "2019-01-10")
    r.condition(*FALL, "2026-11-16")
    pn = r.dx(PNEUMONIA, "2026-11-17", "resolved", "2026-11-29")
    de = r.dx(DELIRIUM, "2026-11-18", "resolved", "2026-11-24")
    stay = r.stay("IMP", "2026-11-17", "2026-11-27", [pn, de])
    r.rx(
        AMOXICILLIN,
        "2026-11-23",
        500,
        "mg",
        "amoxicillin 500 mg three times daily to complete 7 days of antibiotic (IV then oral)",
        times=3,
        status="completed",
        category="discharge",
        course="acute",
        bounds=("2026-11-23", "2026-11-29"),
        supply=(21, "{capsule}", 7),
        stay=stay,
    )
    r.rx(
        ZOLPIDEM_5,
        "2026-11-20",
        5,
        "mg",
        "zolpidem 5 mg at night, started on the ward for sleep",
        category="discharge",
        stay=stay,
    )
    r.rx(AMLODIPINE_5, "2004-09-01", 5, "mg", "amlodipine 5 mg once daily")
    r.rx(
        PARACETAMOL_325,
        "2010-05-17",
        650,
        "mg",
        "paracetamol 650 mg up to four times daily",
        times=4,
    )
    r.renal("2026-11-26", 46, 1.1, 4.2, 134)
    r.blood_count("2026-11-26", 11.6, 9.8, 302)
    r.obs(CRP, 3.8, "mg/dL", "2026-11-26")
    r.obs(SPO2, 95, "%", VISIT)
    r.bp(VISIT, 126, 70)
    r.vitals(VISIT, 51.0, 157.0, 84)
    r.vaccine(*FLU_STANDARD, "2026-10-14")
    return r


# --- myocardial infarction ----------------------------------------------------------------------


def nstemi_stent_dual_antiplatelet() -> Record:
    """58, smoker; NSTEMI with a drug-eluting stent 20 November, discharged 23 November on
    aspirin, ticagrelor, atorvastatin 80, bisoprolol, ramipril and GTN; his home ibuprofen was
    stopped in hospital; no proton pump inhibitor; seen seven days after discharge."""
    r = Record("nstemi_stent_dual_antiplatelet", "Steven", "Walsh", "male", "1968-01-30")
    mi = r.dx(NSTEMI, "2026-11-19")
    r.condition(*HYPERLIPIDAEMIA, "2026-11-20")
    r.condition("279039007", "Low back pain (finding)", "2024-04-11")
    stay = r.stay("IMP", "2026-11-19", "2026-11-23", [mi], kind=EMERGENCY)
    r.procedure(PCI, "2026-11-20")
    r.rx(
        IBUPROFEN_200,
        "2024-04-11",
        400,
        "mg",
        "ibuprofen 400 mg three times daily for back pain",
        times=3,
        status="stopped",
        why="stopped in hospital: NSAID after myocardial infarction and on dual antiplatelet "
        "therapy",
    )
    r.rx(
        ASPIRIN_81,
        "2026-11-23",
        81,
        "mg",
        "aspirin 81 mg once daily, lifelong",
        category="discharge",
        stay=stay,
    )
    r.rx(
        TICAGRELOR,
        "2026-11-23",
        90,
        "mg",
        "ticagrelor 90 mg twice daily for 12 months after the stent (to November 2027)",
        times=2,
        category="discharge",
        stay=stay,
    )
    r.rx(
        ATORVASTATIN_80,
        "2026-11-23",
        80,
        "mg",
        "atorvastatin 80 mg at night",
        category="discharge",
        stay=stay,
    )
    r.rx(
        BISOPROLOL_25,
        "2026-11-23",
        2.5,
        "mg",
        "bisoprolol 2.5 mg once daily",
        category="discharge",
        stay=stay,
    )
    r.rx(
        RAMIPRIL,
        "2026-11-23",
        2.5,
        "mg",
        "ramipril 2.5 mg capsule once daily, to be titrated",
        category="discharge",
        stay=stay,
    )
    r.rx(
        NITROGLYCERIN,
        "2026-11-23",
        0.4,
        "mg",
        "glyceryl trinitrate 400 micrograms/dose sublingual spray, 1-2 sprays for chest pain",
        route=SUBLINGUAL,
        prn=True,
        category="discharge",
        stay=stay,
    )
    r.obs(TROPONIN, 1840, "ng/L", "2026-11-19")
    r.obs(LDL, 162, "mg/dL", "2026-11-20")
    r.obs(LVEF, 48, "%", "2026-11-21")
    r.renal("2026-11-23", 88, 0.98, 4.4, 140)
    r.blood_count("2026-11-23", 14.6, 8.1, 241)
    r.smoking(VISIT, CURRENT_SMOKER)
    r.bp(VISIT, 128, 78)
    r.vitals(VISIT, 92.0, 178.0, 64)
    return r


# --- stroke -------------------------------------------------------------------------------------


def minor_stroke_dual_antiplatelet() -> Record:
    """72, minor ischaemic stroke 18 November (NIHSS 2), discharged 24 November on aspirin with
    clopidogrel for 21 days (aspirin ends 8 December), atorvastatin 80; amlodipine held in
    hospital; BP 162/94 today; mild dysphagia at discharge, soft diet; still drives."""
    r = Record("minor_stroke_dual_antiplatelet", "Alan", "Brooks", "male", "1954-10-06")
    st = r.dx(STROKE, "2026-11-18")
    dy = r.dx(DYSPHAGIA, "2026-11-18")
    r.condition(*HYPERTENSION, "2012-03-19")
    stay = r.stay("IMP", "2026-11-18", "2026-11-24", [st, dy])
    r.rx(
        AMLODIPINE_5,
        "2012-03-19",
        5,
        "mg",
        "amlodipine 5 mg once daily",
        status="on-hold",
        why="held in hospital after the acute stroke (permissive blood pressure); restart decision "
        "for primary care",
    )
    r.rx(
        ASPIRIN_81,
        "2026-11-18",
        81,
        "mg",
        "aspirin 81 mg once daily with clopidogrel for 21 days, then stop aspirin",
        category="discharge",
        course="acute",
        bounds=("2026-11-18", "2026-12-08"),
        stay=stay,
    )
    r.rx(
        CLOPIDOGREL_75,
        "2026-11-18",
        75,
        "mg",
        "clopidogrel 75 mg once daily, long term",
        category="discharge",
        stay=stay,
    )
    r.rx(
        ATORVASTATIN_80,
        "2026-11-19",
        80,
        "mg",
        "atorvastatin 80 mg at night",
        category="discharge",
        stay=stay,
    )
    r.obs(LDL, 141, "mg/dL", "2026-11-19")
    r.obs(HBA1C, 5.6, "%", "2026-11-19")
    r.renal("2026-11-23", 71, 1.05, 4.3, 139)
    r.bp("2026-11-24", 156, 90)
    r.bp(VISIT, 162, 94)
    r.vitals(VISIT, 84.0, 176.0, 72)
    r.smoking(VISIT, FORMER_SMOKER)
    return r


# --- hip fracture -------------------------------------------------------------------------------


def hip_fracture_bone_protection() -> Record:
    """84, fell at home; fractured neck of femur 14 November, hip replacement 15 November,
    discharged home 26 November with enoxaparin to 12 December and a short oxycodone supply;
    amitriptyline stopped in hospital (falls, delirium); vitamin D 14 ng/mL; no bone
    treatment; haemoglobin 9.4 at discharge."""
    r = Record("hip_fracture_bone_protection", "Irene", "Marsh", "female", "1942-07-09")
    fx = r.dx(NECK_OF_FEMUR, "2026-11-14")
    r.condition(*FALL, "2026-11-14")
    r.condition(*HYPERTENSION, "2006-02-20")
    r.condition("193462001", "Insomnia (disorder)", "2018-09-12")
    stay = r.stay("IMP", "2026-11-14", "2026-11-26", [fx])
    r.procedure(HIP_REPLACEMENT, "2026-11-15")
    r.rx(
        AMITRIPTYLINE_25,
        "2018-09-12",
        25,
        "mg",
        "amitriptyline 25 mg at night for sleep",
        status="stopped",
        why="stopped in hospital: anticholinergic, contributed to the fall and post-operative "
        "delirium; not to be restarted",
    )
    r.rx(
        ENOXAPARIN,
        "2026-11-15",
        40,
        "mg",
        "enoxaparin 40 mg subcutaneous injection once daily for 28 days after surgery "
        "(last dose 12 December)",
        route=SUBCUT,
        category="discharge",
        course="acute",
        bounds=("2026-11-15", "2026-12-12"),
        supply=(16, "{syringe}", 16),
        stay=stay,
    )
    r.rx(
        OXYCODONE,
        "2026-11-26",
        5,
        "mg",
        "oxycodone 5 mg immediate-release capsule every 6 hours when needed for pain, 14 supplied",
        times=4,
        prn=True,
        category="discharge",
        course="acute",
        supply=(14, "{capsule}", 7),
        stay=stay,
    )
    r.rx(
        PARACETAMOL_325,
        "2026-11-15",
        650,
        "mg",
        "paracetamol 650 mg four times daily",
        times=4,
        category="discharge",
        stay=stay,
    )
    r.rx(AMLODIPINE_5, "2006-02-20", 5, "mg", "amlodipine 5 mg once daily")
    r.obs(VITAMIN_D, 14, "ng/mL", "2026-11-16")
    r.blood_count("2026-11-14", 12.8, 9.1, 233)
    r.blood_count("2026-11-25", 9.4, 8.6, 388)
    r.renal("2026-11-25", 58, 0.92, 4.1, 137)
    r.bp(VISIT, 128, 72)
    r.vitals(VISIT, 56.0, 160.0, 78)
    r.vaccine(*FLU_STANDARD, "2026-10-11")
    return r


# --- sepsis and acute kidney injury -------------------------------------------------------------


def urosepsis_aki_drugs_held() -> Record:
    """76, type 2 diabetes and hypertension; urosepsis with acute kidney injury 20-26 November
    (creatinine 1.1 -> 3.2 -> 1.6); metformin and lisinopril held, naproxen stopped; cefalexin
    ended 28 November; no creatinine since discharge."""
    r = Record("urosepsis_aki_drugs_held", "George", "Finch", "male", "1950-04-25")
    r.condition(*DIABETES, "2011-07-19")
    r.condition(*HYPERTENSION, "2009-01-05")
    r.condition(*KNEE_OA, "2017-03-08")
    se = r.dx(SEPSIS, "2026-11-20", "resolved", "2026-11-26")
    ut = r.dx(UTI, "2026-11-20", "resolved", "2026-11-28")
    ak = r.dx(AKI, "2026-11-20")
    stay = r.stay("IMP", "2026-11-20", "2026-11-26", [se, ut, ak])
    r.rx(
        METFORMIN_1000,
        "2013-05-02",
        1000,
        "mg",
        "metformin 1000 mg twice daily",
        times=2,
        status="on-hold",
        why="held in hospital: acute kidney injury with sepsis; restart when "
        "kidney function recovers",
    )
    r.rx(
        LISINOPRIL_20,
        "2009-01-05",
        20,
        "mg",
        "lisinopril 20 mg once daily",
        status="on-hold",
        why="held in hospital: acute kidney injury and low blood pressure; restart decision for "
        "primary care after a creatinine check",
    )
    r.rx(
        NAPROXEN_500,
        "2017-03-08",
        500,
        "mg",
        "naproxen 500 mg twice daily for knee pain",
        times=2,
        status="stopped",
        why="stopped in hospital: acute kidney injury; NSAID not to be restarted",
    )
    r.rx(
        CEFALEXIN,
        "2026-11-24",
        500,
        "mg",
        "cefalexin 500 mg twice daily to complete 7 days of antibiotic (last dose 28 November)",
        times=2,
        status="completed",
        category="discharge",
        course="acute",
        bounds=("2026-11-22", "2026-11-28"),
        supply=(10, "{capsule}", 5),
        stay=stay,
    )
    r.rx(AMLODIPINE_5, "2015-10-12", 5, "mg", "amlodipine 5 mg once daily")
    r.rx(ATORVASTATIN_20, "2011-07-19", 20, "mg", "atorvastatin 20 mg at night")
    r.rx(
        PARACETAMOL_325,
        "2026-11-26",
        650,
        "mg",
        "paracetamol 650 mg up to four times daily for knee pain, instead of naproxen",
        times=4,
        category="discharge",
        stay=stay,
    )
    r.renal("2026-09-14", 66, 1.1, 4.5, 139)
    r.renal("2026-11-20", 18, 3.2, 5.6, 133)
    r.renal("2026-11-26", 42, 1.6, 4.8, 137)
    r.obs(HBA1C, 7.2, "%", "2026-11-21")
    r.bp(VISIT, 138, 82)
    r.vitals(VISIT, 88.0, 174.0, 80)
    r.vaccine(*FLU_STANDARD, "2026-10-02")
    return r


# --- surgery ------------------------------------------------------------------------------------


def knee_replacement_opioid_course() -> Record:
    """64, elective total knee replacement 23 November, home 26 November with oxycodone 5 mg
    (20 supplied), rivaroxaban 10 mg for 14 days (to 7 December), no laxative; staples in."""
    r = Record("knee_replacement_opioid_course", "Patricia", "Lowe", "female", "1962-12-03")
    oa = r.dx(KNEE_OA, "2019-05-22")
    r.condition(*HYPERTENSION, "2015-08-14")
    stay = r.stay("IMP", "2026-11-23", "2026-11-26", [oa])
    r.procedure(KNEE_REPLACEMENT, "2026-11-23")
    r.rx(
        OXYCODONE,
        "2026-11-26",
        5,
        "mg",
        "oxycodone 5 mg immediate-release capsule every 4-6 hours when needed for severe pain, "
        "20 supplied, no repeat",
        times=4,
        prn=True,
        category="discharge",
        course="acute",
        supply=(20, "{capsule}", 5),
        stay=stay,
    )
    r.rx(
        RIVAROXABAN,
        "2026-11-24",
        10,
        "mg",
        "rivaroxaban 10 mg once daily for 14 days after surgery (last dose 7 December)",
        category="discharge",
        course="acute",
        bounds=("2026-11-24", "2026-12-07"),
        supply=(12, "{tablet}", 12),
        stay=stay,
    )
    r.rx(
        PARACETAMOL_325,
        "2026-11-26",
        650,
        "mg",
        "paracetamol 650 mg four times daily",
        times=4,
        category="discharge",
        stay=stay,
    )
    r.rx(AMLODIPINE_5, "2015-08-14", 5, "mg", "amlodipine 5 mg once daily")
    r.blood_count("2026-11-25", 11.2, 9.4, 256)
    r.renal("2026-11-25", 84, 0.82, 4.2, 139)
    r.bp(VISIT, 132, 80)
    r.vitals(VISIT, 78.0, 164.0, 76)
    return r


# --- anticoagulation ----------------------------------------------------------------------------


def new_af_apixaban_with_aspirin() -> Record:
    """82, new atrial fibrillation found on admission with palpitations 22-25 November;
    apixaban 5 mg twice daily started (weight 57 kg, creatinine 1.2); her aspirin for primary
    prevention is still on the discharge list; bisoprolol started."""
    r = Record("new_af_apixaban_with_aspirin", "Joan", "Pritchard", "female", "1944-06-17")
    af = r.dx(AF, "2026-11-22")
    r.condition(*HYPERTENSION, "2005-04-28")
    stay = r.stay("IMP", "2026-11-22", "2026-11-25", [af])
    r.rx(
        APIXABAN_5,
        "2026-11-23",
        5,
        "mg",
        "apixaban 5 mg twice daily",
        times=2,
        category="discharge",
        stay=stay,
    )
    r.rx(
        BISOPROLOL_25,
        "2026-11-23",
        2.5,
        "mg",
        "bisoprolol 2.5 mg once daily for rate control",
        category="discharge",
        stay=stay,
    )
    r.rx(
        ASPIRIN_81,
        "2014-02-11",
        81,
        "mg",
        "aspirin 81 mg once daily (primary prevention)",
        category="discharge",
        stay=stay,
    )
    r.rx(RAMIPRIL_5, "2005-04-28", 5, "mg", "ramipril 5 mg once daily")
    r.obs(TSH, 1.9, "m[IU]/L", "2026-11-22")
    r.renal("2026-11-24", 41, 1.2, 4.4, 138)
    r.blood_count("2026-11-24", 12.9, 7.1, 219)
    r.bp(VISIT, 134, 78)
    r.vitals(VISIT, 57.0, 158.0, 78)
    r.vaccine(*FLU_STANDARD, "2026-10-16")
    return r


def pulmonary_embolism_warfarin_bridging() -> Record:
    """61, pulmonary embolism 21-25 November (after a long flight); warfarin started, INR 1.7 at
    discharge with enoxaparin to continue until the INR is 2 or more on two days; no INR
    since."""
    r = Record("pulmonary_embolism_warfarin_bridging", "Michael", "Dunne", "male", "1965-02-08")
    pe = r.dx(PE, "2026-11-21")
    stay = r.stay("IMP", "2026-11-21", "2026-11-25", [pe])
    r.rx(
        WARFARIN,
        "2026-11-22",
        5,
        "mg",
        "warfarin 5 mg once daily in the evening, dose by INR (target 2.5, range 2-3), 3 months",
        category="discharge",
        stay=stay,
    )
    r.rx(
        ENOXAPARIN,
        "2026-11-21",
        150,
        "mg",
        "enoxaparin 1.5 mg/kg (150 mg) subcutaneous once daily until the INR is 2 or more on "
        "two consecutive days, at least 5 days in all",
        route=SUBCUT,
        category="discharge",
        course="acute",
        supply=(5, "{syringe}", 5),
        stay=stay,
    )
    r.obs(INR, 1.1, "{INR}", "2026-11-21")
    r.obs(INR, 1.7, "{INR}", "2026-11-25")
    r.renal("2026-11-24", 90, 0.95, 4.3, 140)
    r.blood_count("2026-11-24", 14.2, 7.8, 198)
    r.bp("2026-11-29", 128, 76)
    r.vitals("2026-11-29", 100.0, 183.0, 76)
    return r


# --- diabetes -----------------------------------------------------------------------------------


def hypoglycaemia_sulfonylurea_stopped() -> Record:
    """78, type 2 diabetes with CKD 3b; admitted 24-27 November with severe hypoglycaemia
    (glucose 38 mg/dL, ambulance); gliclazide stopped, glargine reduced 30 -> 20 units; HbA1c
    6.2 %; he drives."""
    r = Record("hypoglycaemia_sulfonylurea_stopped", "Frank", "Osei", "male", "1948-09-15")
    r.condition(*DIABETES, "2004-11-03")
    r.condition(*CKD3, "2024-02-19")
    r.condition(*HYPERTENSION, "2004-11-03")
    hy = r.dx(HYPOGLYCAEMIA, "2026-11-24", "resolved", "2026-11-26")
    stay = r.stay("IMP", "2026-11-24", "2026-11-27", [hy])
    r.rx(
        GLICLAZIDE,
        "2012-06-01",
        160,
        "mg",
        "gliclazide 160 mg twice daily",
        times=2,
        status="stopped",
        why="stopped in hospital: severe hypoglycaemia; not to be restarted",
    )
    old = r.rx(
        GLARGINE_PEN,
        "2019-08-20",
        30,
        "[iU]",
        "insulin glargine 30 units at night",
        route=SUBCUT,
        status="stopped",
        why="dose reduced at discharge after hypoglycaemia",
    )
    r.rx(
        GLARGINE_PEN,
        "2026-11-27",
        20,
        "[iU]",
        "insulin glargine 20 units at night",
        route=SUBCUT,
        category="discharge",
        prior=old,
        stay=stay,
    )
    r.rx(METFORMIN_500, "2004-11-03", 500, "mg", "metformin 500 mg twice daily", times=2)
    r.rx(RAMIPRIL_5, "2010-02-14", 5, "mg", "ramipril 5 mg once daily")
    r.obs(GLUCOSE, 38, "mg/dL", "2026-11-24")
    r.obs(HBA1C, 6.2, "%", "2026-11-25")
    r.renal("2026-11-25", 36, 1.8, 4.6, 138)
    r.bp(VISIT, 132, 76)
    r.vitals(VISIT, 74.0, 172.0, 74)
    r.vaccine(*FLU_STANDARD, "2026-10-05")
    return r


# --- reconciliation -----------------------------------------------------------------------------


def cellulitis_duplicate_beta_blocker() -> Record:
    """71, leg cellulitis 20-25 November; the hospital swapped her home metoprolol for
    bisoprolol, but the home metoprolol request is still active alongside; heart rate 52."""
    r = Record("cellulitis_duplicate_beta_blocker", "Susan", "Reid", "female", "1955-11-27")
    ce = r.dx(CELLULITIS, "2026-11-20", "resolved", "2026-11-29")
    r.condition(*HYPERTENSION, "2010-06-30")
    r.condition("194828000", "Angina (disorder)", "2018-04-12")
    stay = r.stay("IMP", "2026-11-20", "2026-11-25", [ce])
    r.rx(METOPROLOL_50, "2018-04-12", 50, "mg", "metoprolol tartrate 50 mg twice daily", times=2)
    r.rx(
        BISOPROLOL_5,
        "2026-11-21",
        5,
        "mg",
        "bisoprolol 5 mg once daily (formulary substitute for metoprolol)",
        category="discharge",
        stay=stay,
    )
    r.rx(
        CEFALEXIN,
        "2026-11-23",
        500,
        "mg",
        "cefalexin 500 mg four times daily to complete 7 days (last dose 29 November)",
        times=4,
        status="completed",
        category="discharge",
        course="acute",
        bounds=("2026-11-23", "2026-11-29"),
        supply=(28, "{capsule}", 7),
        stay=stay,
    )
    r.rx(ATORVASTATIN_40, "2018-04-12", 40, "mg", "atorvastatin 40 mg at night")
    r.rx(ASPIRIN_81, "2018-04-12", 81, "mg", "aspirin 81 mg once daily")
    r.rx(LEVOTHYROXINE_75, "2012-01-09", 75, "ug", "levothyroxine 75 micrograms each morning")
    r.renal("2026-11-24", 68, 0.86, 4.3, 139)
    r.bp(VISIT, 108, 62)
    r.vitals(VISIT, 82.0, 163.0, 52)
    r.vaccine(*FLU_STANDARD, "2026-10-22")
    return r


def gi_bleed_nsaid_stopped() -> Record:
    """80, bleeding duodenal ulcer 19-24 November (haemoglobin 13.5 -> 7.9, two units); naproxen
    and primary-prevention aspirin stopped; omeprazole 40 mg twice daily for 8 weeks; ferrous
    sulfate; H. pylori biopsy result pending; haemoglobin 9.1 at discharge."""
    r = Record("gi_bleed_nsaid_stopped", "Harold", "Vance", "male", "1946-12-12")
    gi = r.dx(GI_BLEED, "2026-11-19", "resolved", "2026-11-21")
    du = r.dx(DUODENAL_ULCER, "2026-11-20")
    an = r.dx(ANAEMIA, "2026-11-19")
    r.condition(*OSTEOARTHRITIS, "2013-04-04")
    r.condition(*HYPERTENSION, "2008-10-10")
    stay = r.stay("IMP", "2026-11-19", "2026-11-24", [gi, du, an])
    r.rx(
        NAPROXEN_500,
        "2013-04-04",
        500,
        "mg",
        "naproxen 500 mg twice daily for arthritis",
        times=2,
        status="stopped",
        why="stopped in hospital: bleeding duodenal ulcer; never to be restarted",
    )
    r.rx(
        ASPIRIN_81,
        "2016-01-20",
        81,
        "mg",
        "aspirin 81 mg once daily (primary prevention)",
        status="stopped",
        why="stopped in hospital: gastrointestinal bleed, no indication",
    )
    r.rx(
        OMEPRAZOLE,
        "2026-11-20",
        40,
        "mg",
        "omeprazole 40 mg twice daily for 8 weeks, then review",
        times=2,
        category="discharge",
        course="acute",
        bounds=("2026-11-20", "2027-01-15"),
        stay=stay,
    )
    r.rx(
        FERROUS_SULFATE,
        "2026-11-24",
        200,
        "mg",
        "ferrous sulfate 200 mg once daily",
        category="discharge",
        stay=stay,
    )
    r.rx(AMLODIPINE_5, "2008-10-10", 5, "mg", "amlodipine 5 mg once daily")
    r.rx(
        PARACETAMOL_325,
        "2026-11-24",
        650,
        "mg",
        "paracetamol 650 mg up to four times daily",
        times=4,
        category="discharge",
        stay=stay,
    )
    r.blood_count("2026-11-10", 13.5, 7.0, 250)
    r.blood_count("2026-11-19", 7.9, 9.8, 281)
    r.blood_count("2026-11-24", 9.1, 8.4, 266)
    r.renal("2026-11-24", 62, 1.15, 4.3, 138)
    r.bp(VISIT, 124, 72)
    r.vitals(VISIT, 70.0, 170.0, 82)
    r.vaccine(*FLU_STANDARD, "2026-10-08")
    return r


# --- negative controls --------------------------------------------------------------------------


def day_case_cataract_no_change() -> Record:
    """Negative control. 66, day-case cataract surgery 24 November (short stay, home the same
    day), no medicine changed; hypertension controlled."""
    r = Record("day_case_cataract_no_change", "Linda", "Carter", "female", "1960-08-19")
    ca = r.dx(CATARACT, "2026-06-02")
    r.condition(*HYPERTENSION, "2014-03-11")
    r.condition(*HYPERLIPIDAEMIA, "2014-03-11")
    r.stay("SS", "2026-11-24", "2026-11-24", [ca])
    r.procedure(
        (
            "54885007",
            "Extracapsular cataract extraction with insertion of intraocular lens (procedure)",
        ),
        "2026-11-24",
    )
    r.rx(AMLODIPINE_5, "2014-03-11", 5, "mg", "amlodipine 5 mg once daily")
    r.rx(ATORVASTATIN_20, "2014-03-11", 20, "mg", "atorvastatin 20 mg at night")
    r.renal("2026-10-20", 82, 0.8, 4.2, 140)
    r.bp(VISIT, 128, 78)
    r.vitals(VISIT, 68.0, 165.0, 70)
    r.smoking(VISIT, NEVER_SMOKER)
    r.vaccine(*FLU_STANDARD, "2026-10-07")
    return r


def outpatient_heart_failure_stable() -> Record:
    """Negative control. 71, HFrEF stable on full treatment, no admission for two years,
    weight and kidney function steady; routine review."""
    r = Record("outpatient_heart_failure_stable", "Peter", "Lang", "male", "1955-02-22")
    r.condition(*HFREF, "2021-05-04")
    r.condition(*HYPERTENSION, "2009-09-09")
    r.rx(FUROSEMIDE_40, "2021-05-04", 40, "mg", "furosemide 40 mg each morning")
    r.rx(BISOPROLOL_5, "2021-06-01", 5, "mg", "bisoprolol 5 mg once daily")
    r.rx(RAMIPRIL_5, "2021-06-01", 5, "mg", "ramipril 5 mg once daily")
    r.rx(SPIRONOLACTONE_25, "2021-08-10", 25, "mg", "spironolactone 25 mg once daily")
    r.rx(DAPAGLIFLOZIN, "2022-03-15", 10, "mg", "dapagliflozin 10 mg once daily (ingredient code)")
    r.obs(LVEF, 35, "%", "2025-11-12")
    r.renal("2026-08-18", 64, 1.15, 4.6, 139)
    r.renal(VISIT, 63, 1.17, 4.7, 138)
    r.weight(82.4, "2026-08-18")
    r.bp(VISIT, 118, 70)
    r.vitals(VISIT, 82.0, 177.0, 62)
    r.vaccine(*FLU_STANDARD, "2026-10-03")
    return r


def emergency_cystitis_course_ended() -> Record:
    """Negative control. 45, emergency visit 23 November for cystitis, nitrofurantoin for 5
    days (ended 28 November), now well; no other medicines."""
    r = Record("emergency_cystitis_course_ended", "Emma", "Stone", "female", "1981-04-30")
    cy = r.dx(CYSTITIS, "2026-11-23", "resolved", "2026-11-27")
    stay = r.stay("EMER", "2026-11-23", "2026-11-23", [cy], kind=EMERGENCY)
    r.rx(
        NITROFURANTOIN_50,
        "2026-11-23",
        100,
        "mg",
        "nitrofurantoin 100 mg (two 50 mg capsules) twice daily for 5 days",
        times=2,
        status="completed",
        category="discharge",
        course="acute",
        bounds=("2026-11-24", "2026-11-28"),
        supply=(20, "{capsule}", 5),
        stay=stay,
    )
    r.renal("2026-11-23", 104, 0.74, 4.1, 140)
    r.bp(VISIT, 118, 74)
    r.vitals(VISIT, 63.0, 168.0, 68)
    return r


VIGNETTES = (
    heart_failure_diuretic_increased,
    copd_exacerbation_courses_ended,
    pneumonia_frail_lives_alone,
    nstemi_stent_dual_antiplatelet,
    minor_stroke_dual_antiplatelet,
    hip_fracture_bone_protection,
    urosepsis_aki_drugs_held,
    knee_replacement_opioid_course,
    new_af_apixaban_with_aspirin,
    pulmonary_embolism_warfarin_bridging,
    hypoglycaemia_sulfonylurea_stopped,
    cellulitis_duplicate_beta_blocker,
    gi_bleed_nsaid_stopped,
    day_case_cataract_no_change,
    outpatient_heart_failure_stable,
    emergency_cystitis_course_ended,
)


def main() -> None:
    base.write(VIGNETTES, HERE)


if __name__ == "__main__":
    main()
