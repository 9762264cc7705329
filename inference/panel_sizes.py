"""Panel sizes by case complexity: the defaults, their validation and their text forms.

Panel size is configuration, so both expert backends read it from here: the
embedded rules pick a size from the range, the Triton backend states it in the panel prompt.
Each complexity level maps to ``(base, extended)``: ``base`` roles normally, up to ``extended``
when the case needs one more role. Pure values; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "COMPLEXITIES",
    "DEFAULT_PANEL_SIZES",
    "PanelSizes",
    "panel_sizes",
    "parse_panel_size",
    "prompt_text",
]

PanelSizes = tuple[tuple[str, int, int], ...]  # (complexity, base, extended), in COMPLEXITIES order

COMPLEXITIES: tuple[str, ...] = ("low", "moderate", "high", "very high")
DEFAULT_PANEL_SIZES: PanelSizes = (
    ("low", 2, 2),
    ("moderate", 3, 3),
    ("high", 4, 5),
    ("very high", 6, 7),
)


def panel_sizes(
    sizes: Mapping[str, tuple[int, int]], names: Mapping[str, str] | None = None
) -> PanelSizes:
    """Validated sizes for every complexity level; ``ValueError`` naming the level (or its name
    in ``names``, e.g. the setting that holds it) otherwise.

    Each size is at least 1 (the GP alone), base <= extended, and both never shrink as the
    complexity grows: a harder case must not get a smaller panel."""
    missing = [c for c in COMPLEXITIES if c not in sizes]
    unknown = sorted(set(sizes) - set(COMPLEXITIES))
    if missing or unknown:
        raise ValueError(
            f"panel sizes need exactly {list(COMPLEXITIES)}: missing {missing}, unknown {unknown}"
        )
    label = {c: f"panel size for {c!r}" for c in COMPLEXITIES} | dict(names or {})
    out: list[tuple[str, int, int]] = []
    prev = (1, 1)
    for c in COMPLEXITIES:
        base, extended = sizes[c]
        if base < 1 or extended < 1:
            raise ValueError(f"{label[c]} must be >= 1, got {base},{extended}")
        if extended < base:
            raise ValueError(f"{label[c]}: extended {extended} is below base {base}")
        if base < prev[0] or extended < prev[1]:
            raise ValueError(
                f"{label[c]} ({base},{extended}) is smaller than for the lower complexity "
                f"({prev[0]},{prev[1]}); sizes must not decrease with complexity"
            )
        prev = (base, extended)
        out.append((c, base, extended))
    return tuple(out)


def parse_panel_size(value: object) -> tuple[int, int]:
    """``4``, ``"4"``, ``"4,5"``, ``[4, 5]`` -> ``(base, extended)``; one number means both."""
    if isinstance(value, bool):
        raise ValueError("a panel size is a number or two numbers 'base,extended'")
    if isinstance(value, int):
        return (value, value)
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
    elif isinstance(value, list | tuple):
        parts = list(value)
    else:
        raise ValueError("a panel size is a number or two numbers 'base,extended'")
    try:
        nums = [int(p) for p in parts]
    except (TypeError, ValueError):
        raise ValueError(f"panel size {value!r} is not 'base' or 'base,extended'") from None
    if len(nums) == 1:
        return (nums[0], nums[0])
    if len(nums) == 2:
        return (nums[0], nums[1])
    raise ValueError(f"panel size {value!r} is not 'base' or 'base,extended'")


def prompt_text(sizes: PanelSizes) -> str:
    """The sizes as the panel prompt states them: ``2 roles for a low-complexity case, ...``."""

    def span(base: int, extended: int) -> str:
        return f"{base}" if base == extended else f"{base} to {extended}"

    parts = [f"{span(b, e)} for {c}" for c, b, e in sizes]
    first_c, first_b, first_e = sizes[0]
    parts[0] = f"{span(first_b, first_e)} roles for a {first_c}-complexity case"
    return ", ".join(parts[:-1]) + f" and {parts[-1]} complexity"
