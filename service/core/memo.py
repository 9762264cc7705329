"""A pure function's results for immutable objects, remembered by the object's identity.

A plan's versions share their contestation records (``Contestation`` objects: version n+1 holds
version n's plus its own), and each version's document and CarePlan repeat every one of them.
Built afresh, the n-th contestation of a plan would write n records; remembered by identity, it
writes one and reuses the rest. The memo holds each object it answers for, so an id cannot be
reused while its entry lives; it forgets the oldest entries past ``size``. A value is shared by
every caller that asks for the same object: callers treat it as read-only. Standard library
only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["CONTESTATION_MEMO", "IdentityMemo"]

# Contestation records remembered per memo: a 1,000-version plan and a few busy ones beside it
# (a record's document entry and CarePlan extension are each well under 2 kB).
CONTESTATION_MEMO = 8192

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """``memo(obj, *args, context=...)`` -> ``make(obj, *args)``, computed once per object
    while ``context`` (what else the value depends on: ``args`` as far as they matter) stays
    equal; a different context recomputes and replaces the entry. Safe to share between
    threads."""

    __slots__ = ("_entries", "_lock", "_make", "_size")

    def __init__(self, make: Callable[..., V], *, size: int) -> None:
        self._make = make
        self._size = size
        self._entries: dict[int, tuple[K, Hashable, V]] = {}
        self._lock = threading.Lock()

    def __call__(self, obj: K, *args: object, context: Hashable = None) -> V:
        hit = self._entries.get(id(obj))
        if hit is not None and hit[0] is obj:
            if hit[1] is context:
                return hit[2]
            if hit[1] == context:  # equal, not the same: keep this one, compared faster
                self._entries[id(obj)] = (obj, context, hit[2])
                return hit[2]
        value = self._make(obj, *args)
        with self._lock:
            self._entries[id(obj)] = (obj, context, value)
            while len(self._entries) > self._size:
                del self._entries[next(iter(self._entries))]  # the oldest first
        return value

    def __len__(self) -> int:
        return len(self._entries)
