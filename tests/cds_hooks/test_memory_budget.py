"""The per-plan memory budget over the real CDS Hooks app: a hook whose record would need more
than ``CANOE_MAX_PLAN_MEMORY_MB`` to plan answers HTTP 413 with an OperationOutcome
``too-costly`` naming the estimate and the budget, before any planning, and stores no plan; an
ordinary record under the same budget is answered as usual."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cds_hooks.conftest import Keys, Servers, cds_fixture

PV = "careplan-patient-view"
BUDGET_MB = 16


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory: pytest.TempPathFactory, keys: Keys) -> Iterator[Servers]:
    s = Servers(
        tmp_path_factory.mktemp("cds-budget"), keys, settings={"max_plan_memory_mb": BUDGET_MB}
    ).start()
    try:
        yield s
    finally:
        s.stop()


def _with_orders(body: dict[str, Any], n: int) -> dict[str, Any]:
    """The hook request with its prefetched medication orders repeated to ``n`` orders."""
    out = copy.deepcopy(body)
    entries = out["prefetch"]["medications"]["entry"]
    more = []
    for i in range(n):
        entry = copy.deepcopy(entries[i % len(entries)])
        rid = f"00000000-0000-4000-8000-{i:012d}"
        entry["resource"]["id"] = rid
        entry["fullUrl"] = f"{entry.get('fullUrl', '').rsplit('/', 1)[0]}/{rid}"
        more.append(entry)
    out["prefetch"]["medications"]["entry"] = more
    out["prefetch"]["medications"]["total"] = n
    return out


def _plans(servers: Servers, body: dict[str, Any]) -> int:
    patient = f"Patient/{body['prefetch']['patient']['id']}"

    async def count() -> int:
        versions = await servers.service.store.list_versions(tenant="ehr-test", patient_ref=patient)
        return len(versions)

    return servers.call(count())


def test_a_record_over_the_memory_budget_is_413_with_an_outcome(budgeted: Servers) -> None:
    body = cds_fixture("requests", "patient-view_trey_berge.json")
    before = _plans(budgeted, body)
    r = budgeted.post(PV, _with_orders(body, 3000))
    assert r.status_code == 413, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert "retry-after" not in r.headers  # too large, not too busy: retrying will not help
    oo = r.json()
    assert oo["resourceType"] == "OperationOutcome"
    (issue,) = oo["issue"]
    assert issue["severity"] == "error"
    assert issue["code"] == "too-costly"
    assert f"memory budget is {BUDGET_MB} MB" in issue["diagnostics"]
    assert "CANOE_MAX_PLAN_MEMORY_MB" in issue["diagnostics"]
    assert _plans(budgeted, body) == before  # refused before the work: nothing stored


def test_an_ordinary_record_is_planned_under_the_same_budget(budgeted: Servers) -> None:
    r = budgeted.post(PV, cds_fixture("requests", "patient-view_trey_berge.json"))
    assert r.status_code == 200, r.text
    assert r.json()["cards"]
