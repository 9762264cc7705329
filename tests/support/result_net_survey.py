"""How many abnormal recent results the plans address, over every example bundle.

For each bundle of examples/fixtures/fhir and examples/vignettes*/ (the bundles of the plan
hashes; examples/eval names fixtures only), planned as on the plan-hash day: the results the
reference intervals find abnormal (``result_net.abnormal_results``), how many a line of a
criterion or rule cites (addressed before the net), and how many any line cites once the net's
own lines are counted (after). Prints one line per bundle with an abnormal result, then the
totals, and the critical values among them.

    .venv/bin/python -m tests.support.result_net_survey                   # plan-hash day
    .venv/bin/python -m tests.support.result_net_survey --at-record-date  # each record's date
"""

from __future__ import annotations

import argparse
from datetime import datetime

from fhir_mapping.ingest import ingest
from inference.knowledge import analyse
from inference.knowledge.facts import Facts
from inference.knowledge.result_net import abnormal_results, critical_result, unaddressed
from service.errors import CanoeError
from tests.support.plan_hashes import CREATED, ROOT, bundles

NET_PREFIX = "opt-review-result-"


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
    for path in bundles():
        try:
            profile = ingest(path.read_text(), received=received)
        except CanoeError:
            continue
        facts = Facts(profile)
        found = abnormal_results(facts)
        if not found:
            continue
        proposals = analyse(profile).proposals
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


if __name__ == "__main__":
    main()
