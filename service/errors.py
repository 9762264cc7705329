"""The project's one error tree. Transports translate it to gRPC status / HTTP / exit codes.

    CanoeError
    ├── InputError                 bad input from a caller; never retried   -> INVALID_ARGUMENT
    │   ├── BundleError            FHIR Bundle unusable (entry + field named)
    │   ├── TaskError              a contestation Task that cannot apply
    │   ├── DocumentError          a canoe.deliberation document that fails validation
    │   └── PrefetchUnavailable    CDS Hooks data neither prefetched nor fetchable  (HTTP 412)
    ├── NotFoundError              unknown plan / version / argument        -> NOT_FOUND
    ├── StaleVersionError          contest of a version that is not current -> FAILED_PRECONDITION
    ├── AuthError                  missing/invalid credentials              -> UNAUTHENTICATED
    │   └── ForbiddenError         valid credentials, wrong tenant          -> PERMISSION_DENIED
    ├── LimitError                 a configured limit was hit               -> RESOURCE_EXHAUSTED
    └── BackendError               the model backend failed                 -> UNAVAILABLE
        ├── BackendUnavailable     unreachable / not ready / circuit open
        ├── BackendTimeout         a call passed its deadline               -> DEADLINE_EXCEEDED
        └── StepFailed             one step's answer unusable after repair (recorded as missing)

Every error may carry ``issues``: (severity, code, diagnostics, expression) tuples that become
FHIR OperationOutcome issues; ``code`` is from the FHIR IssueType value set. This module is a
leaf: it imports nothing from the project.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AuthError",
    "BackendError",
    "BackendTimeout",
    "BackendUnavailable",
    "BundleError",
    "CanoeError",
    "DocumentError",
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


@dataclass(frozen=True, slots=True)
class Issue:
    """One OperationOutcome issue. ``code``: FHIR IssueType (invalid, structure, required, value,
    not-found, conflict, processing, not-supported, security, too-costly, timeout, exception...)."""

    severity: str
    code: str
    diagnostics: str
    expression: tuple[str, ...] = ()


class CanoeError(Exception):
    """Root of every error this project raises on purpose."""

    issue_code = "exception"
    # Set by a client (service.client) on an error a remote service answered with: its FHIR
    # OperationOutcome as JSON, and the gRPC status code's name.
    outcome: dict[str, object] | None = None
    status_code: str = ""

    def __init__(self, message: str, *, issues: tuple[Issue, ...] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.issues: tuple[Issue, ...] = issues or (Issue("error", self.issue_code, message),)


class InputError(CanoeError):
    issue_code = "invalid"


class BundleError(InputError):
    issue_code = "structure"


class TaskError(InputError):
    issue_code = "invalid"


class DocumentError(InputError):
    issue_code = "invalid"


class PrefetchUnavailable(InputError):
    """Data a CDS Hooks service requires is neither prefetched nor fetchable from the client's
    FHIR server: the caller's request is incomplete (HTTP 412 Precondition Failed)."""

    issue_code = "incomplete"


class NotFoundError(CanoeError):
    issue_code = "not-found"


class StaleVersionError(CanoeError):
    issue_code = "conflict"

    def __init__(self, message: str, *, current_version: int, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.current_version = current_version


class AuthError(CanoeError):
    issue_code = "security"


class ForbiddenError(AuthError):
    issue_code = "forbidden"


class LimitError(CanoeError):
    issue_code = "too-costly"


class BackendError(CanoeError):
    issue_code = "transient"


class BackendUnavailable(BackendError):
    issue_code = "transient"


class BackendTimeout(BackendError):
    issue_code = "timeout"


class StepFailed(BackendError):
    issue_code = "processing"


def missing_extra(extra: str, what: str) -> BackendUnavailable:
    """The error for an optional part whose extra is not installed (STYLE 13): it names the extra.

    >>> print(missing_extra("postgres", "the PostgreSQL store"))  # doctest: +NORMALIZE_WHITESPACE
    the PostgreSQL store needs the optional extra 'postgres':
    pip install 'canoe-careplan[postgres]'
    """
    return BackendUnavailable(
        f"{what} needs the optional extra {extra!r}: pip install 'canoe-careplan[{extra}]'"
    )
