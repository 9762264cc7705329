"""CDS Hooks 2.0 bridge: discovery, patient-view / order-select / order-sign, feedback.

The HTTP side of the service (``http.create_app`` / ``http.serve``): it drives the same
``service.app.CarePlanService`` as gRPC, in process. Submodules: ``auth`` (client JWTs),
``request`` (the request body), ``prefetch`` (prefetch and FHIR REST), ``cards`` (deliberation
-> cards), ``feedback`` (feedback -> records and contestation Tasks), ``services`` (what
discovery lists). See README.md beside this file for the decisions.
"""

from service.cds_hooks.http import CdsConfig, PlanService, build_app, create_app, serve

__all__ = ["CdsConfig", "PlanService", "build_app", "create_app", "serve"]
