"""Unit and calendar factors: how many of one unit make another, never a clinical judgement.

A threshold, a window or an equation constant is a named, cited parameter
(``parameters.param``) a site may set; the numbers here are facts of measurement and of the
calendar (a gram is 1000 mg, a week 7 days) and of how an interval is stated in words, the same
for every site. The numeric-literal scan of the knowledge code skips this one module by name.
Constants only: no imports, no logic.
"""

from __future__ import annotations

__all__ = [
    "ACR_MG_G_PER_MG_MMOL",
    "BILIRUBIN_UMOL_L_PER_MG_DL",
    "BOUND_MAX_DECIMALS",
    "CALCIUM_MG_DL_PER_MMOL_L",
    "CHOLESTEROL_MG_DL_PER_MMOL_L",
    "COBALAMIN_PMOL_L_PER_NG_L",
    "CREATININE_UMOL_L_PER_MG_DL",
    "DAYS_PER_FORTNIGHT",
    "DAYS_PER_MONTH",
    "DAYS_PER_WEEK",
    "DAYS_PER_WHOLE_MONTH",
    "DAYS_PER_YEAR",
    "DAYS_STATED_BELOW",
    "DAYS_STATED_IN_YEARS_FROM",
    "FOLATE_NMOL_L_PER_UG_L",
    "FREE_T4_PMOL_L_PER_NG_DL",
    "GLUCOSE_MG_DL_PER_MMOL_L",
    "HBA1C_IFCC_PER_NGSP",
    "HBA1C_NGSP_OFFSET",
    "HBA1C_NGSP_PERCENT_AT_ZERO_IFCC",
    "HBA1C_NGSP_PERCENT_PER_IFCC_MMOL_MOL",
    "HBA1C_PERCENT_DECIMALS",
    "KG_PER_G",
    "KG_PER_LB",
    "MAGNESIUM_MG_DL_PER_MMOL_L",
    "MAX_DAYS_PER_YEAR",
    "MG_PER_G",
    "MG_PER_MCG",
    "ML_PER_L",
    "MONTHS_PER_YEAR",
    "PAIR",
    "PERCENT",
    "PER_DL_PER_L",
    "PER_UL_PER_THOUSAND_PER_UL",
    "PHOSPHATE_MG_DL_PER_MMOL_L",
    "TRIGLYCERIDE_MG_DL_PER_MMOL_L",
    "TWO_DECIMALS_BELOW",
    "URATE_UMOL_L_PER_MG_DL",
    "UREA_NITROGEN_MG_DL_PER_MMOL_L",
    "VITAMIN_D_NMOL_L_PER_NG_ML",
    "WHOLE_NUMBERS_FROM",
]

# volume: millilitres in one litre (ng/mL to ng/L)
ML_PER_L = 1000.0
# mass: milligrams in one gram and in one microgram (doses are compared in mg)
MG_PER_G = 1000.0
MG_PER_MCG = 0.001
# body weight: kilograms in one gram and in one avoirdupois pound (exact, by definition)
KG_PER_G = 0.001
KG_PER_LB = 0.45359237
# creatinine: µmol/L in one mg/dL (molar mass 113.12 g/mol; KDIGO 2012 uses 88.4); the kidney
# equations take mg/dL, and the US clinician text shows it (``data/locale.yaml``)
CREATININE_UMOL_L_PER_MG_DL = 88.4
# cholesterol: mg/dL in one mmol/L (molar mass 386.65 g/mol, the factor laboratories use)
CHOLESTEROL_MG_DL_PER_MMOL_L = 38.67
# glucose: mg/dL in one mmol/L (molar mass 180.16 g/mol; ADA Standards of Care conversion table)
GLUCOSE_MG_DL_PER_MMOL_L = 18.016
# HbA1c: NGSP % from IFCC mmol/mol by the NGSP/IFCC master equation (NGSP = 0.09148 x IFCC +
# 2.152; Hoelzel W et al., Clin Chem 2004;50:166-74, as the NGSP and IFCC state the conversion)
HBA1C_NGSP_PERCENT_PER_IFCC_MMOL_MOL = 0.09148
HBA1C_NGSP_PERCENT_AT_ZERO_IFCC = 2.152
# ... and stated to one decimal, as laboratories report NGSP % (53 mmol/mol is 7.0 %)
HBA1C_PERCENT_DECIMALS = 1
# blood cell counts: cells per µL in one unit of 10*3/µL (the same as 10*9/L, "K/µL")
PER_UL_PER_THOUSAND_PER_UL = 1000.0
# urea: mg/dL of urea nitrogen (BUN, as US laboratories report it) in one mmol/L of urea (two
# nitrogen atoms, 28.014 g/mol)
UREA_NITROGEN_MG_DL_PER_MMOL_L = 2.801
# urate: µmol/L in one mg/dL (uric acid, molar mass 168.11 g/mol)
URATE_UMOL_L_PER_MG_DL = 59.48
# triglycerides: mg/dL in one mmol/L (taken as triolein, 885.7 g/mol, the factor laboratories use)
TRIGLYCERIDE_MG_DL_PER_MMOL_L = 88.57
# calcium, magnesium and phosphate (reported as phosphorus): mg/dL in one mmol/L (molar masses
# 40.08, 24.305 and 30.974 g/mol)
CALCIUM_MG_DL_PER_MMOL_L = 4.008
MAGNESIUM_MG_DL_PER_MMOL_L = 2.431
PHOSPHATE_MG_DL_PER_MMOL_L = 3.097
# bilirubin: µmol/L in one mg/dL (molar mass 584.66 g/mol)
BILIRUBIN_UMOL_L_PER_MG_DL = 17.1
# free thyroxine: pmol/L in one ng/dL (molar mass 776.87 g/mol)
FREE_T4_PMOL_L_PER_NG_DL = 12.87
# vitamin B12 (cobalamin): pmol/L in one ng/L (molar mass 1355.4 g/mol)
COBALAMIN_PMOL_L_PER_NG_L = 0.738
# folate: nmol/L in one ug/L (folic acid, molar mass 441.4 g/mol)
FOLATE_NMOL_L_PER_UG_L = 2.266
# 25-hydroxyvitamin D: nmol/L in one ng/mL (molar mass 400.6 g/mol)
VITAMIN_D_NMOL_L_PER_NG_ML = 2.496
# urine albumin:creatinine ratio: mg/g in one mg/mmol (one gram of creatinine is 8.84 mmol)
ACR_MG_G_PER_MG_MMOL = 8.84
# a mass per decilitre in the same mass per litre (g/dL to g/L, mg/dL to mg/L)
PER_DL_PER_L = 10.0
# a fraction stated as a percentage
PERCENT = 100.0
# HbA1c: the IFCC value (mmol/mol) is (NGSP % - 2.15) x 10.929 (the IFCC-NGSP master equation)
HBA1C_IFCC_PER_NGSP = 10.929
HBA1C_NGSP_OFFSET = 2.15

# a reference-interval bound converted into a result's unit is shown to at most this many places
BOUND_MAX_DECIMALS = 4

# calendar: days in a week, in a mean Gregorian year, and at most in any calendar year
DAYS_PER_WEEK = 7
DAYS_PER_YEAR = 365.25
MAX_DAYS_PER_YEAR = 366
# days in a mean month (365.25 / 12, rounded as the texts have always said it) where an
# interval is rounded to months, and in the whole month an elapsed time is counted down in
DAYS_PER_MONTH = 30.4
DAYS_PER_WHOLE_MONTH = 30
# an interval shorter than this many days is stated in days, a longer one in months
DAYS_STATED_BELOW = 60
# an interval of this many days or more is stated in whole years ("6 years ago")
DAYS_STATED_IN_YEARS_FROM = 730
# numbers from this size up are written whole in texts ("1234", not "1234.5"), below it with
# one decimal at most, and below TWO_DECIMALS_BELOW with two ("1.25"); see ``facts.fmt``
WHOLE_NUMBERS_FROM = 1000
TWO_DECIMALS_BELOW = 20

# Two medicines make a pair (an interaction is named by its first two drug specs).
PAIR = 2

# The calendar: months in a year (a date moved by whole months).
MONTHS_PER_YEAR = 12

# A fortnight in days (a dose taken once every two weeks).
DAYS_PER_FORTNIGHT = 14
