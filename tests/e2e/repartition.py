"""Splits a vignette folder's blind expectations into what today's plans meet and what they do
not: ``expectations.json`` gets every met check of ``blind_expectations.json`` (the file written
before any plan was read, kept unchanged), ``known_gaps.json`` every missed finding and unsafe
inclusion, so that closing a gap in the knowledge moves it by rerunning this, never by
hand-editing the lists.

    .venv/bin/python -m tests.e2e.repartition examples/vignettes5 [--created ISO]

It prints found/expected and each unsafe inclusion (kept as an open gap, where the tests require
it to stay until the plans stop making it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from service.app import request_time
from service.backends import build_planner
from service.eval import load_cases, plan_cases
from service.settings import load_settings

BLIND = "blind_expectations.json"
CREATED = "2026-11-30T09:00:00+00:00"


def _all_expectations(folder: Path) -> dict[str, Any]:
    """The blind file, or where a folder keeps none (its wordings were corrected after the
    blind run, as its README says) the union of its kept expectations and known gaps."""
    if (folder / BLIND).exists():
        doc: dict[str, Any] = json.loads((folder / BLIND).read_text(encoding="utf-8"))
        return doc
    kept = json.loads((folder / "expectations.json").read_text(encoding="utf-8"))
    gaps = json.loads((folder / "known_gaps.json").read_text(encoding="utf-8"))
    open_ = {c["name"]: c for c in gaps["cases"]}
    cases = [
        c
        | {
            kind: [*c.get(kind, []), *open_.get(c["name"], {}).get(kind, [])]
            for kind in ("must_include", "must_not_include")
        }
        for c in kept["cases"]
    ]
    return kept | {"cases": cases}


def partition(folder: Path, created: str = CREATED) -> tuple[dict[str, Any], dict[str, Any]]:
    """(kept, gaps) as ``canoe.eval/1`` documents, from the folder's blind file."""
    blind = _all_expectations(folder)
    settings = load_settings(environ={})
    planner = build_planner(settings)
    received = request_time(created)
    kept_cases, gap_cases, unsafe = [], [], []
    scratch = folder / f".{BLIND}.partition"
    scratch.write_text(json.dumps(blind), encoding="utf-8")
    try:
        cases = load_cases(folder, scratch.name)
    finally:
        scratch.unlink()
    planned = plan_cases(cases, planner, settings, created=created, received=received)
    for raw_case, checked in zip(blind["cases"], planned, strict=True):
        checks = iter(checked.result.checks)
        kept: dict[str, list[Any]] = {"must_include": [], "must_not_include": []}
        gaps: dict[str, list[Any]] = {"must_include": [], "must_not_include": []}
        for kind in ("must_include", "must_not_include"):
            for raw in raw_case.get(kind, ()):
                check = next(checks)
                if check.status == "unsafe":
                    unsafe.append(f"{checked.case.name}: {check.activity}")
                (gaps if check.failed else kept)[kind].append(raw)
        head = {k: v for k, v in raw_case.items() if k not in kept}
        kept_cases.append(head | {k: v for k, v in kept.items() if v})
        if gaps["must_include"] or gaps["must_not_include"]:
            gap_cases.append(head | {k: v for k, v in gaps.items() if v})
    meta = {k: v for k, v in blind.items() if k != "cases"}
    for line in unsafe:
        print(f"UNSAFE {line}", flush=True)
    return meta | {"cases": kept_cases}, meta | {"cases": gap_cases}


def _count(doc: dict[str, Any], kind: str) -> int:
    return sum(len(c.get(kind, ())) for c in doc["cases"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--created", default=CREATED)
    args = parser.parse_args(argv)
    kept, gaps = partition(args.folder, args.created)
    old = {
        name: json.loads((args.folder / name).read_text(encoding="utf-8"))
        for name in ("expectations.json", "known_gaps.json")
        if (args.folder / name).exists()
    }
    for name, doc in (("expectations.json", kept), ("known_gaps.json", gaps)):
        if name in old:  # each file keeps its own description
            doc = doc | {"description": old[name].get("description", doc.get("description"))}
        (args.folder / name).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    found = _count(kept, "must_include")
    expected = found + _count(gaps, "must_include")
    print(f"{args.folder}: {found} of {expected} expected findings met", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
