"""A tiny FHIR R4 read/search server over the fixture bundles, for the prefetch-by-REST tests.

Answers ``GET Patient/{id}`` and ``GET {Condition,MedicationRequest,AllergyIntolerance,
Observation}?patient=...`` (with ``clinical-status``, ``status``, ``_sort=-date`` and ``_count``
paging through ``next`` links) as a server would: ``urn:uuid:`` references rewritten to
``Type/id``, results wrapped in ``searchset`` Bundles. Under ``/fhir`` every request must carry
the expected bearer token (401 otherwise); under ``/open/fhir`` the same data is served to
anyone, as an open FHIR server does. Each request is recorded so tests can see what was fetched
and whether it carried an ``Authorization`` header.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = ["FakeFhir", "server_view"]

_SUBJECT = {
    "Condition": "subject",
    "MedicationRequest": "subject",
    "Observation": "subject",
    "AllergyIntolerance": "patient",
}


def _rewrite(value: Any, refs: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        out = {k: _rewrite(v, refs) for k, v in value.items()}
        ref = out.get("reference")
        if isinstance(ref, str) and ref in refs:
            out["reference"] = refs[ref]
        return out
    if isinstance(value, list):
        return [_rewrite(v, refs) for v in value]
    return value


def server_view(bundle: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A fixture bundle's resources as a FHIR server stores them (references as Type/id)."""
    refs = {
        e["fullUrl"]: f"{e['resource']['resourceType']}/{e['resource']['id']}"
        for e in bundle.get("entry", [])
        if e.get("fullUrl") and e.get("resource", {}).get("id")
    }
    return [_rewrite(e["resource"], refs) for e in bundle.get("entry", []) if "resource" in e]


def _date(res: Mapping[str, Any]) -> str:
    return str(res.get("effectiveDateTime") or res.get("issued") or "")


@dataclass
class FakeFhir:
    token: str
    resources: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str, bool]] = field(default_factory=list)  # (path, query, authed)
    base: str = ""
    open_headers: list[str | None] = field(default_factory=list)  # Authorization sent to /open

    def load(self, paths: Iterable[Path]) -> FakeFhir:
        for p in paths:
            self.resources += server_view(json.loads(p.read_text(encoding="utf-8")))
        return self

    def add(self, *resources: Mapping[str, Any]) -> FakeFhir:
        self.resources += [dict(r) for r in resources]
        return self

    def _searchset(self, request: Request, found: list[dict[str, Any]]) -> dict[str, Any]:
        count = int(request.query_params.get("_count", "0") or 0)
        page = int(request.query_params.get("_page", "1") or 1)
        links = [{"relation": "self", "url": str(request.url)}]
        total = len(found)
        if count:
            start = (page - 1) * count
            if start + count < total:
                nxt = request.url.include_query_params(_page=page + 1)
                links.append({"relation": "next", "url": str(nxt)})
            found = found[start : start + count]
        return {
            "resourceType": "Bundle",
            "type": "searchset",
            "total": total,
            "link": links,
            "entry": [
                {
                    "fullUrl": f"{self.base}/{r['resourceType']}/{r['id']}",
                    "resource": r,
                    "search": {"mode": "match"},
                }
                for r in found
            ],
        }

    async def _handle(self, request: Request) -> JSONResponse:
        rtype = request.path_params["rtype"]
        rid = request.path_params.get("rid")
        header = request.headers.get("authorization")
        authed = header == f"Bearer {self.token}"
        if request.url.path.startswith("/open/"):
            self.requests.append((f"open:{rtype}/{rid}" if rid else f"open:{rtype}", "", False))
            self.open_headers.append(header)
        else:
            self.requests.append((f"{rtype}/{rid}" if rid else rtype, request.url.query, authed))
        if not authed and not request.url.path.startswith("/open/"):
            return JSONResponse({"resourceType": "OperationOutcome"}, status_code=401)
        if rid is not None:
            for r in self.resources:
                if r["resourceType"] == rtype and r.get("id") == rid:
                    return JSONResponse(r)
            return JSONResponse({"resourceType": "OperationOutcome"}, status_code=404)
        q = request.query_params
        patient = q.get("patient", "")
        found = []
        for r in self.resources:
            if r["resourceType"] != rtype or rtype not in _SUBJECT:
                continue
            subject = (r.get(_SUBJECT[rtype]) or {}).get("reference", "")
            if subject not in (f"Patient/{patient}", patient):
                continue
            if "clinical-status" in q:
                codes = {c.get("code") for c in (r.get("clinicalStatus") or {}).get("coding", [])}
                if q["clinical-status"] not in codes:
                    continue
            if "status" in q and r.get("status") != q["status"]:
                continue
            found.append(r)
        if q.get("_sort") == "-date":
            found.sort(key=_date, reverse=True)
        return JSONResponse(self._searchset(request, found))

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/fhir/{rtype}/{rid}", self._handle, methods=["GET"]),
                Route("/fhir/{rtype}", self._handle, methods=["GET"]),
                Route("/open/fhir/{rtype}/{rid}", self._handle, methods=["GET"]),
                Route("/open/fhir/{rtype}", self._handle, methods=["GET"]),
            ]
        )
