"""Writes the fifth set of clinical vignettes (population set B): hand-written FHIR R4 Bundles of
adults of 18 to 64, outside the older-adult population the earlier sets cover: transplant
recipients on calcineurin or mTOR inhibitors, people living with HIV on antiretrovirals, glucose
lowering and blood pressure treatment gone too far, and adults whose medicines interact by a
pharmacokinetic mechanism or whose drug levels are out of range or never measured. Four are
negative controls. Written blind, before any plan of these patients was read, to measure how far
the knowledge generalises beyond the older adult. Run from the repository root:
``python3.11 examples/vignettes5/make.py``.

It reuses the builder unchanged: the second set's ``Record`` (../vignettes2/make.py, itself the
first set's builder), under a namespace of its own, with one more resource shape (a Procedure,
for the transplant operation). Deterministic: ids are UUID5s of the vignette and the resource's
position, dates are fixed around the eval's reference date (2026-11-30). Codes are real: RxNorm
clinical drugs (SCD) already used by the earlier sets, and RxNorm ingredient codes (IN, marked
"ingredient") where no product code was confirmed, with the product, strength and regimen in the
text; SNOMED CT, LOINC (drug levels: tacrolimus 11253-2 and 77348-1 trough, ciclosporin trough
53828-0, sirolimus 29247-4, digoxin 10535-3, phenytoin 3968-5, carbamazepine 3432-2, lithium
14334-7), UCUM, CVX.
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

NS = uuid.UUID("b5e1a7c4-2d90-4e3b-8c61-24b0c0de0024")
SCT = base.SCT
FLU_STANDARD = ("150", "influenza, injectable, quadrivalent, preservative free")

# Medicines: (RxNorm code, display). SCDs already used by the earlier vignette sets:
AMLODIPINE_5 = ("197361", "Amlodipine 5 MG Oral Tablet")
ATORVASTATIN_20 = ("617310", "atorvastatin 20 MG Oral Tablet")
ATORVASTATIN_40 = ("617311", "atorvastatin 40 MG Oral Tablet")
RAMIPRIL_5 = ("198189", "ramipril 5 MG Oral Capsule")
BISOPROLOL_25 = ("865155", "bisoprolol fumarate 2.5 MG Oral Tablet")
BISOPROLOL_5 = ("854905", "bisoprolol fumarate 5 MG Oral Tablet")
PREDNISOLONE_5 = ("198142", "prednisolone 5 MG Oral Tablet")
CLARITHROMYCIN_500 = ("197517", "clarithromycin 500 MG Oral Tablet")
METFORMIN_1000 = ("861004", "metformin hydrochloride 1000 MG Oral Tablet")
GLIMEPIRIDE_4 = ("199247", "glimepiride 4 MG Oral Tablet")
GLARGINE_PEN = ("847230", "3 ML insulin glargine 100 UNT/ML Pen Injector")
HCTZ_25 = ("310798", "Hydrochlorothiazide 25 MG Oral Tablet")
APIXABAN_5 = ("1364445", "apixaban 5 MG Oral Tablet")
ASPIRIN_81 = ("243670", "aspirin 81 MG Oral Tablet")
LITHIUM_300 = ("197889", "lithium carbonate 300 MG Oral Capsule")
NAPROXEN_500 = ("105899", "naproxen 500 MG Oral Tablet [Naprosyn]")
AMIODARONE_200 = ("833528", "amiodarone hydrochloride 200 MG Oral Tablet")
FUROSEMIDE_40 = ("313988", "furosemide 40 MG Oral Tablet")
# public RxNorm lists (FHIR examples): 309362
CLOPIDOGREL_75 = ("309362", "clopidogrel 75 MG Oral Tablet")
# RxNorm ingredients (IN): the product, strength and regimen are in the request's text
TACROLIMUS = ("42316", "tacrolimus")
CICLOSPORIN = ("3008", "cyclosporine")
SIROLIMUS = ("35302", "sirolimus")
MYCOPHENOLATE = ("68149", "mycophenolate mofetil")
VORICONAZOLE = ("121243", "voriconazole")
FLUCONAZOLE = ("4450", "fluconazole")
RIFAMPICIN = ("9384", "rifampin")
ISONIAZID = ("6038", "isoniazid")
PYRAZINAMIDE = ("8987", "pyrazinamide")
ETHAMBUTOL = ("4110", "ethambutol")
CARBAMAZEPINE = ("2002", "carbamazepine")
SIMVASTATIN = ("36567", "simvastatin")
RITONAVIR = ("85762", "ritonavir")
DARUNAVIR = ("460132", "darunavir")
ATAZANAVIR = ("343047", "atazanavir")
LOPINAVIR = ("195088", "lopinavir")
ABACAVIR = ("190521", "abacavir")
LAMIVUDINE = ("68244", "lamivudine")
DOLUTEGRAVIR = ("1433868", "dolutegravir")
FLUTICASONE = ("41126", "fluticasone")
SILDENAFIL = ("136411", "sildenafil")
TRIAZOLAM = ("10767", "triazolam")
CALCIUM_CARBONATE = ("1897", "calcium carbonate")
CETIRIZINE = ("20610", "cetirizine")
GLICLAZIDE = ("4816", "gliclazide")
INSULIN_LISPRO = ("86009", "insulin lispro")
DOXAZOSIN = ("49276", "doxazosin")
RIVAROXABAN = ("1114195", "rivaroxaban")
OMEPRAZOLE = ("7646", "omeprazole")
TAMOXIFEN = ("10324", "tamoxifen")
PAROXETINE = ("32937", "paroxetine")
DIGOXIN = ("3407", "digoxin")
PHENYTOIN = ("8183", "phenytoin")
FLUOXETINE = ("4493", "fluoxetine")
CLOZAPINE = ("2626", "clozapine")
CIPROFLOXACIN = ("2551", "ciprofloxacin")

INHALED = second.INHALED
ED = second.ED
KIDNEY_TRANSPLANT = ("70536003", "Transplantation of kidney (procedure)")
KIDNEY_TRANSPLANT_HISTORY = ("161665007", "History of renal transplant (situation)")
HIV = ("86406008", "Human immunodeficiency virus infection (disorder)")
HYPOGLYCAEMIA = ("302866003", "Hypoglycemia (disorder)")

# LOINC of the drug levels and the other tests these patients need
TACROLIMUS_LEVEL = ("11253-2", "Tacrolimus [Mass/volume] in Blood")
TACROLIMUS_TROUGH = ("77348-1", "Tacrolimus [Mass/volume] in Blood --trough")
CICLOSPORIN_TROUGH = ("53828-0", "cycloSPORINE [Mass/volume] in Blood --trough")
SIROLIMUS_LEVEL = ("29247-4", "Sirolimus [Mass/volume] in Blood")
DIGOXIN_LEVEL = ("10535-3", "Digoxin [Mass/volume] in Serum or Plasma")
PHENYTOIN_LEVEL = ("3968-5", "Phenytoin [Mass/volume] in Serum or Plasma")
CARBAMAZEPINE_LEVEL = ("3432-2", "Carbamazepine [Mass/volume] in Serum or Plasma")
LITHIUM_LEVEL = ("14334-7", "Lithium [Moles/volume] in Serum or Plasma")
VIRAL_LOAD = (
    "20447-9",
    "HIV 1 RNA [#/volume] (viral load) in Serum or Plasma by NAA with probe detection",
)
CD4 = ("24467-3", "CD3+CD4+ (T4 helper) cells [#/volume] in Blood")
HBA1C = ("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood")
CK = ("2157-6", "Creatine kinase [Enzymatic activity/volume] in Serum or Plasma")
ALT = ("1742-6", "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma")


class Record(second.Record):  # type: ignore[misc,name-defined]
    """The second set's builder with this set's namespace and a Procedure."""

    ns = NS

    def procedure(self, code: tuple[str, str], when: str) -> str:
        return str(
            self._add(
                {
                    "resourceType": "Procedure",
                    "status": "completed",
                    "code": {
                        "coding": [{"system": SCT, "code": code[0], "display": code[1]}],
                        "text": code[1],
                    },
                    "subject": self.subject,
                    "performedDateTime": when,
                }
            )
        )

    def level(self, test: tuple[str, str], value: float, unit: str, when: str) -> str:
        return str(self.lab(test[0], test[1], value, unit, when))

    def hiv_markers(self, when: str, copies: float, cd4: int) -> None:
        self.level(VIRAL_LOAD, copies, "{copies}/mL", when)
        self.level(CD4, cd4, "/uL", when)

    def kidney_transplant(self, when: str, cause: tuple[str, str], cause_onset: str) -> None:
        self.condition(*cause, cause_onset)
        self.condition(*KIDNEY_TRANSPLANT_HISTORY, when)
        self.procedure(KIDNEY_TRANSPLANT, when)


def abacavir_lamivudine(r: Record, since: str) -> None:
    r.med2(ABACAVIR, since, 600, "mg", "abacavir 600 mg once daily (abacavir/lamivudine tablet)")
    r.med2(
        LAMIVUDINE, since, 300, "mg", "lamivudine 300 mg once daily (abacavir/lamivudine tablet)"
    )


def dolutegravir_lamivudine(r: Record, since: str, text: str) -> None:
    r.med2(DOLUTEGRAVIR, since, 50, "mg", f"dolutegravir 50 mg {text} (dolutegravir/lamivudine)")
    r.med2(LAMIVUDINE, since, 300, "mg", f"lamivudine 300 mg {text} (dolutegravir/lamivudine)")


def tuberculosis_treatment(r: Record, since: str, weight: float) -> None:
    r.med2(RIFAMPICIN, since, 600, "mg", "rifampicin 600 mg once daily before breakfast")
    r.med2(ISONIAZID, since, 300, "mg", "isoniazid 300 mg once daily")
    r.med2(PYRAZINAMIDE, since, 1500 if weight < 75 else 2000, "mg", "pyrazinamide once daily")
    r.med2(ETHAMBUTOL, since, 1100 if weight < 75 else 1400, "mg", "ethambutol once daily")


# --- transplant and immunosuppression ---------------------------------------------------------


def tacrolimus_clarithromycin() -> Record:
    """52, kidney transplant 2019 on tacrolimus; clarithromycin started eight days ago for
    pneumonia; tacrolimus 18.6 ng/mL (7.4 in September), creatinine up from 1.38 to 1.95,
    potassium 5.7, a new tremor."""
    r = Record("tacrolimus_clarithromycin", "Daniel", "Okonkwo", "male", "1974-02-11")
    r.kidney_transplant(
        "2019-06-14", ("28770003", "Polycystic kidney disease, adult type (disorder)"), "2005-03-02"
    )
    r.condition("59621000", "Essential hypertension (disorder)", "2012-08-20")
    r.condition("385093006", "Community acquired pneumonia (disorder)", "2026-11-22")
    r.condition("26079004", "Tremor (finding)", "2026-11-26")
    r.med2(
        TACROLIMUS, "2019-06-14", 3, "mg", "tacrolimus 1 mg capsules: 3 mg every 12 hours", times=2
    )
    r.med2(
        MYCOPHENOLATE, "2019-06-14", 1000, "mg", "mycophenolate mofetil 1 g twice daily", times=2
    )
    r.med2(PREDNISOLONE_5, "2019-06-14", 5, "mg", "5 mg each morning")
    r.med2(AMLODIPINE_5, "2012-08-20", 5, "mg", "5 mg once daily")
    r.med2(CLARITHROMYCIN_500, "2026-11-22", 500, "mg", "500 mg twice daily for 7 days", times=2)
    r.level(TACROLIMUS_LEVEL, 7.4, "ng/mL", "2026-09-14")
    r.renal("2026-09-14", 58, 1.38, 4.6, 139)
    r.level(TACROLIMUS_LEVEL, 18.6, "ng/mL", "2026-11-27")
    r.renal("2026-11-27", 39, 1.95, 5.7, 137)
    r.blood_count("2026-11-27", 12.4, 11.8, 214)
    r.bp("2026-11-27", 152, 92)
    r.vitals("2026-11-27", 78.0, 176.0, 92)
    r.vaccine(*FLU_STANDARD, "2026-10-06")
    return r


def ciclosporin_simvastatin() -> Record:
    """58, heart transplant 2015 on ciclosporin (trough in range); simvastatin 40 mg started
    in August; muscle pain for twelve days and creatine kinase 2850 U/L."""
    r = Record("ciclosporin_simvastatin", "Helen", "Marsh", "female", "1968-05-03")
    r.condition("399020009", "Dilated cardiomyopathy (disorder)", "2009-01-19")
    r.procedure(("32413006", "Transplantation of heart (procedure)"), "2015-03-09")
    r.condition("55822004", "Hyperlipidemia (disorder)", "2016-05-11")
    r.condition("59621000", "Essential hypertension (disorder)", "2016-05-11")
    r.condition("68962001", "Muscle pain (finding)", "2026-11-18")
    r.med2(
        CICLOSPORIN, "2015-03-09", 125, "mg", "ciclosporin (Neoral) 125 mg every 12 hours", times=2
    )
    r.med2(
        MYCOPHENOLATE, "2015-03-09", 1000, "mg", "mycophenolate mofetil 1 g twice daily", times=2
    )
    r.med2(RAMIPRIL_5, "2016-05-11", 5, "mg", "5 mg once daily")
    r.med2(SIMVASTATIN, "2026-08-10", 40, "mg", "simvastatin 40 mg tablet at night")
    r.level(CICLOSPORIN_TROUGH, 162, "ng/mL", "2026-11-24")
    r.level(CK, 2850, "U/L", "2026-11-24")
    r.level(ALT, 64, "U/L", "2026-11-24")
    r.renal("2026-08-03", 58, 1.08, 4.8, 140)
    r.renal("2026-11-24", 51, 1.2, 5.0, 139)
    r.bp("2026-11-24", 134, 82)
    r.vitals("2026-11-24", 66.0, 165.0, 84)
    r.vaccine(*FLU_STANDARD, "2026-10-13")
    return r


def tacrolimus_voriconazole() -> Record:
    """46, liver transplant 2021 on tacrolimus; voriconazole started six days ago for
    aspergillosis; the last tacrolimus trough (6.9) was before voriconazole, none since."""
    r = Record("tacrolimus_voriconazole", "Marco", "Bellini", "male", "1980-09-19")
    r.condition("420054005", "Alcoholic cirrhosis (disorder)", "2018-04-23")
    r.procedure(("18027006", "Transplantation of liver (procedure)"), "2021-02-17")
    r.condition("65553006", "Aspergillosis (disorder)", "2026-11-24")
    r.med2(
        TACROLIMUS, "2021-02-17", 4, "mg", "tacrolimus 1 mg capsules: 4 mg every 12 hours", times=2
    )
    r.med2(
        MYCOPHENOLATE, "2021-02-17", 500, "mg", "mycophenolate mofetil 500 mg twice daily", times=2
    )
    r.med2(
        VORICONAZOLE,
        "2026-11-24",
        200,
        "mg",
        "voriconazole 200 mg tablet every 12 hours (after loading), for aspergillosis",
        times=2,
    )
    r.level(TACROLIMUS_TROUGH, 6.9, "ng/mL", "2026-10-20")
    r.renal("2026-10-20", 84, 1.02, 4.3, 140)
    r.level(ALT, 31, "U/L", "2026-11-24")
    r.renal("2026-11-24", 82, 1.05, 4.4, 139)
    r.bp("2026-11-24", 128, 80)
    r.vitals("2026-11-24", 74.0, 180.0, 78)
    r.vaccine(*FLU_STANDARD, "2026-10-01")
    return r


def tacrolimus_rifampicin() -> Record:
    """43, kidney transplant 2022 on tacrolimus; pulmonary tuberculosis treated with rifampicin,
    isoniazid, pyrazinamide and ethambutol for a month; tacrolimus trough 2.1 ng/mL (6.8 before),
    creatinine up from 1.2 to 1.6; no pyridoxine."""
    r = Record("tacrolimus_rifampicin", "Kwame", "Mensah", "male", "1983-04-17")
    r.kidney_transplant("2022-05-30", ("236407003", "IgA nephropathy (disorder)"), "2016-09-12")
    r.condition("154283005", "Pulmonary tuberculosis (disorder)", "2026-10-26")
    r.med2(
        TACROLIMUS, "2022-05-30", 4, "mg", "tacrolimus 1 mg capsules: 4 mg every 12 hours", times=2
    )
    r.med2(
        MYCOPHENOLATE, "2022-05-30", 750, "mg", "mycophenolate mofetil 750 mg twice daily", times=2
    )
    r.med2(PREDNISOLONE_5, "2022-05-30", 5, "mg", "5 mg each morning")
    tuberculosis_treatment(r, "2026-10-28", 68.0)
    r.level(TACROLIMUS_TROUGH, 6.8, "ng/mL", "2026-10-20")
    r.renal("2026-10-20", 72, 1.2, 4.4, 139)
    r.level(TACROLIMUS_TROUGH, 2.1, "ng/mL", "2026-11-25")
    r.renal("2026-11-25", 52, 1.6, 4.6, 138)
    r.level(ALT, 42, "U/L", "2026-11-25")
    r.bp("2026-11-25", 136, 84)
    r.vitals("2026-11-25", 68.0, 178.0, 86)
    r.vaccine(*FLU_STANDARD, "2026-10-08")
    return r


def sirolimus_carbamazepine() -> Record:
    """56, kidney transplant 2014, on sirolimus since a skin cancer in 2020; carbamazepine
    started in September for trigeminal neuralgia; sirolimus 2.6 ng/mL (7.1 in August)."""
    r = Record("sirolimus_carbamazepine", "Peter", "Lindgren", "male", "1970-07-21")
    r.kidney_transplant("2014-11-03", ("236407003", "IgA nephropathy (disorder)"), "2009-02-18")
    r.condition("402815007", "Squamous cell carcinoma of skin (disorder)", "2020-04-06")
    r.condition("31681005", "Trigeminal neuralgia (disorder)", "2026-09-08")
    r.med2(SIROLIMUS, "2020-05-11", 2, "mg", "sirolimus 1 mg tablets: 2 mg once daily")
    r.med2(PREDNISOLONE_5, "2014-11-03", 5, "mg", "5 mg each morning")
    r.med2(
        CARBAMAZEPINE,
        "2026-09-08",
        400,
        "mg",
        "carbamazepine 200 mg tablets: 400 mg twice daily for trigeminal neuralgia",
        times=2,
    )
    r.med2(ATORVASTATIN_20, "2020-05-11", 20, "mg", "20 mg at night")
    r.level(SIROLIMUS_LEVEL, 7.1, "ng/mL", "2026-08-12")
    r.renal("2026-08-12", 56, 1.38, 4.5, 139)
    r.level(SIROLIMUS_LEVEL, 2.6, "ng/mL", "2026-11-20")
    r.renal("2026-11-20", 54, 1.42, 4.4, 134)
    r.bp("2026-11-20", 132, 80)
    r.vitals("2026-11-20", 81.0, 182.0, 70)
    r.vaccine(*FLU_STANDARD, "2026-10-14")
    return r


def stable_kidney_transplant() -> Record:
    """Negative control. 50, kidney transplant 2017 on tacrolimus (6.4 ng/mL, in range and
    stable), mycophenolate and prednisolone; no interacting medicine; kidney function stable."""
    r = Record("stable_kidney_transplant", "Tomasz", "Nowak", "male", "1976-10-05")
    r.kidney_transplant("2017-09-21", ("236407003", "IgA nephropathy (disorder)"), "2011-04-05")
    r.condition("59621000", "Essential hypertension (disorder)", "2017-09-21")
    r.med2(
        TACROLIMUS, "2017-09-21", 2, "mg", "tacrolimus 1 mg capsules: 2 mg every 12 hours", times=2
    )
    r.med2(
        MYCOPHENOLATE, "2017-09-21", 500, "mg", "mycophenolate mofetil 500 mg twice daily", times=2
    )
    r.med2(PREDNISOLONE_5, "2017-09-21", 5, "mg", "5 mg each morning")
    r.med2(AMLODIPINE_5, "2017-09-21", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2018-03-14", 20, "mg", "20 mg at night")
    r.level(TACROLIMUS_LEVEL, 6.9, "ng/mL", "2026-08-17")
    r.renal("2026-08-17", 64, 1.24, 4.5, 140)
    r.level(TACROLIMUS_LEVEL, 6.4, "ng/mL", "2026-11-16")
    r.renal("2026-11-16", 64, 1.25, 4.5, 140)
    r.blood_count("2026-11-16", 13.8, 6.2, 241)
    r.lab(HBA1C[0], HBA1C[1], 5.4, "%", "2026-11-16")
    r.bp("2026-11-16", 128, 78)
    r.vitals("2026-11-16", 79.0, 177.0, 72)
    r.vaccine(*FLU_STANDARD, "2026-10-05")
    return r


# --- HIV on antiretrovirals -------------------------------------------------------------------


def ritonavir_fluticasone() -> Record:
    """41, HIV on darunavir boosted with ritonavir; asthma on high-dose inhaled fluticasone
    (500 micrograms twice daily with salmeterol); Cushing's syndrome this autumn and a morning
    cortisol of 1.1 micrograms/dL."""
    r = Record("ritonavir_fluticasone", "Samuel", "Adeyemi", "male", "1985-01-14")
    r.condition(*HIV, "2016-04-11")
    r.condition("195967001", "Asthma (disorder)", "1995-06-01")
    r.condition("47270006", "Cushing's syndrome (disorder)", "2026-10-27")
    r.med2(DARUNAVIR, "2019-02-04", 800, "mg", "darunavir 800 mg once daily with food")
    r.med2(RITONAVIR, "2019-02-04", 100, "mg", "ritonavir 100 mg once daily with darunavir")
    abacavir_lamivudine(r, "2019-02-04")
    r.med2(
        FLUTICASONE,
        "2025-11-18",
        500,
        "ug",
        "fluticasone propionate 500 micrograms / salmeterol 50 micrograms dry powder inhaler: "
        "one inhalation twice daily",
        times=2,
        route=INHALED,
    )
    r.lab("2143-6", "Cortisol [Mass/volume] in Serum or Plasma", 1.1, "ug/dL", "2026-11-10")
    r.hiv_markers("2026-11-10", 20, 540)
    r.renal("2026-11-10", 96, 0.98, 4.1, 140)
    r.lab(HBA1C[0], HBA1C[1], 6.1, "%", "2026-11-10")
    r.bp("2026-11-10", 146, 92)
    r.vitals("2026-11-10", 92.0, 178.0, 80)
    r.vaccine(*FLU_STANDARD, "2026-10-02")
    return r


def atazanavir_simvastatin() -> Record:
    """57, HIV on atazanavir boosted with ritonavir; simvastatin 40 mg started six weeks ago for
    an LDL of 4.2 mmol/L; creatine kinase 310 U/L."""
    r = Record("atazanavir_simvastatin", "Robert", "Kowalczyk", "male", "1969-08-25")
    r.condition(*HIV, "2008-03-17")
    r.condition("55822004", "Hyperlipidemia (disorder)", "2026-10-12")
    r.condition("59621000", "Essential hypertension (disorder)", "2021-06-08")
    r.med2(ATAZANAVIR, "2014-07-21", 300, "mg", "atazanavir 300 mg once daily with food")
    r.med2(RITONAVIR, "2014-07-21", 100, "mg", "ritonavir 100 mg once daily with atazanavir")
    abacavir_lamivudine(r, "2014-07-21")
    r.med2(AMLODIPINE_5, "2021-06-08", 5, "mg", "5 mg once daily")
    r.med2(SIMVASTATIN, "2026-10-12", 40, "mg", "simvastatin 40 mg tablet at night")
    r.lab(
        "13457-7",
        "Cholesterol in LDL [Mass/volume] in Serum or Plasma by calculation",
        162,
        "mg/dL",
        "2026-09-28",
    )
    r.level(CK, 310, "U/L", "2026-11-23")
    r.level(ALT, 41, "U/L", "2026-11-23")
    r.hiv_markers("2026-09-28", 20, 610)
    r.renal("2026-11-23", 84, 1.02, 4.2, 140)
    r.bp("2026-11-23", 134, 82)
    r.vitals("2026-11-23", 86.0, 175.0, 74)
    r.smoking("2026-11-23", second.FORMER_SMOKER)
    r.vaccine(*FLU_STANDARD, "2026-10-12")
    return r


def lopinavir_sildenafil_triazolam() -> Record:
    """50, HIV on lopinavir boosted with ritonavir; sildenafil 100 mg as needed for erectile
    dysfunction; triazolam 0.25 mg at night started last month for insomnia."""
    r = Record("lopinavir_sildenafil_triazolam", "Luis", "Ferreira", "male", "1976-06-09")
    r.condition(*HIV, "2012-01-23")
    r.condition("860914002", "Erectile dysfunction (disorder)", "2025-04-14")
    r.condition("193462001", "Insomnia (disorder)", "2026-10-30")
    r.med2(
        LOPINAVIR,
        "2013-05-06",
        400,
        "mg",
        "lopinavir 400 mg twice daily (lopinavir/ritonavir 200/50 mg, two tablets)",
        times=2,
    )
    r.med2(
        RITONAVIR,
        "2013-05-06",
        100,
        "mg",
        "ritonavir 100 mg twice daily (in lopinavir/ritonavir)",
        times=2,
    )
    abacavir_lamivudine(r, "2013-05-06")
    r.med2(
        SILDENAFIL,
        "2025-04-14",
        100,
        "mg",
        "sildenafil 100 mg tablet one hour before sexual activity, as needed",
        prn=True,
    )
    r.med2(TRIAZOLAM, "2026-10-30", 0.25, "mg", "triazolam 0.25 mg tablet at bedtime")
    r.hiv_markers("2026-10-12", 20, 580)
    r.renal("2026-10-12", 88, 1.0, 4.3, 141)
    r.bp("2026-10-12", 126, 78)
    r.vitals("2026-10-12", 77.0, 172.0, 70)
    r.vaccine(*FLU_STANDARD, "2026-10-12")
    return r


def dolutegravir_calcium() -> Record:
    """45, HIV on dolutegravir/lamivudine taken at breakfast together with calcium carbonate;
    viral load 420 copies/mL after years undetectable."""
    r = Record("dolutegravir_calcium", "Ahmed", "Rahimi", "male", "1981-11-30")
    r.condition(*HIV, "2019-07-08")
    r.condition("312894000", "Osteopenia (disorder)", "2026-06-15")
    dolutegravir_lamivudine(r, "2021-03-15", "once daily with breakfast")
    r.med2(
        CALCIUM_CARBONATE,
        "2026-06-15",
        1250,
        "mg",
        "calcium carbonate 1250 mg (500 mg calcium) twice daily, with breakfast and evening meal",
        times=2,
    )
    r.hiv_markers("2026-03-10", 20, 690)
    r.hiv_markers("2026-11-12", 420, 640)
    r.renal("2026-11-12", 92, 1.0, 4.2, 140)
    r.lab("17861-6", "Calcium [Mass/volume] in Serum or Plasma", 9.6, "mg/dL", "2026-11-12")
    r.bp("2026-11-12", 124, 76)
    r.vitals("2026-11-12", 71.0, 174.0, 68)
    r.vaccine(*FLU_STANDARD, "2026-10-20")
    return r


def darunavir_rifampicin() -> Record:
    """36, HIV on darunavir boosted with ritonavir; pulmonary tuberculosis diagnosed two weeks ago
    and rifampicin-based treatment started; no pyridoxine."""
    r = Record("darunavir_rifampicin", "Tendai", "Moyo", "male", "1990-03-03")
    r.condition(*HIV, "2020-01-27")
    r.condition("154283005", "Pulmonary tuberculosis (disorder)", "2026-11-16")
    r.med2(DARUNAVIR, "2020-02-10", 800, "mg", "darunavir 800 mg once daily with food")
    r.med2(RITONAVIR, "2020-02-10", 100, "mg", "ritonavir 100 mg once daily with darunavir")
    abacavir_lamivudine(r, "2020-02-10")
    tuberculosis_treatment(r, "2026-11-18", 61.0)
    r.hiv_markers("2026-08-24", 20, 310)
    r.level(ALT, 35, "U/L", "2026-11-16")
    r.renal("2026-11-16", 104, 0.92, 4.0, 138)
    r.blood_count("2026-11-16", 12.9, 5.1, 298)
    r.bp("2026-11-16", 118, 72)
    r.vitals("2026-11-16", 61.0, 181.0, 92)
    return r


def unboosted_hiv_stable() -> Record:
    """Negative control. 29, HIV on dolutegravir/lamivudine, suppressed; cetirizine as needed for
    hay fever; nothing that interacts."""
    r = Record("unboosted_hiv_stable", "Jonah", "Whitfield", "male", "1997-05-20")
    r.condition(*HIV, "2023-02-06")
    r.condition("61582004", "Allergic rhinitis (disorder)", "2015-05-01")
    dolutegravir_lamivudine(r, "2023-02-20", "once daily")
    r.med2(
        CETIRIZINE, "2015-05-01", 10, "mg", "cetirizine 10 mg tablet once daily as needed", prn=True
    )
    r.hiv_markers("2026-05-18", 20, 690)
    r.hiv_markers("2026-11-16", 20, 720)
    r.renal("2026-11-16", 118, 0.94, 4.2, 141)
    r.bp("2026-11-16", 122, 74)
    r.vitals("2026-11-16", 73.0, 181.0, 64)
    r.smoking("2026-11-16", ("266919005", "Never smoked tobacco (finding)"))
    r.vaccine(*FLU_STANDARD, "2026-10-22")
    return r


# --- glucose lowering and blood pressure treatment gone too far -------------------------------


def sulfonylurea_insulin_hypoglycaemia() -> Record:
    """60, type 2 diabetes on gliclazide 160 mg twice daily, insulin glargine and metformin;
    HbA1c 5.9 %; two hypoglycaemia episodes, one seen in the emergency department; CKD 3a."""
    r = Record("sulfonylurea_insulin_hypoglycaemia", "Gareth", "Pryce", "male", "1966-01-28")
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "2009-05-18")
    r.condition("700378005", "Chronic kidney disease stage 3A (disorder)", "2025-07-22")
    r.condition(*HYPOGLYCAEMIA, "2026-10-19", "resolved", "2026-10-19")
    r.encounter(*ED, "2026-10-19", HYPOGLYCAEMIA)
    r.lab("2339-0", "Glucose [Mass/volume] in Blood", 44, "mg/dL", "2026-10-19")
    r.condition(*HYPOGLYCAEMIA, "2026-11-14", "resolved", "2026-11-14")
    r.med2(
        GLICLAZIDE, "2013-09-02", 160, "mg", "gliclazide 80 mg tablets: 160 mg twice daily", times=2
    )
    r.med(GLARGINE_PEN, "2019-01-21", 30, "[iU]", 1, "30 units subcutaneously at night")
    r.med2(METFORMIN_1000, "2009-05-18", 1000, "mg", "1000 mg twice daily with meals", times=2)
    r.med2(RAMIPRIL_5, "2015-03-09", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2012-06-11", 20, "mg", "20 mg at night")
    r.lab(HBA1C[0], HBA1C[1], 6.2, "%", "2026-05-11")
    r.lab(HBA1C[0], HBA1C[1], 5.9, "%", "2026-11-14")
    r.renal("2026-11-14", 52, 1.48, 4.6, 139)
    r.bp("2026-11-14", 130, 76)
    r.vitals("2026-11-14", 88.0, 175.0, 76)
    r.vaccine(*FLU_STANDARD, "2026-10-05")
    return r


def type1_insulin_hypoglycaemia() -> Record:
    """45, type 1 diabetes on basal-bolus insulin; HbA1c 5.6 %; severe hypoglycaemia (glucose
    34 mg/dL) treated in the emergency department last month."""
    r = Record("type1_insulin_hypoglycaemia", "Claire", "Donnelly", "female", "1981-08-12")
    r.condition("46635009", "Diabetes mellitus type 1 (disorder)", "1995-02-20")
    r.condition(*HYPOGLYCAEMIA, "2026-10-28", "resolved", "2026-10-28")
    r.encounter(*ED, "2026-10-28", HYPOGLYCAEMIA)
    r.lab("2339-0", "Glucose [Mass/volume] in Blood", 34, "mg/dL", "2026-10-28")
    r.med(GLARGINE_PEN, "2010-06-07", 24, "[iU]", 1, "24 units subcutaneously at night")
    r.med(
        INSULIN_LISPRO,
        "2010-06-07",
        8,
        "[iU]",
        3,
        "insulin lispro 6 to 8 units subcutaneously with each meal",
    )
    r.lab(HBA1C[0], HBA1C[1], 6.0, "%", "2026-05-04")
    r.lab(HBA1C[0], HBA1C[1], 5.6, "%", "2026-11-02")
    r.renal("2026-11-02", 102, 0.7, 4.2, 140)
    r.lab("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma", 2.1, "m[IU]/L", "2026-11-02")
    r.bp("2026-11-02", 118, 72)
    r.vitals("2026-11-02", 62.0, 166.0, 70)
    r.vaccine(*FLU_STANDARD, "2026-10-09")
    return r


def frail_hypotension_antihypertensives() -> Record:
    """64, frail with multiple sclerosis; four antihypertensives (amlodipine 10 mg, ramipril
    10 mg, hydrochlorothiazide, doxazosin); blood pressure 96/58 and 100/60, two falls, postural
    hypotension."""
    r = Record("frail_hypotension_antihypertensives", "Nigel", "Ashby", "male", "1962-04-04")
    r.condition("24700007", "Multiple sclerosis (disorder)", "2004-10-11")
    r.condition("248279007", "Frailty (finding)", "2025-09-15")
    r.condition("59621000", "Essential hypertension (disorder)", "2005-03-14")
    r.condition("217082002", "Accidental fall (event)", "2026-10-02")
    r.condition("217082002", "Accidental fall (event)", "2026-11-09")
    r.encounter(*ED, "2026-11-09", ("217082002", "Accidental fall (event)"))
    r.condition("28651003", "Orthostatic hypotension (disorder)", "2026-11-09")
    r.med2(AMLODIPINE_5, "2005-03-14", 10, "mg", "10 mg (two 5 mg tablets) once daily")
    r.med2(RAMIPRIL_5, "2008-07-01", 10, "mg", "10 mg (two 5 mg capsules) once daily")
    r.med2(HCTZ_25, "2012-02-20", 25, "mg", "25 mg each morning")
    r.med2(DOXAZOSIN, "2016-11-28", 4, "mg", "doxazosin 4 mg tablet once daily")
    r.bp("2026-11-09", 96, 58)
    r.renal("2026-11-09", 55, 1.38, 4.0, 133)
    r.bp("2026-11-24", 100, 60)
    r.vitals("2026-11-24", 58.0, 174.0, 68)
    r.vaccine(*FLU_STANDARD, "2026-10-02")
    return r


def rivaroxaban_no_indication() -> Record:
    """54, a provoked deep vein thrombosis after knee surgery in March 2023 (resolved), still on
    rivaroxaban 20 mg three and a half years later; heavy menstrual bleeding and iron-deficiency
    anaemia (haemoglobin 10.4, ferritin 9)."""
    r = Record("rivaroxaban_no_indication", "Sandra", "Kowalski", "female", "1972-02-18")
    r.condition(
        "128053003", "Deep venous thrombosis (disorder)", "2023-03-02", "resolved", "2023-06-02"
    )
    r.condition("386692008", "Menorrhagia (disorder)", "2026-08-17")
    r.condition("87522002", "Iron deficiency anemia (disorder)", "2026-11-19")
    r.med2(RIVAROXABAN, "2023-03-02", 20, "mg", "rivaroxaban 20 mg tablet once daily with food")
    r.blood_count("2026-11-19", 10.4, 6.1, 388)
    r.lab("2276-4", "Ferritin [Mass/volume] in Serum or Plasma", 9, "ng/mL", "2026-11-19")
    r.renal("2026-11-19", 96, 0.72, 4.1, 140)
    r.bp("2026-11-19", 124, 78)
    r.vitals("2026-11-19", 70.0, 166.0, 84)
    r.vaccine(*FLU_STANDARD, "2026-10-20")
    return r


def type2_diabetes_controlled() -> Record:
    """Negative control. 56, type 2 diabetes on metformin and gliclazide 80 mg twice daily with
    HbA1c 7.1 % and no hypoglycaemia; blood pressure and lipids treated."""
    r = Record("type2_diabetes_controlled", "Imran", "Qureshi", "male", "1969-12-12")
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "2015-04-13")
    r.condition("59621000", "Essential hypertension (disorder)", "2017-01-09")
    r.med2(METFORMIN_1000, "2015-04-13", 1000, "mg", "1000 mg twice daily with meals", times=2)
    r.med2(GLICLAZIDE, "2018-10-01", 80, "mg", "gliclazide 80 mg tablet twice daily", times=2)
    r.med2(RAMIPRIL_5, "2017-01-09", 5, "mg", "5 mg once daily")
    r.med2(ATORVASTATIN_20, "2015-04-13", 20, "mg", "20 mg at night")
    r.lab(HBA1C[0], HBA1C[1], 7.2, "%", "2026-05-18")
    r.lab(HBA1C[0], HBA1C[1], 7.1, "%", "2026-11-16")
    r.lab(
        "13457-7",
        "Cholesterol in LDL [Mass/volume] in Serum or Plasma by calculation",
        82,
        "mg/dL",
        "2026-11-16",
    )
    r.lab("14959-1", "Microalbumin/Creatinine [Mass Ratio] in Urine", 12, "mg/g", "2026-11-16")
    r.renal("2026-11-16", 84, 0.98, 4.4, 140)
    r.bp("2026-11-16", 126, 76)
    r.vitals("2026-11-16", 84.0, 174.0, 72)
    r.smoking("2026-11-16", ("266919005", "Never smoked tobacco (finding)"))
    r.vaccine(*FLU_STANDARD, "2026-10-14")
    return r


# --- other adults: interactions by mechanism, drug levels -------------------------------------


def fluconazole_glimepiride() -> Record:
    """58, type 2 diabetes on glimepiride 4 mg; fluconazole 200 mg daily for 14 days started six
    days ago for skin candidiasis; a finger-prick glucose of 58 mg/dL two days ago."""
    r = Record("fluconazole_glimepiride", "Maria", "Santos", "female", "1968-07-07")
    r.condition("44054006", "Diabetes mellitus type 2 (disorder)", "2014-02-24")
    r.condition("78048006", "Candidiasis (disorder)", "2026-11-24")
    r.med2(GLIMEPIRIDE_4, "2017-08-14", 4, "mg", "4 mg once daily with breakfast")
    r.med2(METFORMIN_1000, "2014-02-24", 1000, "mg", "1000 mg twice daily with meals", times=2)
    r.med2(
        FLUCONAZOLE, "2026-11-24", 200, "mg", "fluconazole 200 mg capsule once daily for 14 days"
    )
    r.lab(HBA1C[0], HBA1C[1], 6.8, "%", "2026-10-19")
    r.lab(
        "41653-7",
        "Glucose [Mass/volume] in Capillary blood by Glucometer",
        58,
        "mg/dL",
        "2026-11-28",
    )
    r.renal("2026-10-19", 88, 0.78, 4.3, 140)
    r.bp("2026-10-19", 128, 80)
    r.vitals("2026-10-19", 94.0, 162.0, 78)
    r.vaccine(*FLU_STANDARD, "2026-10-19")
    return r


def clopidogrel_omeprazole() -> Record:
    """62, a drug-eluting stent after a non-ST-elevation myocardial infarction in June, on aspirin
    and clopidogrel, with omeprazole 40 mg for reflux."""
    r = Record("clopidogrel_omeprazole", "Kevin", "Brady", "male", "1964-10-10")
    r.condition(
        "401314000", "Acute non-ST segment elevation myocardial infarction (disorder)", "2026-06-15"
    )
    r.condition("235595009", "Gastroesophageal reflux disease (disorder)", "2019-03-04")
    r.condition("59621000", "Essential hypertension (disorder)", "2016-09-26")
    r.med2(CLOPIDOGREL_75, "2026-06-16", 75, "mg", "75 mg once daily")
    r.med2(ASPIRIN_81, "2026-06-15", 81, "mg", "81 mg once daily")
    r.med2(
        OMEPRAZOLE, "2019-03-04", 40, "mg", "omeprazole 40 mg delayed-release capsule once daily"
    )
    r.med2(ATORVASTATIN_40, "2026-06-16", 80, "mg", "80 mg (two 40 mg tablets) at night")
    r.med2(BISOPROLOL_5, "2026-06-16", 5, "mg", "5 mg once daily")
    r.med2(RAMIPRIL_5, "2016-09-26", 5, "mg", "5 mg once daily")
    r.lab(
        "13457-7",
        "Cholesterol in LDL [Mass/volume] in Serum or Plasma by calculation",
        64,
        "mg/dL",
        "2026-10-05",
    )
    r.renal("2026-10-05", 82, 1.02, 4.5, 140)
    r.blood_count("2026-10-05", 14.1, 7.2, 256)
    r.bp("2026-10-05", 124, 76)
    r.vitals("2026-10-05", 90.0, 180.0, 62)
    r.smoking("2026-10-05", second.FORMER_SMOKER)
    r.vaccine(*FLU_STANDARD, "2026-10-05")
    return r


def carbamazepine_apixaban() -> Record:
    """48, epilepsy on carbamazepine 400 mg twice daily for years; an unprovoked pulmonary
    embolism in September, treated with apixaban 5 mg twice daily."""
    r = Record("carbamazepine_apixaban", "Stefan", "Novak", "male", "1978-01-22")
    r.condition("84757009", "Epilepsy (disorder)", "1998-05-11")
    r.condition("59282003", "Pulmonary embolism (disorder)", "2026-09-14")
    r.med2(
        CARBAMAZEPINE,
        "2004-02-02",
        400,
        "mg",
        "carbamazepine 200 mg tablets: 400 mg twice daily",
        times=2,
    )
    r.med2(
        APIXABAN_5,
        "2026-09-21",
        5,
        "mg",
        "5 mg twice daily (after 10 mg twice daily for 7 days)",
        times=2,
    )
    r.level(CARBAMAZEPINE_LEVEL, 7.8, "ug/mL", "2026-06-08")
    r.renal("2026-11-02", 94, 0.96, 4.3, 137)
    r.blood_count("2026-11-02", 14.6, 6.0, 248)
    r.bp("2026-11-02", 128, 80)
    r.vitals("2026-11-02", 84.0, 183.0, 74)
    r.vaccine(*FLU_STANDARD, "2026-10-26")
    return r


def tamoxifen_paroxetine() -> Record:
    """48, oestrogen-receptor-positive breast cancer on adjuvant tamoxifen since 2025; paroxetine
    20 mg started in July for depression and hot flushes."""
    r = Record("tamoxifen_paroxetine", "Anne", "Whitaker", "female", "1978-09-03")
    r.condition("254837009", "Malignant neoplasm of breast (disorder)", "2025-02-10")
    r.condition("35489007", "Depressive disorder (disorder)", "2026-07-01")
    r.med2(TAMOXIFEN, "2025-05-05", 20, "mg", "tamoxifen 20 mg tablet once daily")
    r.med2(PAROXETINE, "2026-07-01", 20, "mg", "paroxetine 20 mg tablet once daily")
    r.renal("2026-10-26", 98, 0.7, 4.2, 140)
    r.bp("2026-10-26", 122, 76)
    r.vitals("2026-10-26", 68.0, 167.0, 74)
    r.vaccine(*FLU_STANDARD, "2026-10-26")
    return r


def lithium_toxicity_naproxen() -> Record:
    """39, bipolar disorder on lithium 1200 mg; naproxen 500 mg twice daily started three weeks
    ago for an ankle sprain; lithium 1.7 mmol/L (0.8 in July), creatinine 1.0 to 1.5, tremor."""
    r = Record("lithium_toxicity_naproxen", "Owen", "Gallagher", "male", "1987-05-15")
    r.condition("13746004", "Bipolar disorder (disorder)", "2010-03-22")
    r.condition("44465007", "Sprain of ankle (disorder)", "2026-11-05")
    r.condition("26079004", "Tremor (finding)", "2026-11-24")
    r.med2(LITHIUM_300, "2011-01-10", 1200, "mg", "1200 mg (four 300 mg capsules) at night")
    r.med2(
        NAPROXEN_500,
        "2026-11-05",
        500,
        "mg",
        "500 mg twice daily with food for ankle pain",
        times=2,
    )
    r.level(LITHIUM_LEVEL, 0.8, "mmol/L", "2026-07-20")
    r.renal("2026-07-20", 98, 1.0, 4.2, 140)
    r.lab("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma", 2.6, "m[IU]/L", "2026-07-20")
    r.level(LITHIUM_LEVEL, 1.7, "mmol/L", "2026-11-27")
    r.renal("2026-11-27", 59, 1.5, 4.6, 143)
    r.bp("2026-11-27", 124, 78)
    r.vitals("2026-11-27", 82.0, 179.0, 88)
    return r


def digoxin_amiodarone() -> Record:
    """60, atrial fibrillation and heart failure with reduced ejection fraction on digoxin
    250 micrograms; amiodarone added two months ago; digoxin 3.2 ng/mL (1.0 in August),
    potassium 3.3, heart rate 46, nausea."""
    r = Record("digoxin_amiodarone", "Colin", "Fraser", "male", "1966-03-30")
    r.condition("49436004", "Atrial fibrillation (disorder)", "2021-05-17")
    r.condition(
        "703272007", "Heart failure with reduced ejection fraction (disorder)", "2021-05-17"
    )
    r.condition("422587007", "Nausea (finding)", "2026-11-20")
    r.med2(DIGOXIN, "2021-06-01", 250, "ug", "digoxin 250 microgram tablet once daily")
    r.med2(AMIODARONE_200, "2026-09-22", 200, "mg", "200 mg once daily (after loading)")
    r.med2(APIXABAN_5, "2021-05-17", 5, "mg", "5 mg twice daily", times=2)
    r.med2(BISOPROLOL_25, "2021-06-01", 2.5, "mg", "2.5 mg once daily")
    r.med2(RAMIPRIL_5, "2021-06-01", 5, "mg", "5 mg once daily")
    r.med2(FUROSEMIDE_40, "2021-05-17", 40, "mg", "40 mg each morning")
    r.level(DIGOXIN_LEVEL, 1.0, "ng/mL", "2026-08-10")
    r.renal("2026-08-10", 74, 1.1, 4.0, 139)
    r.level(DIGOXIN_LEVEL, 3.2, "ng/mL", "2026-11-25")
    r.renal("2026-11-25", 66, 1.22, 3.3, 138)
    r.lab("19123-9", "Magnesium [Mass/volume] in Serum or Plasma", 1.5, "mg/dL", "2026-11-25")
    r.lab("10230-1", "Left ventricular Ejection fraction", 32, "%", "2026-03-09")
    r.bp("2026-11-25", 108, 66)
    r.vitals("2026-11-25", 76.0, 177.0, 46)
    r.vaccine(*FLU_STANDARD, "2026-10-06")
    return r


def phenytoin_fluoxetine() -> Record:
    """35, epilepsy on phenytoin 300 mg for years; fluoxetine 20 mg started in October; phenytoin
    31 micrograms/mL (14 in April), albumin normal, nystagmus and unsteadiness."""
    r = Record("phenytoin_fluoxetine", "Ryan", "Mitchell", "male", "1991-02-14")
    r.condition("84757009", "Epilepsy (disorder)", "2009-08-03")
    r.condition("35489007", "Depressive disorder (disorder)", "2026-10-05")
    r.condition("563001", "Nystagmus (disorder)", "2026-11-23")
    r.med2(
        PHENYTOIN,
        "2012-01-16",
        300,
        "mg",
        "phenytoin sodium 100 mg extended-release capsules: 300 mg at night",
    )
    r.med2(FLUOXETINE, "2026-10-05", 20, "mg", "fluoxetine 20 mg capsule once daily")
    r.level(PHENYTOIN_LEVEL, 14, "ug/mL", "2026-04-14")
    r.level(PHENYTOIN_LEVEL, 31, "ug/mL", "2026-11-26")
    r.lab("1751-7", "Albumin [Mass/volume] in Serum or Plasma", 4.2, "g/dL", "2026-11-26")
    r.renal("2026-11-26", 112, 0.9, 4.3, 140)
    r.bp("2026-11-26", 122, 74)
    r.vitals("2026-11-26", 75.0, 180.0, 72)
    return r


def lithium_never_monitored() -> Record:
    """53, bipolar disorder on lithium 900 mg since March 2024 with ramipril for hypertension; no
    lithium level, thyroid test or calcium ever recorded; the last creatinine predates lithium."""
    r = Record("lithium_never_monitored", "Graham", "Holt", "male", "1973-08-19")
    r.condition("13746004", "Bipolar disorder (disorder)", "2024-02-12")
    r.condition("59621000", "Essential hypertension (disorder)", "2025-05-19")
    r.med2(LITHIUM_300, "2024-03-05", 900, "mg", "900 mg (three 300 mg capsules) at night")
    r.med2(RAMIPRIL_5, "2025-05-19", 5, "mg", "5 mg once daily")
    r.renal("2023-12-11", 88, 0.98, 4.3, 140)
    r.bp("2026-09-14", 132, 82)
    r.vitals("2026-09-14", 91.0, 178.0, 76)
    return r


def clozapine_ciprofloxacin() -> Record:
    """38, schizophrenia stable on clozapine 400 mg a day; ciprofloxacin 500 mg twice daily
    started five days ago for prostatitis; drowsy since."""
    r = Record("clozapine_ciprofloxacin", "Liam", "O'Connor", "male", "1988-11-11")
    r.condition("58214004", "Schizophrenia (disorder)", "2010-02-15")
    r.condition("9713002", "Prostatitis (disorder)", "2026-11-25")
    r.condition("271782001", "Drowsy (finding)", "2026-11-28")
    r.med2(
        CLOZAPINE,
        "2014-06-02",
        400,
        "mg",
        "clozapine 100 mg tablets: 150 mg in the morning and 250 mg at night",
        times=2,
    )
    r.med2(
        CIPROFLOXACIN,
        "2026-11-25",
        500,
        "mg",
        "ciprofloxacin 500 mg tablet twice daily for 28 days",
        times=2,
    )
    r.lab(
        "751-8", "Neutrophils [#/volume] in Blood by Automated count", 4.1, "10*3/uL", "2026-11-02"
    )
    r.blood_count("2026-11-02", 14.8, 7.3, 262)
    r.renal("2026-11-02", 108, 0.94, 4.2, 141)
    r.bp("2026-11-02", 118, 74)
    r.vitals("2026-11-02", 98.0, 182.0, 96)
    r.smoking("2026-11-02", second.CURRENT_SMOKER)
    return r


def carbamazepine_stable() -> Record:
    """Negative control. 44, epilepsy seizure-free on carbamazepine 400 mg twice daily, level
    8.2 micrograms/mL, sodium, liver tests and blood count normal, nothing that interacts."""
    r = Record("carbamazepine_stable", "Marcus", "Hill", "male", "1982-06-06")
    r.condition("84757009", "Epilepsy (disorder)", "2014-09-29")
    r.med2(
        CARBAMAZEPINE,
        "2015-01-12",
        400,
        "mg",
        "carbamazepine 200 mg tablets: 400 mg twice daily",
        times=2,
    )
    r.level(CARBAMAZEPINE_LEVEL, 8.2, "ug/mL", "2026-10-12")
    r.level(ALT, 24, "U/L", "2026-10-12")
    r.renal("2026-10-12", 104, 0.92, 4.3, 138)
    r.blood_count("2026-10-12", 15.0, 6.4, 236)
    r.bp("2026-10-12", 124, 78)
    r.vitals("2026-10-12", 80.0, 181.0, 66)
    r.vaccine(*FLU_STANDARD, "2026-10-12")
    return r


VIGNETTES = (
    tacrolimus_clarithromycin,
    ciclosporin_simvastatin,
    tacrolimus_voriconazole,
    tacrolimus_rifampicin,
    sirolimus_carbamazepine,
    stable_kidney_transplant,
    ritonavir_fluticasone,
    atazanavir_simvastatin,
    lopinavir_sildenafil_triazolam,
    dolutegravir_calcium,
    darunavir_rifampicin,
    unboosted_hiv_stable,
    sulfonylurea_insulin_hypoglycaemia,
    type1_insulin_hypoglycaemia,
    frail_hypotension_antihypertensives,
    rivaroxaban_no_indication,
    type2_diabetes_controlled,
    fluconazole_glimepiride,
    clopidogrel_omeprazole,
    carbamazepine_apixaban,
    tamoxifen_paroxetine,
    lithium_toxicity_naproxen,
    digoxin_amiodarone,
    phenytoin_fluoxetine,
    lithium_never_monitored,
    clozapine_ciprofloxacin,
    carbamazepine_stable,
)


def main() -> None:
    base.write(VIGNETTES, HERE)


if __name__ == "__main__":
    main()
