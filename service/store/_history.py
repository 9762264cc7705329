"""A contested version stored as its own part plus its history tail, so N versions cost O(N).

A plan version's document (``canoe.deliberation/1``) lists every contestation since version 1,
and its Bundle repeats them twice: one CarePlan extension per contestation (the last entries of
``CarePlan.extension``) and the whole document again, base64, in the deliberation Binary. Stored
whole, version k costs O(k) bytes. ``split`` keeps a version's own part (the document with no
contestations, the Bundle with neither those extensions nor the Binary's data) and a small tail:
the contestations and extensions this version added, with ``prior``, how many came before it.
``join`` puts a version back together from its own part and the tails of its chain (the versions
back to the first whose ``prior`` is 0), equal to what was written.

``split`` only splits what it can prove ``join`` restores: each tail extension names its
contestation's Task id, and the Binary's data is dropped only when it is exactly the document's
canonical encoding. Anything else (another shape, a hand-made record) is stored whole. This
module reads both documents as plain JSON; it imports no FHIR model and does no I/O.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from service.jsonio import canonical_json

__all__ = ["Split", "join", "split", "tail_end"]

_CONTESTATION_URL: Final = "/StructureDefinition/contestation"


@dataclass(frozen=True, slots=True)
class Split:
    deliberation: dict[str, Any]  # the document without its contestations
    bundle: dict[str, Any]  # the Bundle without contestation extensions or Binary data
    history: dict[str, Any]  # {"prior", "contestations", "extensions", "binary"}
    # Every contestation of the version and its CarePlan extension, as checked: the next
    # version's ``split`` takes them as ``checked`` (when its writer kept them).
    checked: tuple[list[Any], list[Any]] = ([], [])


def _encoded(document: Mapping[str, Any], how: object = True) -> str:
    """The deliberation Binary's data for ``document`` (as ``fhir_mapping.careplan`` writes it):
    ``how`` is a tail's ``binary``, "canonical" (``canonical_json``, what ``split`` writes now:
    the Binary's own bytes, several times faster on a long history) or True (the standard
    library's encoding, which tails written before it name)."""
    if how == "canonical":
        text = canonical_json(document)
    else:
        text = json.dumps(
            document, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    return base64.b64encode(text).decode("ascii")


def _canonical_data(document: Mapping[str, Any]) -> str | None:
    """``_encoded(document, "canonical")``; None for a document ``canonical_json`` refuses."""
    try:
        return _encoded(document, "canonical")
    except TypeError:  # orjson's JSONEncodeError: an integer past 64 bits, a key not a string
        return None


def _resources(bundle: Mapping[str, Any], kind: str) -> list[int]:
    entries = bundle.get("entry")
    if not isinstance(entries, list):
        return []
    return [
        i
        for i, e in enumerate(entries)
        if isinstance(e, Mapping)
        and isinstance(e.get("resource"), Mapping)
        and e["resource"].get("resourceType") == kind
    ]


def _task_of(ext: object) -> object:
    """The Task id a contestation extension names (None when it is not one)."""
    if not isinstance(ext, Mapping) or not str(ext.get("url", "")).endswith(_CONTESTATION_URL):
        return None
    parts = ext.get("extension")
    for p in parts if isinstance(parts, list) else []:
        if isinstance(p, Mapping) and p.get("url") == "task":
            return p.get("valueString")
    return None


def _task_ids(exts: Sequence[object]) -> list[object]:
    """``_task_of`` of each extension: on a long history, in one pass over the shape this
    service writes (a contestation extension whose first part is its Task id), the rest one by
    one as ``_task_of`` reads them."""
    try:
        return [
            x["extension"][0]["valueString"]  # type: ignore[index]
            if x["url"].endswith(_CONTESTATION_URL)  # type: ignore[index]
            and x["extension"][0]["url"] == "task"  # type: ignore[index]
            else _task_of(x)
            for x in exts
        ]
    except (TypeError, KeyError, IndexError, AttributeError):
        return [_task_of(x) for x in exts]


def _ids(cons: Sequence[object]) -> list[object]:
    """The Task id of each contestation of a document (None for one that is not an object)."""
    try:
        return [c["id"] for c in cons]  # type: ignore[index]
    except (TypeError, KeyError, IndexError):
        return [c.get("id") if isinstance(c, Mapping) else None for c in cons]


def _with_resource(
    bundle: Mapping[str, Any], index: int, resource: dict[str, Any]
) -> dict[str, Any]:
    entries = list(bundle["entry"])
    entries[index] = {**entries[index], "resource": resource}
    return {**bundle, "entry": entries}


def tail_end(history: Mapping[str, Any]) -> tuple[int, object]:
    """How many contestations the version whose tail this is holds in all, and the Task id
    of the last (None when it holds none)."""
    cons = history["contestations"]
    last = cons[-1].get("id") if cons else None
    return int(history["prior"]) + len(cons), last


def split(
    deliberation: Mapping[str, Any],
    bundle: Mapping[str, Any],
    *,
    prior: int,
    after: object = None,
    checked: tuple[Sequence[Any], Sequence[Any]] | None = None,
) -> Split | None:
    """The version's own part and tail, given that the version before it held ``prior``
    contestations (the first ``prior`` of this one's, the last of them with Task id ``after``);
    None when it must be stored whole. ``checked``: the version before it's ``Split.checked``,
    when known: if this one starts with the same contestations and extensions (equal, and on
    a long history the very same objects, compared at C speed), only its own are checked."""
    cons = deliberation.get("contestations")
    careplans = _resources(bundle, "CarePlan")
    if not isinstance(cons, list) or len(cons) < prior or len(careplans) != 1:
        return None
    if prior and not (isinstance(cons[prior - 1], Mapping) and cons[prior - 1].get("id") == after):
        return None  # not the history its predecessor ends with: keep the row whole
    cp_at = careplans[0]
    careplan = bundle["entry"][cp_at]["resource"]
    ext = careplan.get("extension")
    n = len(cons)
    if not isinstance(ext, list) or len(ext) < n:
        return None
    own_ext, con_ext = ext[: len(ext) - n], ext[len(ext) - n :]
    start = 0  # the contestations before ``start`` were checked with the version before
    if (
        checked is not None
        and len(checked[0]) == len(checked[1]) == prior
        and cons[:prior] == checked[0]
        and con_ext[:prior] == checked[1]
    ):
        start = prior
    if any(_task_of(x) is not None for x in own_ext) or _task_ids(con_ext[start:]) != _ids(
        cons[start:]
    ):
        return None
    own_bundle = _with_resource(bundle, cp_at, {**careplan, "extension": own_ext})
    binaries = _resources(bundle, "Binary")
    binary: bool | str = False
    if len(binaries) == 1:
        b = bundle["entry"][binaries[0]]["resource"]
        if b.get("data") == _canonical_data(deliberation):
            own_bundle = _with_resource(
                own_bundle, binaries[0], {k: v for k, v in b.items() if k != "data"}
            )
            binary = "canonical"
    history = {
        "prior": prior,
        "contestations": cons[prior:],
        "extensions": con_ext[prior:],
        "binary": binary,
    }
    return Split({**deliberation, "contestations": []}, own_bundle, history, (cons, con_ext))


def join(
    deliberation: Mapping[str, Any], bundle: Mapping[str, Any], chain: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The whole document and Bundle of a version from its own part and ``chain``: the tails
    from the first with ``prior`` 0 to this version's own, oldest first."""
    cons: list[Any] = []
    exts: list[Any] = []
    for tail in chain:
        if int(tail["prior"]) != len(cons):
            raise ValueError(
                f"plan history is broken: a tail follows {tail['prior']} contestations, "
                f"its chain holds {len(cons)}"
            )
        cons += tail["contestations"]
        exts += tail["extensions"]
    document = {**deliberation, "contestations": cons}
    (cp_at,) = _resources(bundle, "CarePlan")
    careplan = bundle["entry"][cp_at]["resource"]
    whole = _with_resource(
        bundle, cp_at, {**careplan, "extension": [*careplan["extension"], *exts]}
    )
    if chain and chain[-1].get("binary"):
        (b_at,) = _resources(whole, "Binary")
        data = _encoded(document, chain[-1]["binary"])
        binary = {**whole["entry"][b_at]["resource"], "data": data}
        whole = _with_resource(whole, b_at, binary)
    return document, whole
