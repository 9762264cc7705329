"""The errors a caller of ``canoe.v1`` can receive: the root of the project's one error tree.

    CanoeError                                                gRPC status          HTTP  exit
    ├── InputError                 bad input; never retried   INVALID_ARGUMENT     400   2
    ├── NotFoundError              unknown plan / version     NOT_FOUND            404   2
    ├── StaleVersionError          not the current version    FAILED_PRECONDITION  409   2
    ├── ConflictError              a Task id re-sent changed  ALREADY_EXISTS       409   2
    ├── AuthError                  missing/invalid credentials UNAUTHENTICATED     401   77
    │   └── ForbiddenError         valid, wrong tenant        PERMISSION_DENIED    403   77
    ├── LimitError                 the request is over a limit RESOURCE_EXHAUSTED  413   2
    │   └── BusyError              too much work now: retry   RESOURCE_EXHAUSTED   429   75
    └── BackendError               the model backend failed   UNAVAILABLE          502   69
        ├── BackendUnavailable     unreachable / circuit open UNAVAILABLE          503   69
        └── BackendTimeout         a call passed its deadline DEADLINE_EXCEEDED    504   69

Errors are data: each class states how every transport answers it (``grpc_status``,
``http_status``, ``exit_code``, and ``title`` for a person), read from the error's class, so the
most specific class decides and a subclass inherits what it does not restate. The gRPC server,
the CDS Hooks and review HTTP sides, the CLI and this client's decoding all read these
attributes; none keeps a table of its own. ``WIRE_ERRORS`` names the one class a caller receives
for each gRPC status.

The service raises the same classes (``service.errors`` re-exports them and adds its own
subclasses), so a caller and the server name one error one way. Every error carries ``issues``:
(severity, code, diagnostics, expression) tuples, FHIR OperationOutcome issues with ``code`` from
the FHIR IssueType value set. This module imports nothing, not even grpc: the service's pure core
sits on it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "WIRE_ERRORS",
    "AuthError",
    "BackendError",
    "BackendTimeout",
    "BackendUnavailable",
    "BusyError",
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
    # How each transport answers it: see the module's table.
    grpc_status = "INTERNAL"
    http_status = 500
    exit_code = 70
    title = "Something went wrong"
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
    grpc_status = "INVALID_ARGUMENT"
    http_status = 400
    exit_code = 2
    title = "The request could not be read"


class NotFoundError(CanoeError):
    issue_code = "not-found"
    grpc_status = "NOT_FOUND"
    http_status = 404
    exit_code = 2
    title = "Not found"


class StaleVersionError(CanoeError):
    issue_code = "conflict"
    grpc_status = "FAILED_PRECONDITION"
    http_status = 409
    exit_code = 2
    title = "The plan has changed"

    def __init__(self, message: str, *, current_version: int, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.current_version = current_version


class ConflictError(CanoeError):
    """A Task id already applied, sent again with different content: the first one stands, and
    the message names what differs (send the new decision under a new id)."""

    issue_code = "duplicate"
    grpc_status = "ALREADY_EXISTS"
    http_status = 409
    exit_code = 2
    title = "Already done with another decision"


class AuthError(CanoeError):
    issue_code = "security"
    grpc_status = "UNAUTHENTICATED"
    http_status = 401
    exit_code = 77  # sysexits EX_NOPERM
    title = "Please open the plan again"


class ForbiddenError(AuthError):
    issue_code = "forbidden"
    grpc_status = "PERMISSION_DENIED"
    http_status = 403
    title = "Not allowed"


class LimitError(CanoeError):
    """The request is over a configured limit (size, count, memory): sending it again is refused
    again. Its subclass ``BusyError`` is a limit that passes with time; ``retry_after_s`` is then
    the hint of when to try again (``None`` here)."""

    issue_code = "too-costly"
    grpc_status = "RESOURCE_EXHAUSTED"
    http_status = 413
    exit_code = 2
    title = "Too large"

    def __init__(self, message: str, *, retry_after_s: float | None = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.retry_after_s = retry_after_s


class BusyError(LimitError):
    """The service has too much work at once: nothing was done or stored, and the same request
    may be sent again after ``retry_after_s`` (always set)."""

    issue_code = "throttled"
    http_status = 429
    exit_code = 75  # sysexits EX_TEMPFAIL
    title = "Busy: try again shortly"

    def __init__(self, message: str, *, retry_after_s: float, **kw: object) -> None:
        super().__init__(message, retry_after_s=retry_after_s, **kw)


class BackendError(CanoeError):
    issue_code = "transient"
    grpc_status = "UNAVAILABLE"
    http_status = 502
    exit_code = 69  # sysexits EX_UNAVAILABLE
    title = "The service could not answer"


class BackendUnavailable(BackendError):
    issue_code = "transient"
    http_status = 503


class BackendTimeout(BackendError):
    issue_code = "timeout"
    grpc_status = "DEADLINE_EXCEEDED"
    http_status = 504


# The class a caller receives for each gRPC status (its most general class with that status).
WIRE_ERRORS: dict[str, type[CanoeError]] = {
    cls.grpc_status: cls
    for cls in (
        BackendUnavailable,
        BackendTimeout,
        LimitError,
        ForbiddenError,
        AuthError,
        ConflictError,
        StaleVersionError,
        NotFoundError,
        InputError,
    )
}
