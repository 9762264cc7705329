"""The project's one door to ``fhir.resources``: FHIR R4 (R4B models), pinned here and nowhere else.

fhir.resources 7+ defaults to R5 while EHRs speak R4, so every module that needs a FHIR model
imports it from here; ``tests/test_fhir_pinning.py`` fails if any other module imports
``fhir.resources`` (any submodule). R4B (4.3.0) is the R4-compatible release that
fhir.resources ships: it reads and writes R4 (4.0.1) JSON for every resource type this project
uses. This module only re-exports; it must not hold mapping logic.
"""

from __future__ import annotations

from functools import cache

from fhir.resources.R4B import __fhir_version__ as FHIR_VERSION
from fhir.resources.R4B import get_fhir_model_class
from fhir.resources.R4B.allergyintolerance import AllergyIntolerance, AllergyIntoleranceReaction
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
from fhir.resources.R4B.careplan import CarePlan, CarePlanActivity, CarePlanActivityDetail
from fhir.resources.R4B.careteam import CareTeam, CareTeamParticipant
from fhir.resources.R4B.codeableconcept import CodeableConcept
from fhir.resources.R4B.codesystem import (
    CodeSystem,
    CodeSystemConcept,
    CodeSystemConceptProperty,
    CodeSystemProperty,
)
from fhir.resources.R4B.coding import Coding
from fhir.resources.R4B.communicationrequest import CommunicationRequest
from fhir.resources.R4B.condition import Condition
from fhir.resources.R4B.contactpoint import ContactPoint
from fhir.resources.R4B.detectedissue import DetectedIssue
from fhir.resources.R4B.device import Device, DeviceDeviceName, DeviceVersion
from fhir.resources.R4B.diagnosticreport import DiagnosticReport
from fhir.resources.R4B.domainresource import DomainResource
from fhir.resources.R4B.dosage import Dosage, DosageDoseAndRate
from fhir.resources.R4B.elementdefinition import ElementDefinition
from fhir.resources.R4B.encounter import Encounter
from fhir.resources.R4B.extension import Extension
from fhir.resources.R4B.flag import Flag
from fhir.resources.R4B.goal import Goal
from fhir.resources.R4B.group import Group
from fhir.resources.R4B.humanname import HumanName
from fhir.resources.R4B.identifier import Identifier
from fhir.resources.R4B.immunization import Immunization
from fhir.resources.R4B.list import List
from fhir.resources.R4B.medication import Medication
from fhir.resources.R4B.medicationrequest import MedicationRequest
from fhir.resources.R4B.medicationstatement import MedicationStatement
from fhir.resources.R4B.meta import Meta
from fhir.resources.R4B.narrative import Narrative
from fhir.resources.R4B.nutritionorder import NutritionOrder
from fhir.resources.R4B.observation import Observation, ObservationComponent
from fhir.resources.R4B.operationoutcome import OperationOutcome, OperationOutcomeIssue
from fhir.resources.R4B.organization import Organization
from fhir.resources.R4B.parameters import Parameters, ParametersParameter
from fhir.resources.R4B.patient import Patient
from fhir.resources.R4B.period import Period
from fhir.resources.R4B.practitioner import Practitioner
from fhir.resources.R4B.practitionerrole import PractitionerRole
from fhir.resources.R4B.procedure import Procedure
from fhir.resources.R4B.provenance import Provenance, ProvenanceAgent, ProvenanceEntity
from fhir.resources.R4B.quantity import Quantity
from fhir.resources.R4B.range import Range
from fhir.resources.R4B.ratio import Ratio
from fhir.resources.R4B.reference import Reference
from fhir.resources.R4B.relatedperson import RelatedPerson
from fhir.resources.R4B.resource import Resource
from fhir.resources.R4B.riskassessment import RiskAssessment
from fhir.resources.R4B.servicerequest import ServiceRequest
from fhir.resources.R4B.signature import Signature
from fhir.resources.R4B.structuredefinition import StructureDefinition
from fhir.resources.R4B.task import Task, TaskInput, TaskOutput, TaskRestriction
from fhir.resources.R4B.timing import Timing, TimingRepeat
from fhir.resources.R4B.valueset import ValueSet

__all__ = [
    "FHIR_VERSION",
    "AllergyIntolerance",
    "AllergyIntoleranceReaction",
    "Annotation",
    "Attachment",
    "Bundle",
    "BundleEntry",
    "BundleEntryRequest",
    "BundleEntryResponse",
    "BundleEntrySearch",
    "BundleLink",
    "CarePlan",
    "CarePlanActivity",
    "CarePlanActivityDetail",
    "CareTeam",
    "CareTeamParticipant",
    "CodeSystem",
    "CodeSystemConcept",
    "CodeSystemConceptProperty",
    "CodeSystemProperty",
    "CodeableConcept",
    "Coding",
    "CommunicationRequest",
    "Condition",
    "ContactPoint",
    "DetectedIssue",
    "Device",
    "DeviceDeviceName",
    "DeviceVersion",
    "DiagnosticReport",
    "DomainResource",
    "Dosage",
    "DosageDoseAndRate",
    "ElementDefinition",
    "Encounter",
    "Extension",
    "Flag",
    "Goal",
    "Group",
    "HumanName",
    "Identifier",
    "Immunization",
    "List",
    "Medication",
    "MedicationRequest",
    "MedicationStatement",
    "Meta",
    "Narrative",
    "NutritionOrder",
    "Observation",
    "ObservationComponent",
    "OperationOutcome",
    "OperationOutcomeIssue",
    "Organization",
    "Parameters",
    "ParametersParameter",
    "Patient",
    "Period",
    "Practitioner",
    "PractitionerRole",
    "Procedure",
    "Provenance",
    "ProvenanceAgent",
    "ProvenanceEntity",
    "Quantity",
    "Range",
    "Ratio",
    "Reference",
    "RelatedPerson",
    "Resource",
    "RiskAssessment",
    "ServiceRequest",
    "Signature",
    "StructureDefinition",
    "Task",
    "TaskInput",
    "TaskOutput",
    "TaskRestriction",
    "Timing",
    "TimingRepeat",
    "ValueSet",
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
