"""The code systems a patient record is read with, and the LOINC codes that report one quantity.

Plain constants, no I/O. ``LOINC_GROUPS`` names each quantity once (``"egfr"``, ``"hba1c"``...) so
the knowledge and the text look a measurement up by what it is, whichever code a site sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "CVX",
    "ICD10",
    "LOINC",
    "LOINC_GROUPS",
    "LOINC_SHORT_NAMES",
    "RXNORM",
    "SNOMED",
]

SNOMED = "http://snomed.info/sct"
ICD10 = "http://hl7.org/fhir/sid/icd-10-cm"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
LOINC = "http://loinc.org"
CVX = "http://hl7.org/fhir/sid/cvx"

# LOINC codes that report the same quantity, most common first (Synthea uses the first ones).
LOINC_GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "egfr": ("33914-3", "62238-1", "48642-3", "48643-1", "98979-8"),
        # serum or plasma, by mass (mg/dL) or by substance (umol/L); in blood, by mass or substance
        "creatinine": ("2160-0", "38483-4", "14682-9", "59826-8"),
        "potassium": ("6298-4", "2823-3"),
        "hba1c": ("4548-4",),
        "inr": ("6301-6", "34714-6"),
        "bp_panel": ("85354-9", "55284-4"),
        "systolic_bp": ("8480-6",),
        "diastolic_bp": ("8462-4",),
        "weight": ("29463-7",),
        "bmi": ("39156-5",),
        "uacr": ("14959-1", "9318-7"),
        "sodium": ("2951-2", "2947-0"),
        "haemoglobin": ("718-7",),
        "ldl": ("18262-6", "2089-1", "13457-7"),
        "tsh": ("3016-3",),
        "mmse": ("72106-8",),
        "height": ("8302-2",),
        # a blood pressure taken in any position: the systolic (any, sitting, standing, supine)
        # and the panels that hold it
        "blood_pressure": ("8480-6", "55284-4", "85354-9", "8459-0", "8460-8", "8461-6"),
        "cognition": ("72106-8", "72172-0"),
        "phq9": ("44261-6",),
        "digoxin_level": ("10535-3",),
        "lithium_level": ("14334-7",),
        "alt": ("1742-6", "1743-4"),
        "platelets": ("777-3",),
        # a blood count: any of its member tests (platelets, haemoglobin, white cells,
        # neutrophils) shows a count was taken, whichever of them a site reports or codes
        "blood_count": ("777-3", "718-7", "6690-2", "26464-8", "751-8", "26499-4"),
        "urate": ("3084-1",),
        # serum or plasma triglycerides, by mass or by substance concentration
        "triglycerides": ("2571-8", "14927-8"),
        "vitamin_b12": ("2132-9",),
        # left ventricular ejection fraction: any method, by 2D echo, by ultrasound
        "lvef": ("10230-1", "8806-2", "18043-0"),
        # QT interval corrected for heart rate, from the ECG
        "qtc": ("8636-3",),
        # blood eosinophil count (absolute, not the percentage): automated, any method
        "eosinophils": ("711-2", "26449-9"),
        # tobacco smoking status, a coded value (SNOMED CT or LOINC answer)
        "smoking_status": ("72166-2",),
        # serum or plasma magnesium, by mass or by substance concentration
        "magnesium": ("19123-9", "2601-3"),
        # heart rate (a vital sign, beats per minute)
        "heart_rate": ("8867-4",),
        # serum or plasma ferritin, by mass concentration
        "ferritin": ("2276-4",),
        # AUDIT, the ten-question alcohol use disorders identification test, total score
        "audit": ("75624-7",),
    }
)


# What a clinician calls the quantity of each group in a line of text ("eGFR", not "Glomerular
# filtration rate/1.73 sq M.predicted"): the clinician summary's name for a result.
LOINC_SHORT_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "egfr": "eGFR",
        "creatinine": "Creatinine",
        "potassium": "Potassium",
        "hba1c": "HbA1c",
        "inr": "INR",
        "weight": "Weight",
        "bmi": "BMI",
        "uacr": "Urine albumin:creatinine ratio",
        "sodium": "Sodium",
        "haemoglobin": "Haemoglobin",
        "ldl": "LDL cholesterol",
        "tsh": "TSH",
        "mmse": "MMSE",
        "phq9": "PHQ-9",
        "digoxin_level": "Digoxin level",
        "lithium_level": "Lithium level",
        "alt": "ALT",
        "platelets": "Platelets",
        "blood_count": "Blood count",
        "urate": "Urate",
        "triglycerides": "Triglycerides",
        "vitamin_b12": "Vitamin B12",
        "lvef": "Ejection fraction",
        "qtc": "QTc",
        "eosinophils": "Eosinophils",
        "magnesium": "Magnesium",
        "ferritin": "Ferritin",
        "audit": "AUDIT",
        "heart_rate": "Heart rate",
    }
)
