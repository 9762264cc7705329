"""The safety net for results stated in words or flags: which fire, which never do, the quote
and the timing, on records built here."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

from inference.embedded import known_options
from inference.knowledge import analyse
from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.analysis import Output, Proposal
from inference.knowledge.facts import Facts
from inference.knowledge.result_words import WORDS_FILE, load_words, worded_net
from service.record.profile import Code, Condition, Observation, PatientProfile
from service.record.vocabulary import SNOMED

AS_OF = date(2026, 11, 20)
NET = "opt-review-worded-"
V3 = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"


def worded(
    i: str,
    name: str,
    text: str,
    flags: tuple[str, ...] = (),
    when: date = AS_OF,
    loinc: str = "",
) -> Observation:
    return Observation(
        f"Observation/{i}",
        loinc,
        name,
        None,
        "",
        when,
        text,
        recognised=bool(loinc),
        interpretation=tuple(Code(V3, f) for f in flags),
    )


def record(*observations: Observation, sex: str = "female") -> PatientProfile:
    return PatientProfile(
        "Patient/p1", sex, date(1990, 1, 1), AS_OF, observations=tuple(observations)
    )


def lines(p: PatientProfile) -> dict[str, str]:
    return {x.id: x.title for x in analyse(p).proposals if x.id.startswith(NET)}


@pytest.mark.parametrize(
    ("text", "flags", "fires"),
    [
        ("Chlamydia trachomatis DNA detected", (), True),
        ("Positive", (), True),
        ("intermediate (heterozygous)", (), True),
        ("CYP2C19 poor metabolizer", (), True),
        ("Abnormal cells seen", (), True),
        ("Not detected", (), False),
        ("Negative", (), False),
        ("No growth after 48 hours", (), False),
        ("Normal metaboliser", (), False),
        ("Non-reactive", (), False),
        ("trace", (), False),
        # a lab's abnormal flag fires whatever the words; a normal flag silences the words
        ("Escherichia coli >10^5 CFU/mL", ("A",), True),
        ("Mixed growth", ("POS",), True),
        ("Positive", ("N",), False),
        ("Sensitive", ("S",), False),
        ("See report", ("NEG",), False),
    ],
)
def test_a_result_fires_on_an_abnormal_flag_or_word_and_never_on_a_normal_one(
    text: str, flags: tuple[str, ...], fires: bool
) -> None:
    got = lines(record(worded("x", "Swab result", text, flags)))
    assert (f"{NET}x" in got) == fires


def test_the_line_quotes_the_value_as_recorded_with_its_date() -> None:
    got = lines(record(worded("t", "TPMT activity", "intermediate (heterozygous)")))
    assert got[f"{NET}t"] == 'Review TPMT activity of 2026-11-20: "intermediate (heterozygous)"'


def test_a_long_value_is_cut_at_a_whole_word_never_reworded() -> None:
    text = "Positive " + " ".join(f"word{n}" for n in range(60))
    title = lines(record(worded("x", "Culture", text)))[f"{NET}x"]
    quoted = title.split(': "', 1)[1].removesuffix('"')
    assert quoted.endswith("…")
    assert text.startswith(quoted.removesuffix("…"))
    assert quoted.removesuffix("…").split(" ")[-1] in text.split(" ")


def test_control_characters_in_the_value_are_not_passed_on() -> None:
    title = lines(record(worded("x", "Culture", "Positive\x1b[31m\nrest")))[f"{NET}x"]
    assert "\x1b" not in title and "\n" not in title


def test_a_coded_value_is_quoted_by_its_display() -> None:
    o = replace(
        worded("x", "Hepatitis B surface antigen", ""),
        value_codes=(Code(SNOMED, "10828004", "Positive"),),
    )
    assert lines(record(o))[f"{NET}x"].endswith(': "Positive"')


@pytest.mark.parametrize(("flag", "timeframe"), [("AA", "7d"), ("A", "4w"), ("POS", "4w")])
def test_a_critical_flag_is_this_week_else_within_four_weeks(flag: str, timeframe: str) -> None:
    p = record(worded("x", "Blood culture", "Gram-negative rods", (flag,)))
    assert known_options(p)[f"{NET}x"].timeframe == timeframe


PREGNANT = Condition(
    "Condition/preg",
    "Pregnancy",
    (Code(SNOMED, "77386006", "Pregnancy"),),
    "active",
    "confirmed",
    AS_OF - timedelta(days=60),
)


def test_a_positive_urine_culture_in_pregnancy_is_this_week() -> None:
    culture = worded("u", "Urine culture (MSU)", "Escherichia coli isolated", ("A",))
    pregnant = replace(record(culture), problems=(PREGNANT,))
    assert known_options(pregnant)[f"{NET}u"].timeframe == "7d"
    assert known_options(record(culture))[f"{NET}u"].timeframe == "4w"
    # another test in pregnancy keeps routine time
    swab = worded("s", "Throat swab", "Positive")
    assert known_options(replace(record(swab), problems=(PREGNANT,)))[f"{NET}s"].timeframe == "4w"


def test_a_pregnancy_test_is_not_an_abnormal_result() -> None:
    hcg = worded("h", "hCG pregnancy test, serum", "Positive", ("POS",))
    assert lines(record(hcg)) == {}


def test_an_old_result_is_history_unless_of_an_inherited_trait() -> None:
    old = AS_OF - timedelta(days=400)
    assert lines(record(worded("x", "Chlamydia NAAT", "Detected", when=old))) == {}
    tpmt = lines(record(worded("t", "TPMT genotype", "intermediate", when=old)))
    assert f"{NET}t" in tpmt


def test_only_the_latest_result_of_a_test_counts() -> None:
    first = worded("a", "Chlamydia NAAT", "Detected", when=AS_OF - timedelta(days=30))
    repeat = worded("b", "Chlamydia NAAT", "Not detected")
    assert lines(record(first, repeat)) == {}
    earlier_negative = replace(repeat, effective=AS_OF - timedelta(days=60))
    assert set(lines(record(earlier_negative, first))) == {f"{NET}a"}


def test_a_numeric_result_is_left_to_the_intervals() -> None:
    o = Observation("Observation/k", "6298-4", "Potassium", 5.0, "mmol/L", AS_OF, "", True)
    flagged = replace(o, interpretation=(Code(V3, "H"),))
    assert lines(record(flagged)) == {}


def test_a_line_citing_the_result_explains_it() -> None:
    o = worded("x", "Chlamydia NAAT", "Detected")
    p = record(o)
    cited = Output()
    cited.proposals.append(Proposal("opt-other", "Other", "monitoring", "", (o.ref,), (), ()))
    worded_net(Facts(p), cited)
    assert [x.id for x in cited.proposals] == ["opt-other"]
    bare = Output()
    worded_net(Facts(p), bare)
    assert [x.id for x in bare.proposals] == [f"{NET}x"]


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("source: cpic-terms-2017}", "source: nobody}", "unknown source"),
        ('"\\\\bpositive\\\\b"', '"(positive"', "bad pattern"),
        ("critical: [AA, HH, LL]", "critical: [AA, HH, LL, XX]", "critical code"),
    ],
)
def test_a_bad_file_is_refused_by_name(tmp_path: Path, old: str, new: str, problem: str) -> None:
    text = WORDS_FILE.read_text()
    assert old in text
    bad = tmp_path / "result_words.yaml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(KnowledgeFileError, match=problem):
        load_words(bad)
