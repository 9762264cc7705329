"""An auditor's comparison of a deliberation document with its recomputation.

``differences(stated, recomputed)`` lists every value the stated document gives that its
recomputation (``service.core.recompute_document``) does not give back, by JSON path
(``options[2].nodes[3].sigma``). Inputs survive recomputation unchanged, so what differs is a
derived value (a score, a decision, a calibrated strength...) the document got wrong or was
tampered with. A value the document leaves out is not a difference: there is nothing stated to
contradict. Numbers compare exactly: recomputation is bit for bit. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["ABSENT", "Difference", "differences"]

ABSENT: Final = "(absent)"


@dataclass(frozen=True, slots=True)
class Difference:
    path: str
    stated: Any
    recomputed: Any  # ABSENT when the recomputation has no such value

    @property
    def stated_json(self) -> str:
        return json.dumps(self.stated, sort_keys=True)

    @property
    def recomputed_json(self) -> str:
        if self.recomputed is ABSENT:
            return ABSENT
        return json.dumps(self.recomputed, sort_keys=True)


def differences(stated: Any, recomputed: Any) -> list[Difference]:
    """Every stated value that its recomputation contradicts, in document order."""
    out: list[Difference] = []
    _walk(stated, recomputed, "", out)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(stated: Any, recomputed: Any, path: str, out: list[Difference]) -> None:
    if isinstance(stated, Mapping) and isinstance(recomputed, Mapping):
        for key, value in stated.items():
            if key in recomputed:
                _walk(value, recomputed[key], _join(path, str(key)), out)
            else:
                out.append(Difference(_join(path, str(key)), value, ABSENT))
        return
    if isinstance(stated, list) and isinstance(recomputed, list):
        if len(stated) != len(recomputed):
            out.append(Difference(path, stated, recomputed))
            return
        for i, (a, b) in enumerate(zip(stated, recomputed, strict=True)):
            _walk(a, b, f"{path}[{i}]", out)
        return
    # bool is an int in Python: True == 1 must still count as a difference.
    if (
        type(stated) is not type(recomputed)
        and not (
            isinstance(stated, int | float)
            and isinstance(recomputed, int | float)
            and not isinstance(stated, bool)
            and not isinstance(recomputed, bool)
        )
    ) or stated != recomputed:
        out.append(Difference(path, stated, recomputed))
