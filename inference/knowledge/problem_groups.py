"""Which activities treat the same clinical problem (``data/problem_groups.yaml``).

The clinician summary shows one line per problem; it learns which activities belong together
from the option's ``treats`` (a condition group id), which the knowledge states here by activity
id. Validated at import: every group is a condition group of ``conditions.yaml`` and every
activity is in one group at most (a bad file stops start-up naming the place). Pure after import.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._datafile import DATA_DIR, load_file
from .conditions import GROUPS_BY_KEY

__all__ = ["PROBLEM_GROUPS_FILE", "ProblemGroupsFile", "load_problem_groups", "treats"]

PROBLEM_GROUPS_FILE = DATA_DIR / "problem_groups.yaml"


class ProblemGroupsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(min_length=1)
    groups: dict[str, tuple[str, ...]]

    @field_validator("groups")
    @classmethod
    def _known_and_once(cls, v: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        unknown = sorted(set(v) - set(GROUPS_BY_KEY))
        if unknown:
            raise ValueError(f"not condition groups of conditions.yaml: {', '.join(unknown)}")
        seen: dict[str, str] = {}
        for group, ids in v.items():
            for oid in ids:
                if not oid.startswith("opt-"):
                    raise ValueError(f"{group}: {oid!r} is not an activity id (opt-...)")
                if oid in seen:
                    raise ValueError(f"{oid} is in both {seen[oid]} and {group}")
                seen[oid] = group
        return v


def load_problem_groups(path: Path = PROBLEM_GROUPS_FILE) -> dict[str, str]:
    """Activity id -> the condition group it treats."""
    groups = load_file(path, ProblemGroupsFile).groups
    return {oid: group for group, ids in groups.items() for oid in ids}


_TREATS = MappingProxyType(load_problem_groups())


def treats(option_id: str) -> str | None:
    """The condition group activity ``option_id`` treats together with others (None: none)."""
    return _TREATS.get(option_id)
