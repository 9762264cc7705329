"""Every error becomes a valid R4 OperationOutcome; foreign errors leak nothing."""

from __future__ import annotations

import pytest

from fhir_mapping.outcome import ISSUE_TYPES, operation_outcome
from service import errors
from service.errors import CanoeError, Issue, StaleVersionError, TaskError
from tests.fhir_mapping.fhir_checks import assert_valid

ERROR_CLASSES = [
    c
    for c in vars(errors).values()
    if isinstance(c, type) and issubclass(c, CanoeError) and c is not StaleVersionError
]


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
def test_each_error_class_maps_to_its_issue_code(cls):
    extra = {"retry_after_s": 1.0} if cls is errors.BusyError else {}
    oo = operation_outcome(cls("it went wrong", **extra))
    assert_valid(oo)
    assert oo["issue"] == [
        {"severity": "error", "code": cls.issue_code, "diagnostics": "it went wrong"}
    ]
    assert cls.issue_code in ISSUE_TYPES


def test_stale_version_is_a_conflict():
    oo = operation_outcome(StaleVersionError("plan moved on to version 3", current_version=3))
    assert_valid(oo)
    assert oo["issue"][0]["code"] == "conflict"


WHERE = "Bundle.entry[3].resource.input[0].valueDecimal"


def test_issues_keep_severity_code_diagnostics_and_expressions():
    err = TaskError(
        "two problems",
        issues=(
            Issue("error", "value", "strength 1.5 outside [0, 1]", (WHERE,)),
            Issue(
                "warning",
                "not-found",
                "no argument 'x'",
                ("Task.input[1].valueString", "Task.focus"),
            ),
        ),
    )
    oo = operation_outcome(err)
    assert_valid(oo)
    assert oo["issue"] == [
        {
            "severity": "error",
            "code": "value",
            "diagnostics": "strength 1.5 outside [0, 1]",
            "expression": [WHERE],
        },
        {
            "severity": "warning",
            "code": "not-found",
            "diagnostics": "no argument 'x'",
            "expression": ["Task.input[1].valueString", "Task.focus"],
        },
    ]


def test_codes_outside_the_value_set_fall_back_and_stay_valid():
    err = CanoeError("odd", issues=(Issue("catastrophic", "kaboom", "odd", ("",)),))
    oo = operation_outcome(err)
    assert_valid(oo)
    assert oo["issue"] == [{"severity": "error", "code": "processing", "diagnostics": "odd"}]


@pytest.mark.parametrize(
    "exc",
    [KeyError("Patient/secret-123"), RuntimeError("/srv/app/db.py line 3"), ZeroDivisionError()],
)
def test_foreign_errors_become_a_generic_exception_issue(exc):
    oo = operation_outcome(exc)
    assert_valid(oo)
    (issue,) = oo["issue"]
    assert issue["code"] == "exception"
    assert str(exc) == "" or str(exc) not in issue["diagnostics"]
    assert "secret" not in repr(oo) and "/srv" not in repr(oo)
