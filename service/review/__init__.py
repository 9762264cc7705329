"""The review app: a SMART on FHIR web page at ``/review`` where a clinician reads a plan, each
activity's argument graph and the votes, and contests with a click.

Every click becomes a FHIR Task through ``CarePlanService.contest``, the path gRPC ``Contest``
takes. ``build_review`` gives the Mount the HTTP side adds; ``review_link`` mints the standalone
link ``canoe review-link`` prints. Nothing here reasons: the pages show what ``evaluate``
computes from the stored versions. This module imports its parts lazily, so importing it does
not pull in the web stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from service.review.routes import ReviewService
    from service.settings import Settings

__all__ = ["build_review", "review_link"]


def build_review(service: ReviewService, settings: Settings) -> list[BaseRoute]:
    """The review app's routes, at ``<cds base path>/review``, for the HTTP side's app."""
    from service.review.routes import build_review as build

    return build(service, settings)


def review_link(settings: Settings, *, tenant: str, plan_id: str, user: str) -> str:
    """A short-lived (``review_link_ttl_s``) signed link opening ``plan_id`` for ``user`` (a
    ``Practitioner/<id>`` reference, who will appear as the requester of their Tasks)."""
    from service.errors import InputError
    from service.review.tokens import Signer

    if not settings.review.signing_key:
        raise InputError(
            "review links need a shared signing key: set CANOE_REVIEW_SIGNING_KEY here and "
            "on the service"
        )
    if not user.startswith(("Practitioner/", "PractitionerRole/")):
        raise InputError("the reviewer must be a Practitioner/<id> or PractitionerRole/<id>")
    token = Signer(settings.review.signing_key).sign(
        "link", {"ten": tenant, "plan": plan_id, "sub": user}, settings.review.link_ttl_s
    )
    base = settings.cds_url
    return f"{base}/review/open?token={token}"
