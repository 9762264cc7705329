"""Hashes of the plans of every example bundle, to show that a refactor changes no plan.

Each hash covers the exit status, stdout and stderr of ``canoe plan BUNDLE --format json
--created 2026-11-30T09:00:00+00:00`` for every bundle in examples/fixtures/fhir and
examples/vignettes*/ (the bad fixtures' errors included), run in-process. The shipped knowledge's
content hash is replaced by a placeholder first: it changes with any edit of a data file (a comment,
a parameter moved out of code), and what the tool guards is that the plans themselves did not.

    .venv/bin/python -m tests.support.plan_hashes            # compare with plan_hashes.json
    .venv/bin/python -m tests.support.plan_hashes --write    # store the current hashes
    .venv/bin/python -m tests.support.plan_hashes --dump DIR # also write each output to DIR

A change of plan that is meant is stored with ``--write`` in the commit that makes it, with the
reason in its message.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import sys
from pathlib import Path

from inference.knowledge.site import shipped
from service.cli import main as canoe

ROOT = Path(__file__).resolve().parents[2]
STORED = Path(__file__).with_suffix(".json")
CREATED = "2026-11-30T09:00:00+00:00"
_NOT_BUNDLES = {"expectations.json", "known_gaps.json", "blind_expectations.json"}


def bundles() -> list[Path]:
    found = sorted((ROOT / "examples" / "fixtures" / "fhir").glob("*.json"))
    for folder in sorted(ROOT.glob("examples/vignettes*/")):
        found += sorted(p for p in folder.glob("*.json") if p.name not in _NOT_BUNDLES)
    return found


def plan_output(path: Path) -> str:
    out, err = io.StringIO(), io.StringIO()
    argv = ["plan", str(path), "--format", "json", "--created", CREATED, "--no-progress"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = canoe(argv)
    text = f"{rc}\n{out.getvalue()}{err.getvalue()}"
    return text.replace(shipped().stamp.content_hash, "sha256:<shipped-knowledge>")


def hashes(dump: Path | None) -> dict[str, str]:
    got = {}
    for path in bundles():
        name = str(path.relative_to(ROOT))
        text = plan_output(path)
        if dump is not None:
            (dump / name.replace("/", "__")).write_text(text)
        got[name] = hashlib.sha256(text.encode()).hexdigest()
    return got


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="store the current hashes")
    parser.add_argument("--dump", type=Path, help="also write each plan output to this folder")
    args = parser.parse_args(argv)
    if args.dump is not None:
        args.dump.mkdir(parents=True, exist_ok=True)
    got = hashes(args.dump)
    if args.write:
        STORED.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"stored {len(got)} hashes in {STORED.relative_to(ROOT)}")
        return 0
    stored = json.loads(STORED.read_text())
    changed = sorted(k for k in got.keys() | stored.keys() if got.get(k) != stored.get(k))
    for name in changed:
        print(f"changed: {name}")
    print(f"{len(got)} plans, {len(changed)} changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(run())
