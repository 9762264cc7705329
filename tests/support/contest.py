"""Contesting a plan Bundle in one call, for tests: what ``canoe contest`` does, through the one
write step (``service.versions.write_version``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fhir_mapping.definitions import DEFAULT_BASE
from service.versions import contest_of_bundle, write_version


def contest_bundle(
    plan_bundle_json: Mapping[str, Any],
    tasks_raw: bytes | str | Mapping[str, Any],
    *,
    recorded: str,
    base: str = DEFAULT_BASE,
) -> dict[str, Any]:
    """The new version's Bundle after applying ``tasks_raw`` to the plan Bundle (written under
    ``base``) at ``recorded``; a replay answers the plan Bundle with the Tasks completed."""
    contest = contest_of_bundle(plan_bundle_json, tasks_raw, at=recorded, base=base)
    return write_version(contest, base=base).bundle
