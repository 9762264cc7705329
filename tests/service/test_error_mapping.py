"""The one translation of the error tree to gRPC: every branch gets its status code, and the
rich status carries the error's own OperationOutcome; anything unexpected says nothing."""

from __future__ import annotations

import json

import grpc
import pytest
from google.rpc import status_pb2

from service.errors import (
    AuthError,
    BackendTimeout,
    BackendUnavailable,
    BundleError,
    CanoeError,
    DocumentError,
    FeedbackError,
    ForbiddenError,
    InputError,
    Issue,
    LimitError,
    NotFoundError,
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
