"""How many abnormal recent results the plans address, over every example bundle.

For each bundle of examples/fixtures/fhir and examples/vignettes*/ (the bundles of the plan
hashes; examples/eval names fixtures only), planned as on the plan-hash day: the results the
reference intervals find abnormal (``result_net.abnormal_results``), how many a line of a
criterion or rule cites (addressed before the net), and how many any line cites once the net's
own lines are counted (after). Prints one line per bundle with an abnormal result, then the
totals, and the critical values among them.

    .venv/bin/python -m tests.support.result_net_survey
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from fhir_mapping.ingest import ingest
from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal
from inference.knowledge.facts import Facts
from inference.knowledge.result_net import RESULTS, abnormal_results, critical_result
from service.errors import CanoeError
from service.record.profile import PatientProfile
from tests.support.plan_hashes import CREATED, ROOT, bundles

NET_PREFIX = "opt-review-result-"


def main() -> None:
    received = datetime.fromisoformat(CREATED)
    present = before = after = critical = 0
    for path in bundles():
        try:
            profile = ingest(path.read_text(), received=received)
        except CanoeError:
            continue
        found = abnormal_results(Facts(profile))
        if not found:
            continue
        proposals = analyse(profile).proposals
        cited = {
            False: {r for p in proposals if not p.id.startswith(NET_PREFIX) for r in _refs(p)},
            True: {r for p in proposals for r in _refs(p)},
        }
        for a in found:
            present += 1
            # addressed: a line cites a result of the test (the net's own rule)
            test_refs = _refs_of(profile, a.test.codes)
            before += bool(test_refs & cited[False])
            # after: also a test another speaks for (creatinine by the eGFR's line)
            codes = {c for t in RESULTS.tests if t.id in a.test.covered_by for c in t.codes}
            after += bool((test_refs | _refs_of(profile, codes)) & cited[True])
            critical += critical_result(profile, a.obs) is not None
        names = ", ".join(a.test.id for a in found)
        print(f"{path.relative_to(ROOT)}: {len(found)} abnormal ({names})")
    print(f"abnormal results addressed before the net: {before}/{present}")
    print(f"abnormal results addressed after the net: {after}/{present}")
    print(f"at a critical value: {critical}")


def _refs_of(profile: PatientProfile, codes: Iterable[str]) -> set[str]:
    wanted = set(codes)
    return {o.ref for o in (*profile.readings, *profile.observations) if o.loinc in wanted}


def _refs(p: Proposal) -> tuple[str, ...]:
    return (*p.refs, *(f for pt in p.points for f in pt.facts))


if __name__ == "__main__":
    main()
