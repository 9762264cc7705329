"""Kidney-function dose bands (drugs.yaml ``renal_limits``): every band fires inside its own
edges and not outside them, looked up directly and through the criteria interpreter; the bands
corrected in an audit against their sources keep their corrected edges, action and source."""

from __future__ import annotations

import pytest

from inference.knowledge import drugs
from inference.knowledge.criteria.interpret import Firing, evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA

from .criteria_factory import Builder

TABLE = drugs.load_drugs()
BANDS = TABLE.renal


def _member(spec: str) -> str:
    names = sorted(drugs.members(spec))
    assert names, spec
    return names[0]


def _inside(band: drugs.RenalLimit) -> float:
    return band.below - 0.5


def _label(band: drugs.RenalLimit) -> str:
    low = "" if band.at_least is None else f"{band.at_least:g}-"
    return f"{band.spec} {band.measure} {low}{band.below_op}{band.below:g} {band.action}"


@pytest.mark.parametrize("band", BANDS, ids=_label)
def test_band_holds_inside_its_edges_only(band: drugs.RenalLimit) -> None:
    name = _member(band.spec)

    def held(value: float) -> bool:
        return band in drugs.renal_limit(name, **{band.measure: value})

    assert held(_inside(band))
    # the upper edge as the source states it: "below 30" excludes 30, "45 or less" holds it
    assert held(band.below) == (band.below_op == "<=")
    assert not held(band.below + 0.5)
    if band.at_least is not None:
        assert held(band.at_least)  # the lower edge is inclusive
        assert not held(band.at_least - 0.5)


def _renal(name: str, egfr: float, dose_mg: float | None = None) -> list[Firing]:
    b = Builder(age=78)
    b.med(name, dose_mg=dose_mg)
    b.lab("egfr", egfr)
    return [
        x
        for x in evaluate(CRITERIA, Facts(b.build()))
        if x.criterion.id == "renal-dose-table" and x.binding.names.get("a") == name
    ]


_ACTIONABLE = ("avoid", "max-dose", "reduce", "review", "monitor")


@pytest.mark.parametrize(
    "band", [b for b in BANDS if b.action in _ACTIONABLE and b.below <= 100], ids=_label
)
def test_band_fires_through_the_interpreter(band: drugs.RenalLimit) -> None:
    """A reported eGFR inside the band (it stands in for clearance when no weight is known)
    proposes an adjustment of that drug; above every band of the drug nothing is proposed."""
    name = _member(band.spec)
    value = _inside(band)
    fired = _renal(name, value)
    assert fired, (name, value)
    assert fired[0].binding.limit in drugs.renal_limit(name, egfr=value)
    # just above every band: at its upper edge where the source's band holds that edge (<=)
    top = max(
        r.below + (0.5 if r.below_op == "<=" else 0.0)
        for r in drugs.renal_limits(name)
        if r.action in _ACTIONABLE
    )
    assert _renal(name, top) == []


def _band(spec: str, action: str) -> drugs.RenalLimit:
    (band,) = [b for b in BANDS if b.spec == spec and b.action == action]
    return band


# ------------------------------------------------------------------------ corrected bands


@pytest.mark.parametrize(
    ("name", "below", "above", "action", "urgent", "source"),
    [
        # digoxin 30-50: no source sets this band; weakened to review on the label's CrCl dosing
        ("digoxin", 49.5, 50.0, "review", False, "label"),
        # lithium: NHS GGC guidance, monitor below 60 and specialist review below 30
        ("lithium", 59.5, 60.0, "monitor", False, "nhsggc-lithium"),
        ("lithium", 29.5, 30.0, "review", True, "nhsggc-lithium"),
        # sulfonylureas: no source states an eGFR threshold; weakened to review
        ("glyburide", 59.5, 60.0, "review", False, "label"),
        ("glimepiride", 59.5, 60.0, "review", False, "label"),
        # morphine below eGFR 30: UK palliative renal guidance
        ("morphine", 29.5, 30.0, "review", False, "scot-palliative"),
        # sotalol (Betapace/Betapace AF label): contraindicated for AF below 40, daily 40-60
        ("sotalol", 39.5, 40.0, "avoid", True, "label"),
        ("sotalol", 60.0, 60.5, "reduce", False, "label"),  # "40-60" holds 60
        # cimetidine: added from AGS Beers 2023 table 6
        ("cimetidine", 49.5, 50.0, "reduce", False, "beers-2023"),
    ],
)
def test_corrected_band_edges(
    name: str, below: float, above: float, action: str, urgent: bool, source: str
) -> None:
    (fired,) = _renal(name, below)
    lim = fired.binding.limit
    assert lim is not None
    assert (lim.action, lim.urgent, lim.source) == (action, urgent, source)
    assert (fired.proposal.priority == "safety") is urgent
    just_above = _renal(name, above)
    assert all(x.binding.limit != lim for x in just_above)


def test_lithium_below_30_asks_for_a_specialist_decision_not_a_blind_stop() -> None:
    (fired,) = _renal("lithium", 25.0)
    assert not fired.proposal.title.startswith("Stop")
    assert "specialist" in fired.proposal.description


def test_digoxin_ceiling_below_30_still_holds_the_stopp_limit() -> None:
    band = _band("drug:digoxin", "max-dose")
    assert (band.measure, band.below, band.max_daily_mg, band.source) == (
        "egfr",
        30.0,
        0.125,
        "stopp-v2",
    )
    assert _renal("digoxin", 25.0, dose_mg=0.0625) == []  # within the ceiling
    (over,) = _renal("digoxin", 25.0, dose_mg=0.25)
    assert over.binding.limit == band


def test_sotalol_atrial_fibrillation_wording() -> None:
    assert "atrial fibrillation" in _band("drug:sotalol", "avoid").advice
    assert "ventricular" in _band("drug:sotalol", "avoid").advice


def test_every_beers_band_cites_table_6() -> None:
    beers = [b for b in BANDS if b.source == "beers-2023"]
    assert beers and all(b.ref.startswith("table 6") for b in beers)
    assert all(b.measure == "crcl" or b.spec == "drug:baclofen" for b in beers)


# ------------------------------------------------------------- oral antivirals by clearance


@pytest.mark.parametrize(
    ("name", "egfr", "daily_mg", "fires"),
    [
        # aciclovir 800 mg five times a day (shingles) with clearance 10-25: at most 2400 mg
        ("acyclovir", 20.0, 4000.0, True),
        ("acyclovir", 20.0, 2400.0, False),  # exactly the band's ceiling
        ("acyclovir", 25.0, 4000.0, True),  # the label's band "10-25" holds 25
        ("acyclovir", 25.5, 4000.0, False),
        # valaciclovir 1 g three times a day with clearance 30-49: at most 2 g a day
        ("valacyclovir", 40.0, 3000.0, True),
        ("valacyclovir", 40.0, 2000.0, False),
        ("valacyclovir", 50.0, 3000.0, False),
    ],
)
def test_oral_antiviral_ceiling_by_clearance(
    name: str, egfr: float, daily_mg: float, fires: bool
) -> None:
    fired = _renal(name, egfr, dose_mg=daily_mg)
    assert bool(fired) is fires, (name, egfr, daily_mg)
    if fires:
        lim = fired[0].binding.limit
        assert lim is not None and lim.source == "label" and lim.action == "max-dose"
