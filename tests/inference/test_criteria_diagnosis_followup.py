"""Care that follows from a diagnosis or a result: iron-deficiency anaemia at the NICE NG12 age,
familial hypercholesterolaemia not yet with a specialist lipid service, and thiamine for
harmful or dependent drinking; each with a firing case and the neighbour that does not fire."""

from __future__ import annotations

from datetime import date, timedelta

from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA
from service.record.profile import PatientProfile

from .criteria_factory import Builder

IDA = "refer-suspected-colorectal-cancer-iron-deficiency-results"
IDA_DX = "refer-suspected-colorectal-cancer-iron-deficiency"


def _fired(profile: PatientProfile, cid: str) -> list[str]:
    """The descriptions of what the criterion ``cid`` proposes for ``profile``."""
    chosen = [c for c in CRITERIA if c.id == cid]
    return [f.proposal.description for f in evaluate(chosen, Facts(profile))]


def _anaemic(age: int, sex: str = "female", hb: float = 10.5, ferritin: float = 8.0) -> Builder:
    b = Builder(age=age, sex=sex)
    b.lab("haemoglobin", hb, date(2024, 5, 20))
    b.lab("ferritin", ferritin, date(2024, 5, 20))
    return b


def test_iron_deficiency_from_sixty_goes_to_the_suspected_cancer_pathway() -> None:
    (text,) = _fired(_anaemic(60).build(), IDA)
    assert (
        "10.5" in text
        and "ferritin 8" in text
        and "2024-05-20" in text
        and "faecal immunochemical test" in text
    )


def test_iron_deficiency_below_sixty_is_not_this_referral() -> None:
    assert _fired(_anaemic(59).build(), IDA) == []


def test_a_recorded_diagnosis_alone_is_enough() -> None:
    b = Builder(age=64)
    b.condition("iron-deficiency-anaemia")
    (text,) = _fired(b.build(), IDA_DX)
    assert "iron" in text.lower()


def test_the_haemoglobin_edge_is_sex_specific() -> None:
    assert _fired(_anaemic(70, "female", hb=12.0).build(), IDA) == []
    assert _fired(_anaemic(70, "female", hb=11.9).build(), IDA)
    assert _fired(_anaemic(70, "male", hb=12.9).build(), IDA)
    assert _fired(_anaemic(70, "male", hb=13.0).build(), IDA) == []


def test_a_ferritin_at_the_threshold_is_not_iron_deficiency() -> None:
    assert _fired(_anaemic(70, ferritin=15.0).build(), IDA) == []
    assert _fired(_anaemic(70, ferritin=14.0).build(), IDA)


def test_a_recorded_diagnosis_below_sixty_is_not_this_referral() -> None:
    b = Builder(age=59)
    b.condition("iron-deficiency-anaemia")
    assert _fired(b.build(), IDA_DX) == []


FH = "refer-familial-hypercholesterolaemia"
THIAMINE = "start-thiamine-alcohol"


def test_familial_hypercholesterolaemia_is_referred_with_family_testing() -> None:
    b = Builder(age=45)
    b.condition("familial-hypercholesterolaemia")
    (text,) = _fired(b.build(), FH)
    assert "specialist lipid" in text and "cascade testing" in text


def test_a_plain_hyperlipidaemia_is_not_familial() -> None:
    b = Builder(age=45)
    b.condition("hyperlipidemia")
    assert _fired(b.build(), FH) == []


def _withdrawal(days_ago: int, *, thiamine: bool = False, audit: float | None = None) -> Builder:
    b = Builder(age=52, sex="male")
    if audit is None:
        b.condition("alcohol-use")
    else:
        b.lab("audit", audit)
    b.encounter("alcohol-use", "IMP", date(2024, 6, 1) - timedelta(days=days_ago))
    if thiamine:
        b.med("thiamine")
    return b


def test_a_recent_alcohol_withdrawal_without_thiamine_starts_it() -> None:
    (text,) = _fired(_withdrawal(90).build(), THIAMINE)
    assert "thiamine" in text and "before a planned assisted withdrawal" in text


def test_thiamine_already_prescribed_or_an_old_withdrawal_is_quiet() -> None:
    assert _fired(_withdrawal(10, thiamine=True).build(), THIAMINE) == []
    assert _fired(_withdrawal(91).build(), THIAMINE) == []


def test_an_audit_score_in_the_dependence_zone_counts_as_the_diagnosis() -> None:
    assert _fired(_withdrawal(10, audit=20).build(), THIAMINE)
    assert _fired(_withdrawal(10, audit=19).build(), THIAMINE) == []


def test_a_probable_fh_is_referred_and_no_risk_score_is_asked() -> None:
    """Probable FH (Simon Broome) recorded as provisional: the referral confirms it, and no
    QRISK-style score is offered, which NICE CG181 does not use in FH (a blind review found a
    plan scoring risk for a man with tendon xanthomata and LDL 6.1)."""
    from dataclasses import replace

    from inference.knowledge.rules import analyse

    b = Builder(age=42)
    b.condition("familial-hypercholesterolaemia")
    b.problems[-1] = replace(b.problems[-1], verification="provisional")
    b.smoking("current")
    p = b.build()
    assert _fired(p, FH)
    ids = {x.id for x in analyse(p).proposals}
    assert not {"opt-assess-cv-risk", "opt-assess-cv-risk-older"} & ids
