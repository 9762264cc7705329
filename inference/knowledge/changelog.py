"""The knowledge change log (``data/changelog.yaml``): its releases, newest first.

The newest release names the knowledge version (the one version: plans, Provenance, the
embedded backend and the FHIR export all read it from here); each criterion's ``version`` must
name one of the releases. Reads its file once; decides nothing clinical.
"""

from __future__ import annotations

from datetime import date
from functools import cache

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._datafile import DATA_DIR, load_file
from .criteria.schema import VERSION_PATTERN

__all__ = ["CHANGELOG_FILE", "Changelog", "Release", "changelog"]

CHANGELOG_FILE = DATA_DIR / "changelog.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Release(_Strict):
    version: str = Field(pattern=VERSION_PATTERN)
    date: date
    summary: str = Field(min_length=1)


class Changelog(_Strict):
    description: str = ""
    releases: tuple[Release, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _newest_first(self) -> Changelog:
        versions = [r.version for r in self.releases]
        if versions != sorted(set(versions), reverse=True):
            raise ValueError("releases must be unique and listed newest first")
        return self

    @property
    def version(self) -> str:
        """The knowledge version: the newest release's."""
        return self.releases[0].version


@cache
def changelog() -> Changelog:
    """The shipped change log, validated (``KnowledgeFileError`` on a bad file)."""
    return load_file(CHANGELOG_FILE, Changelog)
