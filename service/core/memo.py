"""A pure function's values over a growing tuple of immutable items, kept from one call to the
next so that a longer tuple costs only its new items.

A plan's versions share their contestation records (``Contestation`` objects): version n+1's
tuple is version n's plus its own, and each version's document and CarePlan repeat every one of
them. Built afresh, the n-th contestation of a plan would write n records; here it writes one
and copies the list it wrote for version n (a C-speed copy, no Python call an item). A call
reuses the values of the tuple it was last asked for that is this one, or this one less its
last item, item for item the same objects; anything else is computed afresh. The memo holds the
tuples it answers for, so an id cannot be reused while its entry lives. It keeps one entry a
growing tuple (the shorter one it extends is dropped: a long history's tuples, one a version,
would hold the GC up) and forgets the oldest entries past ``size``. Values are shared by every
caller: callers treat them as read-only. Standard library only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["CONTESTATION_MEMO", "PrefixMemo"]

K = TypeVar("K")
V = TypeVar("V")

# Tuples remembered per memo: the current version of as many plans being contested at once.
CONTESTATION_MEMO = 256


class PrefixMemo(Generic[K, V]):
    """``memo(items, *args, context=...)`` -> ``[make(x, *args) for x in items]``, reusing the
    values of ``items`` or ``items[:-1]`` as last computed under an equal ``context`` (what
    else the values depend on). Safe to share between threads."""

    __slots__ = ("_entries", "_lock", "_make", "_size")

    def __init__(self, make: Callable[..., V], *, size: int) -> None:
        self._make = make
        self._size = size
        # id of a tuple's last item -> (the tuple, its context, its values)
        self._entries: dict[int, tuple[tuple[K, ...], Hashable, list[V]]] = {}
        self._lock = threading.Lock()

    def _known(self, items: tuple[K, ...], context: Hashable) -> list[V]:
        """The remembered values of the longest of ``items`` and ``items[:-1]`` ([] if none)."""
        for n in (len(items), len(items) - 1):
            if n <= 0:
                break
            hit = self._entries.get(id(items[n - 1]))
            if (
                hit is not None
                and len(hit[0]) == n
                and (hit[1] is context or hit[1] == context)
                and hit[0] == items[:n]  # item for item: identity first, so C-speed when shared
            ):
                return hit[2]
        return []

    def __call__(self, items: tuple[K, ...], *args: object, context: Hashable = None) -> list[V]:
        if not items:
            return []
        known = self._known(items, context)
        if len(known) == len(items):
            return list(known)
        values = known + [self._make(x, *args) for x in items[len(known) :]]
        with self._lock:
            if known:  # the shorter tuple is superseded: one entry a plan, not one a version
                self._entries.pop(id(items[len(known) - 1]), None)
            self._entries.pop(id(items[-1]), None)  # re-inserted last: the newest
            self._entries[id(items[-1])] = (items, context, values)
            while len(self._entries) > self._size:
                del self._entries[next(iter(self._entries))]  # the oldest first
        return list(values)

    def __len__(self) -> int:
        return len(self._entries)
