"""The one translation of the error tree to gRPC: every branch gets its status code, and the
rich status carries the error's own OperationOutcome; anything unexpected says nothing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from google.rpc import status_pb2

from canoe_client import error_from_rpc
from service.errors import (
    WIRE_ERRORS,
    AuthError,
    BackendTimeout,
    BackendUnavailable,
    BundleError,
    BusyError,
    CanoeError,
    ConflictError,
    DocumentError,
    FeedbackError,
    ForbiddenError,
    InputError,
    Issue,
    LimitError,
    NotFoundError,
    PrefetchUnavailable,
    StaleVersionError,
    StepFailed,
    TaskError,
)
from service.grpc_api import rich_status, status_code
from tests.service.conftest import pb

C = grpc.StatusCode


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InputError("x"), C.INVALID_ARGUMENT),
        (BundleError("x"), C.INVALID_ARGUMENT),
        (TaskError("x"), C.INVALID_ARGUMENT),
        (DocumentError("x"), C.INVALID_ARGUMENT),
        (FeedbackError("x"), C.INVALID_ARGUMENT),
        (NotFoundError("x"), C.NOT_FOUND),
        (StaleVersionError("x", current_version=3), C.FAILED_PRECONDITION),
        (AuthError("x"), C.UNAUTHENTICATED),
        (ForbiddenError("x"), C.PERMISSION_DENIED),
        (LimitError("x"), C.RESOURCE_EXHAUSTED),
        (BackendUnavailable("x"), C.UNAVAILABLE),
        (StepFailed("x"), C.UNAVAILABLE),
        (BackendTimeout("x"), C.DEADLINE_EXCEEDED),
        (CanoeError("x"), C.INTERNAL),
        (RuntimeError("x"), C.INTERNAL),
    ],
)
def test_each_branch_has_its_status(error: BaseException, code: grpc.StatusCode) -> None:
    assert status_code(error) == code
    st = rich_status(error)
    assert st.code == code
    status = status_pb2.Status.FromString(dict(st.trailing_metadata)["grpc-status-details-bin"])
    assert status.code == code.value[0]
    detail = pb.OperationOutcomeDetail()
    assert status.details[0].Unpack(detail)
    oo = json.loads(detail.fhir_json)
    assert oo["resourceType"] == "OperationOutcome" and oo["issue"]


def test_issues_travel_as_given_and_internals_do_not() -> None:
    err = BundleError(
        "2 problems",
        issues=(
            Issue("error", "required", "Patient missing", ("Bundle.entry",)),
            Issue("error", "value", "bad date", ("Bundle.entry[3].resource.birthDate",)),
        ),
    )
    oo = _outcome(rich_status(err))
    assert [(i["code"], i["expression"]) for i in oo["issue"]] == [
        ("required", ["Bundle.entry"]),
        ("value", ["Bundle.entry[3].resource.birthDate"]),
    ]
    secret = RuntimeError("psycopg: password=hunter2 at /srv/db")
    st = rich_status(secret)
    assert st.details == "internal error"
    assert "hunter2" not in json.dumps(_outcome(st))


def test_a_stale_version_names_the_current_one() -> None:
    st = rich_status(StaleVersionError("plan p moved on", current_version=7))
    assert "current version: 7" in st.details


def test_a_stale_version_says_the_version_once() -> None:
    msg = "version is stale: the current version of plan p is 2"
    st = rich_status(StaleVersionError(msg, current_version=2))
    assert st.details == msg


def _outcome(st: grpc.Status) -> dict[str, object]:
    raw = dict(st.trailing_metadata)["grpc-status-details-bin"]
    detail = pb.OperationOutcomeDetail()
    status_pb2.Status.FromString(raw).details[0].Unpack(detail)
    out: dict[str, object] = json.loads(detail.fhir_json)
    return out


# One table, every transport: (error, gRPC status, HTTP status, CLI exit status).
EVERY_TRANSPORT = [
    (InputError("x"), C.INVALID_ARGUMENT, 400, 2),
    (BundleError("x"), C.INVALID_ARGUMENT, 422, 2),
    (TaskError("x"), C.INVALID_ARGUMENT, 422, 2),
    (PrefetchUnavailable("x"), C.INVALID_ARGUMENT, 412, 2),
    (NotFoundError("x"), C.NOT_FOUND, 404, 2),
    (StaleVersionError("x", current_version=3), C.FAILED_PRECONDITION, 409, 2),
    (ConflictError("x"), C.ALREADY_EXISTS, 409, 2),
    (AuthError("x"), C.UNAUTHENTICATED, 401, 77),
    (ForbiddenError("x"), C.PERMISSION_DENIED, 403, 77),
    (LimitError("x"), C.RESOURCE_EXHAUSTED, 413, 2),
    (BusyError("x", retry_after_s=1.5), C.RESOURCE_EXHAUSTED, 429, 75),
    (BackendUnavailable("x"), C.UNAVAILABLE, 503, 69),
    (StepFailed("x"), C.UNAVAILABLE, 502, 69),
    (BackendTimeout("x"), C.DEADLINE_EXCEEDED, 504, 69),
]


@dataclass
class _Refused(grpc.RpcError):
    """What a client's stub raises for a refused call: its code, message and trailers."""

    status: grpc.Status

    def code(self) -> grpc.StatusCode:
        return self.status.code

    def details(self) -> str:
        return self.status.details

    def trailing_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        return tuple(self.status.trailing_metadata)


@pytest.mark.parametrize(("error", "code", "http", "exit_code"), EVERY_TRANSPORT)
def test_every_transport_answers_an_error_as_its_class_says(
    error: CanoeError, code: grpc.StatusCode, http: int, exit_code: int
) -> None:
    from service.cds_hooks.http import _error as cds_error
    from service.cli import _exit_code
    from service.review.routes import _status as review_status

    assert rich_status(error).code == code
    cds = cds_error(error)
    assert cds.status_code == http
    assert json.loads(cds.body)["issue"][0]["code"] == error.issue_code
    assert review_status(error) == (http, error.title)
    assert _exit_code(error) == exit_code
    # The client gives back the class the wire names, with the structured values.
    back = error_from_rpc(_Refused(rich_status(error)))
    assert isinstance(back, WIRE_ERRORS[code.name])
    assert back.outcome is not None and back.status_code == code.name


def test_structured_values_travel_as_data_not_prose() -> None:
    stale = error_from_rpc(_Refused(rich_status(StaleVersionError("moved on", current_version=12))))
    assert isinstance(stale, StaleVersionError) and stale.current_version == 12
    busy = error_from_rpc(_Refused(rich_status(BusyError("busy", retry_after_s=0.25))))
    assert isinstance(busy, BusyError) and busy.retry_after_s == 0.25
    assert "Retry-After" not in _headers(LimitError("too big"))
    assert _headers(BusyError("busy", retry_after_s=1.2))["Retry-After"] == "2"


def test_a_status_without_details_still_decodes() -> None:
    bare = _Refused(_Bare(C.FAILED_PRECONDITION, "stale", ()))
    stale = error_from_rpc(bare)
    assert isinstance(stale, StaleVersionError) and stale.current_version == 0


def test_each_wire_status_names_one_class_and_each_class_a_known_status() -> None:
    assert len(set(WIRE_ERRORS.values())) == len(WIRE_ERRORS)
    for cls in (*WIRE_ERRORS.values(), BusyError, BundleError, StepFailed):
        assert cls.grpc_status in C.__members__
        assert 400 <= cls.http_status < 600
        assert cls.exit_code in {2, 69, 70, 75, 77}
        assert cls.title


@dataclass
class _Bare(grpc.Status):
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]


def _headers(error: CanoeError) -> Any:
    from service.cds_hooks.http import _error as cds_error

    return cds_error(error).headers
