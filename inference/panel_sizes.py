"""Panel sizes by case complexity: the defaults, their validation and their text forms.

Panel size is configuration, so both expert backends read it from here: the
embedded rules pick a size from the range, the Triton backend states it in the panel prompt and
narrows the panel's answer schema to it. Each complexity level maps to ``(base, extended)``:
``base`` roles normally, up to ``extended`` when the case needs one more role.

The defaults follow the papers: CAMP (section 4.2, sensitivity analysis in 6.3 and appendix F)
uses k = 3 specialists by default, F1 falling with fewer; CANOE (Alg. 1 line 8) recruits a broader
team for high and very high complexity but gives no numbers, so 4-5 and 6-7 are this project's.
A site may set its own (``CANOE_PANEL_SIZE_*``).

``band`` and ``panel_faults`` are the one check every backend applies to a panel: its size lies in
the band for the assessed complexity (widened to hold every required role: a required role is
never cut to fit), every required role is on it, and no role is there twice. Pure values; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = [
    "COMPLEXITIES",
    "DEFAULT_PANEL_SIZES",
    "PanelSizes",
    "band",
    "panel_faults",
    "panel_sizes",
    "parse_panel_size",
    "prompt_text",
]

PanelSizes = tuple[tuple[str, int, int], ...]  # (complexity, base, extended), in COMPLEXITIES order

COMPLEXITIES: tuple[str, ...] = ("low", "moderate", "high", "very high")
DEFAULT_PANEL_SIZES: PanelSizes = (
    ("low", 3, 3),
    ("moderate", 3, 3),
    ("high", 4, 5),
    ("very high", 6, 7),
)


def band(sizes: PanelSizes, complexity: str, required: Sequence[str] = ()) -> tuple[int, int]:
    """(fewest, most) members a panel for ``complexity`` may have: the configured (base,
    extended), each raised to the number of required roles. ``KeyError`` for an unknown level."""
    for c, base, extended in sizes:
        if c == complexity:
            n = len(set(required))
            return (max(base, n), max(extended, n))
    raise KeyError(f"no panel size for complexity {complexity!r}")


def panel_faults(
    roles: Sequence[str], complexity: str, sizes: PanelSizes, required: Sequence[str] = ()
) -> list[str]:
    """What is wrong with a panel of ``roles`` (empty when nothing): a size outside the band,
    a required role missing, a role twice. Names roles and numbers only, safe to log."""
    lo, hi = band(sizes, complexity, required)
    faults = []
    if not lo <= len(roles) <= hi:
        want = f"{lo}" if lo == hi else f"{lo} to {hi}"
        faults.append(f"a {complexity}-complexity panel has {want} members, not {len(roles)}")
    missing = [r for r in dict.fromkeys(required) if r not in roles]
    if missing:
        faults.append(f"required roles missing: {', '.join(missing)}")
    twice = sorted({r for r in roles if roles.count(r) > 1})
    if twice:
        faults.append(f"roles named twice: {', '.join(twice)}")
    return faults


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
