"""How many abnormal recent results the plans address, over every example bundle.

For each bundle of examples/fixtures/fhir and examples/vignettes*/ (the bundles of the plan
hashes; examples/eval names fixtures only), planned as on the plan-hash day: the results the
reference intervals find abnormal (``result_net.abnormal_results``), how many a line of a
criterion or rule cites (addressed before the net), and how many any line cites once the net's
own lines are counted (after). Prints one line per bundle with an abnormal result, then the
totals, and the critical values among them; then the same for the results with no number that
the record flags or words abnormal (``result_words.worded_results``).

    .venv/bin/python -m tests.support.result_net_survey                   # plan-hash day
    .venv/bin/python -m tests.support.result_net_survey --at-record-date  # each record's date
"""

from __future__ import annotations

import argparse
from datetime import datetime

from fhir_mapping.ingest import ingest
from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal
from inference.knowledge.facts import Facts
from inference.knowledge.result_net import abnormal_results, critical_result, unaddressed
from inference.knowledge.result_words import Worded, worded_results
from service.errors import CanoeError
from tests.support.plan_hashes import CREATED, ROOT, bundles

NET_PREFIX = "opt-review-result-"
WORDED_PREFIX = "opt-review-worded-"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--at-record-date",
        action="store_true",
        help="plan each record on its own last date (no request time), not the plan-hash day",
    )
    args = parser.parse_args(argv)
    received = None if args.at_record_date else datetime.fromisoformat(CREATED)
    present = before = after = critical = 0
    words = [0, 0, 0]  # results worded or flagged abnormal: found, cited before, after the net
    for path in bundles():
        try:
            profile = ingest(path.read_text(), received=received)
        except CanoeError:
            continue
        facts = Facts(profile)
        found = abnormal_results(facts)
        worded = worded_results(facts)
        if not found and not worded:
            continue
        proposals = analyse(profile).proposals
        _count_worded(words, worded, proposals)
        if not found:
            continue
        checks = [p for p in proposals if not p.id.startswith(NET_PREFIX)]
        present += len(found)
        before += len(found) - len(unaddressed(facts, checks, spoken=False))
        after += len(found) - len(unaddressed(facts, proposals))
        critical += sum(critical_result(profile, a.obs) is not None for a in found)
        names = ", ".join(a.test.id for a in found)
        print(f"{path.relative_to(ROOT)}: {len(found)} abnormal ({names})")
    print(f"abnormal results addressed before the net: {before}/{present}")
    print(f"abnormal results addressed after the net: {after}/{present}")
    print(f"at a critical value: {critical}")
    print(f"results worded or flagged abnormal, cited before the net: {words[1]}/{words[0]}")
    print(f"results worded or flagged abnormal, cited after the net: {words[2]}/{words[0]}")


def _count_worded(words: list[int], worded: tuple[Worded, ...], proposals: list[Proposal]) -> None:
    """Add to ``words`` the results of ``worded``, those a line not of the nets cites, and
    those any line cites."""

    def cited(lines: list[Proposal]) -> set[str]:
        return {r for p in lines for r in (*p.refs, *(f for pt in p.points for f in pt.facts))}

    checks = [p for p in proposals if not p.id.startswith((NET_PREFIX, WORDED_PREFIX))]
    words[0] += len(worded)
    words[1] += sum(w.obs.ref in cited(checks) for w in worded)
    words[2] += sum(w.obs.ref in cited(list(proposals)) for w in worded)


if __name__ == "__main__":
    main()
