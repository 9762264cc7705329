"""Writes the third set of clinical vignettes: eight more hand-written FHIR R4 Bundles of older
adults in primary care that neither the shared Synthea fixtures nor the first two vignette sets
(examples/vignettes, examples/vignettes2) resemble, written after the fixes the first two sets led
to, to measure once more, on unseen patients, how far the knowledge generalises. Run from the
repository root: ``python3.11 examples/vignettes3/make.py``.

It reuses the builder unchanged: the second set's ``Record`` (../vignettes2/make.py, itself the
first set's builder with weekly and inhaled medicines and a few more observation shapes), under a
namespace of its own. Deterministic: ids
are UUID5s of the vignette and the resource's position, dates are fixed around the eval's
reference date (2026-11-30). Codes are real: RxNorm clinical drugs (SCD) from
inference/knowledge/data/clinical_drugs.json unless noted, an RxNorm ingredient (IN) where no
product code was confirmed, SNOMED CT, LOINC, UCUM, CVX.
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

NS = uuid.UUID("3c7a9e52-1b4d-4f08-a6e3-13c0c0de0013")
SCT, RXN, LNC, UCUM, OBSCAT = base.SCT, base.RXN, base.LNC, base.UCUM, base.OBSCAT
FLU = base.FLU

# Medicines: (RxNorm code, display). SCDs from clinical_drugs.json unless marked.
APIXABAN_5 = ("1364445", "apixaban 5 MG Oral Tablet")
BISOPROLOL_5 = ("854905", "bisoprolol fumarate 5 MG Oral Tablet")
RAMIPRIL_5 = ("198189", "ramipril 5 MG Oral Capsule")
AMLODIPINE_5 = ("197361", "Amlodipine 5 MG Oral Tablet")
ATORVASTATIN_20 = ("617310", "atorvastatin 20 MG Oral Tablet")
PIOGLITAZONE_30 = ("312440", "pioglitazone 30 MG Oral Tablet")
METFORMIN_1000 = ("861004", "metformin hydrochloride 1000 MG Oral Tablet")
FUROSEMIDE_40 = ("313988", "furosemide 40 MG Oral Tablet")
DONEPEZIL_10 = ("997223", "donepezil hydrochloride 10 MG Oral Tablet")
# RxNorm ingredient 32675 (oxybutynin): no tablet SCD was confirmed by a public list
OXYBUTYNIN = ("32675", "oxybutynin")
ZOLPIDEM_10 = ("854873", "zolpidem tartrate 10 MG Oral Tablet")
# public RxNorm lists (as in examples/vignettes2): 197320
ALLOPURINOL_300 = ("197320", "allopurinol 300 MG Oral Tablet")
PREDNISOLONE_5 = ("198142", "prednisolone 5 MG Oral Tablet")
LEVOTHYROXINE_75 = ("966222", "Levothyroxine Sodium 0.075 MG Oral Tablet")
WARFARIN_5 = ("855332", "Warfarin Sodium 5 MG Oral Tablet")
NAPROXEN_500 = ("105899", "naproxen 500 MG Oral Tablet [Naprosyn]")
SERTRALINE_50 = ("312941", "sertraline 50 MG Oral Tablet")
PARACETAMOL_325 = ("313782", "Acetaminophen 325 MG Oral Tablet")


class Record(second.Record):  # type: ignore[misc,name-defined]
    """The second set's builder with this set's namespace."""

    ns = NS


ED = second.ED


def af_apixaban_full_dose() -> Record:
    """(a) 81, AF on apixaban 5 mg twice daily; 55 kg, creatinine 1.6 mg/dL: all three of the
    label's dose-reduction criteria (age 80 or over, 60 kg or less, creatinine 1.5 or more)."""
    r = Record("af_apixaban_full_dose", "Margaret", "Ellison", "female", "1945-03-22")
    r.condition("49436004", "Atrial fibrillation (disorder)", "2022-05-10")
    r.condition("59621000", "Essential hypertension (disorder)", "2008-09-16")
    r.med2(APIXABAN_5, "2022-05-10", 5, "mg", "5 mg twice daily", times=2)
    r.med2(BISOPROLOL_5, "2022-05-10", 5, "mg", "5 mg once daily")
    r.med2(AMLODIPINE_5, "2008-09-16", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2014-02-03", 20, "mg", "20 mg at night")
    r.renal("2026-05-06", 36, 1.42, 4.5, 139)
    r.renal("2026-11-04", 31, 1.6, 4.6, 139)
    r.blood_count("2026-11-04", 12.1, 6.4, 232)
    r.bp("2026-11-04", 132, 74)
    r.vitals("2026-11-04", 55.0, 158.0, 70)
    r.vaccine(*FLU, "2025-10-14")
    return r


def pioglitazone_heart_failure() -> Record:
    """(b) 74, type 2 diabetes on metformin and pioglitazone 30 mg; heart failure (ejection
    fraction 38 %) diagnosed last year, on furosemide, ramipril and bisoprolol."""
    r = Record("pioglitazone_heart_failure", "Raymond", "Achterberg", "male", "1952-07-08")
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "2010-04-19")
    r.condition("84114007", "Heart failure (disorder)", "2025-09-23")
    r.condition("59621000", "Essential hypertension (disorder)", "2007-11-30")
    r.med2(METFORMIN_1000, "2010-04-19", 1000, "mg", "1000 mg twice daily with meals", times=2)
    r.med2(PIOGLITAZONE_30, "2018-06-12", 30, "mg", "30 mg once daily")
    r.med2(FUROSEMIDE_40, "2025-09-23", 40, "mg", "40 mg each morning")
    r.med2(RAMIPRIL_5, "2007-11-30", 5, "mg", "5 mg once daily")
    r.med2(BISOPROLOL_5, "2025-10-14", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2010-04-19", 20, "mg", "20 mg at night")
    r.lab("10230-1", "Left ventricular Ejection fraction", 38, "%", "2025-09-23")
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 7.1, "%", "2026-09-15")
    r.renal("2026-09-15", 64, 1.16, 4.5, 138)
    r.bp("2026-09-15", 128, 74)
    r.vitals("2026-09-15", 92.0, 176.0, 68)
    r.vaccine(*FLU, "2025-10-21")
    return r


def dementia_oxybutynin_donepezil() -> Record:
    """(c) 77, Alzheimer's disease on donepezil 10 mg; urge incontinence treated with
    oxybutynin 5 mg three times daily (a strong anticholinergic that opposes donepezil)."""
    r = Record("dementia_oxybutynin", "Dorothy", "Brennan", "female", "1949-01-27")
    r.condition("26929004", "Alzheimer's disease (disorder)", "2024-02-13")
    r.condition("165232002", "Urinary incontinence (finding)", "2025-06-04")
    r.condition("59621000", "Essential hypertension (disorder)", "2011-08-09")
    r.med2(DONEPEZIL_10, "2024-05-14", 10, "mg", "10 mg at night")
    r.med2(
        OXYBUTYNIN,
        "2025-06-04",
        5,
        "mg",
        "oxybutynin chloride 5 mg tablet, three times daily for urge incontinence",
        times=3,
    )
    r.med2(AMLODIPINE_5, "2011-08-09", 5, "mg", "5 mg once daily")
    r.renal("2026-08-18", 68, 0.84, 4.3, 140)
    r.bp("2026-08-18", 134, 76)
    r.vitals("2026-08-18", 61.0, 160.0, 66)
    r.vaccine(*FLU, "2025-10-08")
    return r


def zolpidem_recent_fall() -> Record:
    """(d) 85, insomnia on zolpidem 10 mg nightly for years; fell at night last month and was
    seen in the emergency department."""
    r = Record("zolpidem_fall", "Evelyn", "Castellano", "female", "1941-04-02")
    r.condition("193462001", "Insomnia (disorder)", "2019-03-11")
    r.condition("59621000", "Essential hypertension (disorder)", "2004-06-22")
    r.condition("396275006", "Osteoarthritis (disorder)", "2012-10-17")
    r.condition("217082002", "Accidental fall (event)", "2026-11-03")
    r.encounter(*ED, "2026-11-03", ("217082002", "Accidental fall (event)"))
    r.med2(ZOLPIDEM_10, "2019-03-11", 10, "mg", "10 mg at bedtime")
    r.med2(AMLODIPINE_5, "2004-06-22", 5, "mg", "5 mg once daily")
    r.med2(PARACETAMOL_325, "2012-10-17", 650, "mg", "650 mg up to three times daily", times=3)
    r.renal("2026-11-03", 58, 0.92, 4.2, 139)
    r.bp("2026-11-03", 128, 70)
    r.vitals("2026-11-03", 57.0, 157.0, 74)
    r.vaccine(*FLU, "2025-10-09")
    return r


def ckd3b_allopurinol_no_urate() -> Record:
    """(e) 78, gout and CKD stage 3b (eGFR 35) on allopurinol 300 mg since 2015; the last serum
    urate was in August 2024, more than two years ago."""
    r = Record("ckd3b_allopurinol", "Harold", "Pemberton", "male", "1948-10-12")
    r.condition("90560007", "Gout (disorder)", "2013-05-20")
    r.condition("700379002", "Chronic kidney disease stage 3B (disorder)", "2024-03-05")
    r.condition("59621000", "Essential hypertension (disorder)", "2002-01-15")
    r.med2(ALLOPURINOL_300, "2015-02-09", 300, "mg", "300 mg once daily")
    r.med2(AMLODIPINE_5, "2002-01-15", 5, "mg", "5 mg once daily")
    r.med2(RAMIPRIL_5, "2024-03-05", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2016-07-28", 20, "mg", "20 mg at night")
    r.lab("3084-1", "Urate [Mass/volume] in Serum or Plasma", 7.4, "mg/dL", "2024-08-21")
    r.renal("2026-04-28", 37, 1.78, 4.7, 140)
    r.renal("2026-10-27", 35, 1.86, 4.8, 140)
    r.bp("2026-10-27", 136, 78)
    r.vitals("2026-10-27", 84.0, 172.0, 72)
    r.vaccine(*FLU, "2025-10-15")
    return r


def prednisolone_no_bone_protection() -> Record:
    """(f) 72, polymyalgia rheumatica on prednisolone 10 mg daily for six months; no
    bisphosphonate, calcium or vitamin D."""
    r = Record("prednisolone_no_bone", "Patricia", "Lindqvist", "female", "1954-09-05")
    r.condition("65323003", "Polymyalgia rheumatica (disorder)", "2026-05-26")
    r.condition("59621000", "Essential hypertension (disorder)", "2013-03-19")
    r.med2(PREDNISOLONE_5, "2026-05-26", 10, "mg", "10 mg (two 5 mg tablets) each morning")
    r.med2(AMLODIPINE_5, "2013-03-19", 5, "mg", "5 mg once daily")
    r.lab("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 5.9, "%", "2026-10-20")
    r.renal("2026-10-20", 79, 0.76, 4.1, 140)
    r.bp("2026-10-20", 138, 80)
    r.vitals("2026-10-20", 63.0, 163.0, 76)
    r.vaccine(*FLU, "2025-10-06")
    return r


def levothyroxine_over_replaced_af() -> Record:
    """(g) 76, hypothyroidism on levothyroxine 150 micrograms with TSH 0.05 mIU/L and a raised
    free T4; atrial fibrillation diagnosed this year, on apixaban and bisoprolol."""
    r = Record("levothyroxine_over_replaced", "Gwendolyn", "Hartley", "female", "1950-02-16")
    r.condition("40930008", "Hypothyroidism (disorder)", "2001-09-03")
    r.condition("49436004", "Atrial fibrillation (disorder)", "2026-07-21")
    r.med2(
        LEVOTHYROXINE_75,
        "2021-01-12",
        150,
        "ug",
        "150 micrograms (two 75 microgram tablets) each morning",
    )
    r.med2(APIXABAN_5, "2026-07-21", 5, "mg", "5 mg twice daily", times=2)
    r.med2(BISOPROLOL_5, "2026-07-21", 5, "mg", "5 mg once daily")
    r.lab("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma", 0.05, "m[IU]/L", "2026-10-29")
    r.lab(
        "3024-7",
        "Thyroxine (T4) free [Mass/volume] in Serum or Plasma",
        2.1,
        "ng/dL",
        "2026-10-29",
    )
    r.renal("2026-10-29", 72, 0.82, 4.2, 140)
    r.blood_count("2026-10-29", 13.0, 6.8, 248)
    r.bp("2026-10-29", 126, 72)
    r.vitals("2026-10-29", 66.0, 164.0, 78)
    r.vaccine(*FLU, "2025-10-23")
    return r


def warfarin_naproxen_sertraline() -> Record:
    """(h) 70, AF on warfarin, with naproxen 500 mg twice daily for knee osteoarthritis and
    sertraline 50 mg for depression; no gastroprotection; INR 3.1."""
    r = Record("warfarin_naproxen_sertraline", "Walter", "Igwe", "male", "1956-06-30")
    r.condition("49436004", "Atrial fibrillation (disorder)", "2019-08-14")
    r.condition("396275006", "Osteoarthritis (disorder)", "2016-11-02")
    r.condition("35489007", "Depressive disorder (disorder)", "2025-02-18")
    r.med2(WARFARIN_5, "2019-08-14", 5, "mg", "5 mg once daily, as directed by INR")
    r.med2(NAPROXEN_500, "2026-09-08", 500, "mg", "500 mg twice daily for knee pain", times=2)
    r.med2(SERTRALINE_50, "2025-02-18", 50, "mg", "50 mg once daily")
    r.lab(
        "6301-6",
        "INR in Platelet poor plasma by Coagulation assay",
        3.1,
        "{INR}",
        "2026-11-16",
    )
    r.renal("2026-11-16", 74, 1.02, 4.4, 139)
    r.blood_count("2026-11-16", 13.6, 7.0, 260)
    r.bp("2026-11-16", 134, 80)
    r.vitals("2026-11-16", 82.0, 178.0, 72)
    r.vaccine(*FLU, "2025-10-30")
    return r


VIGNETTES = (
    af_apixaban_full_dose,
    pioglitazone_heart_failure,
    dementia_oxybutynin_donepezil,
    zolpidem_recent_fall,
    ckd3b_allopurinol_no_urate,
    prednisolone_no_bone_protection,
    levothyroxine_over_replaced_af,
    warfarin_naproxen_sertraline,
)


def main() -> None:
    base.write(VIGNETTES, HERE)


if __name__ == "__main__":
    main()
