"""Writes the second set of clinical vignettes: ten more hand-written FHIR R4 Bundles of patients
that neither the shared Synthea fixtures nor the first vignette set (examples/vignettes)
resembles, written after the fixes the first set led to, to measure again, on unseen patients,
how far the knowledge generalises. Run from the repository root:
``python3.11 examples/vignettes2/make.py``.

It reuses the first set's ``Record`` builder (imported from ../vignettes/make.py, unchanged) and
adds what these patients need: inhaled and weekly medicines, an ECG's corrected QT interval,
tobacco smoking status and a few more laboratory tests. Deterministic: ids are UUID5s of the
vignette and the resource's position (a namespace of its own), dates are fixed around the eval's
reference date (2026-11-30). Codes are real: RxNorm clinical drugs (SCD) from
inference/knowledge/data/clinical_drugs.json unless noted, RxNorm ingredients (IN) from
inference/knowledge/data/drugs.yaml where no product code was confirmed, SNOMED CT concepts from
inference/knowledge/data/conditions.yaml, LOINC, UCUM, CVX.
"""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_FIRST = HERE.parent / "vignettes" / "make.py"
_spec = importlib.util.spec_from_file_location("vignettes_make", _FIRST)
assert _spec is not None and _spec.loader is not None
base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)

NS = uuid.UUID("0b9e4d1a-7c33-4d6e-8f21-13b0c0de0013")
SCT, RXN, LNC, UCUM, OBSCAT = base.SCT, base.RXN, base.LNC, base.UCUM, base.OBSCAT
FLU = base.FLU

# Medicines: (RxNorm code, display). SCDs from clinical_drugs.json unless marked.
TRAMADOL_50 = ("835603", "tramadol hydrochloride 50 MG Oral Tablet")
SERTRALINE_100 = ("312938", "sertraline 100 MG Oral Tablet")
MIRTAZAPINE_15 = ("311725", "mirtazapine 15 MG Oral Tablet")
ZOLPIDEM_5 = ("854876", "zolpidem tartrate 5 MG Oral Tablet")
HCTZ_25 = ("310798", "Hydrochlorothiazide 25 MG Oral Tablet")
LISINOPRIL_10 = ("314076", "lisinopril 10 MG Oral Tablet")
AMLODIPINE_5 = ("197361", "Amlodipine 5 MG Oral Tablet")
ATORVASTATIN_20 = ("617310", "atorvastatin 20 MG Oral Tablet")
ATORVASTATIN_40 = ("617311", "atorvastatin 40 MG Oral Tablet")
ALENDRONATE_10 = ("904419", "Alendronic acid 10 MG Oral Tablet")
LEVOTHYROXINE_75 = ("966222", "Levothyroxine Sodium 0.075 MG Oral Tablet")
PARACETAMOL_325 = ("313782", "Acetaminophen 325 MG Oral Tablet")
PROPRANOLOL_40 = ("856519", "propranolol hydrochloride 40 MG Oral Tablet")
ALBUTEROL_MDI = ("745679", "200 ACTUAT Albuterol 0.09 MG/ACTUAT Metered Dose Inhaler")
# RxNorm ingredients (drugs.yaml): no product code for these inhalers was confirmed by a public
# list, so the requests name the ingredient (a valid RxNorm coding) and the product in text
TIOTROPIUM = ("69120", "tiotropium")
SALMETEROL = ("36117", "salmeterol")
CLARITHROMYCIN_500 = ("197517", "clarithromycin 500 MG Oral Tablet")
FUROSEMIDE_40 = ("313988", "furosemide 40 MG Oral Tablet")
# public RxNorm lists (FHIR examples, VSAC-derived tables): 197320, 197541, 863669
ALLOPURINOL_300 = ("197320", "allopurinol 300 MG Oral Tablet")
COLCHICINE_06 = ("197541", "colchicine 0.6 MG Oral Tablet")
TAMSULOSIN_04 = ("863669", "tamsulosin hydrochloride 0.4 MG Oral Capsule")
# RxNorm ingredient 8591 (potassium chloride); less sure: one RxNorm listing seen
POTASSIUM_CHLORIDE = ("8591", "potassium chloride")
DABIGATRAN_150 = ("1037045", "dabigatran etexilate 150 MG Oral Capsule")
BISOPROLOL_25 = ("865155", "bisoprolol fumarate 2.5 MG Oral Tablet")
BISOPROLOL_5 = ("854905", "bisoprolol fumarate 5 MG Oral Tablet")
RAMIPRIL_5 = ("198189", "ramipril 5 MG Oral Capsule")
NITROFURANTOIN_50 = ("311995", "nitrofurantoin, macrocrystals 50 MG Oral Capsule")
LOSARTAN_50 = ("979492", "losartan potassium 50 MG Oral Tablet")
METHOTREXATE_25 = ("105585", "methotrexate 2.5 MG Oral Tablet")
TRIMETHOPRIM_100 = ("198332", "trimethoprim 100 MG Oral Tablet")
CITALOPRAM_40 = ("309314", "citalopram 40 MG Oral Tablet")
ENALAPRIL_10 = ("858817", "enalapril maleate 10 MG Oral Tablet")
SPIRONOLACTONE_25 = ("313096", "spironolactone 25 MG Oral Tablet")
METFORMIN_500 = ("861007", "metformin hydrochloride 500 MG Oral Tablet")
AMITRIPTYLINE_50 = ("856845", "amitriptyline hydrochloride 50 MG Oral Tablet")
CHLORPHENIRAMINE_4 = ("1363309", "chlorpheniramine maleate 4 MG Oral Tablet")

INHALED = ("447694001", "Respiratory tract route (qualifier value)")


class Record(base.Record):  # type: ignore[misc,name-defined]
    """The first set's builder with this set's namespace and a few more resource shapes."""

    ns = NS

    def med2(
        self,
        drug: tuple[str, str],
        authored: str,
        dose: float,
        unit: str,
        text: str,
        *,
        times: int = 1,
        period: str = "d",
        route: tuple[str, str] = ("26643006", "Oral route"),
        prn: bool = False,
    ) -> str:
        """A MedicationRequest taken ``times`` per ``period`` (d or wk), by ``route``."""
        code, display = drug
        ucum = {"mg": "mg", "ug": "ug", "[meq]": "meq", "{puff}": "{puff}"}[unit]
        dosage: dict[str, Any] = {
            "sequence": 1,
            "text": text,
            "timing": {"repeat": {"frequency": times, "period": 1, "periodUnit": period}},
            "route": {"coding": [{"system": SCT, "code": route[0], "display": route[1]}]},
            "doseAndRate": [
                {
                    "doseQuantity": {
                        "value": dose,
                        "unit": {"[meq]": "mEq", "{puff}": "puff"}.get(unit, unit),
                        "system": UCUM,
                        "code": ucum,
                    }
                }
            ],
        }
        if prn:
            dosage["asNeededBoolean"] = True
        return str(
            self._add(
                {
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
            )
        )

    def coded_obs(
        self, loinc: str, display: str, value: tuple[str, str], when: str, cat: str
    ) -> str:
        return str(
            self._add(
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
                    "valueCodeableConcept": {
                        "coding": [{"system": SCT, "code": value[0], "display": value[1]}],
                        "text": value[1],
                    },
                }
            )
        )

    def smoking(self, when: str, status: tuple[str, str]) -> str:
        return self.coded_obs("72166-2", "Tobacco smoking status", status, when, "social-history")

    def qtc(self, when: str, ms: int) -> str:
        return str(self.lab("8636-3", "Q-T interval corrected", ms, "ms", when, "procedure"))

    def blood_count(self, when: str, hb: float, wbc: float, plt: int) -> None:
        self.lab("718-7", "Hemoglobin [Mass/volume] in Blood", hb, "g/dL", when)
        wbc_name = "Leukocytes [#/volume] in Blood by Automated count"
        self.lab("6690-2", wbc_name, wbc, "10*3/uL", when)
        self.lab("777-3", "Platelets [#/volume] in Blood by Automated count", plt, "10*3/uL", when)


CURRENT_SMOKER = ("449868002", "Smokes tobacco daily (finding)")
FORMER_SMOKER = ("8517006", "Ex-smoker (finding)")
ED = ("EMER", "50849002", "Emergency room admission (procedure)")


def frail_serotonergic_hyponatraemia() -> Record:
    """(a) 88, frail, eleven medicines: tramadol with sertraline and mirtazapine, a thiazide,
    zolpidem; sodium 128 (136 six months ago); a fall last month."""
    r = Record("frail_hyponatraemia", "Beatrice", "Ashworth", "female", "1938-02-14")
    r.condition("35489007", "Depressive disorder (disorder)", "2024-03-20")
    r.condition("396275006", "Osteoarthritis (disorder)", "2011-05-09")
    r.condition("59621000", "Essential hypertension (disorder)", "2009-01-22")
    r.condition("40930008", "Hypothyroidism (disorder)", "2005-07-14")
    r.condition("64859006", "Osteoporosis (disorder)", "2022-02-03")
    r.condition("193462001", "Insomnia (disorder)", "2025-01-15")
    r.condition("217082002", "Accidental fall (event)", "2026-10-26")
    r.encounter(*ED, "2026-10-26", ("217082002", "Accidental fall (event)"))
    r.med2(SERTRALINE_100, "2024-03-20", 100, "mg", "100 mg once daily")
    r.med2(MIRTAZAPINE_15, "2025-01-15", 15, "mg", "15 mg at night")
    r.med2(TRAMADOL_50, "2026-06-18", 50, "mg", "50 mg four times daily for knee pain", times=4)
    r.med2(ZOLPIDEM_5, "2025-01-15", 5, "mg", "5 mg at bedtime")
    r.med2(HCTZ_25, "2009-01-22", 25, "mg", "25 mg each morning")
    r.med2(LISINOPRIL_10, "2012-04-02", 10, "mg", "10 mg once daily")
    r.med2(AMLODIPINE_5, "2016-08-30", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2010-11-11", 20, "mg", "20 mg at night")
    r.med2(ALENDRONATE_10, "2022-02-03", 10, "mg", "10 mg each morning before breakfast")
    r.med2(LEVOTHYROXINE_75, "2005-07-14", 75, "ug", "75 micrograms each morning")
    r.med2(
        PARACETAMOL_325, "2011-05-09", 650, "mg", "650 mg four times daily for knee pain", times=4
    )
    r.renal("2026-05-12", 52, 0.98, 4.2, 136)
    r.renal("2026-11-02", 47, 1.06, 4.0, 128)
    r.lab("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma", 1.9, "m[IU]/L", "2026-05-12")
    r.bp("2026-11-02", 116, 62)
    r.vitals("2026-11-02", 48.0, 154.0, 76)
    r.vaccine(*FLU, "2025-10-09")
    return r


def copd_propranolol() -> Record:
    """(b) 71, COPD on a LAMA and a LABA with two exacerbations this year and blood eosinophils
    0.4; propranolol for anxiety; no inhaled corticosteroid; no pneumococcal vaccine."""
    r = Record("copd_propranolol", "Desmond", "Riley", "male", "1955-10-03")
    r.condition("13645005", "Chronic obstructive lung disease (disorder)", "2016-03-15")
    r.condition("197480006", "Anxiety disorder (disorder)", "2024-09-10")
    for when in ("2026-02-11", "2026-08-30"):
        r.encounter(
            *ED,
            when,
            ("195951007", "Acute exacerbation of chronic obstructive airways disease (disorder)"),
        )
    r.med2(
        TIOTROPIUM,
        "2018-05-02",
        18,
        "ug",
        "tiotropium 18 micrograms inhaled once daily (dry powder capsule)",
        route=INHALED,
    )
    r.med2(
        SALMETEROL,
        "2018-05-02",
        50,
        "ug",
        "salmeterol 50 micrograms inhaled twice daily (dry powder inhaler)",
        times=2,
        route=INHALED,
    )
    r.med2(
        ALBUTEROL_MDI,
        "2016-03-15",
        2,
        "{puff}",
        "2 puffs up to four times daily as needed for breathlessness",
        times=4,
        route=INHALED,
        prn=True,
    )
    r.med2(PROPRANOLOL_40, "2024-09-10", 40, "mg", "40 mg twice daily for anxiety", times=2)
    r.lab(
        "711-2", "Eosinophils [#/volume] in Blood by Automated count", 0.4, "10*3/uL", "2026-08-30"
    )
    r.lab("718-7", "Hemoglobin [Mass/volume] in Blood", 14.6, "g/dL", "2026-08-30")
    r.renal("2026-08-30", 78, 0.98, 4.4, 140)
    r.smoking("2026-08-30", FORMER_SMOKER)
    r.bp("2026-10-06", 132, 80)
    r.vitals("2026-10-06", 74.0, 176.0, 68)
    r.vaccine(*FLU, "2025-10-17")
    return r


def gout_colchicine_clarithromycin() -> Record:
    """(c) 77, gout and CKD stage 4 (eGFR 25): colchicine 0.6 mg twice daily for a flare, then
    clarithromycin for a chest infection; allopurinol 300 mg."""
    r = Record("gout_colchicine_clarithromycin", "Victor", "Okonkwo", "male", "1949-04-17")
    r.condition("90560007", "Gout (disorder)", "2012-06-04")
    r.condition("431857002", "Chronic kidney disease stage 4 (disorder)", "2025-12-09")
    r.condition("59621000", "Essential hypertension (disorder)", "2003-02-27")
    r.condition("10509002", "Acute bronchitis (disorder)", "2026-11-26")
    r.med2(ALLOPURINOL_300, "2014-09-15", 300, "mg", "300 mg once daily")
    r.med2(COLCHICINE_06, "2026-11-20", 0.6, "mg", "0.6 mg twice daily for the gout flare", times=2)
    r.med2(
        CLARITHROMYCIN_500,
        "2026-11-26",
        500,
        "mg",
        "500 mg twice daily for 7 days for a chest infection",
        times=2,
    )
    r.med2(AMLODIPINE_5, "2003-02-27", 5, "mg", "5 mg once daily")
    r.med2(FUROSEMIDE_40, "2025-12-09", 40, "mg", "40 mg each morning")
    r.renal("2026-04-02", 27, 2.35, 4.8, 139)
    r.renal("2026-10-08", 25, 2.5, 4.9, 139)
    r.lab("3084-1", "Urate [Mass/volume] in Serum or Plasma", 6.8, "mg/dL", "2026-10-08")
    r.bp("2026-11-26", 138, 80)
    r.vitals("2026-11-26", 81.0, 175.0, 84)
    r.vaccine(*FLU, "2025-10-22")
    return r


def af_dabigatran_low_clearance() -> Record:
    """(d) 83, AF on dabigatran 150 mg twice daily; 58 kg, creatinine 1.45 mg/dL: creatinine
    clearance about 27 mL/min (eGFR 35)."""
    r = Record("af_dabigatran", "Lillian", "Moreau", "female", "1943-09-09")
    r.condition("49436004", "Atrial fibrillation (disorder)", "2021-03-18")
    r.condition("59621000", "Essential hypertension (disorder)", "2006-10-05")
    r.condition("433144002", "Chronic kidney disease stage 3 (disorder)", "2024-05-21")
    r.med2(DABIGATRAN_150, "2021-03-18", 150, "mg", "150 mg twice daily", times=2)
    r.med2(BISOPROLOL_25, "2021-03-18", 2.5, "mg", "2.5 mg once daily")
    r.med2(RAMIPRIL_5, "2006-10-05", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2015-01-12", 20, "mg", "20 mg at night")
    r.renal("2026-04-14", 38, 1.38, 4.5, 140)
    r.renal("2026-10-15", 35, 1.45, 4.6, 140)
    r.blood_count("2026-10-15", 12.4, 6.1, 210)
    r.bp("2026-10-15", 134, 72)
    r.vitals("2026-10-15", 58.0, 160.0, 72)
    r.vaccine(*FLU, "2025-10-07")
    return r


def nitrofurantoin_long_term() -> Record:
    """(e) 74, recurrent urinary tract infections, nitrofurantoin 50 mg every night for nearly
    four years; eGFR 40."""
    r = Record("nitrofurantoin_long_term", "Agnes", "Whitford", "female", "1952-06-21")
    r.condition("197927001", "Recurrent urinary tract infection (disorder)", "2022-11-03")
    r.condition("433144002", "Chronic kidney disease stage 3 (disorder)", "2025-04-17")
    r.condition("59621000", "Essential hypertension (disorder)", "2010-06-29")
    r.med2(
        NITROFURANTOIN_50,
        "2023-01-09",
        50,
        "mg",
        "50 mg at night to prevent urinary infections",
    )
    r.med2(LOSARTAN_50, "2010-06-29", 50, "mg", "50 mg once daily")
    r.med2(AMLODIPINE_5, "2014-03-18", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2016-09-01", 20, "mg", "20 mg at night")
    r.renal("2026-03-10", 43, 1.28, 4.4, 140)
    r.renal("2026-09-22", 40, 1.36, 4.5, 139)
    r.lab(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        31,
        "U/L",
        "2026-09-22",
    )
    r.bp("2026-09-22", 128, 76)
    r.vitals("2026-09-22", 67.0, 162.0, 74)
    r.vaccine(*FLU, "2025-10-13")
    return r


def methotrexate_trimethoprim() -> Record:
    """(f) 69, rheumatoid arthritis on methotrexate 15 mg weekly, no folic acid; trimethoprim
    100 mg nightly since September; last blood count and liver tests seven months ago."""
    r = Record("methotrexate_trimethoprim", "Helen", "Drummond", "female", "1957-01-30")
    r.condition("69896004", "Rheumatoid arthritis (disorder)", "2015-05-11")
    r.condition("197927001", "Recurrent urinary tract infection (disorder)", "2026-09-14")
    r.condition("59621000", "Essential hypertension (disorder)", "2018-02-20")
    r.med2(
        METHOTREXATE_25,
        "2015-06-01",
        15,
        "mg",
        "15 mg (six 2.5 mg tablets) once a week on Mondays",
        period="wk",
    )
    r.med2(
        TRIMETHOPRIM_100,
        "2026-09-14",
        100,
        "mg",
        "100 mg at night to prevent urinary infections",
    )
    r.med2(AMLODIPINE_5, "2018-02-20", 5, "mg", "5 mg once daily")
    r.blood_count("2026-04-22", 12.8, 5.9, 245)
    r.lab(
        "1742-6",
        "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma",
        29,
        "U/L",
        "2026-04-22",
    )
    r.renal("2026-04-22", 72, 0.84, 4.3, 140)
    r.bp("2026-09-14", 130, 78)
    r.vitals("2026-09-14", 64.0, 165.0, 70)
    r.vaccine(*FLU, "2025-10-02")
    return r


def citalopram_long_qtc() -> Record:
    """(g) 80, depression on citalopram 40 mg with a thiazide; ECG QTc 490 ms, potassium 3.4."""
    r = Record("citalopram_qtc", "Stanley", "Kowalczyk", "male", "1946-03-05")
    r.condition("370143000", "Major depressive disorder (disorder)", "2019-11-04")
    r.condition("59621000", "Essential hypertension (disorder)", "2008-05-16")
    r.med2(CITALOPRAM_40, "2020-02-10", 40, "mg", "40 mg once daily")
    r.med2(HCTZ_25, "2008-05-16", 25, "mg", "25 mg each morning")
    r.med2(AMLODIPINE_5, "2012-09-25", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2012-09-25", 20, "mg", "20 mg at night")
    r.qtc("2026-10-28", 490)
    r.renal("2026-10-28", 66, 1.08, 3.4, 137)
    r.lab("19123-9", "Magnesium [Mass/volume] in Serum or Plasma", 1.7, "mg/dL", "2026-10-28")
    r.bp("2026-10-28", 136, 78)
    r.vitals("2026-10-28", 77.0, 174.0, 64)
    r.vaccine(*FLU, "2025-10-16")
    return r


def hf_potassium_supplement_hyperkalaemia() -> Record:
    """(h) 75, HFrEF on enalapril, spironolactone and a potassium supplement; potassium 5.9."""
    r = Record("hf_hyperkalaemia", "Frank", "Delgado", "male", "1950-12-12")
    r.condition(
        "703272007", "Heart failure with reduced ejection fraction (disorder)", "2022-07-19"
    )
    r.condition("433144002", "Chronic kidney disease stage 3 (disorder)", "2024-01-30")
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "2012-03-06")
    r.condition("59621000", "Essential hypertension (disorder)", "2005-08-11")
    r.med2(ENALAPRIL_10, "2022-07-19", 10, "mg", "10 mg twice daily", times=2)
    r.med2(SPIRONOLACTONE_25, "2023-02-14", 25, "mg", "25 mg once daily")
    r.med2(BISOPROLOL_5, "2022-09-01", 5, "mg", "5 mg once daily")
    r.med2(FUROSEMIDE_40, "2022-07-19", 40, "mg", "40 mg each morning")
    r.med2(POTASSIUM_CHLORIDE, "2022-07-19", 20, "[meq]", "20 mEq once daily")
    r.med2(METFORMIN_500, "2012-03-06", 500, "mg", "500 mg twice daily with meals", times=2)
    r.med2(ATORVASTATIN_40, "2022-07-19", 40, "mg", "40 mg at night")
    r.lab("10230-1", "Left ventricular Ejection fraction", 32, "%", "2025-11-04")
    r.renal("2026-07-08", 47, 1.55, 5.3, 138)
    r.renal("2026-11-18", 44, 1.65, 5.9, 137)
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 7.2, "%", "2026-07-08")
    r.bp("2026-11-18", 112, 66)
    r.vitals("2026-11-18", 86.0, 178.0, 62)
    r.vaccine(*FLU, "2025-10-20")
    return r


def bph_retention_anticholinergics() -> Record:
    """(i) 70, benign prostatic hyperplasia with acute urinary retention last month, on
    chlorphenamine and amitriptyline 50 mg (and tamsulosin)."""
    r = Record("bph_anticholinergics", "Leonard", "Fitzgerald", "male", "1956-08-14")
    r.condition("266569009", "Benign prostatic hyperplasia (disorder)", "2020-04-07")
    r.condition("267064002", "Retention of urine (disorder)", "2026-10-19")
    r.encounter(*ED, "2026-10-19", ("267064002", "Retention of urine (disorder)"))
    r.condition("279039007", "Low back pain (finding)", "2023-01-23")
    r.condition("446096008", "Perennial allergic rhinitis (disorder)", "2025-05-06")
    r.condition("59621000", "Essential hypertension (disorder)", "2015-11-12")
    r.med2(TAMSULOSIN_04, "2020-04-07", 0.4, "mg", "0.4 mg once daily")
    r.med2(AMITRIPTYLINE_50, "2023-01-23", 50, "mg", "50 mg at night for back pain")
    r.med2(
        CHLORPHENIRAMINE_4, "2025-05-06", 4, "mg", "4 mg three times daily for rhinitis", times=3
    )
    r.med2(AMLODIPINE_5, "2015-11-12", 5, "mg", "5 mg once daily")
    r.renal("2026-10-19", 74, 1.04, 4.4, 139)
    r.bp("2026-10-19", 138, 82)
    r.vitals("2026-10-19", 83.0, 179.0, 78)
    r.vaccine(*FLU, "2025-10-28")
    return r


def untreated_cardiovascular_risk() -> Record:
    """(j) 67, daily smoker, three blood pressures around 168/96 over five months, untreated;
    LDL cholesterol 189 mg/dL (4.9 mmol/L), no statin."""
    r = Record("untreated_risk", "Gary", "Novak", "male", "1959-05-19")
    r.condition("55822004", "Hyperlipidemia (disorder)", "2026-06-12")
    r.med2(
        PARACETAMOL_325,
        "2024-02-05",
        650,
        "mg",
        "650 mg up to four times daily as needed for pain",
        times=4,
        prn=True,
    )
    r.bp("2026-06-12", 166, 98)
    r.bp("2026-09-03", 170, 94)
    r.bp("2026-11-10", 168, 96)
    r.smoking("2026-11-10", CURRENT_SMOKER)
    r.lab("2093-3", "Cholesterol [Mass/volume] in Serum or Plasma", 272, "mg/dL", "2026-06-12")
    r.lab(
        "18262-6",
        "Cholesterol in LDL [Mass/volume] in Serum or Plasma by Direct assay",
        189,
        "mg/dL",
        "2026-06-12",
    )
    r.lab(
        "2085-9", "Cholesterol in HDL [Mass/volume] in Serum or Plasma", 38, "mg/dL", "2026-06-12"
    )
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 5.8, "%", "2026-06-12")
    r.renal("2026-06-12", 84, 0.94, 4.3, 141)
    r.vitals("2026-11-10", 91.0, 176.0, 80)
    return r


VIGNETTES = (
    frail_serotonergic_hyponatraemia,
    copd_propranolol,
    gout_colchicine_clarithromycin,
    af_dabigatran_low_clearance,
    nitrofurantoin_long_term,
    methotrexate_trimethoprim,
    citalopram_long_qtc,
    hf_potassium_supplement_hyperkalaemia,
    bph_retention_anticholinergics,
    untreated_cardiovascular_risk,
)


def main() -> None:
    base.write(VIGNETTES, HERE)


if __name__ == "__main__":
    main()
