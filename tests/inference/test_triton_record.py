"""The patient record as the Triton prompts show it: leaner than the profile's own
JSON, lossless apart from the rounding of measured values, and rounded so that no threshold or
display rounding sees a different value."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from fhir_mapping.ingest import ingest
from inference._triton_codec import encode
from inference._triton_record import SYSTEM_NAMES, Aliases, quantity, record
from inference.prompts import block
from service.record.profile import Observation, PatientProfile
from tests.conftest import BAD_BUNDLES, REALISTIC_BUNDLES
from tests.support.triton_models import profile_from_record

# every bundle that ingests: the realistic ones, and the malformed ones a profile survives
BUNDLES = [*REALISTIC_BUNDLES, *(b for b in BAD_BUNDLES if "unknown_codes" in b.name)]
BUNDLES += [b for b in BAD_BUNDLES if "huge" in b.name]


def _rounded(p: PatientProfile) -> PatientProfile:
    def r(o: Observation) -> Observation:
        return o if o.value is None else replace(o, value=float(quantity(o.value)))

    return replace(
        p, observations=tuple(map(r, p.observations)), readings=tuple(map(r, p.readings))
    )


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name.split("_")[0])
def test_the_record_gives_back_the_profile_up_to_rounding(bundle: Path) -> None:
    profile = ingest(bundle.read_bytes())
    data = json.loads(block("record", record(profile)).split("\n")[1])  # as the prompt has it
    back = profile_from_record(data, Aliases.of(profile))
    want = _rounded(profile)
    # Where each resource lives at the EHR is for the FHIR output, never shown to a model.
    assert replace(back, source_refs=()) == replace(want, source_refs=(), sources=())
    assert sorted(back.source_refs) == sorted(set(profile.source_refs))


@pytest.mark.parametrize("name", ["adalberto", "josue", "adan"])
def test_the_record_drops_the_repetition(name: str) -> None:
    (bundle,) = [b for b in REALISTIC_BUNDLES if b.name.startswith(name)]
    profile = ingest(bundle.read_bytes())
    lean, full = block("record", record(profile)), block("record", encode(profile))
    assert len(lean) < 0.65 * len(full)
    # no code-system URL, no long decimals, no reference list repeating the facts' refs
    assert not any(url in lean for url in SYSTEM_NAMES) and "source_refs" not in lean
    assert re.search(r"\d\.\d{6}", full) and not re.search(r"\d\.\d{6}", lean)
    data = json.loads(lean.split("\n")[1])
    # each numeric current value once: as the reading marked latest, not again in observations
    latest = [r for r in data["readings"] if r.get("latest")]
    assert latest and len(latest) + len(data.get("observations", ())) == len(profile.observations)
    assert {r["ref"] for r in latest}.isdisjoint(o["ref"] for o in data.get("observations", ()))
    # a code named by its fact's text shows no display of its own
    assert all("display" not in c for p in data["problems"] for c in p["codes"])
    # every reference by its short alias: no UUID left
    assert re.search(r"[A-Z][a-z]+/[0-9a-f-]{8,}", full)
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", lean)
    assert re.fullmatch(r"P1", data["ref"]) and re.fullmatch(r"C[0-9]+", data["problems"][0]["ref"])


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name.split("_")[0])
def test_aliases_are_unique_and_sort_as_their_references(bundle: Path) -> None:
    profile = ingest(bundle.read_bytes())
    aliases = Aliases.of(profile)
    refs = sorted(aliases.short)
    assert set(refs) >= {profile.ref, *profile.source_refs} - {r for r in refs if "/" not in r}
    assert sorted(aliases.short[r] for r in refs) == [aliases.short[r] for r in refs]
    assert len(aliases.long) == len(refs) and all(aliases.long[aliases.short[r]] == r for r in refs)
    # the same profile gives the same aliases: every call of a plan shows the same record
    assert Aliases.of(ingest(bundle.read_bytes())).short == aliases.short


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (76.615915282844, 76.62),
        (103.56754616086948, 103.6),
        (0.12307110211019534, 0.1231),
        (120.0, 120),
        (2.25, 2.25),
        # 4 digits would land on a rounder number: a threshold (30, 7.5) or a halfway point
        # that display rounding breaks one way (114.5 -> 114) while the value breaks the other
        (29.99996, 29.99996),
        (7.4996, 7.4996),
        (114.50041, 114.5004),
        (59.95001, 59.95001),
    ],
)
def test_quantities_are_rounded_where_no_rule_can_tell(value: float, shown: float) -> None:
    q = quantity(value)
    assert q == shown and type(q) is type(shown)
    for threshold in (30, 7.5, 60, 114.5, 59.95, 100):
        assert (value < threshold) == (q < threshold)
    assert round(value) == round(q) and round(value, 1) == round(q, 1)


def test_an_arguments_id_is_written_short_as_its_options_is() -> None:
    """An option id ending in a record id is written short; the ids of its arguments (the
    option id, then a number) must be written with the same short form, or a model reads
    arguments of no option (an option named after a Condition's UUID: the presenting-problem
    line)."""
    ref = "Condition/6afc03b9-415e-4c24-a497-05efce113d52"
    al = Aliases([ref])
    uuid = ref.split("/")[1]
    option = al.shorten(f"opt-presenting-problem-{uuid}")
    argument = al.shorten(f"arg-gp-opt-presenting-problem-{uuid}-1")
    assert uuid not in option and uuid not in argument
    assert argument == f"arg-gp-{option}-1"
    assert al.long_id(argument) == f"arg-gp-opt-presenting-problem-{uuid}-1"
    assert al.shorten("arg-gp-opt-statin-2") == "arg-gp-opt-statin-2"  # no record id: as it is
