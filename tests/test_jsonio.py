"""The one JSON loader (service/jsonio.py): whatever the bytes, a dict or the caller's input
error, never RecursionError, UnicodeDecodeError or a bare ValueError (finding 3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.errors import BundleError, InputError, TaskError
from service.jsonio import MAX_JSON_DEPTH, load_json_object


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),  # orjson stops at 1024 levels
        (b'{"a":' * 500 + b"1" + b"}" * 500, "deeper than 64"),
        (b"[" * 65 + b"]" * 65, "JSON object, not an array"),
        (b"\xff\xfe{}", "not valid JSON"),
        (b'{"a": "\xc3\x28"}', "not valid JSON"),
        ('{"a": "\ud800"}', "not valid JSON"),
        (b'{"a": NaN}', "not valid JSON"),
        (b'{"a": Infinity}', "not valid JSON"),
        (b"", "not valid JSON"),
        (b"null", "JSON object, not null"),
        (b'"text"', "JSON object, not a string"),
        (b"42", "JSON object, not a number"),
    ],
)
def test_unusable_json_is_an_input_error(data: bytes | str, why: str) -> None:
    with pytest.raises(InputError, match=why) as err:
        load_json_object(data, what="the body")
    issue = err.value.issues[0]
    assert issue.code == "structure" and issue.diagnostics.startswith("the body ")


def test_depth_limit_is_exact_and_configurable() -> None:
    def nested(levels: int) -> bytes:
        return b'{"a":' * (levels - 1) + b"{}" + b"}" * (levels - 1)

    assert load_json_object(nested(MAX_JSON_DEPTH), what="x")
    with pytest.raises(InputError, match=f"deeper than {MAX_JSON_DEPTH}"):
        load_json_object(nested(MAX_JSON_DEPTH + 1), what="x")
    with pytest.raises(InputError, match="deeper than 2"):
        load_json_object(b'{"a": [[1]]}', what="x", max_depth=2)
    assert load_json_object(b'{"a": [[1]]}', what="x", max_depth=3) == {"a": [[1]]}


def test_the_callers_error_class_and_expression_are_kept() -> None:
    with pytest.raises(BundleError) as err:
        load_json_object(b"[]", what="request body", error=BundleError, expression="Bundle")
    assert err.value.issues[0].expression == ("Bundle",)
    with pytest.raises(TaskError):
        load_json_object(b"{", what="the contestation", error=TaskError)


def test_a_byte_order_mark_is_tolerated_and_memoryviews_read() -> None:
    assert load_json_object(b'\xef\xbb\xbf{"a": 1}', what="x") == {"a": 1}
    assert load_json_object("\ufeff{}", what="x") == {}
    assert load_json_object(memoryview(b'{"b": []}'), what="x") == {"b": []}


def test_diagnostics_do_not_quote_the_body() -> None:
    with pytest.raises(InputError) as err:
        load_json_object(b'{"name": "Jane Roe" oops}', what="x")
    assert "Jane" not in err.value.message and "line 1 column" in err.value.message


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_give_a_dict_or_an_input_error(data: bytes) -> None:
    try:
        out = load_json_object(data, what="x")
    except InputError:
        return
    assert isinstance(out, dict)
