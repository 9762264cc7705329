"""Citation audit: every criterion point, criterion and kidney band beside the documents it cites.

Run ``python -m tests.inference.citation_audit`` (``--by-document`` groups by cited document) and
read it: a point's documents should state what the point claims. The mechanical guard is in
``test_citation_audit.py``; this listing is for the human pass it cannot replace.
"""

from __future__ import annotations

import sys
from collections import defaultdict

from inference.evidence import EvidenceBase
from inference.knowledge import drugs
from inference.knowledge.criteria.loader import load as load_criteria


def rows() -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(where, kind, text, cited ids) for every point, criterion and kidney band."""
    out: list[tuple[str, str, str, tuple[str, ...]]] = []
    for c in load_criteria():
        t = c.trigger
        head = f"{c.id} [{c.source}, {c.source_id}] drugs={list(t.drugs)}"
        head += f" conds={list(t.any_conditions)}"
        out.append((c.id, "criterion", head + " :: " + c.option.title, c.evidence))
        for i, p in enumerate(c.points):
            out.append((f"{c.id}#{i}", f"{p.role}/{p.stance}", p.text, p.evidence))
    for r in drugs.load_drugs().renal:
        where = f"band {r.spec} {r.measure}<{r.below:g}" + (
            f">={r.at_least:g}" if r.at_least is not None else ""
        )
        out.append((where, r.action, r.advice, r.evidence))
    return out


def main(argv: list[str]) -> None:
    eb = EvidenceBase.load()
    data = rows()
    if "--by-document" in argv:
        by: dict[str, list[str]] = defaultdict(list)
        for where, kind, text, ids in data:
            for e in ids:
                by[e].append(f"  - {where} ({kind}): {text}")
        for e in sorted(by):
            d = eb.by_id(e)
            assert d is not None
            print(f"\n## {e} [{d.source}, {d.year}] {d.statement}")
            print("\n".join(by[e]))
        return
    for where, kind, text, ids in data:
        print(f"{where} ({kind}): {text}")
        for e in ids:
            d = eb.by_id(e)
            assert d is not None
            print(f"    {e}: {d.statement}")
    print(f"\n{len(data)} rows, {sum(len(r[3]) for r in data)} citations", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
