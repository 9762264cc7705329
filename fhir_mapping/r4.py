"""The project's one door to ``fhir.resources``: FHIR R4 (R4B models), pinned here and nowhere else.

fhir.resources 7+ defaults to R5 while EHRs speak R4, so every module that needs a FHIR model
imports it from here; ``tests/test_fhir_pinning.py`` fails if any other module imports
``fhir.resources`` (any submodule). R4B (4.3.0) is the R4-compatible release that
fhir.resources ships: it reads and writes R4 (4.0.1) JSON for every resource type this project
uses. This module only re-exports; it must not hold mapping logic.

It re-exports the resource types the project names, and the datatypes and backbone elements of
the resources a patient record carries: ``fhir_mapping.ingest`` looks those up here by name to
validate each distinct element once (``_complex_fields``); a datatype missing here is only
validated the slow way.
"""

from __future__ import annotations

from functools import cache

from fhir.resources.R4B import __fhir_version__ as FHIR_VERSION
from fhir.resources.R4B import get_fhir_model_class
from fhir.resources.R4B.allergyintolerance import AllergyIntoleranceReaction
from fhir.resources.R4B.annotation import Annotation
from fhir.resources.R4B.attachment import Attachment
from fhir.resources.R4B.bundle import (
    Bundle,
    BundleEntry,
    BundleEntryRequest,
    BundleEntryResponse,
    BundleEntrySearch,
    BundleLink,
)
from fhir.resources.R4B.careplan import CarePlanActivity, CarePlanActivityDetail
from fhir.resources.R4B.careteam import CareTeamParticipant
from fhir.resources.R4B.codeableconcept import CodeableConcept
from fhir.resources.R4B.coding import Coding
from fhir.resources.R4B.condition import Condition
from fhir.resources.R4B.contactpoint import ContactPoint
from fhir.resources.R4B.device import DeviceDeviceName, DeviceVersion
from fhir.resources.R4B.dosage import Dosage, DosageDoseAndRate
from fhir.resources.R4B.extension import Extension
from fhir.resources.R4B.humanname import HumanName
from fhir.resources.R4B.identifier import Identifier
from fhir.resources.R4B.medication import Medication
from fhir.resources.R4B.medicationrequest import MedicationRequest
from fhir.resources.R4B.meta import Meta
from fhir.resources.R4B.narrative import Narrative
from fhir.resources.R4B.observation import ObservationComponent
from fhir.resources.R4B.patient import Patient
from fhir.resources.R4B.period import Period
from fhir.resources.R4B.quantity import Quantity
from fhir.resources.R4B.range import Range
from fhir.resources.R4B.ratio import Ratio
from fhir.resources.R4B.reference import Reference
from fhir.resources.R4B.resource import Resource
from fhir.resources.R4B.task import Task
from fhir.resources.R4B.timing import Timing, TimingRepeat

__all__ = [
    "FHIR_VERSION",
    "AllergyIntoleranceReaction",
    "Annotation",
    "Attachment",
    "Bundle",
    "BundleEntry",
    "BundleEntryRequest",
    "BundleEntryResponse",
    "BundleEntrySearch",
    "BundleLink",
    "CarePlanActivity",
    "CarePlanActivityDetail",
    "CareTeamParticipant",
    "CodeableConcept",
    "Coding",
    "Condition",
    "ContactPoint",
    "DeviceDeviceName",
    "DeviceVersion",
    "Dosage",
    "DosageDoseAndRate",
    "Extension",
    "HumanName",
    "Identifier",
    "Medication",
    "MedicationRequest",
    "Meta",
    "Narrative",
    "ObservationComponent",
    "Patient",
    "Period",
    "Quantity",
    "Range",
    "Ratio",
    "Reference",
    "Resource",
    "Task",
    "Timing",
    "TimingRepeat",
    "get_model",
    "is_resource_type",
]

# Abstract bases: a JSON resource can never carry these as its resourceType.
_ABSTRACT = frozenset({"Resource", "DomainResource"})


@cache
def _lookup(resource_type: str) -> type[Resource] | None:
    # fhir.resources resolves any model name (datatypes such as "Coding" too) and signals an
    # unknown name with ValueError or, deeper down, KeyError; both become "not a resource".
    if not resource_type.isidentifier() or resource_type in _ABSTRACT:
        return None
    try:
        klass = get_fhir_model_class(resource_type)
    except (ValueError, KeyError, AttributeError, TypeError):
        return None
    if not (isinstance(klass, type) and issubclass(klass, Resource)):
        return None
    if klass.__name__ != resource_type:
        return None
    return klass


def is_resource_type(name: object) -> bool:
    """True when ``name`` is a concrete FHIR R4 resource type (exact spelling)."""
    return isinstance(name, str) and _lookup(name) is not None


def get_model(resource_type: str) -> type[Resource]:
    """The R4B model class for a ``resourceType`` such as ``"Condition"``.

    Raises ``KeyError`` (and only that) for anything that is not a concrete R4 resource type:
    misspellings, other releases' names (``"MedicationOrder"``), datatypes (``"Coding"``),
    abstract bases and non-strings.
    """
    klass = _lookup(resource_type) if isinstance(resource_type, str) else None
    if klass is None:
        raise KeyError(resource_type)
    return klass
