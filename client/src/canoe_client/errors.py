"""The errors a caller of ``canoe.v1`` can receive: the root of the project's one error tree.

    CanoeError
    ├── InputError                 bad input from a caller; never retried   <- INVALID_ARGUMENT
    ├── NotFoundError              unknown plan / version / argument        <- NOT_FOUND
    ├── StaleVersionError          contest of a version that is not current <- FAILED_PRECONDITION
    ├── ConflictError              a Task id re-sent with other content     <- ALREADY_EXISTS
    ├── AuthError                  missing/invalid credentials              <- UNAUTHENTICATED
    │   └── ForbiddenError         valid credentials, wrong tenant          <- PERMISSION_DENIED
    ├── LimitError                 a configured limit was hit               <- RESOURCE_EXHAUSTED
    │                              (retry_after_s: busy now, try again then)
    └── BackendError               the model backend failed                 <- UNAVAILABLE
        ├── BackendUnavailable     unreachable / not ready / circuit open
        └── BackendTimeout         a call passed its deadline               <- DEADLINE_EXCEEDED

The service raises the same classes (``service.errors`` re-exports them and adds its own
subclasses), so a caller and the server name one error one way. Every error carries ``issues``:
(severity, code, diagnostics, expression) tuples, FHIR OperationOutcome issues with ``code`` from
the FHIR IssueType value set. This module imports nothing, not even grpc: the service's pure core
sits on it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AuthError",
    "BackendError",
    "BackendTimeout",
    "BackendUnavailable",
    "CanoeError",
    "ConflictError",
    "ForbiddenError",
    "InputError",
    "Issue",
    "LimitError",
    "NotFoundError",
    "StaleVersionError",
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
    # Set by the client on an error a remote service answered with: its FHIR OperationOutcome as
    # JSON, and the gRPC status code's name.
    outcome: dict[str, object] | None = None
    status_code: str = ""

    def __init__(self, message: str, *, issues: tuple[Issue, ...] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.issues: tuple[Issue, ...] = issues or (Issue("error", self.issue_code, message),)


class InputError(CanoeError):
    issue_code = "invalid"


class NotFoundError(CanoeError):
    issue_code = "not-found"


class StaleVersionError(CanoeError):
    issue_code = "conflict"

    def __init__(self, message: str, *, current_version: int, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.current_version = current_version


class ConflictError(CanoeError):
    """A Task id already applied, sent again with different content: the first one stands, and
    the message names what differs (send the new decision under a new id)."""

    issue_code = "duplicate"


class AuthError(CanoeError):
    issue_code = "security"


class ForbiddenError(AuthError):
    issue_code = "forbidden"


class LimitError(CanoeError):
    """A configured limit was hit. ``retry_after_s`` is set when the limit passes with time (the
    service has too much work at once): a hint of when to try again. ``None``: the request
    itself is over a limit, and sending it again is refused again."""

    issue_code = "too-costly"

    def __init__(self, message: str, *, retry_after_s: float | None = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.retry_after_s = retry_after_s


class BackendError(CanoeError):
    issue_code = "transient"


class BackendUnavailable(BackendError):
    issue_code = "transient"


class BackendTimeout(BackendError):
    issue_code = "timeout"
