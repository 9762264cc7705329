"""The project's one error tree. Each class states its gRPC status, HTTP status, CLI exit code
and title (``canoe_client.errors`` has the table); the transports read them from the class.

    CanoeError
    ├── InputError                 bad input from a caller; never retried   -> INVALID_ARGUMENT
    │   ├── BundleError            FHIR Bundle unusable (entry + field named)        (HTTP 422)
    │   ├── TaskError              a contestation Task that cannot apply             (HTTP 422)
    │   ├── DocumentError          a canoe.deliberation document that fails validation (422)
    │   ├── FeedbackError          CDS Hooks feedback with an unusable element       (HTTP 422)
    │   └── PrefetchUnavailable    CDS Hooks data neither prefetched nor fetchable  (HTTP 412)
    ├── NotFoundError              unknown plan / version / argument        -> NOT_FOUND
    ├── StaleVersionError          contest of a version that is not current -> FAILED_PRECONDITION
    ├── ConflictError              a Task id re-sent with other content     -> ALREADY_EXISTS
    ├── AuthError                  missing/invalid credentials              -> UNAUTHENTICATED
    │   └── ForbiddenError         valid credentials, wrong tenant          -> PERMISSION_DENIED
    ├── LimitError                 the request is over a limit              -> RESOURCE_EXHAUSTED
    │   └── BusyError              too much work at once: retry after a hint (HTTP 429)
    └── BackendError               the model backend failed                 -> UNAVAILABLE
        ├── BackendUnavailable     unreachable / not ready / circuit open
        ├── BackendTimeout         a call passed its deadline               -> DEADLINE_EXCEEDED
        └── StepFailed             one step's answer unusable after repair (recorded as missing)

Every error may carry ``issues``: (severity, code, diagnostics, expression) tuples that become
FHIR OperationOutcome issues; ``code`` is from the FHIR IssueType value set.

The classes a caller can receive over the wire (the root, ``Issue`` and every class that maps to
a status code) are defined in the client distribution's ``canoe_client.errors`` and re-exported
here, so the client and the server raise the same classes; the subclasses only the server raises
are defined here. This module imports nothing else: ``canoe_client.errors`` is stdlib-only.
"""

from __future__ import annotations

from canoe_client.errors import WIRE_ERRORS as WIRE_ERRORS
from canoe_client.errors import (
    AuthError,
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    BusyError,
    CanoeError,
    ConflictError,
    ForbiddenError,
    InputError,
    Issue,
    LimitError,
    NotFoundError,
    StaleVersionError,
)

__all__ = [
    "WIRE_ERRORS",
    "AuthError",
    "BackendError",
    "BackendTimeout",
    "BackendUnavailable",
    "BundleError",
    "BusyError",
    "CanoeError",
    "ConflictError",
    "DocumentError",
    "FeedbackError",
    "ForbiddenError",
    "InputError",
    "Issue",
    "LimitError",
    "NotFoundError",
    "PrefetchUnavailable",
    "StaleVersionError",
    "StepFailed",
    "TaskError",
    "missing_extra",
]


class BundleError(InputError):
    issue_code = "structure"
    http_status = 422


class TaskError(InputError):
    issue_code = "invalid"
    http_status = 422


class DocumentError(InputError):
    issue_code = "invalid"
    http_status = 422


class FeedbackError(InputError):
    """A CDS Hooks feedback body that is well-formed JSON but whose elements cannot be used;
    each issue names the element by its path in the body (``feedback[0].outcomeTimestamp``)."""

    issue_code = "invalid"
    http_status = 422


class PrefetchUnavailable(InputError):
    """Data a CDS Hooks service requires is neither prefetched nor fetchable from the client's
    FHIR server: the caller's request is incomplete (HTTP 412 Precondition Failed)."""

    issue_code = "incomplete"
    http_status = 412


class StepFailed(BackendError):
    issue_code = "processing"


def missing_extra(extra: str, what: str) -> BackendUnavailable:
    """The error for an optional part whose extra is not installed: it names the extra.

    >>> print(missing_extra("postgres", "the PostgreSQL store"))  # doctest: +NORMALIZE_WHITESPACE
    the PostgreSQL store needs the optional extra 'postgres':
    pip install 'canoe-careplan[postgres]'
    """
    return BackendUnavailable(
        f"{what} needs the optional extra {extra!r}: pip install 'canoe-careplan[{extra}]'"
    )
