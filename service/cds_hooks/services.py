"""The CDS Services this service offers, as data: what discovery lists and what each needs.

One ``ServiceDefinition`` per hook we answer. The prefetch keys and templates are the contract
with the CDS client (the constructed fixtures in ``fixtures/cds-hooks/requests/`` use the same
keys). ``required`` keys are the data a plan cannot be made without; ``optional`` ones improve
it and are fetched when possible, skipped (and said so) when not. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

__all__ = ["SERVICES", "Hook", "ServiceDefinition", "discovery_document"]

Hook = Literal["patient-view", "order-select", "order-sign"]

_PATIENT: Final = "Patient/{{context.patientId}}"
_CONDITIONS: Final = "Condition?patient={{context.patientId}}&clinical-status=active"
_MEDICATIONS: Final = "MedicationRequest?patient={{context.patientId}}&status=active"
_ALLERGIES: Final = "AllergyIntolerance?patient={{context.patientId}}"
_OBSERVATIONS: Final = "Observation?patient={{context.patientId}}&_sort=-date&_count=30"
# Reports, open orders and recent contacts: what the plan follows up, chases, and dates a
# presenting problem or the last contact by.
_REPORTS: Final = "DiagnosticReport?patient={{context.patientId}}&_sort=-date&_count=20"
_ORDERS: Final = "ServiceRequest?patient={{context.patientId}}&status=active"
_ENCOUNTERS: Final = "Encounter?patient={{context.patientId}}&_sort=-date&_count=10"
# What the patient says they take or do not take: a medicine recorded as not taken is not
# treated as taken by the interaction checks, and the plan says so.
_STATEMENTS: Final = "MedicationStatement?patient={{context.patientId}}"

_USAGE: Final = (
    "Needs the patient, active conditions and active medication requests, either prefetched or "
    "readable through fhirServer: with fhirAuthorization (scopes: Patient.read, Condition.read, "
    "MedicationRequest.read, AllergyIntolerance.read, Observation.read, DiagnosticReport.read, "
    "ServiceRequest.read, Encounter.read, MedicationStatement.read), or an open server "
    "configured for the CDS client. Without either the "
    "service answers 412. Cards name the roles of the deliberating panel and their arguments; "
    "feedback (accepted / overridden with a reason) is recorded against the care plan, and an "
    "override with a reason is applied to the plan as a contestation."
)


@dataclass(frozen=True, slots=True)
class ServiceDefinition:
    id: str
    hook: Hook
    title: str
    description: str
    prefetch: Mapping[str, str]
    required: frozenset[str]
    usage: str = _USAGE

    @property
    def optional(self) -> frozenset[str]:
        return frozenset(self.prefetch) - self.required

    def discovery(self) -> dict[str, object]:
        return {
            "hook": self.hook,
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "prefetch": dict(self.prefetch),
            "usageRequirements": self.usage,
        }


_ORDER_PREFETCH: Final = MappingProxyType(
    {
        "patient": _PATIENT,
        "conditions": _CONDITIONS,
        "medications": _MEDICATIONS,
        "allergies": _ALLERGIES,
    }
)
# Allergies are required for order checks: an order reviewed without them looks safer than it is.
_ORDER_REQUIRED: Final = frozenset({"patient", "conditions", "medications", "allergies"})

SERVICES: Final[Mapping[str, ServiceDefinition]] = MappingProxyType(
    {
        s.id: s
        for s in (
            ServiceDefinition(
                id="careplan-patient-view",
                hook="patient-view",
                title="Care plan review",
                description=(
                    "A multidisciplinary panel (pharmacist, nurse, GP and the specialists the "
                    "case needs) deliberates on the patient's record and proposes a care plan: "
                    "the card summarises its top activities, the options awaiting a human "
                    "decision and any safety warning, and links to the full, contestable plan."
                ),
                prefetch=MappingProxyType(
                    {
                        **_ORDER_PREFETCH,
                        "observations": _OBSERVATIONS,
                        "reports": _REPORTS,
                        "orders": _ORDERS,
                        "encounters": _ENCOUNTERS,
                        "statements": _STATEMENTS,
                    }
                ),
                required=frozenset({"patient", "conditions", "medications"}),
            ),
            ServiceDefinition(
                id="careplan-order-select",
                hook="order-select",
                title="Care plan medication check (select)",
                description=(
                    "The panel argues about the selected draft medication orders against the "
                    "patient's record and warns, with its arguments and safer alternatives, "
                    "when an order should not go ahead."
                ),
                prefetch=_ORDER_PREFETCH,
                required=_ORDER_REQUIRED,
            ),
            ServiceDefinition(
                id="careplan-order-sign",
                hook="order-sign",
                title="Care plan medication check (sign)",
                description=(
                    "Before signing: the panel argues about every draft medication order "
                    "against the patient's record and warns, with its arguments and safer "
                    "alternatives, when an order should not go ahead."
                ),
                prefetch=_ORDER_PREFETCH,
                required=_ORDER_REQUIRED,
            ),
        )
    }
)


def discovery_document() -> dict[str, object]:
    return {"services": [s.discovery() for s in SERVICES.values()]}
