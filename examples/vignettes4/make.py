"""Writes the fourth set of clinical vignettes, population set A: twenty-three hand-written FHIR R4
Bundles of patients outside the older adult, written blind (by a reviewer who had not read the
knowledge) to measure how far the plans reach pregnancy and lactation, women who could become
pregnant, and children and adolescents. Run from the repository root:
``python3.11 examples/vignettes4/make.py``.

It reuses the builder unchanged: the second set's ``Record`` (../vignettes2/make.py), under a
namespace of its own, with a few more resource shapes (a procedure, a pregnancy test, a
pregnancy status, a gestational age, a body temperature). Deterministic: ids are UUID5s of the
vignette and the resource's position, dates are fixed around the eval's reference date
(2026-11-30). Codes are real: RxNorm clinical drugs (SCD) confirmed in public RxNorm value-set
tables (VSAC-derived eCQM lists, FHIR examples); where no product code was confirmed the request
names the RxNorm ingredient (IN, marked below) and gives the product and strength in its text.
SNOMED CT, LOINC, UCUM and CVX as usual.
"""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
_SECOND = HERE.parent / "vignettes2" / "make.py"
_spec = importlib.util.spec_from_file_location("vignettes2_make", _SECOND)
assert _spec is not None and _spec.loader is not None
second = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(second)
base = second.base

NS = uuid.UUID("a4d2f6b0-3e91-4c57-b8d4-24a0c0de0024")
SCT, LNC = base.SCT, base.LNC

# Medicines: (RxNorm code, display). SCDs unless marked IN (ingredient).
LISINOPRIL_10 = ("314076", "lisinopril 10 MG Oral Tablet")
DIVALPROEX_500 = ("1099870", "divalproex sodium 500 MG Delayed Release Oral Tablet")
WARFARIN_5 = ("855332", "Warfarin Sodium 5 MG Oral Tablet")
METHOTREXATE_25 = ("105585", "methotrexate 2.5 MG Oral Tablet")
ISOTRETINOIN_40 = ("197845", "isotretinoin 40 MG Oral Capsule")
METFORMIN_500 = ("861007", "metformin hydrochloride 500 MG Oral Tablet")
ATORVASTATIN_20 = ("617310", "atorvastatin 20 MG Oral Tablet")
LEVOTHYROXINE_75 = ("966222", "Levothyroxine Sodium 0.075 MG Oral Tablet")
PARACETAMOL_CODEINE = ("993781", "acetaminophen 300 MG / codeine phosphate 30 MG Oral Tablet")
LABETALOL_200 = ("896762", "labetalol hydrochloride 200 MG Oral Tablet")
ASPIRIN_81 = ("243670", "aspirin 81 MG Oral Tablet")
ASPIRIN_81_CHEWABLE = ("318272", "aspirin 81 MG Chewable Tablet")
TOPIRAMATE_50 = ("151226", "topiramate 50 MG Oral Tablet")
RIFAMPIN_300 = ("198202", "rifampin 300 MG Oral Capsule")
# a branded pack (BPCK): levonorgestrel 0.15 mg / ethinyl estradiol 0.03 mg, 21 active tablets
LEVORA = ("748879", "Levora 0.15/30 28 Day Pack")
CIPROFLOXACIN_250 = ("197511", "ciprofloxacin 250 MG Oral Tablet")
AMOXICILLIN_SUSPENSION = ("239191", "amoxicillin 50 MG/ML Oral Suspension")
DOXYCYCLINE_100 = ("1649988", "doxycycline hyclate 100 MG Oral Capsule")
COUGH_COLD_NIGHT = (
    "1043400",
    "Acetaminophen 21.7 MG/ML / Dextromethorphan Hydrobromide 1 MG/ML / doxylamine succinate "
    "0.417 MG/ML Oral Solution",
)
# RxNorm ingredients (IN): no product code for these forms was confirmed by a public list, so the
# requests name the ingredient (a valid RxNorm coding) and the product in their text
FOLIC_ACID = ("4511", "folic acid")
CARBAMAZEPINE = ("2002", "carbamazepine")
CODEINE = ("2670", "codeine")
PARACETAMOL = ("161", "acetaminophen")
DOXYCYCLINE = ("3640", "doxycycline")

PREGNANT = ("77386006", "Pregnant (finding)")
HYPERTENSION = ("59621000", "Essential hypertension (disorder)")
EPILEPSY = ("84757009", "Epilepsy (disorder)")
ACNE = ("88616000", "Acne vulgaris (disorder)")
PRENATAL_VISIT = ("AMB", "424441002", "Prenatal initial visit (regime/therapy)")

# CVX vaccine codes
DTAP = ("20", "DTaP")
IPV = ("10", "IPV")
MMR = ("03", "MMR")
VARICELLA = ("21", "varicella")
HEPB = ("08", "Hep B, adolescent or pediatric")
HIB = ("49", "Hib (PRP-OMP)")
PCV13 = ("133", "Pneumococcal conjugate PCV 13")
HEPA = ("83", "Hep A, ped/adol, 2 dose")
ROTAVIRUS = ("116", "rotavirus, pentavalent")
FLU = ("150", "Influenza, injectable, quadrivalent, preservative free")
TDAP = ("115", "Tdap")
HPV9 = ("165", "HPV9")
MENACWY = ("114", "meningococcal MCV4P")


class Record(second.Record):  # type: ignore[misc,name-defined]
    """The second set's builder with this set's namespace and the shapes pregnancy and
    childhood need."""

    ns = NS

    def procedure(self, code: str, display: str, when: str) -> str:
        return str(
            self._add(
                {
                    "resourceType": "Procedure",
                    "status": "completed",
                    "code": {
                        "coding": [{"system": SCT, "code": code, "display": display}],
                        "text": display,
                    },
                    "subject": self.subject,
                    "performedDateTime": when,
                }
            )
        )

    def urine_pregnancy_test(self, when: str) -> str:
        return str(
            self.coded_obs(
                "2106-3",
                "Choriogonadotropin (pregnancy test) [Presence] in Urine",
                ("10828004", "Positive (qualifier value)"),
                when,
                "laboratory",
            )
        )

    def pregnancy_status(self, when: str) -> str:
        return str(self.coded_obs("82810-3", "Pregnancy status", PREGNANT, when, "social-history"))

    def gestation(self, when: str, weeks: int) -> str:
        return str(self.lab("49051-6", "Gestational age in weeks", weeks, "wk", when, "exam"))

    def temperature(self, when: str, celsius: float) -> str:
        return str(self.lab("8310-5", "Body temperature", celsius, "Cel", when, "vital-signs"))

    def liquid(self, drug: tuple[str, str], authored: str, ml: float, text: str) -> str:
        """A once-daily MedicationRequest of an oral liquid dosed in millilitres."""
        rid = str(self.med2(drug, authored, ml, "mg", text))
        dose = self.entries[-1]["resource"]["dosageInstruction"][0]["doseAndRate"][0]
        dose["doseQuantity"] = {"value": ml, "unit": "mL", "system": base.UCUM, "code": "mL"}
        return rid

    def child_vitals(self, when: str, weight: float, height: float) -> None:
        self.lab("29463-7", "Body weight", weight, "kg", when, "vital-signs")
        self.lab("8302-2", "Body height", height, "cm", when, "vital-signs")

    def infant_series(self, birth: str) -> None:
        """The US schedule from 2 to 18 months, complete (birth is YYYY-MM-DD)."""
        y, m, d = (int(x) for x in birth.split("-"))

        def at(months: int) -> str:
            yy, mm = y + (m - 1 + months) // 12, (m - 1 + months) % 12 + 1
            return f"{yy:04d}-{mm:02d}-{min(d, 28):02d}"

        self.vaccine(*HEPB, at(0))
        for months in (2, 4, 6):
            self.vaccine(*DTAP, at(months))
            self.vaccine(*HIB, at(months))
            self.vaccine(*PCV13, at(months))
            self.vaccine(*ROTAVIRUS, at(months))
        for months in (2, 4):
            self.vaccine(*IPV, at(months))
        self.vaccine(*HEPB, at(2))
        self.vaccine(*HEPB, at(6))
        self.vaccine(*IPV, at(6))
        self.vaccine(*MMR, at(12))
        self.vaccine(*VARICELLA, at(12))
        self.vaccine(*HEPA, at(12))
        self.vaccine(*HIB, at(15))
        self.vaccine(*PCV13, at(15))
        self.vaccine(*DTAP, at(15))
        self.vaccine(*HEPA, at(18))

    def preschool_boosters(self, when: str) -> None:
        for vaccine in (DTAP, IPV, MMR, VARICELLA):
            self.vaccine(*vaccine, when)


# --- pregnancy and lactation ------------------------------------------------------------------


def pregnancy_lisinopril() -> Record:
    """(p1) 31, chronic hypertension on lisinopril 10 mg; pregnant, 16 weeks (a Condition and a
    gestational-age Observation); blood pressure 142/92."""
    r = Record("pregnancy_lisinopril", "Amara", "Okafor", "female", "1995-04-12")
    r.condition(*HYPERTENSION, "2022-03-15")
    r.condition(*PREGNANT, "2026-08-03")
    r.gestation("2026-11-24", 16)
    r.med2(LISINOPRIL_10, "2022-03-15", 10, "mg", "10 mg once daily")
    r.renal("2026-11-24", 112, 0.62, 4.1, 138)
    r.bp("2026-11-24", 142, 92)
    r.vitals("2026-11-24", 72.0, 165.0, 84)
    return r


def pregnancy_valproate() -> Record:
    """(p2) 26, epilepsy on valproate (divalproex 500 mg twice daily); a positive urine
    pregnancy test last week is the only sign of the pregnancy; no folic acid."""
    r = Record("pregnancy_valproate", "Sofia", "Marchetti", "female", "2000-06-19")
    r.condition(*EPILEPSY, "2015-09-02")
    r.med2(DIVALPROEX_500, "2016-01-20", 500, "mg", "500 mg twice daily", times=2)
    r.urine_pregnancy_test("2026-11-20")
    r.renal("2026-05-11", 118, 0.66, 4.2, 139)
    r.vitals("2026-05-11", 61.0, 168.0, 72)
    return r


def pregnancy_warfarin() -> Record:
    """(p3) 33, two venous thromboembolisms on long-term warfarin; at her first antenatal visit
    she is 7 weeks pregnant (an Encounter and a gestational-age Observation)."""
    r = Record("pregnancy_warfarin", "Hannah", "Lindgren", "female", "1993-02-08")
    r.condition("128053003", "Deep venous thrombosis (disorder)", "2023-01-17", "resolved")
    r.condition("59282003", "Pulmonary embolism (disorder)", "2024-05-06", "resolved")
    r.med2(WARFARIN_5, "2024-05-06", 5, "mg", "5 mg once daily, as directed by INR")
    r.lab(
        "6301-6",
        "INR in Platelet poor plasma by Coagulation assay",
        2.6,
        "{INR}",
        "2026-11-16",
    )
    r.encounter(*PRENATAL_VISIT, "2026-11-26", PREGNANT)
    r.gestation("2026-11-26", 7)
    r.renal("2026-11-16", 109, 0.7, 4.3, 140)
    r.blood_count("2026-11-16", 12.9, 6.8, 251)
    r.vitals("2026-11-26", 66.0, 170.0, 76)
    return r


def pregnancy_methotrexate() -> Record:
    """(p4) 34, rheumatoid arthritis on methotrexate 15 mg weekly with weekly folic acid; the
    pregnancy shows only as a prenatal visit last week."""
    r = Record("pregnancy_methotrexate", "Claire", "Dubois", "female", "1992-09-14")
    r.condition("69896004", "Rheumatoid arthritis (disorder)", "2019-04-08")
    r.med2(
        METHOTREXATE_25,
        "2019-06-03",
        15,
        "mg",
        "15 mg (six 2.5 mg tablets) once a week on Fridays",
        period="wk",
    )
    r.med2(
        FOLIC_ACID,
        "2019-06-03",
        5,
        "mg",
        "folic acid 5 mg tablet once a week, the day after methotrexate",
        period="wk",
    )
    r.encounter(*PRENATAL_VISIT, "2026-11-23", PREGNANT)
    r.blood_count("2026-10-12", 12.6, 5.9, 288)
    r.lab(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        24,
        "U/L",
        "2026-10-12",
    )
    r.renal("2026-10-12", 110, 0.68, 4.2, 139)
    r.vitals("2026-10-12", 63.0, 164.0, 74)
    return r


def pregnancy_isotretinoin() -> Record:
    """(p5) 19, severe acne on isotretinoin 40 mg daily; a serum beta-hCG of 5200 mIU/mL; no
    contraception recorded."""
    r = Record("pregnancy_isotretinoin", "Jasmine", "Reyes", "female", "2007-03-30")
    r.condition(*ACNE, "2024-02-19")
    r.med2(ISOTRETINOIN_40, "2026-08-10", 40, "mg", "40 mg once daily with food")
    r.lab(
        "21198-7",
        "Choriogonadotropin.beta subunit [Units/volume] in Serum or Plasma",
        5200,
        "m[IU]/mL",
        "2026-11-25",
    )
    r.lab(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        22,
        "U/L",
        "2026-09-07",
    )
    r.lab("2571-8", "Triglyceride [Mass/volume] in Serum or Plasma", 168, "mg/dL", "2026-09-07")
    r.vitals("2026-09-07", 58.0, 162.0, 70)
    return r


def pregnancy_diabetes_statin() -> Record:
    """(p6) 36, type 2 diabetes and obesity on metformin and atorvastatin 20 mg; pregnant, 9
    weeks (a Condition and a gestational age); HbA1c 7.4 %; no folic acid."""
    r = Record("pregnancy_diabetes_statin", "Priya", "Raman", "female", "1990-07-21")
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "2021-03-09")
    r.condition("414916001", "Obesity (disorder)", "2019-06-14")
    r.condition("55822004", "Hyperlipidemia (disorder)", "2023-02-22")
    r.condition(*PREGNANT, "2026-09-28")
    r.gestation("2026-11-27", 9)
    r.med2(METFORMIN_500, "2021-03-09", 1000, "mg", "1000 mg twice daily with meals", times=2)
    r.med2(ATORVASTATIN_20, "2023-02-22", 20, "mg", "20 mg at night")
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 7.4, "%", "2026-11-27")
    r.renal("2026-11-27", 104, 0.7, 4.2, 138)
    r.bp("2026-11-27", 128, 80)
    r.vitals("2026-11-27", 96.0, 165.0, 82)
    return r


def pregnancy_levothyroxine() -> Record:
    """(p7) 30, hypothyroidism on levothyroxine 75 micrograms; pregnancy recorded as a pregnancy
    status Observation; TSH 4.6 mIU/L at the same visit; no folic acid."""
    r = Record("pregnancy_levothyroxine", "Emily", "Novak", "female", "1996-01-05")
    r.condition("40930008", "Hypothyroidism (disorder)", "2018-10-22")
    r.med2(LEVOTHYROXINE_75, "2019-01-14", 75, "ug", "75 micrograms each morning")
    r.pregnancy_status("2026-11-18")
    r.lab("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma", 4.6, "m[IU]/L", "2026-11-18")
    r.vitals("2026-11-18", 64.0, 167.0, 78)
    return r


def breastfeeding_codeine() -> Record:
    """(p8) 29, five weeks after giving birth and breastfeeding; paracetamol with codeine 30 mg,
    two tablets four times daily, for perineal pain since delivery."""
    r = Record("breastfeeding_codeine", "Laura", "Bianchi", "female", "1997-05-02")
    r.condition("413712001", "Breastfeeding (mother) (finding)", "2026-10-22")
    r.med(
        PARACETAMOL_CODEINE,
        "2026-10-24",
        2,
        "tablet",
        4,
        "two tablets (codeine 60 mg, paracetamol 600 mg) four times daily for perineal pain",
    )
    r.blood_count("2026-10-23", 10.8, 9.2, 301)
    r.bp("2026-11-20", 118, 74)
    r.vitals("2026-11-20", 68.0, 166.0, 74)
    return r


def pregnancy_appropriate() -> Record:
    """(p9, negative control) 32, chronic hypertension; pregnant, 24 weeks, on labetalol,
    low-dose aspirin and folic acid; blood pressure 128/82; Tdap and influenza given this
    pregnancy."""
    r = Record("pregnancy_appropriate", "Grace", "Mensah", "female", "1994-10-11")
    r.condition(*HYPERTENSION, "2023-05-30")
    r.condition(*PREGNANT, "2026-06-08")
    r.gestation("2026-11-23", 24)
    r.med2(LABETALOL_200, "2026-07-10", 200, "mg", "200 mg twice daily", times=2)
    r.med2(ASPIRIN_81, "2026-08-31", 81, "mg", "81 mg at night until 36 weeks")
    r.med2(FOLIC_ACID, "2026-07-10", 400, "ug", "folic acid 400 micrograms once daily")
    r.renal("2026-11-23", 121, 0.58, 4.0, 137)
    r.lab("2888-6", "Protein [Mass/volume] in Urine", 8, "mg/dL", "2026-11-23")
    r.bp("2026-11-23", 128, 82)
    r.vitals("2026-11-23", 74.0, 168.0, 82)
    r.vaccine(*FLU, "2026-10-05")
    r.vaccine(*TDAP, "2026-11-09")
    return r


# --- women who could become pregnant ----------------------------------------------------------


def wocbp_valproate() -> Record:
    """(w1) 23, bipolar disorder on valproate (divalproex 500 mg twice daily); no contraception
    and no pregnancy test recorded."""
    r = Record("wocbp_valproate", "Chloe", "Bennett", "female", "2003-08-27")
    r.condition("13746004", "Bipolar disorder (disorder)", "2024-01-15")
    r.med2(DIVALPROEX_500, "2024-02-05", 500, "mg", "500 mg twice daily", times=2)
    r.lab(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        19,
        "U/L",
        "2026-08-03",
    )
    r.blood_count("2026-08-03", 13.1, 6.2, 234)
    r.vitals("2026-08-03", 70.0, 170.0, 76)
    return r


def wocbp_topiramate() -> Record:
    """(w2) 28, migraine prevention with topiramate 50 mg twice daily; no contraception
    recorded."""
    r = Record("wocbp_topiramate", "Olivia", "Hughes", "female", "1998-04-16")
    r.condition("37796009", "Migraine (disorder)", "2020-09-10")
    r.med2(TOPIRAMATE_50, "2025-11-03", 50, "mg", "50 mg twice daily", times=2)
    r.renal("2026-06-01", 116, 0.68, 4.1, 140)
    r.vitals("2026-06-01", 74.0, 166.0, 70)
    return r


def wocbp_carbamazepine_contraceptive() -> Record:
    """(w3) 21, epilepsy on carbamazepine 400 mg twice daily, and a combined oral contraceptive
    (levonorgestrel with ethinyl estradiol) as her only contraception."""
    r = Record("wocbp_carbamazepine_pill", "Mia", "Kowalski", "female", "2005-05-09")
    r.condition(*EPILEPSY, "2021-02-11")
    r.med2(
        CARBAMAZEPINE,
        "2021-03-01",
        400,
        "mg",
        "carbamazepine 200 mg tablets: 400 mg twice daily",
        times=2,
    )
    r.med(LEVORA, "2025-03-17", 1, "tablet", 1, "one tablet daily for contraception")
    r.lab("2951-2", "Sodium [Moles/volume] in Serum or Plasma", 137, "mmol/L", "2026-07-20")
    r.blood_count("2026-07-20", 12.8, 5.4, 226)
    r.bp("2026-07-20", 114, 70)
    r.vitals("2026-07-20", 59.0, 163.0, 68)
    return r


def wocbp_rifampicin_contraceptive() -> Record:
    """(w4) 25, latent tuberculosis on four months of rifampicin 600 mg daily, started a month
    ago; a combined oral contraceptive for three years."""
    r = Record("wocbp_rifampicin_pill", "Aisha", "Rahman", "female", "2001-12-03")
    r.condition("11999007", "Inactive tuberculosis (disorder)", "2026-10-20")
    r.med2(
        RIFAMPIN_300,
        "2026-10-27",
        600,
        "mg",
        "600 mg (two 300 mg capsules) once daily on an empty stomach for 4 months",
    )
    r.med(LEVORA, "2023-01-09", 1, "tablet", 1, "one tablet daily for contraception")
    r.lab(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        21,
        "U/L",
        "2026-10-20",
    )
    r.bp("2026-10-20", 112, 72)
    r.vitals("2026-10-20", 57.0, 160.0, 72)
    return r


# --- children and adolescents -----------------------------------------------------------------


def child_codeine_tonsillectomy() -> Record:
    """(c1) 7, obstructive sleep apnoea; tonsillectomy six days ago, sent home on codeine 15 mg
    every six hours; 23 kg."""
    r = Record("child_codeine_tonsillectomy", "Noah", "Fischer", "male", "2019-05-14")
    r.condition("78275009", "Obstructive sleep apnea syndrome (disorder)", "2026-06-10")
    r.procedure("173422009", "Tonsillectomy (procedure)", "2026-11-24")
    r.med2(
        CODEINE,
        "2026-11-24",
        15,
        "mg",
        "codeine phosphate oral solution 15 mg every 6 hours for throat pain",
        times=4,
    )
    r.child_vitals("2026-11-24", 23.0, 122.0)
    r.infant_series("2019-05-14")
    r.preschool_boosters("2023-06-12")
    return r


def child_aspirin_chickenpox() -> Record:
    """(c2) 6, chickenpox with fever since four days; given aspirin 162 mg every six hours for
    the fever; 20 kg."""
    r = Record("child_aspirin_chickenpox", "Lily", "Thompson", "female", "2020-03-02")
    r.condition("38907003", "Varicella (disorder)", "2026-11-26")
    r.condition("386661006", "Fever (finding)", "2026-11-26")
    r.med2(
        ASPIRIN_81_CHEWABLE,
        "2026-11-26",
        162,
        "mg",
        "two 81 mg chewable tablets every 6 hours for fever",
        times=4,
    )
    r.temperature("2026-11-28", 38.7)
    r.child_vitals("2026-11-28", 20.0, 116.0)
    return r


def child_doxycycline() -> Record:
    """(c3) 6, Mycoplasma pneumonia treated with doxycycline 45 mg twice daily for 14 days;
    20.5 kg; no drug allergy."""
    r = Record("child_doxycycline", "Lucas", "Moreau", "male", "2020-09-18")
    r.condition("46970008", "Pneumonia due to Mycoplasma pneumoniae (disorder)", "2026-11-23")
    r.med2(
        DOXYCYCLINE,
        "2026-11-23",
        45,
        "mg",
        "doxycycline 45 mg twice daily for 14 days",
        times=2,
    )
    r.temperature("2026-11-23", 38.4)
    r.child_vitals("2026-11-23", 20.5, 118.0)
    r.infant_series("2020-09-18")
    r.preschool_boosters("2024-10-01")
    return r


def child_ciprofloxacin_cystitis() -> Record:
    """(c4) 9, a first uncomplicated lower urinary tract infection treated with ciprofloxacin
    250 mg twice daily; 29 kg; no allergy, no culture result."""
    r = Record("child_ciprofloxacin_cystitis", "Zoe", "Martin", "female", "2017-06-25")
    r.condition("38822007", "Cystitis (disorder)", "2026-11-24")
    r.med2(
        CIPROFLOXACIN_250,
        "2026-11-24",
        250,
        "mg",
        "250 mg twice daily for 5 days for a bladder infection",
        times=2,
    )
    r.temperature("2026-11-24", 37.2)
    r.child_vitals("2026-11-24", 29.0, 134.0)
    r.infant_series("2017-06-25")
    r.preschool_boosters("2021-07-20")
    return r


def child_cough_cold_combination() -> Record:
    """(c5) 3, a cold with cough, given an adult night-time cough and cold liquid (paracetamol,
    dextromethorphan, doxylamine) and paracetamol suspension as well; 15 kg."""
    r = Record("child_cough_cold_combination", "Oscar", "Jensen", "male", "2023-07-08")
    r.condition("82272006", "Common cold (disorder)", "2026-11-25")
    r.liquid(
        COUGH_COLD_NIGHT,
        "2026-11-25",
        10,
        "night-time cough and cold liquid, 10 mL at bedtime (acetaminophen 217 mg, "
        "dextromethorphan 10 mg, doxylamine 4.17 mg)",
    )
    r.med2(
        PARACETAMOL,
        "2026-11-25",
        160,
        "mg",
        "paracetamol (acetaminophen) oral suspension 160 mg/5 mL: 160 mg four times daily",
        times=4,
    )
    r.child_vitals("2026-11-25", 15.0, 96.0)
    r.infant_series("2023-07-08")
    return r


def child_paracetamol_overdose() -> Record:
    """(c6) 2, a viral upper respiratory infection with fever; paracetamol suspension 240 mg
    every four hours (six doses a day) for four days; 12 kg."""
    r = Record("child_paracetamol_overdose", "Ava", "Schmidt", "female", "2024-05-20")
    r.condition("54150009", "Upper respiratory infection (disorder)", "2026-11-26")
    r.med2(
        PARACETAMOL,
        "2026-11-26",
        240,
        "mg",
        "paracetamol (acetaminophen) oral suspension 160 mg/5 mL: 240 mg (7.5 mL) every 4 hours",
        times=6,
    )
    r.temperature("2026-11-29", 38.2)
    r.child_vitals("2026-11-29", 12.0, 88.0)
    r.infant_series("2024-05-20")
    return r


def child_amoxicillin_no_weight() -> Record:
    """(c7) 4, acute otitis media on amoxicillin suspension 250 mg three times daily; no weight
    ever recorded."""
    r = Record("child_amoxicillin_no_weight", "Leo", "Rossi", "male", "2022-08-03")
    r.condition("65363002", "Otitis media (disorder)", "2026-11-27")
    r.med2(
        AMOXICILLIN_SUSPENSION,
        "2026-11-27",
        250,
        "mg",
        "amoxicillin 250 mg/5 mL suspension: 250 mg (5 mL) three times daily for 5 days",
        times=3,
    )
    r.temperature("2026-11-27", 38.3)
    return r


def child_vaccines_due() -> Record:
    """(c8) 5, well; every vaccine of the schedule to 18 months given, none of the four-to-six
    year boosters; influenza given this season; 19 kg."""
    r = Record("child_vaccines_due", "Ella", "Sato", "female", "2021-06-10")
    r.condition("21719001", "Allergic rhinitis caused by pollen (disorder)", "2025-04-14")
    r.child_vitals("2026-11-16", 19.0, 110.0)
    r.infant_series("2021-06-10")
    r.vaccine(*FLU, "2026-10-20")
    return r


def child_paracetamol_correct() -> Record:
    """(c9, negative control) 6, acute otitis media; paracetamol 320 mg (15 mg/kg) every six
    hours as needed; 21 kg; every vaccine due is given, influenza this season."""
    r = Record("child_paracetamol_correct", "Ethan", "Walker", "male", "2020-08-14")
    r.condition("65363002", "Otitis media (disorder)", "2026-11-26")
    r.med2(
        PARACETAMOL,
        "2026-11-26",
        320,
        "mg",
        "paracetamol (acetaminophen) oral suspension 160 mg/5 mL: 320 mg (10 mL) every 6 hours "
        "as needed, at most 4 doses in 24 hours",
        times=4,
        prn=True,
    )
    r.temperature("2026-11-26", 38.1)
    r.child_vitals("2026-11-26", 21.0, 117.0)
    r.infant_series("2020-08-14")
    r.preschool_boosters("2024-09-03")
    r.vaccine(*FLU, "2026-10-12")
    return r


def teen_doxycycline_acne() -> Record:
    """(c10, negative control) 15, moderate acne on doxycycline 100 mg daily for three months;
    adolescent vaccines given at 11; 62 kg."""
    r = Record("teen_doxycycline_acne", "Samuel", "Adeyemi", "male", "2011-04-22")
    r.condition(*ACNE, "2025-11-10")
    r.med2(DOXYCYCLINE_100, "2026-09-01", 100, "mg", "100 mg once daily with water, upright")
    r.child_vitals("2026-09-01", 62.0, 172.0)
    r.infant_series("2011-04-22")
    r.preschool_boosters("2015-05-05")
    r.vaccine(*TDAP, "2022-05-10")
    r.vaccine(*MENACWY, "2022-05-10")
    r.vaccine(*HPV9, "2022-05-10")
    r.vaccine(*HPV9, "2022-11-14")
    r.vaccine(*FLU, "2026-10-07")
    return r


VIGNETTES = (
    pregnancy_lisinopril,
    pregnancy_valproate,
    pregnancy_warfarin,
    pregnancy_methotrexate,
    pregnancy_isotretinoin,
    pregnancy_diabetes_statin,
    pregnancy_levothyroxine,
    breastfeeding_codeine,
    pregnancy_appropriate,
    wocbp_valproate,
    wocbp_topiramate,
    wocbp_carbamazepine_contraceptive,
    wocbp_rifampicin_contraceptive,
    child_codeine_tonsillectomy,
    child_aspirin_chickenpox,
    child_doxycycline,
    child_ciprofloxacin_cystitis,
    child_cough_cold_combination,
    child_paracetamol_overdose,
    child_amoxicillin_no_weight,
    child_vaccines_due,
    child_paracetamol_correct,
    teen_doxycycline_acne,
)


def main() -> None:
    base.write(VIGNETTES, HERE)


if __name__ == "__main__":
    main()
