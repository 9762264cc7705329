"""The closed vocabulary of point themes and the relations between them (``data/themes.yaml``).

A point states its themes (criteria and ``data/points.yaml``); nothing reads them from its words.
Two arguments on one option, made by different roles, relate when one's theme ``supports`` or
``answers`` a theme of the other. Tables only: no I/O beyond reading the one file at import.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._datafile import DATA_DIR, load_file

__all__ = ["THEMES", "THEMES_FILE", "ThemeTable", "answers", "supports"]

THEMES_FILE = DATA_DIR / "themes.yaml"


class Theme(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str = Field(pattern=r"^[a-z][a-z\-]*$")
    description: str = Field(min_length=1)
    supports: tuple[str, ...] = ()  # themes of same-stance points this one corroborates
    answers: tuple[str, ...] = ()  # themes of other-stance points this one rebuts


class ThemeTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = ""
    themes: tuple[Theme, ...]

    @model_validator(mode="after")
    def _closed(self) -> ThemeTable:
        codes = [t.code for t in self.themes]
        if len(set(codes)) != len(codes):
            raise ValueError("theme codes must be unique")
        for t in self.themes:
            unknown = sorted(set(t.supports + t.answers) - set(codes))
            if unknown:
                raise ValueError(f"theme {t.code!r} relates to unknown themes {unknown}")
        return self

    @property
    def codes(self) -> frozenset[str]:
        return frozenset(t.code for t in self.themes)


THEMES: ThemeTable = load_file(THEMES_FILE, ThemeTable)


def supports() -> tuple[tuple[str, str], ...]:
    """(theme of the source, theme of the target) pairs for same-stance corroboration."""
    return tuple((t.code, x) for t in THEMES.themes for x in t.supports)


def answers() -> tuple[tuple[str, str], ...]:
    """(theme of the source, theme of the target) pairs for an answer across stances."""
    return tuple((t.code, x) for t in THEMES.themes for x in t.answers)
