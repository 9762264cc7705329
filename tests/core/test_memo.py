"""The identity memo behind a plan's shared contestation records: one computation per object
and context, a fresh one for another context, and a bounded size."""

from __future__ import annotations

from dataclasses import dataclass

from service.core.memo import IdentityMemo


def counted(calls: list[str], value: str) -> str:
    calls.append(value)
    return value


@dataclass(frozen=True)
class Record:
    name: str


def test_a_value_is_computed_once_per_object() -> None:
    calls: list[str] = []
    memo: IdentityMemo[Record, str] = IdentityMemo(
        lambda r, suffix: counted(calls, r.name) + suffix, size=4
    )
    a, twin = Record("a"), Record("a")  # equal, not the same object
    assert memo(a, "!", context="x") == "a!"
    assert memo(a, "?", context="x") == "a!"  # the same context: remembered, args unused
    assert calls == ["a"]
    assert memo(twin, "!", context="x") == "a!"
    assert calls == ["a", "a"]  # identity, not equality, picks the entry


def test_another_context_recomputes() -> None:
    calls: list[str] = []
    memo: IdentityMemo[Record, str] = IdentityMemo(
        lambda r, base: f"{counted(calls, base)}/{r.name}", size=4
    )
    r = Record("r")
    assert memo(r, "http://a", context="http://a") == "http://a/r"
    assert memo(r, "http://b", context="http://b") == "http://b/r"
    assert memo(r, "http://b", context="http://b") == "http://b/r"
    assert calls == ["http://a", "http://b"]
    # An equal context that is another object still hits.
    assert memo(r, "x", context="".join(["http://", "b"])) == "http://b/r"
    assert calls == ["http://a", "http://b"]


def test_the_oldest_entries_are_forgotten_past_the_size() -> None:
    calls: list[str] = []
    memo: IdentityMemo[Record, str] = IdentityMemo(lambda r: counted(calls, r.name), size=2)
    records = [Record(str(i)) for i in range(3)]
    for r in records:
        memo(r)
    assert len(memo) == 2
    memo(records[2])
    memo(records[0])  # forgotten: computed again
    assert calls == ["0", "1", "2", "0"]
