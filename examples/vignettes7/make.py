"""Writes the seventh set of clinical vignettes (a blind draw across the formulary): 24
hand-written FHIR R4 Bundles of adults of 19 to 90 seen for a primary-care or clinic review on
several medicines, one specialty each, the specialty drawn at random from the chapters of a
national formulary (the draw, its seed and the command are in README.md). Written blind, before
any plan of these patients was read and before the knowledge was opened, to measure how the
plans do on patients nobody tuned them for, and what the plans say that the record contradicts.
Run from the repository root: ``python3.11 examples/vignettes7/make.py``.

It reuses the sixth set's ``Record`` (../vignettes6/make.py, itself the earlier sets' builder:
MedicationRequests with status, statusReason, priorPrescription and course, and stays) under a
namespace of its own, and adds the shapes a clinic record carries beyond those: a provisional
Condition, a Condition or medicine known only by text (a UK product with no RxNorm code), a
medicine whose dose is not stated, a pending ServiceRequest, a DiagnosticReport with its
conclusion, a specialist clinic Encounter, a FamilyMemberHistory, menstrual status and the last
period, housing status, pregnancy intention and a urine pregnancy test.

Deterministic: ids are UUID5s of the vignette and the resource's position. Dates are fixed
around the plan date (2026-12-02); each patient's latest contact is 2026-12-01 unless said
(one record is deliberately old). Codes: RxNorm (clinical drugs already used by the earlier sets,
else ingredient codes with the product, strength and regimen in the text), SNOMED CT, LOINC,
UCUM, CVX; a code the author could not confirm is left out and the concept carried by its text.
"""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_SIXTH = HERE.parent / "vignettes6" / "make.py"
_spec = importlib.util.spec_from_file_location("vignettes6_make", _SIXTH)
assert _spec is not None and _spec.loader is not None
sixth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sixth)
base = sixth.base

NS = uuid.UUID("e7d3a1b0-4f82-4c9b-8e25-26c0c0de0026")
SCT, RXN, LNC, UCUM, CVX = base.SCT, base.RXN, base.LNC, base.UCUM, base.CVX
OBSCAT = base.OBSCAT
VISIT = "2026-12-01"
ORAL, SUBCUT, INHALED = sixth.ORAL, sixth.SUBCUT, sixth.INHALED
OPHTHALMIC = ("54485002", "Ophthalmic route")
OTIC = ("10547007", "Otic route")
TOPICAL = ("6064005", "Topical route")
NASAL = ("46713006", "Nasal route")

# --- medicines: (RxNorm code, display) -----------------------------------------------------------
# clinical drugs (SCD) already used by the earlier sets
CITALOPRAM_40 = ("309314", "citalopram 40 MG Oral Tablet")
TRAMADOL_50 = ("835603", "tramadol hydrochloride 50 MG Oral Tablet")
AMLODIPINE_5 = ("197361", "Amlodipine 5 MG Oral Tablet")
RAMIPRIL_5 = ("198189", "ramipril 5 MG Oral Capsule")
BISOPROLOL_5 = ("854905", "bisoprolol fumarate 5 MG Oral Tablet")
BISOPROLOL_25 = ("865155", "bisoprolol fumarate 2.5 MG Oral Tablet")
CLARITHROMYCIN_500 = ("197517", "clarithromycin 500 MG Oral Tablet")
METHOTREXATE_25 = ("105585", "methotrexate 2.5 MG Oral Tablet")
PREDNISOLONE_5 = ("198142", "prednisolone 5 MG Oral Tablet")
ALBUTEROL_MDI = ("745679", "200 ACTUAT Albuterol 0.09 MG/ACTUAT Metered Dose Inhaler")
METFORMIN_1000 = ("861004", "metformin hydrochloride 1000 MG Oral Tablet")
METFORMIN_500 = ("861007", "metformin hydrochloride 500 MG Oral Tablet")
OXYBUTYNIN_5 = ("863619", "oxybutynin chloride 5 MG Oral Tablet")
DONEPEZIL_10 = ("997223", "donepezil hydrochloride 10 MG Oral Tablet")
NITROFURANTOIN_50 = ("311995", "nitrofurantoin, macrocrystals 50 MG Oral Capsule")
LISINOPRIL_20 = ("314077", "lisinopril 20 MG Oral Tablet")
ATORVASTATIN_20 = ("617310", "atorvastatin 20 MG Oral Tablet")
ATORVASTATIN_40 = ("617311", "atorvastatin 40 MG Oral Tablet")
APIXABAN_5 = ("1364445", "apixaban 5 MG Oral Tablet")
AMIODARONE_200 = ("833528", "amiodarone hydrochloride 200 MG Oral Tablet")
FUROSEMIDE_40 = ("313988", "furosemide 40 MG Oral Tablet")
NAPROXEN_500 = ("105899", "naproxen 500 MG Oral Tablet [Naprosyn]")
DIAZEPAM_5 = ("197591", "diazepam 5 MG Oral Tablet")
PROPRANOLOL_40 = ("856519", "propranolol hydrochloride 40 MG Oral Tablet")
COMBINED_PILL = ("748879", "Levora 0.15/30 28 Day Pack")
ALLOPURINOL_300 = ("197320", "allopurinol 300 MG Oral Tablet")
WARFARIN_5 = ("855332", "Warfarin Sodium 5 MG Oral Tablet")
TAMSULOSIN_04 = ("863669", "tamsulosin hydrochloride 0.4 MG Oral Capsule")
# RxNorm ingredients (IN): the product, strength and regimen are in the request's text
CITALOPRAM = ("2556", "citalopram")
INDAPAMIDE = ("5764", "indapamide")
ACETAMINOPHEN = ("161", "acetaminophen")
WARFARIN = ("11289", "warfarin")
CLARITHROMYCIN = ("21212", "clarithromycin")
PSEUDOEPHEDRINE = ("8896", "pseudoephedrine")
AMLODIPINE = ("17767", "amlodipine")
RAMIPRIL = ("35296", "ramipril")
FOLIC_ACID = ("4511", "folic acid")
THIAMINE = ("10454", "thiamine")
CHLORDIAZEPOXIDE = ("2356", "chlordiazepoxide")
TRIMETHOPRIM = ("10829", "trimethoprim")
TIOTROPIUM = ("69120", "tiotropium")
FLUTICASONE = ("41126", "fluticasone")
BUDESONIDE = ("19831", "budesonide")
GLICLAZIDE = ("4816", "gliclazide")
EMPAGLIFLOZIN = ("1545653", "empagliflozin")
DAPAGLIFLOZIN = ("1488564", "dapagliflozin")
OMEPRAZOLE = ("7646", "omeprazole")
ALENDRONATE = ("46041", "alendronate")
SIMVASTATIN = ("36567", "simvastatin")
DIGOXIN = ("3407", "digoxin")
ADALIMUMAB = ("327361", "adalimumab")
THEOPHYLLINE = ("10438", "theophylline")
CIPROFLOXACIN = ("2551", "ciprofloxacin")
OXYGEN = ("7806", "oxygen")
MORPHINE = ("7052", "morphine")
PREGABALIN = ("187832", "pregabalin")
DARBEPOETIN = ("283838", "darbepoetin alfa")
GABAPENTIN = ("25480", "gabapentin")
INSULIN_GLARGINE = ("274783", "insulin glargine")
INSULIN_ASPART = ("51428", "insulin aspart")
VERAPAMIL = ("11170", "verapamil")
BENDROFLUMETHIAZIDE = ("1369", "bendroflumethiazide")
NITROGLYCERIN = ("4917", "nitroglycerin")
LEVOTHYROXINE = ("10582", "levothyroxine")
CALCIUM_CARBONATE = ("1897", "calcium carbonate")
FERROUS_SULFATE = ("24947", "ferrous sulfate")
CHLORAMPHENICOL = ("2348", "chloramphenicol")
HYDROXYZINE = ("5553", "hydroxyzine")
CETIRIZINE = ("20610", "cetirizine")
PHENELZINE = ("8123", "phenelzine")
SUMATRIPTAN = ("37418", "sumatriptan")
SITAGLIPTIN = ("593411", "sitagliptin")
TIMOLOL = ("10600", "timolol")
LATANOPROST = ("43611", "latanoprost")
HYDROXYCHLOROQUINE = ("5521", "hydroxychloroquine")

# --- problems (SNOMED CT) ------------------------------------------------------------------------
DEPRESSION = ("35489007", "Depressive disorder (disorder)")
KNEE_OA = ("239873007", "Osteoarthritis of knee (disorder)")
HIP_OA = ("239872002", "Osteoarthritis of hip (disorder)")
INSOMNIA = ("193462001", "Insomnia (disorder)")
HYPERTENSION = ("59621000", "Essential hypertension (disorder)")
FALL = ("217082002", "Accidental fall (event)")
AF = ("49436004", "Atrial fibrillation (disorder)")
EPISTAXIS = ("249366005", "Epistaxis (finding)")
CHRONIC_SINUSITIS = ("40055000", "Chronic sinusitis (disorder)")
TM_PERFORATION = ("60442001", "Perforation of tympanic membrane (disorder)")
ALCOHOLISM = ("7200002", "Alcoholism (disorder)")
HOMELESS = ("32911000", "Homeless (finding)")
FOLATE_ANAEMIA = ("85649008", "Folic acid deficiency anemia (disorder)")
PSORIASIS = ("9014002", "Psoriasis (disorder)")
CKD3 = ("433144002", "Chronic kidney disease stage 3 (disorder)")
CKD4 = ("431857002", "Chronic kidney disease stage 4 (disorder)")
UTI = ("68566005", "Urinary tract infectious disease (disorder)")
COPD = ("13645005", "Chronic obstructive lung disease (disorder)")
COPD_EXACERBATION = (
    "195951007",
    "Acute exacerbation of chronic obstructive airways disease (disorder)",
)
DIABETES2 = ("44054006", "Diabetes mellitus type 2 (disorder)")
DIABETES1 = ("46635009", "Diabetes mellitus type 1 (disorder)")
ALZHEIMER = ("26929004", "Alzheimer's disease (disorder)")
URGE_INCONTINENCE = ("75088002", "Urge incontinence of urine (disorder)")
RECURRENT_UTI = ("197927001", "Recurrent urinary tract infection (disorder)")
LIVES_ALONE = ("105529008", "Lives alone (finding)")
OSTEOPOROSIS = ("64859006", "Osteoporosis (disorder)")
GALLSTONES = ("235919008", "Calculus of gallbladder (disorder)")
MORBID_OBESITY = ("238136002", "Morbid obesity (disorder)")
OSA = ("78275009", "Obstructive sleep apnea syndrome (disorder)")
SPLENECTOMY = ("234319005", "Splenectomy (procedure)")
HYPERLIPIDAEMIA = ("55822004", "Hyperlipidemia (disorder)")
MYALGIA = ("68962001", "Muscle pain (finding)")
HEART_FAILURE = ("84114007", "Heart failure (disorder)")
ANKYLOSING_SPONDYLITIS = ("9631008", "Ankylosing spondylitis (disorder)")
DYSPEPSIA = ("162031009", "Indigestion (finding)")
LOW_BACK_PAIN = ("279039007", "Low back pain (finding)")
ESRD = ("46177005", "End-stage renal disease (disorder)")
DIALYSIS = ("105502003", "Dependence on renal dialysis (finding)")
ANAEMIA = ("271737000", "Anemia (disorder)")
PRURITUS = ("418290006", "Itching (finding)")
DROWSINESS = ("271782001", "Drowsy (finding)")
GRAVES = ("353295004", "Graves' disease (disorder)")
ASTHMA = ("195967001", "Asthma (disorder)")
ANGINA = ("194828000", "Angina (disorder)")
GOUT = ("90560007", "Gout (disorder)")
CELLULITIS = ("128045006", "Cellulitis (disorder)")
HOUSEBOUND = ("160689007", "Housebound (finding)")
HYPOTHYROIDISM = ("40930008", "Hypothyroidism (disorder)")
IRON_DEFICIENCY_ANAEMIA = ("87522002", "Iron deficiency anemia (disorder)")
GORD = ("235595009", "Gastroesophageal reflux disease (disorder)")
RETINOPATHY = ("4855003", "Diabetic retinopathy (disorder)")
KERATITIS = ("5888003", "Keratitis (disorder)")
URTICARIA = ("64305001", "Urticaria (disorder)")
MELANOMA = ("372244006", "Malignant melanoma (disorder)")
MIGRAINE = ("37796009", "Migraine (disorder)")
FRAILTY = ("248279007", "Frailty (finding)")
HYPOGLYCAEMIA = ("302866003", "Hypoglycemia (disorder)")
GLAUCOMA = ("77075001", "Primary open angle glaucoma (disorder)")
RHEUMATOID = ("69896004", "Rheumatoid arthritis (disorder)")
BPH = ("266569009", "Benign prostatic hyperplasia (disorder)")
CATARACT = ("193570009", "Cataract (disorder)")
MI = ("22298006", "Myocardial infarction (disorder)")

NEVER_SMOKER = ("266919005", "Never smoked tobacco (finding)")
FORMER_SMOKER = ("8517006", "Ex-smoker (finding)")
CURRENT_SMOKER = ("449868002", "Smokes tobacco daily (finding)")
POSTMENOPAUSAL = ("76498008", "Postmenopausal state (finding)")
NEGATIVE = ("260385009", "Negative (qualifier value)")

# --- tests (LOINC) -------------------------------------------------------------------------------
HB = ("718-7", "Hemoglobin [Mass/volume] in Blood")
MCV = ("787-2", "MCV [Entitic volume] by Automated count")
NEUTROPHILS = ("751-8", "Neutrophils [#/volume] in Blood by Automated count")
FERRITIN = ("2276-4", "Ferritin [Mass/volume] in Serum or Plasma")
FOLATE = ("2284-8", "Folate [Mass/volume] in Serum or Plasma")
B12 = ("2132-9", "Cobalamin (Vitamin B12) [Mass/volume] in Serum or Plasma")
GGT = ("2324-2", "Gamma glutamyl transferase [Enzymatic activity/volume] in Serum or Plasma")
ALT = ("1742-6", "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma")
AST = ("1920-8", "Aspartate aminotransferase [Enzymatic activity/volume] in Serum or Plasma")
ALBUMIN = ("1751-7", "Albumin [Mass/volume] in Serum or Plasma")
BILIRUBIN = ("1975-2", "Bilirubin.total [Mass/volume] in Serum or Plasma")
AUDIT_C = ("75626-2", "Total score [AUDIT-C]")
HBA1C = ("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood")
UACR = ("9318-7", "Albumin/Creatinine [Mass Ratio] in Urine")
CHOLESTEROL = ("2093-3", "Cholesterol [Mass/volume] in Serum or Plasma")
LDL = ("18262-6", "Cholesterol in LDL [Mass/volume] in Serum or Plasma by Direct assay")
HDL = ("2085-9", "Cholesterol in HDL [Mass/volume] in Serum or Plasma")
TRIGLYCERIDES = ("2571-8", "Triglyceride [Mass/volume] in Serum or Plasma")
INR = ("6301-6", "INR in Platelet poor plasma by Coagulation assay")
CK = ("2157-6", "Creatine kinase [Enzymatic activity/volume] in Serum or Plasma")
DIGOXIN_LEVEL = ("10535-3", "Digoxin [Mass/volume] in Serum or Plasma")
THEOPHYLLINE_LEVEL = ("4049-7", "Theophylline [Mass/volume] in Serum or Plasma")
SPO2 = ("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry")
FEV1_FVC = ("19926-5", "FEV1/FVC")
PHQ9 = ("44261-6", "Patient Health Questionnaire 9 item (PHQ-9) total score [Reported]")
PHOSPHATE = ("2777-1", "Phosphate [Mass/volume] in Serum or Plasma")
CALCIUM = ("17861-6", "Calcium [Mass/volume] in Serum or Plasma")
PTH = ("2731-8", "Parathyrin.intact [Mass/volume] in Serum or Plasma")
TSH = ("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma")
FT4 = ("3024-7", "Thyroxine (T4) free [Mass/volume] in Serum or Plasma")
VITAMIN_D = ("62292-8", "25-Hydroxyvitamin D2+D3 [Mass/volume] in Serum or Plasma")
MAGNESIUM = ("19123-9", "Magnesium [Mass/volume] in Serum or Plasma")
GLUCOSE = ("2339-0", "Glucose [Mass/volume] in Blood")
CRP = ("1988-5", "C reactive protein [Mass/volume] in Serum or Plasma")
MMSE = ("72106-8", "Total score [MMSE]")
WEIGHT = ("29463-7", "Body weight")
HEART_RATE = ("8867-4", "Heart rate")
HBSAG = ("5196-1", "Hepatitis B virus surface Ag [Presence] in Serum")
HCV_AB = ("16128-1", "Hepatitis C virus Ab [Presence] in Serum")
LMP = ("8665-2", "Last menstrual period start date")
URINE_HCG = ("2106-3", "Choriogonadotropin (pregnancy test) [Presence] in Urine")
ECG = ("11524-6", "EKG study")
CHEST_XRAY = ("36643-5", "XR Chest 2 Views")
URINE_CULTURE = ("630-4", "Bacteria identified in Urine by Culture")

# vaccines (CVX)
FLU_65 = ("205", "influenza, seasonal vaccine, quadrivalent, adjuvanted, 0.5mL dose")
FLU = ("150", "influenza, injectable, quadrivalent, preservative free")
COVID = ("213", "SARS-COV-2 (COVID-19) vaccine, UNSPECIFIED FORMULATION")
PPSV23 = ("33", "pneumococcal polysaccharide vaccine, 23 valent")
ZOSTER_LIVE = ("121", "zoster vaccine, live")
TD = ("139", "Td(adult) unspecified formulation")


class Record(sixth.Record):  # type: ignore[misc,name-defined]
    """The sixth set's builder with this set's namespace and the clinic record's shapes."""

    ns = NS

    def _last(self) -> dict[str, Any]:
        resource: dict[str, Any] = self.entries[-1]["resource"]
        return resource

    def provisional(self, code: tuple[str, str], onset: str, text: str = "") -> str:
        """A suspected Condition (verificationStatus provisional), with a fuller text."""
        rid = str(self.condition(code[0], code[1], onset))
        r = self._last()
        r["verificationStatus"]["coding"][0]["code"] = "provisional"
        if text:
            r["code"]["text"] = text
        return rid

    def problem_text(self, text: str, onset: str, status: str = "active") -> str:
        """A Condition carried by its text alone (no code the author could confirm)."""
        rid = str(self.condition("0", "x", onset, status))
        self._last()["code"] = {"text": text}
        return rid

    def med_text(
        self, text_name: str, authored: str, dose: float, unit: str, text: str, **kw: Any
    ) -> str:
        """A MedicationRequest for a product known only by its name (no RxNorm code)."""
        rid = str(self.rx(("0", "x"), authored, dose, unit, text, **kw))
        self._last()["medicationCodeableConcept"] = {"text": text_name}
        return rid

    def no_dose(self) -> None:
        """The last MedicationRequest states no dose quantity (only its text)."""
        self._last()["dosageInstruction"][0].pop("doseAndRate")

    def status_only(self) -> None:
        """The last MedicationRequest has no statusReason (stopped with no date or reason)."""
        self._last().pop("statusReason", None)

    def coded(
        self, test: tuple[str, str], value: tuple[str, str], when: str, cat: str = "laboratory"
    ) -> str:
        return str(self.coded_obs(test[0], test[1], value, when, cat))

    def text_obs(self, test: tuple[str, str], value: str, when: str, cat: str) -> str:
        return str(
            self._add(
                {
                    "resourceType": "Observation",
                    "status": "final",
                    "category": [{"coding": [{"system": OBSCAT, "code": cat}]}],
                    "code": {
                        "coding": [{"system": LNC, "code": test[0], "display": test[1]}],
                        "text": test[1],
                    },
                    "subject": self.subject,
                    "effectiveDateTime": when,
                    "valueString": value,
                }
            )
        )

    def score(self, test: tuple[str, str], value: float, when: str) -> str:
        return str(self.lab(test[0], test[1], value, "{score}", when, "survey"))

    def postmenopausal(self, when: str, last_period: str) -> None:
        self.coded(("8678-5", "Menstrual status"), POSTMENOPAUSAL, when, "social-history")
        self.last_period(when, last_period)

    def last_period(self, when: str, date: str) -> None:
        self._add(
            {
                "resourceType": "Observation",
                "status": "final",
                "category": [{"coding": [{"system": OBSCAT, "code": "social-history"}]}],
                "code": {
                    "coding": [{"system": LNC, "code": LMP[0], "display": LMP[1]}],
                    "text": LMP[1],
                },
                "subject": self.subject,
                "effectiveDateTime": when,
                "valueDateTime": date,
            }
        )

    def housing(self, when: str, status: tuple[str, str]) -> str:
        return self.coded(("71802-3", "Housing status"), status, when, "social-history")

    def standing_bp(self, when: str, systolic: int, diastolic: int) -> str:
        def comp(code: str, display: str, v: int) -> dict[str, Any]:
            return {
                "code": {"coding": [{"system": LNC, "code": code, "display": display}]},
                "valueQuantity": {"value": v, "unit": "mm[Hg]", "system": UCUM, "code": "mm[Hg]"},
            }

        return str(
            self._add(
                {
                    "resourceType": "Observation",
                    "status": "final",
                    "category": [{"coding": [{"system": OBSCAT, "code": "vital-signs"}]}],
                    "code": {
                        "coding": [
                            {"system": LNC, "code": "85354-9", "display": "Blood pressure panel"}
                        ],
                        "text": "Blood pressure, standing for 3 minutes",
                    },
                    "subject": self.subject,
                    "effectiveDateTime": when,
                    "component": [
                        comp("8460-8", "Systolic blood pressure--standing", systolic),
                        comp("8454-1", "Diastolic blood pressure--standing", diastolic),
                    ],
                }
            )
        )

    def order(
        self,
        when: str,
        text: str,
        *,
        code: tuple[str, str, str] | None = None,
        due: str = "",
        reason: str = "",
    ) -> str:
        """A pending ServiceRequest (status active): a test, a referral or an operation booked;
        ``code`` is (system, code, display)."""
        concept: dict[str, Any] = {"text": text}
        if code is not None:
            concept["coding"] = [{"system": code[0], "code": code[1], "display": code[2]}]
        r: dict[str, Any] = {
            "resourceType": "ServiceRequest",
            "status": "active",
            "intent": "order",
            "code": concept,
            "subject": self.subject,
            "authoredOn": when,
        }
        if due:
            r["occurrenceDateTime"] = due
        if reason:
            r["reasonCode"] = [{"text": reason}]
        return str(self._add(r))

    def report(
        self,
        when: str,
        text: str,
        conclusion: str,
        *,
        code: tuple[str, str] | None = None,
        category: str = "LAB",
    ) -> str:
        """A final DiagnosticReport with its conclusion (LOINC ``code`` when known)."""
        concept: dict[str, Any] = {"text": text}
        if code is not None:
            concept["coding"] = [{"system": LNC, "code": code[0], "display": code[1]}]
        return str(
            self._add(
                {
                    "resourceType": "DiagnosticReport",
                    "status": "final",
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
                    "code": concept,
                    "subject": self.subject,
                    "effectiveDateTime": when,
                    "issued": f"{when}T15:00:00+00:00",
                    "conclusion": conclusion,
                }
            )
        )

    def clinic(
        self, when: str, service: str, reason: tuple[str, str] | None = None, cls: str = "AMB"
    ) -> str:
        """A finished outpatient (or emergency) Encounter with the service that saw them."""
        rid = str(self.encounter(cls, "11429006", "Consultation (procedure)", when, reason))
        self._last()["serviceType"] = {"text": service}
        return rid

    def allergy_text(self, substance: str, reaction: str) -> str:
        rid = str(self.allergy("0", "x"))
        r = self._last()
        r["code"] = {"text": substance}
        r["category"] = ["medication"]
        r["reaction"] = [{"description": reaction, "manifestation": [{"text": reaction}]}]
        return rid

    def family(self, relation: tuple[str, str], condition: tuple[str, str], age: int) -> str:
        return str(
            self._add(
                {
                    "resourceType": "FamilyMemberHistory",
                    "status": "completed",
                    "patient": self.subject,
                    "relationship": {
                        "coding": [
                            {
                                "system": "http://terminology.hl7.org/CodeSystem/v3-RoleCode",
                                "code": relation[0],
                                "display": relation[1],
                            }
                        ]
                    },
                    "condition": [
                        {
                            "code": {
                                "coding": [
                                    {"system": SCT, "code": condition[0], "display": condition[1]}
                                ],
                                "text": condition[1],
                            },
                            "onsetAge": {
                                "value": age,
                                "unit": "a",
                                "system": UCUM,
                                "code": "a",
                            },
                        }
                    ],
                }
            )
        )

    def vacc(self, vaccine: tuple[str, str], when: str) -> str:
        return str(self.vaccine(vaccine[0], vaccine[1], when))


def stopped_for_increase(
    r: Record, drug: tuple[str, str], authored: str, dose: float, unit: str, text: str, **kw: Any
) -> str:
    """The earlier order of a medicine whose dose was later increased: stopped, with its
    reason, and named as the prior prescription of the new order."""
    return str(
        r.rx(
            drug,
            authored,
            dose,
            unit,
            text,
            status="stopped",
            why="replaced by a higher dose of the same medicine",
            **kw,
        )
    )


# --- central nervous system ----------------------------------------------------------------------


def cns_citalopram_hyponatraemia() -> Record:
    """74, depression; citalopram raised from 20 to 40 mg in September (a dose change, not a
    stop), tramadol added in October, indapamide for years; sodium 127 (136 in June) and QTc
    472 ms on an ECG last week, nobody has acted; zopiclone nightly; a fall in November.
    Post-menopausal, never smoked."""
    r = Record("cns_citalopram_hyponatraemia", "Eileen", "Hartley", "female", "1952-03-14")
    r.condition(*DEPRESSION, "2019-05-02")
    r.condition(*KNEE_OA, "2015-09-10")
    r.condition(*INSOMNIA, "2024-02-06")
    r.condition(*HYPERTENSION, "2010-04-21")
    r.condition(*FALL, "2026-11-10")
    old = stopped_for_increase(r, CITALOPRAM, "2019-05-02", 20, "mg", "citalopram 20 mg once daily")
    r.rx(
        CITALOPRAM_40,
        "2026-09-15",
        40,
        "mg",
        "citalopram 40 mg once daily (increased from 20 mg for low mood)",
        prior=old,
    )
    r.rx(
        TRAMADOL_50,
        "2026-10-20",
        100,
        "mg",
        "tramadol 50 mg capsules: 50-100 mg up to four times daily when needed for knee pain",
        times=4,
        prn=True,
    )
    r.med_text("zopiclone 7.5 mg tablets", "2024-02-06", 7.5, "mg", "zopiclone 7.5 mg at night")
    r.rx(AMLODIPINE_5, "2010-04-21", 5, "mg", "amlodipine 5 mg once daily")
    r.rx(INDAPAMIDE, "2010-04-21", 2.5, "mg", "indapamide 2.5 mg once daily")
    r.rx(ACETAMINOPHEN, "2015-09-10", 1000, "mg", "paracetamol 1 g four times daily", times=4)
    r.renal("2026-06-10", 66, 0.86, 4.1, 136)
    r.renal("2026-11-24", 62, 0.9, 3.6, 127)
    r.qtc("2026-11-24", 472)
    r.report(
        "2026-11-24",
        "12-lead ECG",
        "Sinus rhythm 72/min. QTc 472 ms (borderline prolonged). No acute changes.",
        code=ECG,
        category="EC",
    )
    r.bp(VISIT, 138, 78)
    r.vitals(VISIT, 64.0, 160.0, 72)
    r.smoking(VISIT, NEVER_SMOKER)
    r.postmenopausal(VISIT, "2003-06-01")
    r.vacc(FLU_65, "2026-10-12")
    return r


# --- ear, nose and oropharynx --------------------------------------------------------------------


def ent_epistaxis_warfarin() -> Record:
    """77, AF on warfarin; clarithromycin for sinusitis started 27 November; nosebleeds since
    26 November and INR 4.6 on 30 November, not acted on; pseudoephedrine bought for his
    sinuses with BP 168/96; gentamicin-hydrocortisone ear drops into an ear with a known
    perforated eardrum. Already under ENT. Ex-smoker."""
    r = Record("ent_epistaxis_warfarin", "Harold", "Jennings", "male", "1949-06-20")
    r.condition(*AF, "2018-03-12")
    r.condition(*HYPERTENSION, "2009-11-02")
    r.condition(*CHRONIC_SINUSITIS, "2021-01-19")
    r.condition(*TM_PERFORATION, "2025-03-04")
    r.condition(*EPISTAXIS, "2026-11-26")
    r.rx(WARFARIN, "2018-03-12", 3, "mg", "warfarin 3 mg once daily (INR target 2.0-3.0)")
    r.rx(
        CLARITHROMYCIN_500,
        "2026-11-27",
        500,
        "mg",
        "clarithromycin 500 mg twice daily for 7 days (acute sinusitis)",
        times=2,
        course="acute",
        bounds=("2026-11-27", "2026-12-03"),
    )
    r.rx(
        PSEUDOEPHEDRINE,
        "2026-11-20",
        60,
        "mg",
        "pseudoephedrine 60 mg up to four times daily (bought over the counter)",
        times=4,
    )
    r.med_text(
        "gentamicin 0.3% / hydrocortisone 1% ear drops",
        "2026-11-18",
        3,
        "{drop}",
        "gentamicin 0.3% / hydrocortisone 1% ear drops: 3 drops into the right ear three times "
        "daily for discharge",
        times=3,
        route=OTIC,
    )
    r.rx(AMLODIPINE, "2009-11-02", 10, "mg", "amlodipine 10 mg once daily")
    r.rx(RAMIPRIL, "2012-05-14", 10, "mg", "ramipril 10 mg once daily")
    r.rx(BISOPROLOL_5, "2018-03-12", 5, "mg", "bisoprolol 5 mg once daily")
    r.clinic("2026-10-06", "Otolaryngology (ENT) outpatient clinic", TM_PERFORATION)
    r.report(
        "2026-10-06",
        "Pure tone audiogram",
        "Right conductive hearing loss, 35 dB. Known right tympanic membrane perforation, "
        "under ENT follow-up; review in 6 months.",
        category="OTH",
    )
    r.obs(INR, 2.6, "{INR}", "2026-10-28")
    r.obs(INR, 4.6, "{INR}", "2026-11-30")
    r.obs(HB, 12.9, "g/dL", "2026-11-30")
    r.renal("2026-11-30", 58, 1.2, 4.5, 139)
    r.bp(VISIT, 168, 96)
    r.vitals(VISIT, 82.0, 176.0, 68)
    r.smoking(VISIT, FORMER_SMOKER)
    r.vacc(FLU_65, "2026-10-05")
    return r


# --- nutrition and blood -------------------------------------------------------------------------


def blood_alcohol_macrocytosis_homeless() -> Record:
    """28, alcohol dependence, sleeping rough since June; macrocytic anaemia with low folate
    (B12 normal, measured); GGT 310, AST 164; thiamine stopped with no date or reason while he
    still drinks; folic acid started; hepatitis C antibody requested and not back; smokes."""
    r = Record("blood_alcohol_macrocytosis_homeless", "Ryan", "Doherty", "male", "1998-05-09")
    r.condition(*ALCOHOLISM, "2024-08-14")
    r.condition(*HOMELESS, "2026-06-01")
    r.condition(*FOLATE_ANAEMIA, "2026-11-10")
    r.rx(FOLIC_ACID, "2026-11-10", 5, "mg", "folic acid 5 mg once daily for 4 months")
    r.rx(
        CHLORDIAZEPOXIDE,
        "2026-11-01",
        20,
        "mg",
        "chlordiazepoxide reducing regimen over 7 days (community detoxification)",
        times=4,
        status="completed",
        course="acute",
        bounds=("2026-11-01", "2026-11-07"),
    )
    r.rx(
        THIAMINE,
        "2026-11-01",
        100,
        "mg",
        "thiamine 100 mg three times daily",
        times=3,
        status="stopped",
    )
    r.lab(HB[0], HB[1], 11.1, "g/dL", "2026-11-10")
    r.obs(MCV, 108, "fL", "2026-11-10")
    r.lab(
        "6690-2", "Leukocytes [#/volume] in Blood by Automated count", 5.2, "10*3/uL", "2026-11-10"
    )
    r.lab("777-3", "Platelets [#/volume] in Blood by Automated count", 132, "10*3/uL", "2026-11-10")
    r.obs(FOLATE, 2.1, "ng/mL", "2026-11-10")
    r.obs(B12, 412, "pg/mL", "2026-11-10")
    r.obs(GGT, 310, "U/L", "2026-11-10")
    r.obs(ALT, 88, "U/L", "2026-11-10")
    r.obs(AST, 164, "U/L", "2026-11-10")
    r.obs(BILIRUBIN, 1.4, "mg/dL", "2026-11-10")
    r.obs(ALBUMIN, 3.4, "g/dL", "2026-11-10")
    r.renal("2026-11-10", 118, 0.8, 3.9, 137)
    r.score(AUDIT_C, 11, "2026-11-10")
    r.housing("2026-11-10", HOMELESS)
    r.order(
        "2026-11-10",
        "Hepatitis C virus antibody",
        code=(LNC, HCV_AB[0], HCV_AB[1]),
        reason="alcohol dependence, past injecting drug use",
    )
    r.smoking("2026-11-10", CURRENT_SMOKER)
    r.vitals("2026-11-10", 58.0, 178.0, 96)
    r.bp("2026-11-10", 128, 82)
    return r


# --- skin ----------------------------------------------------------------------------------------


def skin_methotrexate_trimethoprim() -> Record:
    """76, psoriasis on methotrexate (raised from 10 to 15 mg weekly in August by
    dermatology) with weekly folic acid; trimethoprim for a UTI since 27 November; eGFR 46 ->
    38; white cells 3.1 and neutrophils 1.4 (6.2 in August). Never smoked."""
    r = Record("skin_methotrexate_trimethoprim", "Gordon", "Fairweather", "male", "1950-02-02")
    r.condition(*PSORIASIS, "2008-05-19")
    r.condition(*CKD3, "2023-02-07")
    r.condition(*HYPERTENSION, "2011-06-14")
    r.condition(*UTI, "2026-11-27")
    old = stopped_for_increase(
        r,
        METHOTREXATE_25,
        "2022-03-01",
        10,
        "mg",
        "methotrexate 10 mg once weekly on Mondays",
        period="wk",
    )
    r.rx(
        METHOTREXATE_25,
        "2026-08-12",
        15,
        "mg",
        "methotrexate 15 mg (six 2.5 mg tablets) once weekly on Mondays",
        period="wk",
        prior=old,
    )
    r.rx(FOLIC_ACID, "2022-03-01", 5, "mg", "folic acid 5 mg once weekly on Thursdays", period="wk")
    r.rx(
        TRIMETHOPRIM,
        "2026-11-27",
        200,
        "mg",
        "trimethoprim 200 mg twice daily for 7 days",
        times=2,
        course="acute",
        bounds=("2026-11-27", "2026-12-03"),
    )
    r.rx(RAMIPRIL_5, "2011-06-14", 5, "mg", "ramipril 5 mg once daily")
    r.rx(AMLODIPINE_5, "2011-06-14", 5, "mg", "amlodipine 5 mg once daily")
    r.med_text(
        "emollient cream (Epaderm)",
        "2008-05-19",
        1,
        "{application}",
        "apply to the skin as often as needed",
        route=TOPICAL,
    )
    r.no_dose()
    r.clinic("2026-08-12", "Dermatology outpatient clinic (methotrexate shared care)", PSORIASIS)
    r.blood_count("2026-08-05", 13.4, 6.2, 221)
    r.renal("2026-08-05", 46, 1.5, 4.6, 139)
    r.blood_count("2026-11-20", 12.6, 3.1, 142)
    r.obs(NEUTROPHILS, 1.4, "10*3/uL", "2026-11-20")
    r.obs(ALT, 38, "U/L", "2026-11-20")
    r.renal("2026-11-20", 38, 1.75, 4.9, 138)
    r.report(
        "2026-11-28",
        "Urine culture",
        "Escherichia coli >10^5 CFU/mL, sensitive to nitrofurantoin, cefalexin and "
        "pivmecillinam; resistant to amoxicillin.",
        code=URINE_CULTURE,
        category="MB",
    )
    r.bp(VISIT, 134, 80)
    r.vitals(VISIT, 81.0, 175.0, 76)
    r.smoking(VISIT, NEVER_SMOKER)
    r.vacc(FLU_65, "2026-10-08")
    return r


# --- vaccines ------------------------------------------------------------------------------------


def vaccines_copd_steroid() -> Record:
    """68, COPD, smokes; on prednisolone 10 mg daily since July with no plan to stop and no bone
    protection; influenza vaccine given in October; no pneumococcal or shingles vaccine on
    record; HbA1c measured (6.4 %)."""
    r = Record("vaccines_copd_steroid", "Brian", "Kettle", "male", "1958-04-11")
    r.condition(*COPD, "2017-01-23")
    r.rx(
        TIOTROPIUM,
        "2017-01-23",
        18,
        "ug",
        "tiotropium 18 micrograms inhalation capsule, one inhaled once daily",
        route=INHALED,
    )
    r.rx(
        FLUTICASONE,
        "2019-03-05",
        500,
        "ug",
        "fluticasone propionate 500 micrograms / salmeterol 50 micrograms dry powder inhaler: "
        "one inhalation twice daily",
        times=2,
        route=INHALED,
    )
    r.rx(
        ALBUTEROL_MDI,
        "2017-01-23",
        2,
        "{puff}",
        "salbutamol 100 micrograms, 2 puffs when needed",
        route=INHALED,
        prn=True,
    )
    r.rx(
        PREDNISOLONE_5,
        "2026-07-20",
        10,
        "mg",
        "prednisolone 10 mg (two 5 mg tablets) each morning, continued after an exacerbation",
    )
    r.obs(FEV1_FVC, 52, "%", "2026-07-30")
    r.obs(HBA1C, 6.4, "%", "2026-09-14")
    r.renal("2026-09-14", 79, 0.98, 4.2, 140)
    r.blood_count("2026-09-14", 15.4, 10.8, 262)
    r.smoking(VISIT, CURRENT_SMOKER)
    r.obs(SPO2, 94, "%", VISIT)
    r.bp(VISIT, 132, 80)
    r.vitals(VISIT, 74.0, 174.0, 84)
    r.vacc(FLU_65, "2026-10-15")
    r.vacc(COVID, "2025-10-20")
    return r


# --- endocrine -----------------------------------------------------------------------------------


def endo_t2dm_ckd4_metformin() -> Record:
    """53, type 2 diabetes; metformin 2 g a day with eGFR 28 (36 in June); gliclazide raised
    from 80 to 160 mg twice daily in June; urine albumin-creatinine 420 mg/g and BP 152/92 with
    no ACE inhibitor or ARB; no statin, LDL 148 mg/dL. Never smoked."""
    r = Record("endo_t2dm_ckd4_metformin", "Imran", "Qureshi", "male", "1973-07-30")
    r.condition(*DIABETES2, "2012-02-14")
    r.condition(*HYPERTENSION, "2015-05-06")
    r.condition(*CKD4, "2026-11-25")
    r.rx(METFORMIN_1000, "2013-01-08", 1000, "mg", "metformin 1 g twice daily", times=2)
    old = stopped_for_increase(
        r, GLICLAZIDE, "2016-04-12", 80, "mg", "gliclazide 80 mg twice daily", times=2
    )
    r.rx(GLICLAZIDE, "2026-06-01", 160, "mg", "gliclazide 160 mg twice daily", times=2, prior=old)
    r.rx(EMPAGLIFLOZIN, "2024-03-19", 10, "mg", "empagliflozin 10 mg once daily")
    r.rx(AMLODIPINE, "2015-05-06", 10, "mg", "amlodipine 10 mg once daily")
    r.renal("2026-06-01", 36, 2.1, 4.8, 139)
    r.obs(HBA1C, 8.1, "%", "2026-06-01")
    r.renal("2026-11-25", 28, 2.6, 5.1, 138)
    r.obs(HBA1C, 8.9, "%", "2026-11-25")
    r.obs(UACR, 420, "mg/g", "2026-11-25")
    r.obs(CHOLESTEROL, 232, "mg/dL", "2026-11-25")
    r.obs(LDL, 148, "mg/dL", "2026-11-25")
    r.bp(VISIT, 152, 92)
    r.vitals(VISIT, 96.0, 176.0, 80)
    r.smoking(VISIT, NEVER_SMOKER)
    r.vacc(FLU, "2026-10-09")
    return r


# --- obstetrics, gynaecology and urinary tract ---------------------------------------------------


def uro_oxybutynin_dementia() -> Record:
    """88, Alzheimer's disease on donepezil, lives alone; oxybutynin for urge incontinence;
    nitrofurantoin prophylaxis at night for nearly three years with eGFR 38; a fall on
    5 November and a 20 mmHg drop on standing; solifenacin stopped long ago (no date, no
    reason); a urine culture this month showed no significant growth. Post-menopausal."""
    r = Record("uro_oxybutynin_dementia", "Winifred", "Lowe", "female", "1938-09-18")
    r.condition(*ALZHEIMER, "2023-04-17")
    r.condition(*URGE_INCONTINENCE, "2020-07-09")
    r.condition(*RECURRENT_UTI, "2023-12-11")
    r.condition(*LIVES_ALONE, "2018-02-01")
    r.condition(*OSTEOPOROSIS, "2019-10-03")
    r.condition(*HYPERTENSION, "2002-05-22")
    r.condition(*FALL, "2026-11-05")
    r.rx(("0", "x"), "2020-07-09", 5, "mg", "solifenacin 5 mg once daily", status="stopped")
    r._last()["medicationCodeableConcept"] = {"text": "solifenacin 5 mg tablets"}
    r.rx(OXYBUTYNIN_5, "2021-03-15", 5, "mg", "oxybutynin 5 mg three times daily", times=3)
    r.rx(DONEPEZIL_10, "2023-06-01", 10, "mg", "donepezil 10 mg at night")
    r.rx(
        NITROFURANTOIN_50,
        "2024-01-08",
        50,
        "mg",
        "nitrofurantoin 50 mg at night (prophylaxis of recurrent UTI)",
    )
    r.rx(ALENDRONATE, "2019-10-03", 70, "mg", "alendronic acid 70 mg once weekly", period="wk")
    r.rx(AMLODIPINE_5, "2002-05-22", 5, "mg", "amlodipine 5 mg once daily")
    r.score(MMSE, 19, "2026-09-08")
    r.renal("2026-11-12", 38, 1.3, 4.4, 138)
    r.obs(ALT, 22, "U/L", "2026-11-12")
    r.report(
        "2026-11-14",
        "Urine culture",
        "Mixed growth of doubtful significance; no significant bacteriuria.",
        code=URINE_CULTURE,
        category="MB",
    )
    r.bp(VISIT, 132, 74)
    r.standing_bp(VISIT, 112, 66)
    r.vitals(VISIT, 52.0, 155.0, 70)
    r.postmenopausal(VISIT, "1988-01-01")
    r.vacc(FLU_65, "2026-10-01")
    return r


# --- anaesthesia ---------------------------------------------------------------------------------


def anaes_preop_sglt2_osa() -> Record:
    """53, pre-operative assessment before a laparoscopic cholecystectomy on 14 December; on
    dapagliflozin and metformin, HbA1c 8.9 %; BMI 42, suspected sleep apnoea with a sleep study
    requested in October and not done; prolonged apnoea after suxamethonium in 2009; omeprazole
    with no dose stated. Post-menopausal, never smoked."""
    r = Record("anaes_preop_sglt2_osa", "Sandra", "Whitcombe", "female", "1973-04-22")
    r.condition(*GALLSTONES, "2026-08-18")
    r.condition(*DIABETES2, "2019-03-11")
    r.condition(*MORBID_OBESITY, "2019-03-11")
    r.condition(*HYPERTENSION, "2019-03-11")
    r.provisional(
        OSA, "2026-10-14", "Suspected obstructive sleep apnoea (STOP-BANG 6, awaiting sleep study)"
    )
    r.rx(METFORMIN_1000, "2019-03-11", 1000, "mg", "metformin 1 g twice daily", times=2)
    r.rx(DAPAGLIFLOZIN, "2024-02-20", 10, "mg", "dapagliflozin 10 mg once daily")
    r.rx(LISINOPRIL_20, "2019-03-11", 20, "mg", "lisinopril 20 mg once daily")
    r.rx(ATORVASTATIN_20, "2020-01-15", 20, "mg", "atorvastatin 20 mg at night")
    r.rx(OMEPRAZOLE, "2026-08-18", 1, "{capsule}", "omeprazole capsules, as directed")
    r.no_dose()
    r.allergy_text(
        "Suxamethonium",
        "prolonged apnoea after general anaesthesia in 2009 (suspected "
        "butyrylcholinesterase deficiency)",
    )
    r.order(
        "2026-10-14",
        "Polysomnography (sleep study)",
        code=(SCT, "60554003", "Polysomnography (procedure)"),
        reason="suspected obstructive sleep apnoea before surgery",
    )
    r.order(
        "2026-09-02",
        "Laparoscopic cholecystectomy",
        code=(SCT, "45595009", "Laparoscopic cholecystectomy (procedure)"),
        due="2026-12-14",
        reason="symptomatic gallstones",
    )
    r.clinic(VISIT, "Pre-operative assessment clinic")
    r.obs(HBA1C, 8.9, "%", "2026-11-24")
    r.renal("2026-11-24", 78, 0.9, 4.3, 139)
    r.blood_count("2026-11-24", 13.1, 7.9, 288)
    r.report(
        "2026-11-24", "12-lead ECG", "Sinus rhythm 84/min, normal ECG.", code=ECG, category="EC"
    )
    r.bp(VISIT, 146, 88)
    r.vitals(VISIT, 112.0, 163.0, 84)
    r.smoking(VISIT, NEVER_SMOKER)
    r.postmenopausal(VISIT, "2024-03-01")
    return r


# --- vaccines ------------------------------------------------------------------------------------


def vacc_asplenia_clarithro_simva() -> Record:
    """73, splenectomy after a road accident in September; allergic to penicillin, so on
    clarithromycin prophylaxis since 15 September beside simvastatin 40 mg; muscle pain and CK
    640; no pneumococcal, meningococcal or Hib vaccine since the splenectomy; influenza and
    COVID vaccines given in October."""
    r = Record("vacc_asplenia_clarithro_simva", "Kenneth", "Abara", "male", "1953-05-27")
    r.procedure(SPLENECTOMY, "2026-09-08")
    r.problem_text("Absence of spleen after splenectomy (traumatic splenic rupture)", "2026-09-08")
    r.condition(*HYPERLIPIDAEMIA, "2014-02-11")
    r.condition(*HYPERTENSION, "2014-02-11")
    r.condition(*MYALGIA, "2026-11-10")
    r.allergy("91936005", "Allergy to penicillin")
    r.rx(
        CLARITHROMYCIN,
        "2026-09-15",
        250,
        "mg",
        "clarithromycin 250 mg twice daily, long-term prophylaxis after splenectomy "
        "(penicillin allergy)",
        times=2,
    )
    r.rx(SIMVASTATIN, "2014-02-11", 40, "mg", "simvastatin 40 mg at night")
    r.rx(AMLODIPINE, "2014-02-11", 10, "mg", "amlodipine 10 mg once daily")
    r.obs(CK, 640, "U/L", "2026-11-20")
    r.obs(ALT, 34, "U/L", "2026-11-20")
    r.renal("2026-11-20", 74, 1.0, 4.3, 140)
    r.blood_count("2026-11-20", 14.1, 8.8, 520)
    r.obs(LDL, 88, "mg/dL", "2026-03-10")
    r.bp(VISIT, 136, 82)
    r.vitals(VISIT, 84.0, 178.0, 74)
    r.smoking(VISIT, FORMER_SMOKER)
    r.vacc(TD, "2026-09-08")
    r.vacc(FLU_65, "2026-10-10")
    r.vacc(COVID, "2026-10-10")
    return r


def vacc_elderly_hf_digoxin() -> Record:
    """82, heart failure and AF; digoxin 250 micrograms with amiodarone added in November,
    digoxin level 2.4 ng/mL and potassium 3.4; apixaban 5 mg twice daily at 82 years, 58 kg and
    creatinine 1.6; no influenza vaccine this season; pneumococcal vaccine given in 2019."""
    r = Record("vacc_elderly_hf_digoxin", "Albert", "Fenwick", "male", "1944-03-03")
    r.condition(*HEART_FAILURE, "2019-05-14")
    r.condition(*AF, "2019-05-14")
    r.condition(*DIABETES2, "2010-09-27")
    r.condition(*CKD3, "2022-04-05")
    r.rx(DIGOXIN, "2019-05-14", 250, "ug", "digoxin 250 micrograms once daily")
    r.rx(
        AMIODARONE_200,
        "2026-11-02",
        200,
        "mg",
        "amiodarone 200 mg once daily (after a loading week), started by cardiology",
    )
    r.rx(APIXABAN_5, "2019-05-14", 5, "mg", "apixaban 5 mg twice daily", times=2)
    r.rx(FUROSEMIDE_40, "2019-05-14", 40, "mg", "furosemide 40 mg each morning")
    r.rx(BISOPROLOL_25, "2019-06-11", 2.5, "mg", "bisoprolol 2.5 mg once daily")
    r.rx(METFORMIN_500, "2010-09-27", 500, "mg", "metformin 500 mg twice daily", times=2)
    r.obs(DIGOXIN_LEVEL, 2.4, "ng/mL", "2026-11-28")
    r.renal("2026-11-28", 36, 1.6, 3.4, 137)
    r.obs(HBA1C, 7.1, "%", "2026-11-28")
    r.weight(58.0, "2026-11-28")
    r.bp(VISIT, 118, 70)
    r.obs(HEART_RATE, 52, "/min", VISIT)
    r.smoking(VISIT, FORMER_SMOKER)
    r.vacc(ZOSTER_LIVE, "2015-11-02")
    r.vacc(PPSV23, "2019-10-10")
    r.vacc(FLU_65, "2025-10-08")
    r.vacc(COVID, "2025-10-08")
    return r


# --- musculoskeletal and joint -------------------------------------------------------------------


def msk_axspa_adalimumab_naproxen() -> Record:
    """22, ankylosing spondylitis under rheumatology; adalimumab raised from every two weeks to
    weekly in September (a dose change); naproxen twice daily for two years with no PPI;
    indigestion since November and haemoglobin 14.8 -> 12.1 with ferritin 14; a yellow fever
    vaccination booked for travel on 10 December; TB screen (negative) and hepatitis B surface
    antigen (negative) on record; smokes."""
    r = Record("msk_axspa_adalimumab_naproxen", "Callum", "Reid", "male", "2004-01-15")
    r.condition(*ANKYLOSING_SPONDYLITIS, "2024-05-06")
    r.condition(*DYSPEPSIA, "2026-11-20")
    old = stopped_for_increase(
        r,
        ADALIMUMAB,
        "2025-03-01",
        40,
        "mg",
        "adalimumab 40 mg subcutaneously every 2 weeks",
        period="wk",
        route=SUBCUT,
    )
    r._last()["dosageInstruction"][0]["timing"]["repeat"]["period"] = 2
    r.rx(
        ADALIMUMAB,
        "2026-09-20",
        40,
        "mg",
        "adalimumab 40 mg subcutaneously once weekly (increased by rheumatology)",
        period="wk",
        route=SUBCUT,
        prior=old,
    )
    r.rx(NAPROXEN_500, "2024-05-06", 500, "mg", "naproxen 500 mg twice daily", times=2)
    r.clinic("2026-09-20", "Rheumatology outpatient clinic", ANKYLOSING_SPONDYLITIS)
    r.report(
        "2025-02-10",
        "Interferon-gamma release assay for tuberculosis (QuantiFERON-TB Gold Plus)",
        "Negative. No evidence of latent tuberculosis infection.",
    )
    r.coded(HBSAG, NEGATIVE, "2025-02-10")
    r.order(
        "2026-11-25",
        "Yellow fever vaccination (travel clinic)",
        due="2026-12-10",
        reason="travel to Ghana in January",
    )
    r.blood_count("2026-06-10", 14.8, 6.9, 301)
    r.blood_count("2026-11-25", 12.1, 7.4, 388)
    r.obs(MCV, 79, "fL", "2026-11-25")
    r.obs(FERRITIN, 14, "ng/mL", "2026-11-25")
    r.obs(CRP, 0.9, "mg/dL", "2026-11-25")
    r.obs(ALT, 24, "U/L", "2026-11-25")
    r.renal("2026-11-25", 124, 0.85, 4.2, 140)
    r.bp(VISIT, 122, 74)
    r.vitals(VISIT, 72.0, 181.0, 74)
    r.smoking(VISIT, CURRENT_SMOKER)
    return r


# --- respiratory ---------------------------------------------------------------------------------


def resp_copd_theophylline_cipro_oxygen() -> Record:
    """75, COPD on home oxygen, lives alone and still smokes; theophylline (level 12 mg/L in
    June, in range); ciprofloxacin and prednisolone for an exacerbation since 28 November;
    SpO2 88 %; no pulmonary rehabilitation on record; influenza vaccine given."""
    r = Record("resp_copd_theophylline_cipro_oxygen", "Dennis", "Marlow", "male", "1951-08-08")
    r.condition(*COPD, "2012-10-02")
    r.problem_text(
        "Chronic hypoxaemic respiratory failure on long-term oxygen therapy", "2024-06-12"
    )
    r.condition(*LIVES_ALONE, "2020-01-15")
    r.condition(*COPD_EXACERBATION, "2026-11-28")
    r.rx(
        THEOPHYLLINE,
        "2020-03-04",
        400,
        "mg",
        "theophylline modified-release 400 mg twice daily",
        times=2,
    )
    r.rx(
        CIPROFLOXACIN,
        "2026-11-28",
        500,
        "mg",
        "ciprofloxacin 500 mg twice daily for 5 days",
        times=2,
        course="acute",
        bounds=("2026-11-28", "2026-12-02"),
    )
    r.rx(
        PREDNISOLONE_5,
        "2026-11-28",
        30,
        "mg",
        "prednisolone 30 mg each morning for 5 days",
        course="acute",
        bounds=("2026-11-28", "2026-12-02"),
    )
    r.rx(
        TIOTROPIUM,
        "2012-10-02",
        18,
        "ug",
        "tiotropium 18 micrograms inhalation capsule, one inhaled once daily",
        route=INHALED,
    )
    r.rx(
        BUDESONIDE,
        "2016-05-10",
        400,
        "ug",
        "budesonide 200 micrograms / formoterol 6 micrograms inhaler: 2 inhalations twice daily",
        times=2,
        route=INHALED,
    )
    r.rx(
        ALBUTEROL_MDI,
        "2012-10-02",
        2,
        "{puff}",
        "salbutamol 100 micrograms, 2 puffs when needed",
        route=INHALED,
        prn=True,
    )
    r.rx(
        OXYGEN,
        "2024-06-12",
        2,
        "L/min",
        "oxygen 2 litres/minute by nasal cannula for at least 15 hours a day",
        route=NASAL,
    )
    r.obs(THEOPHYLLINE_LEVEL, 12, "ug/mL", "2026-06-15")
    r.report(
        "2026-11-28",
        "Chest X-ray",
        "Hyperinflated lungs. No consolidation, effusion or pneumothorax.",
        code=CHEST_XRAY,
        category="RAD",
    )
    r.renal("2026-11-28", 71, 1.0, 4.1, 139)
    r.blood_count("2026-11-28", 16.2, 11.9, 244)
    r.obs(SPO2, 88, "%", VISIT)
    r.bp(VISIT, 138, 84)
    r.vitals(VISIT, 61.0, 170.0, 104)
    r.smoking(VISIT, CURRENT_SMOKER)
    r.vacc(PPSV23, "2017-10-11")
    r.vacc(FLU_65, "2026-10-07")
    return r


# --- central nervous system ----------------------------------------------------------------------


def cns_opioid_pregabalin_benzo() -> Record:
    """57, chronic low back pain; morphine MR raised from 30 to 60 mg twice daily in September
    (a dose change), pregabalin 300 mg twice daily with eGFR 48, diazepam three times daily;
    sleep apnoea on CPAP; an emergency visit for drowsiness and a fall on 14 November; no
    naloxone; PHQ-9 17 with nothing done. Never smoked."""
    r = Record("cns_opioid_pregabalin_benzo", "Martin", "Sayer", "male", "1969-10-04")
    r.condition(*LOW_BACK_PAIN, "2018-02-20")
    r.condition(*OSA, "2022-06-08")
    r.condition(*DEPRESSION, "2026-11-20")
    r.condition(*FALL, "2026-11-14")
    old = stopped_for_increase(
        r,
        MORPHINE,
        "2023-01-16",
        30,
        "mg",
        "morphine sulfate modified-release 30 mg twice daily",
        times=2,
    )
    r.rx(
        MORPHINE,
        "2026-09-01",
        60,
        "mg",
        "morphine sulfate modified-release 60 mg twice daily",
        times=2,
        prior=old,
    )
    r.rx(PREGABALIN, "2022-04-05", 300, "mg", "pregabalin 300 mg twice daily", times=2)
    r.rx(DIAZEPAM_5, "2024-07-01", 5, "mg", "diazepam 5 mg three times daily", times=3)
    r.rx(ACETAMINOPHEN, "2018-02-20", 1000, "mg", "paracetamol 1 g four times daily", times=4)
    r.clinic("2026-11-14", "Emergency department", ("271782001", "Drowsy (finding)"), cls="EMER")
    r.renal("2026-11-14", 48, 1.65, 4.4, 139)
    r.score(PHQ9, 17, "2026-11-20")
    r.obs(SPO2, 93, "%", VISIT)
    r.bp(VISIT, 128, 80)
    r.vitals(VISIT, 98.0, 180.0, 66)
    r.smoking(VISIT, NEVER_SMOKER)
    return r


# --- nutrition and blood -------------------------------------------------------------------------


def blood_dialysis_esa_gabapentin() -> Record:
    """65, end-stage kidney disease on haemodialysis three times a week since January 2024,
    under the renal unit; darbepoetin with haemoglobin 13.4; gabapentin 300 mg three times daily
    started by the GP in August for itch, drowsy since November; phosphate 6.8 mg/dL. Ex-smoker."""
    r = Record("blood_dialysis_esa_gabapentin", "Desmond", "Achebe", "male", "1961-02-19")
    r.condition(*ESRD, "2023-06-12")
    r.condition(*DIALYSIS, "2024-01-15")
    r.condition(*DIABETES2, "2005-03-08")
    r.condition(*ANAEMIA, "2023-06-12")
    r.condition(*HYPERTENSION, "2005-03-08")
    r.condition(*PRURITUS, "2026-08-10")
    r.condition(*DROWSINESS, "2026-11-10")
    r.rx(
        DARBEPOETIN,
        "2025-01-20",
        60,
        "ug",
        "darbepoetin alfa 60 micrograms subcutaneously once weekly (given at dialysis)",
        period="wk",
        route=SUBCUT,
    )
    r.med_text(
        "sevelamer carbonate 800 mg tablets",
        "2024-01-15",
        1600,
        "mg",
        "sevelamer carbonate 1.6 g three times daily with meals",
        times=3,
    )
    r.med_text(
        "alfacalcidol 0.5 microgram capsules",
        "2024-01-15",
        0.5,
        "ug",
        "alfacalcidol 0.5 micrograms once daily",
    )
    r.rx(
        GABAPENTIN, "2026-08-20", 300, "mg", "gabapentin 300 mg three times daily for itch", times=3
    )
    r.rx(
        INSULIN_GLARGINE,
        "2019-04-02",
        14,
        "[iU]",
        "insulin glargine 14 units at night",
        route=SUBCUT,
    )
    r.rx(AMLODIPINE, "2005-03-08", 10, "mg", "amlodipine 10 mg once daily")
    r.clinic("2026-11-27", "Renal dialysis unit (haemodialysis, Mon/Wed/Fri)", DIALYSIS)
    r.obs(HB, 13.4, "g/dL", "2026-11-24")
    r.obs(HB, 12.1, "g/dL", "2026-09-22")
    r.renal("2026-11-24", 7, 7.8, 5.9, 136)
    r.obs(PHOSPHATE, 6.8, "mg/dL", "2026-11-24")
    r.obs(CALCIUM, 9.1, "mg/dL", "2026-11-24")
    r.obs(PTH, 610, "pg/mL", "2026-11-24")
    r.obs(HBA1C, 7.2, "%", "2026-11-24")
    r.bp(VISIT, 144, 84)
    r.vitals(VISIT, 78.0, 177.0, 78)
    r.smoking(VISIT, FORMER_SMOKER)
    r.vacc(FLU, "2026-10-14")
    return r


# --- endocrine -----------------------------------------------------------------------------------


def endo_graves_carbimazole_preconception() -> Record:
    """30, Graves' disease on carbimazole since March, and wants to become pregnant: the
    combined pill stopped in September; propranolol three times daily with asthma; no folic
    acid; a urine pregnancy test on 30 November was negative; TSH suppressed, free T4 normal.
    Never smoked."""
    r = Record("endo_graves_carbimazole_preconception", "Leah", "Brennan", "female", "1996-06-12")
    r.condition(*GRAVES, "2026-03-09")
    r.condition(*ASTHMA, "2005-09-01")
    r.med_text("carbimazole 20 mg tablets", "2026-03-09", 20, "mg", "carbimazole 20 mg once daily")
    r.rx(
        PROPRANOLOL_40,
        "2026-03-09",
        40,
        "mg",
        "propranolol 40 mg three times daily for palpitations and tremor",
        times=3,
    )
    r.rx(
        BUDESONIDE,
        "2005-09-01",
        200,
        "ug",
        "budesonide 200 micrograms inhaler, 1 inhalation twice daily",
        times=2,
        route=INHALED,
    )
    r.rx(
        ALBUTEROL_MDI,
        "2005-09-01",
        2,
        "{puff}",
        "salbutamol 100 micrograms, 2 puffs when needed",
        route=INHALED,
        prn=True,
    )
    r.rx(
        COMBINED_PILL,
        "2021-02-01",
        1,
        "{tablet}",
        "levonorgestrel 150 micrograms / ethinylestradiol 30 micrograms, one daily",
        status="stopped",
        why="stopped in September 2026: wishes to conceive",
    )
    r.text_obs(
        ("86645-9", "Pregnancy intention in the next year - Reported"),
        "Yes, wants to become pregnant",
        "2026-11-20",
        "social-history",
    )
    r.last_period("2026-11-20", "2026-11-16")
    r.coded(URINE_HCG, NEGATIVE, "2026-11-30")
    r.obs(TSH, 0.01, "m[IU]/L", "2026-11-20")
    r.obs(FT4, 1.4, "ng/dL", "2026-11-20")
    r.blood_count("2026-11-20", 13.2, 5.8, 260)
    r.obs(NEUTROPHILS, 2.8, "10*3/uL", "2026-11-20")
    r.bp(VISIT, 118, 72)
    r.vitals(VISIT, 61.0, 167.0, 70)
    r.smoking(VISIT, NEVER_SMOKER)
    return r


# --- cardiovascular ------------------------------------------------------------------------------


def cv_verapamil_bisoprolol_bradycardia() -> Record:
    """75, angina and hypertension; verapamil added at the cardiology clinic in October beside
    bisoprolol, heart rate 46 and first-degree heart block; ramipril raised from 5 to 10 mg in
    June (a dose change); bendroflumethiazide on hold since 20 November for sodium 129, no
    sodium since; a 26 mmHg drop on standing and a fall. Post-menopausal, never smoked."""
    r = Record(
        "cv_verapamil_bisoprolol_bradycardia", "Patricia", "Holloway", "female", "1951-01-27"
    )
    r.condition(*HYPERTENSION, "2005-08-16")
    r.condition(*ANGINA, "2020-02-11")
    r.condition(*GOUT, "2018-09-04")
    r.condition(*FALL, "2026-11-18")
    r.rx(
        VERAPAMIL,
        "2026-10-25",
        240,
        "mg",
        "verapamil modified-release 240 mg once daily (added for angina)",
    )
    r.rx(BISOPROLOL_5, "2020-02-11", 5, "mg", "bisoprolol 5 mg once daily")
    old = stopped_for_increase(r, RAMIPRIL_5, "2015-03-10", 5, "mg", "ramipril 5 mg once daily")
    r.rx(RAMIPRIL, "2026-06-15", 10, "mg", "ramipril 10 mg once daily", prior=old)
    r.rx(
        BENDROFLUMETHIAZIDE,
        "2005-08-16",
        2.5,
        "mg",
        "bendroflumethiazide 2.5 mg each morning",
        status="on-hold",
        why="held on 20 November 2026 for sodium 129 mmol/L",
    )
    r.rx(ALLOPURINOL_300, "2018-09-04", 300, "mg", "allopurinol 300 mg once daily")
    r.rx(ATORVASTATIN_40, "2020-02-11", 40, "mg", "atorvastatin 40 mg at night")
    r.rx(
        NITROGLYCERIN,
        "2020-02-11",
        0.4,
        "mg",
        "glyceryl trinitrate 400 micrograms/dose sublingual spray, 1-2 sprays for chest pain",
        route=sixth.SUBLINGUAL,
        prn=True,
    )
    r.clinic("2026-10-25", "Cardiology outpatient clinic", ANGINA)
    r.renal("2026-11-19", 55, 1.0, 4.2, 129)
    r.report(
        "2026-11-19",
        "12-lead ECG",
        "Sinus bradycardia 48/min. PR interval 230 ms "
        "(first-degree AV block). No acute ischaemic changes.",
        code=ECG,
        category="EC",
    )
    r.bp(VISIT, 124, 70)
    r.standing_bp(VISIT, 98, 58)
    r.vitals(VISIT, 66.0, 162.0, 46)
    r.smoking(VISIT, NEVER_SMOKER)
    r.postmenopausal(VISIT, "2001-05-01")
    r.vacc(FLU_65, "2026-10-03")
    return r


# --- skin ----------------------------------------------------------------------------------------


def skin_leg_ulcer_abpi_pending() -> Record:
    """83, housebound and lives alone; a venous leg ulcer, cellulitis treated with
    flucloxacillin (course ended 17 November); the ankle-brachial pressure index requested on
    1 October is still not done, so no compression; weight 55 -> 49 kg and albumin 2.9;
    haemoglobin 10.6 not investigated; amlodipine 10 mg with ankle swelling; influenza vaccine
    given. Post-menopausal."""
    r = Record("skin_leg_ulcer_abpi_pending", "Doris", "Pemberton", "female", "1943-07-05")
    r.problem_text("Venous leg ulcer, left gaiter area", "2026-09-14")
    r.condition(*DIABETES2, "2008-11-20")
    r.condition(*HYPERTENSION, "2001-03-13")
    r.condition(*LIVES_ALONE, "2016-07-01")
    r.condition(*HOUSEBOUND, "2025-02-10")
    r.condition(CELLULITIS[0], CELLULITIS[1], "2026-11-10", "resolved", "2026-11-20")
    r.med_text(
        "flucloxacillin 500 mg capsules",
        "2026-11-10",
        500,
        "mg",
        "flucloxacillin 500 mg four times daily for 7 days",
        times=4,
        status="completed",
        course="acute",
        bounds=("2026-11-10", "2026-11-17"),
    )
    r.rx(AMLODIPINE, "2012-06-05", 10, "mg", "amlodipine 10 mg once daily")
    r.rx(METFORMIN_500, "2008-11-20", 500, "mg", "metformin 500 mg twice daily", times=2)
    r.rx(GLICLAZIDE, "2014-05-12", 80, "mg", "gliclazide 80 mg once daily")
    r.rx(ACETAMINOPHEN, "2026-09-14", 1000, "mg", "paracetamol 1 g four times daily", times=4)
    r.order(
        "2026-10-01",
        "Ankle-brachial pressure index (Doppler) before compression bandaging",
        reason="venous leg ulcer",
    )
    r.report(
        "2026-11-10",
        "Wound swab culture",
        "Staphylococcus aureus, sensitive to flucloxacillin.",
        category="MB",
    )
    r.blood_count("2026-11-10", 10.6, 12.1, 410)
    r.obs(ALBUMIN, 2.9, "g/dL", "2026-11-10")
    r.obs(CRP, 4.2, "mg/dL", "2026-11-10")
    r.obs(HBA1C, 8.4, "%", "2026-11-10")
    r.renal("2026-11-10", 52, 1.0, 4.3, 137)
    r.weight(55.0, "2026-05-12")
    r.weight(49.0, "2026-11-10")
    r.bp(VISIT, 142, 78)
    r.obs(HEART_RATE, 78, "/min", VISIT)
    r.postmenopausal(VISIT, "1995-01-01")
    r.smoking(VISIT, NEVER_SMOKER)
    r.vacc(FLU_65, "2026-10-20")
    return r


# --- endocrine -----------------------------------------------------------------------------------


def endo_levothyroxine_calcium_alendronate() -> Record:
    """53, hypothyroidism: levothyroxine raised from 125 to 150 micrograms in August (a dose
    change), TSH still 8.9, taken with calcium and ferrous sulfate; alendronate for ten years,
    DEXA in May (osteopenia, improved); new aching right thigh for six weeks; iron deficiency
    not investigated; early menopause at 41. Ex-smoker."""
    r = Record(
        "endo_levothyroxine_calcium_alendronate", "Janet", "Crowther", "female", "1973-09-09"
    )
    r.condition(*HYPOTHYROIDISM, "2012-01-24")
    r.condition(*OSTEOPOROSIS, "2016-03-15")
    r.condition(*IRON_DEFICIENCY_ANAEMIA, "2026-07-06")
    r.condition(*GORD, "2018-10-02")
    r.problem_text("Aching pain in right thigh for six weeks, worse on walking", "2026-10-20")
    old = stopped_for_increase(
        r, LEVOTHYROXINE, "2019-04-09", 125, "ug", "levothyroxine 125 micrograms each morning"
    )
    r.rx(
        LEVOTHYROXINE,
        "2026-08-10",
        150,
        "ug",
        "levothyroxine 150 micrograms each morning",
        prior=old,
    )
    r.rx(
        CALCIUM_CARBONATE,
        "2016-03-15",
        1250,
        "mg",
        "calcium carbonate 1.25 g / colecalciferol 400 units chewable tablet twice daily (with "
        "breakfast and evening meal)",
        times=2,
    )
    r.rx(
        FERROUS_SULFATE,
        "2026-07-06",
        200,
        "mg",
        "ferrous sulfate 200 mg three times daily",
        times=3,
    )
    r.rx(ALENDRONATE, "2016-03-15", 70, "mg", "alendronic acid 70 mg once weekly", period="wk")
    r.rx(OMEPRAZOLE, "2018-10-02", 20, "mg", "omeprazole 20 mg once daily")
    r.obs(TSH, 6.2, "m[IU]/L", "2026-06-22")
    r.obs(TSH, 8.9, "m[IU]/L", "2026-11-20")
    r.obs(FT4, 0.8, "ng/dL", "2026-11-20")
    r.blood_count("2026-11-20", 11.8, 6.1, 298)
    r.obs(FERRITIN, 22, "ng/mL", "2026-11-20")
    r.obs(VITAMIN_D, 24, "ng/mL", "2026-11-20")
    r.obs(CALCIUM, 9.4, "mg/dL", "2026-11-20")
    r.renal("2026-11-20", 88, 0.8, 4.2, 140)
    r.report(
        "2026-05-12",
        "DXA bone densitometry",
        "Lumbar spine T-score -2.1, total hip "
        "T-score -1.8: osteopenia, improved from -2.9 (lumbar spine) in 2016.",
        category="RAD",
    )
    r.bp(VISIT, 126, 78)
    r.vitals(VISIT, 68.0, 165.0, 64)
    r.smoking(VISIT, FORMER_SMOKER)
    r.postmenopausal(VISIT, "2014-09-01")
    return r


# --- eye -----------------------------------------------------------------------------------------


def eye_t1dm_screening_keratitis() -> Record:
    """30, type 1 diabetes for 22 years; a painful red left eye with photophobia since
    30 November in a contact-lens wearer, treating himself with chloramphenicol drops; last
    diabetic eye screening May 2023 (background retinopathy, recall 12 months); HbA1c 10.4 %;
    albumin-creatinine 41 and 48 mg/g; no ACE inhibitor, no statin; mealtime insulin dose not
    stated; smokes."""
    r = Record("eye_t1dm_screening_keratitis", "Owen", "Pritchard", "male", "1996-08-21")
    r.condition(*DIABETES1, "2004-02-10")
    r.condition(*RETINOPATHY, "2023-05-10")
    r.provisional(
        KERATITIS,
        "2026-11-30",
        "Suspected microbial keratitis: painful red left eye with photophobia and "
        "blurred vision, soft contact lens wearer",
    )
    r.rx(
        INSULIN_GLARGINE,
        "2015-01-12",
        24,
        "[iU]",
        "insulin glargine 24 units at night",
        route=SUBCUT,
    )
    r.rx(
        INSULIN_ASPART,
        "2015-01-12",
        1,
        "[iU]",
        "insulin aspart with meals, dose by carbohydrate counting",
        times=3,
        route=SUBCUT,
    )
    r.no_dose()
    r.rx(
        CHLORAMPHENICOL,
        "2026-11-30",
        1,
        "{drop}",
        "chloramphenicol 0.5% eye drops, 1 drop into the left eye every 2 hours (bought over "
        "the counter)",
        times=12,
        route=OPHTHALMIC,
    )
    r.report(
        "2023-05-10",
        "Diabetic eye screening (retinal photography)",
        "Background diabetic retinopathy (R1) both eyes, no maculopathy (M0). Recall in 12 months.",
        category="OTH",
    )
    r.obs(UACR, 41, "mg/g", "2026-04-14")
    r.obs(HBA1C, 10.4, "%", "2026-10-05")
    r.obs(UACR, 48, "mg/g", "2026-10-05")
    r.obs(CHOLESTEROL, 220, "mg/dL", "2026-10-05")
    r.obs(LDL, 142, "mg/dL", "2026-10-05")
    r.renal("2026-10-05", 104, 0.9, 4.4, 139)
    r.bp(VISIT, 142, 88)
    r.vitals(VISIT, 79.0, 180.0, 82)
    r.smoking(VISIT, CURRENT_SMOKER)
    return r


# --- skin ----------------------------------------------------------------------------------------


def skin_hydroxyzine_citalopram_melanoma() -> Record:
    """79, chronic urticaria: cetirizine replaced by hydroxyzine 25 mg three times daily in
    September, beside citalopram 20 mg; QTc 482 ms; a fall in October; a changing pigmented
    lesion on the left calf seen on 26 November with no referral made. Post-menopausal, never
    smoked."""
    r = Record("skin_hydroxyzine_citalopram_melanoma", "Margaret", "Oduya", "female", "1947-10-10")
    r.condition(*URTICARIA, "2026-04-02")
    r.condition(*DEPRESSION, "2021-01-18")
    r.condition(*HYPERTENSION, "2008-07-07")
    r.condition(*FALL, "2026-10-30")
    r.provisional(
        MELANOMA,
        "2026-11-26",
        "Suspected melanoma: changing pigmented lesion left calf, 9 mm, irregular "
        "border and colour",
    )
    r.rx(
        CETIRIZINE,
        "2026-04-02",
        10,
        "mg",
        "cetirizine 10 mg once daily",
        status="stopped",
        why="replaced by hydroxyzine for night-time itch",
    )
    r.rx(HYDROXYZINE, "2026-09-14", 25, "mg", "hydroxyzine 25 mg three times daily", times=3)
    r.rx(CITALOPRAM, "2021-01-18", 20, "mg", "citalopram 20 mg once daily")
    r.rx(AMLODIPINE_5, "2008-07-07", 5, "mg", "amlodipine 5 mg once daily")
    r.qtc("2026-11-26", 482)
    r.report(
        "2026-11-26",
        "12-lead ECG",
        "Sinus rhythm 64/min. QTc 482 ms (prolonged).",
        code=ECG,
        category="EC",
    )
    r.renal("2026-11-26", 64, 0.85, 3.7, 138)
    r.obs(MAGNESIUM, 1.9, "mg/dL", "2026-11-26")
    r.bp(VISIT, 136, 80)
    r.vitals(VISIT, 63.0, 158.0, 64)
    r.smoking(VISIT, NEVER_SMOKER)
    r.postmenopausal(VISIT, "1999-03-01")
    r.vacc(FLU_65, "2026-10-06")
    return r


# --- anaesthesia ---------------------------------------------------------------------------------


def anaes_preop_warfarin_valve_maoi() -> Record:
    """63, pre-operative assessment before a total hip replacement on 21 December; mechanical
    mitral valve on warfarin (INR 2.9 last week), no bridging plan; phenelzine for depression
    and tramadol added on 20 November for hip pain; haemoglobin 10.1 and ferritin 11.
    Post-menopausal, ex-smoker."""
    r = Record("anaes_preop_warfarin_valve_maoi", "Glenys", "Morgan", "female", "1963-02-14")
    r.problem_text("Mechanical mitral valve replacement (2011), lifelong warfarin", "2011-05-17")
    r.condition(*HIP_OA, "2019-08-20")
    r.condition(*DEPRESSION, "2010-02-03")
    r.rx(
        WARFARIN_5,
        "2011-05-17",
        5,
        "mg",
        "warfarin 5 mg once daily (INR target 3.0, range 2.5-3.5; mechanical mitral valve)",
    )
    r.rx(PHENELZINE, "2015-06-09", 15, "mg", "phenelzine 15 mg three times daily", times=3)
    r.rx(
        TRAMADOL_50,
        "2026-11-20",
        50,
        "mg",
        "tramadol 50 mg up to four times daily when needed for hip pain",
        times=4,
        prn=True,
    )
    r.rx(ACETAMINOPHEN, "2019-08-20", 1000, "mg", "paracetamol 1 g four times daily", times=4)
    r.rx(OMEPRAZOLE, "2015-06-09", 20, "mg", "omeprazole 20 mg once daily")
    r.order(
        "2026-09-28",
        "Total hip replacement, right",
        code=(SCT, "52734007", "Total replacement of hip (procedure)"),
        due="2026-12-21",
        reason="osteoarthritis of the right hip",
    )
    r.clinic(VISIT, "Pre-operative assessment clinic")
    r.obs(INR, 2.9, "{INR}", "2026-11-27")
    r.blood_count("2026-11-20", 10.1, 6.4, 312)
    r.obs(MCV, 76, "fL", "2026-11-20")
    r.obs(FERRITIN, 11, "ng/mL", "2026-11-20")
    r.renal("2026-11-20", 82, 0.8, 4.3, 140)
    r.report(
        "2026-11-20",
        "12-lead ECG",
        "Sinus rhythm 70/min. Normal axis. No acute changes.",
        code=ECG,
        category="EC",
    )
    r.bp(VISIT, 132, 78)
    r.vitals(VISIT, 70.0, 161.0, 70)
    r.smoking(VISIT, FORMER_SMOKER)
    r.postmenopausal(VISIT, "2013-10-01")
    r.vacc(FLU, "2026-10-12")
    return r


# --- cardiovascular ------------------------------------------------------------------------------


def cv_young_hypertension_fh() -> Record:
    """36, hypertension since August, BP 164/102 on amlodipine 10 mg and ramipril (raised from
    5 to 10 mg in October, a dose change); potassium 3.2-3.3 on no diuretic; aldosterone-renin
    ratio requested on 20 November and not back; LDL 236 mg/dL with a father who had a heart
    attack at 44, no statin; sumatriptan for migraine; LVH on ECG. Never smoked."""
    r = Record("cv_young_hypertension_fh", "Daniel", "Osei", "male", "1990-05-30")
    r.condition(*HYPERTENSION, "2026-08-04")
    r.condition(*MIGRAINE, "2015-03-18")
    r.condition(*HYPERLIPIDAEMIA, "2026-08-04")
    r.family(("FTH", "father"), MI, 44)
    r.rx(AMLODIPINE, "2026-08-04", 10, "mg", "amlodipine 10 mg once daily")
    old = stopped_for_increase(r, RAMIPRIL_5, "2026-08-04", 5, "mg", "ramipril 5 mg once daily")
    r.rx(RAMIPRIL, "2026-10-06", 10, "mg", "ramipril 10 mg once daily", prior=old)
    r.rx(
        SUMATRIPTAN,
        "2015-03-18",
        50,
        "mg",
        "sumatriptan 50 mg at the onset of migraine, may repeat once after 2 hours",
        prn=True,
    )
    r.renal("2026-08-04", 99, 0.94, 3.3, 142)
    r.renal("2026-10-20", 98, 0.95, 3.2, 143)
    r.obs(CHOLESTEROL, 320, "mg/dL", "2026-08-04")
    r.obs(LDL, 236, "mg/dL", "2026-08-04")
    r.obs(HDL, 48, "mg/dL", "2026-08-04")
    r.obs(TRIGLYCERIDES, 120, "mg/dL", "2026-08-04")
    r.obs(UACR, 12, "mg/g", "2026-08-04")
    r.report(
        "2026-08-10",
        "12-lead ECG",
        "Sinus rhythm 76/min. Voltage criteria for left ventricular hypertrophy.",
        code=ECG,
        category="EC",
    )
    r.order(
        "2026-11-20",
        "Aldosterone/renin ratio (plasma)",
        reason="hypertension with low potassium at 36 years",
    )
    r.bp("2026-10-20", 158, 100)
    r.bp(VISIT, 164, 102)
    r.vitals(VISIT, 84.0, 179.0, 78)
    r.smoking(VISIT, NEVER_SMOKER)
    return r


# --- endocrine -----------------------------------------------------------------------------------


def endo_hypercalcaemia_gliclazide_frail() -> Record:
    """83, frail, lives alone; calcium 11.3 mg/dL (10.4 in May) on calcium and vitamin D with
    bendroflumethiazide; parathyroid hormone requested and not back; gliclazide with HbA1c
    6.0 % and a hypoglycaemic fall on 20 November (glucose 56 mg/dL); sitagliptin 100 mg with
    eGFR 42; alendronate since 2017. Post-menopausal, never smoked."""
    r = Record("endo_hypercalcaemia_gliclazide_frail", "Ivy", "Thornton", "female", "1943-02-08")
    r.condition(*DIABETES2, "2009-06-30")
    r.condition(*OSTEOPOROSIS, "2017-01-17")
    r.condition(*FRAILTY, "2025-04-08")
    r.condition(*LIVES_ALONE, "2021-09-01")
    r.condition(*HYPERTENSION, "2004-11-23")
    r.condition(*FALL, "2026-11-20")
    r.condition(HYPOGLYCAEMIA[0], HYPOGLYCAEMIA[1], "2026-11-20", "resolved", "2026-11-20")
    r.rx(GLICLAZIDE, "2015-02-10", 80, "mg", "gliclazide 80 mg twice daily", times=2)
    r.rx(METFORMIN_500, "2009-06-30", 500, "mg", "metformin 500 mg twice daily", times=2)
    r.rx(SITAGLIPTIN, "2020-05-19", 100, "mg", "sitagliptin 100 mg once daily")
    r.rx(
        CALCIUM_CARBONATE,
        "2017-01-17",
        1500,
        "mg",
        "calcium carbonate 1.5 g / colecalciferol 400 units chewable tablet twice daily",
        times=2,
    )
    r.rx(BENDROFLUMETHIAZIDE, "2004-11-23", 2.5, "mg", "bendroflumethiazide 2.5 mg each morning")
    r.rx(ALENDRONATE, "2017-01-17", 70, "mg", "alendronic acid 70 mg once weekly", period="wk")
    r.rx(AMLODIPINE_5, "2004-11-23", 5, "mg", "amlodipine 5 mg once daily")
    r.obs(CALCIUM, 10.4, "mg/dL", "2026-05-12")
    r.obs(GLUCOSE, 56, "mg/dL", "2026-11-20")
    r.obs(CALCIUM, 11.3, "mg/dL", "2026-11-18")
    r.obs(ALBUMIN, 3.9, "g/dL", "2026-11-18")
    r.obs(HBA1C, 6.0, "%", "2026-11-18")
    r.renal("2026-11-18", 42, 1.25, 4.0, 136)
    r.order(
        "2026-11-18",
        "Parathyroid hormone (intact), with calcium",
        code=(LNC, PTH[0], PTH[1]),
        reason="raised calcium",
    )
    r.bp(VISIT, 128, 72)
    r.vitals(VISIT, 47.0, 154.0, 76)
    r.smoking(VISIT, NEVER_SMOKER)
    r.postmenopausal(VISIT, "1995-06-01")
    r.vacc(FLU_65, "2026-10-16")
    return r


# --- eye -----------------------------------------------------------------------------------------


def eye_glaucoma_timolol_asthma_old_record() -> Record:
    """68, glaucoma on timolol and latanoprost drops under ophthalmology, with asthma;
    hydroxychloroquine 400 mg a day at 70 kg since 2017 with no retinal screening on record;
    tamsulosin, with cataract surgery listed; the record's latest entry is July 2025, seventeen
    months before the plan. Never smoked."""
    r = Record("eye_glaucoma_timolol_asthma_old_record", "Frank", "Delaney", "male", "1958-01-19")
    r.condition(*GLAUCOMA, "2016-04-05")
    r.condition(*ASTHMA, "1990-06-01")
    r.condition(*RHEUMATOID, "2017-02-13")
    r.condition(*BPH, "2020-09-08")
    r.condition(*CATARACT, "2025-01-21")
    r.rx(
        TIMOLOL,
        "2016-04-05",
        1,
        "{drop}",
        "timolol 0.5% eye drops, 1 drop into both eyes twice daily",
        times=2,
        route=OPHTHALMIC,
    )
    r.rx(
        LATANOPROST,
        "2018-07-10",
        1,
        "{drop}",
        "latanoprost 0.005% eye drops, 1 drop into both eyes at night",
        route=OPHTHALMIC,
    )
    r.rx(
        HYDROXYCHLOROQUINE,
        "2017-02-13",
        200,
        "mg",
        "hydroxychloroquine 200 mg twice daily",
        times=2,
    )
    r.rx(TAMSULOSIN_04, "2020-09-08", 0.4, "mg", "tamsulosin 400 micrograms once daily")
    r.rx(
        BUDESONIDE,
        "1990-06-01",
        200,
        "ug",
        "budesonide 200 micrograms inhaler, 1 inhalation twice daily",
        times=2,
        route=INHALED,
    )
    r.rx(
        ALBUTEROL_MDI,
        "1990-06-01",
        2,
        "{puff}",
        "salbutamol 100 micrograms, 2 puffs when needed",
        route=INHALED,
        prn=True,
    )
    r.clinic("2025-06-10", "Ophthalmology outpatient clinic (glaucoma)", GLAUCOMA)
    r.report(
        "2025-06-10",
        "Visual fields and intraocular pressure",
        "Stable early glaucomatous "
        "field defect both eyes; IOP 16/17 mmHg on treatment. Cataract surgery listed.",
        category="OTH",
    )
    r.order(
        "2025-06-10",
        "Cataract surgery (phacoemulsification), right eye",
        reason="visually significant cataract",
    )
    r.renal("2025-07-02", 80, 1.0, 4.3, 140)
    r.blood_count("2025-07-02", 14.6, 6.6, 248)
    r.bp("2025-07-02", 136, 82)
    r.vitals("2025-07-02", 70.0, 178.0, 56)
    r.smoking("2025-07-02", NEVER_SMOKER)
    return r


VIGNETTES = (
    cns_citalopram_hyponatraemia,
    ent_epistaxis_warfarin,
    blood_alcohol_macrocytosis_homeless,
    skin_methotrexate_trimethoprim,
    vaccines_copd_steroid,
    endo_t2dm_ckd4_metformin,
    uro_oxybutynin_dementia,
    anaes_preop_sglt2_osa,
    vacc_asplenia_clarithro_simva,
    vacc_elderly_hf_digoxin,
    msk_axspa_adalimumab_naproxen,
    resp_copd_theophylline_cipro_oxygen,
    cns_opioid_pregabalin_benzo,
    blood_dialysis_esa_gabapentin,
    endo_graves_carbimazole_preconception,
    cv_verapamil_bisoprolol_bradycardia,
    skin_leg_ulcer_abpi_pending,
    endo_levothyroxine_calcium_alendronate,
    eye_t1dm_screening_keratitis,
    skin_hydroxyzine_citalopram_melanoma,
    anaes_preop_warfarin_valve_maoi,
    cv_young_hypertension_fh,
    endo_hypercalcaemia_gliclazide_frail,
    eye_glaucoma_timolol_asthma_old_record,
)


def main() -> None:
    base.write(VIGNETTES, HERE)


if __name__ == "__main__":
    main()
