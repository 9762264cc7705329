"""The memo behind a plan's shared contestation records: a tuple that extends the last one by
an item costs that item only, another context or other items are computed afresh, and the size
is bounded."""

from __future__ import annotations

from dataclasses import dataclass

from service.core.memo import PrefixMemo


@dataclass(frozen=True)
class Record:
    name: str


def _memo(calls: list[str], size: int = 4) -> PrefixMemo[Record, str]:
    def make(r: Record, base: str) -> str:
        calls.append(r.name)
        return f"{base}/{r.name}"

    return PrefixMemo(make, size=size)


def test_a_longer_tuple_costs_its_new_item_only() -> None:
    calls: list[str] = []
    memo = _memo(calls)
    a, b, c = Record("a"), Record("b"), Record("c")
    assert memo((a, b), "x", context="x") == ["x/a", "x/b"]
    assert memo((a, b, c), "x", context="x") == ["x/a", "x/b", "x/c"]
    assert memo((a, b, c), "x", context="x") == ["x/a", "x/b", "x/c"]
    assert calls == ["a", "b", "c"]
    assert memo((), "x", context="x") == []
    assert len(memo) == 1  # the shorter tuple's entry gave way to the longer one's


def test_what_is_not_the_same_is_computed_afresh() -> None:
    calls: list[str] = []
    memo = _memo(calls)
    a, b = Record("a"), Record("b")
    memo((a, b), "x", context="x")
    # Another context: every value again.
    assert memo((a, b), "y", context="y") == ["y/a", "y/b"]
    # The same last item after other items (not the tuple remembered): every value again.
    assert memo((Record("z"), b), "y", context="y") == ["y/z", "y/b"]
    # Two items beyond what is remembered: the memo looks one item back only.
    memo2 = _memo(calls := [])
    memo2((a,), "x", context="x")
    assert memo2((a, b, Record("c")), "x", context="x") == ["x/a", "x/b", "x/c"]
    assert calls == ["a", "a", "b", "c"]


def test_the_values_returned_are_the_callers_own_list() -> None:
    memo = _memo([])
    a = Record("a")
    first = memo((a,), "x", context="x")
    first.append("mine")
    assert memo((a,), "x", context="x") == ["x/a"]


def test_the_oldest_entries_are_forgotten_past_the_size() -> None:
    calls: list[str] = []
    memo = _memo(calls, size=2)
    records = [(Record(str(i)),) for i in range(3)]
    for r in records:
        memo(r, "x", context="x")
    assert len(memo) == 2
    memo(records[2], "x", context="x")
    memo(records[0], "x", context="x")  # forgotten: computed again
    assert calls == ["0", "1", "2", "0"]
