"""The drug and condition tables as data: schema, codes, coverage, and the lookups built on them.

``data/vocab_baseline_main.json`` records what main's Python tables recognised in every fixture
(ingredients and classes per MedicationRequest, groups per Condition); the data tables must
recognise at least as much.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fhir_mapping.codes import icd10_ok, rxnorm_ok, snomed_ok
from fhir_mapping.ingest import ingest
from inference.knowledge import conditions, drugs
from inference.knowledge._datafile import KnowledgeFileError
from service.record.profile import Code, Condition, Medication
from service.record.vocabulary import ICD10, RXNORM, SNOMED

from ..conftest import FHIR_FIXTURES as FIXTURES

BASELINE = json.loads((Path(__file__).parent / "data" / "vocab_baseline_main.json").read_text())
EVIDENCE = Path(drugs.__file__).resolve().parents[1] / "evidence_base.json"

# Deliberate changes from main, each with its reason.
DROPPED_CLASSES = {
    # Main called meperidine strongly anticholinergic; its ACB score is 2 (Boustani 2008), and
    # the class is now exactly the drugs scoring 3.
    ("meperidine", "strong-anticholinergic"),
}


def _med(text: str = "", *codes: tuple[str, str]) -> Medication:
    return Medication(
        "MedicationRequest/m", text, tuple(Code(s, c) for s, c in codes), "active", "order", None
    )


def _problem(text: str = "", *codes: tuple[str, str]) -> Condition:
    return Condition("Condition/c", text, tuple(Code(s, c) for s, c in codes), "active", "", None)


def _fixture_names() -> list[str]:
    return sorted(BASELINE)


# ------------------------------------------------------------------------------- files load


def test_files_load_and_carry_the_evidence_base_version() -> None:
    version = json.loads(EVIDENCE.read_text())["version"]
    assert version == drugs.VERSION
    assert version == conditions.VERSION
    assert drugs.load_drugs().drugs == drugs.DRUGS
    assert conditions.load_conditions().groups == conditions.CONDITION_GROUPS


Edit = Callable[[dict[str, Any]], object]


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@functools.cache
def _raw(source: Path) -> str:
    if source.suffix == ".json":
        return source.read_text()
    return json.dumps(yaml.load(source.read_text(), Loader=_LOADER))


def _broken(tmp_path: Path, source: Path, edit: Edit) -> Path:
    data = json.loads(_raw(source))  # a fresh copy of the parsed file
    edit(data)
    out = tmp_path / source.name
    if source.suffix == ".json":
        out.write_text(json.dumps(data))
    else:
        out.write_text(yaml.dump(data, Dumper=_DUMPER, sort_keys=False))
    return out


def _drug(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(d for d in data["drugs"] if d["name"] == name)


def _group(data: dict[str, Any], gid: str) -> dict[str, Any]:
    return next(g for g in data["groups"] if g["id"] == gid)


@pytest.mark.parametrize(
    ("edit", "where", "problem"),
    [
        (
            lambda d: _drug(d, "metformin").update(classes=["biguanides"]),
            "(top level)",
            "drugs[metformin].classes: unknown class 'biguanides'",
        ),
        (
            lambda d: _drug(d, "warfarin").update(rxcui="011289"),
            "drugs[warfarin].rxcui",
            "should match pattern",
        ),
        (
            lambda d: _drug(d, "warfarin").update(acb=5),
            "drugs[warfarin].acb",
            "less than or equal to 3",
        ),
        (
            lambda d: _drug(d, "diazepam").update(colour="blue"),
            "drugs[diazepam].colour",
            "Extra inputs are not permitted",
        ),
        (
            lambda d: _drug(d, "oxybutynin").update(acb=2),
            "(top level)",
            "drugs[oxybutynin]: class strong-anticholinergic",
        ),
        (
            lambda d: d["renal_limits"][0].update(below="thirty"),
            "renal_limits[drug:metformin].below",
            "valid number",
        ),
        (
            lambda d: d["renal_limits"][1].update(at_least=50),
            "renal_limits[drug:metformin]",
            "at_least 50.0 must be below 45.0",
        ),
        (
            lambda d: d["renal_limits"][0].update(spec="drug:metforman"),
            "(top level)",
            "unknown drug 'metforman'",
        ),
        (
            lambda d: d["classes"].append({"id": "nsaid", "label": "again", "source": "atc"}),
            "(top level)",
            "'nsaid' is defined twice",
        ),
        (lambda d: d.pop("renal_limits"), "renal_limits", "Field required"),
    ],
)
def test_a_drug_file_that_breaks_its_schema_is_refused(
    tmp_path: Path, edit: Edit, where: str, problem: str
) -> None:
    bad = _broken(tmp_path, drugs.DRUGS_FILE, edit)
    with pytest.raises(KnowledgeFileError) as err:
        drugs.load_drugs(bad)
    assert err.value.file == bad
    assert err.value.where == where
    assert problem in err.value.problem
    assert str(err.value).startswith(f"drugs.yaml: {where}: ")


@pytest.mark.parametrize(
    ("edit", "where", "problem"),
    [
        (
            lambda d: d["clinical_drugs"][0].update(ingredients={}),
            "clinical_drugs[1043400].ingredients",
            "at least 1 item",
        ),
        (
            lambda d: d["clinical_drugs"][0].update(ingredients={"acetaminophen": 0}),
            "clinical_drugs[1043400].ingredients.acetaminophen",
            "greater than 0",
        ),
        (
            lambda d: d["clinical_drugs"][0].update(ingredients={"paracetamoll": 325}),
            "clinical_drugs[1043400].ingredients",
            "unknown drug 'paracetamoll'",
        ),
        (
            lambda d: d["clinical_drugs"].append(dict(d["clinical_drugs"][0])),
            "(top level)",
            "'1043400' is defined twice",
        ),
        (lambda d: d.update(version="1999.01-1"), "version", "differs from drugs.yaml's"),
    ],
)
def test_a_clinical_drug_file_that_breaks_its_schema_is_refused(
    tmp_path: Path, edit: Edit, where: str, problem: str
) -> None:
    bad = _broken(tmp_path, drugs.CLINICAL_FILE, edit)
    with pytest.raises(KnowledgeFileError) as err:
        drugs.load_drugs(drugs.DRUGS_FILE, bad)
    assert (err.value.file, err.value.where) == (bad, where)
    assert problem in err.value.problem


@pytest.mark.parametrize(
    ("edit", "where", "problem"),
    [
        (
            lambda d: _group(d, "af").update(snomed=["4943600A"]),
            "groups[af].snomed[0]",
            "should match pattern",
        ),
        (
            lambda d: _group(d, "chd").update(icd10=["I25-I20"]),
            "groups[chd].icd10",
            "must run upwards",
        ),
        (
            lambda d: _group(d, "chd").update(icd10=["I2"]),
            "groups[chd].icd10",
            "neither an ICD-10 code prefix",
        ),
        (
            lambda d: _group(d, "gout").update(text=["(gout"]),
            "groups[gout].text",
            "not a regular expression",
        ),
        (
            lambda d: _group(d, "gout").update(kind="sometimes"),
            "groups[gout].kind",
            "Input should be",
        ),
        (
            lambda d: _group(d, "gout").update(domains=["podiatry"]),
            "groups[gout].domains[0]",
            "Input should be",
        ),
        (
            lambda d: _group(d, "ckd-stage-3").update(implies=["kidney"]),
            "(top level)",
            "groups[ckd-stage-3].implies",
        ),
    ],
)
def test_a_conditions_file_that_breaks_its_schema_is_refused(
    tmp_path: Path, edit: Edit, where: str, problem: str
) -> None:
    bad = _broken(tmp_path, conditions.CONDITIONS_FILE, edit)
    with pytest.raises(KnowledgeFileError) as err:
        conditions.load_conditions(bad)
    assert (err.value.where, err.value.file.name) == (where, "conditions.yaml")
    assert problem in err.value.problem


def test_unreadable_or_malformed_files_are_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeFileError, match=r"drugs\.yaml: \(top level\): cannot be read"):
        drugs.load_drugs(tmp_path / "drugs.yaml")
    bad = tmp_path / "conditions.yaml"
    shutil.copy(conditions.CONDITIONS_FILE, bad)
    bad.write_text(bad.read_text().replace("  - id: gout\n", "  - id: gout\n   bad: [\n", 1))
    with pytest.raises(KnowledgeFileError, match=r"conditions\.yaml: line \d+: not valid YAML"):
        conditions.load_conditions(bad)
    bad_json = tmp_path / "clinical_drugs.json"
    bad_json.write_text(drugs.CLINICAL_FILE.read_text().replace("},\n", "}\n", 1))
    with pytest.raises(KnowledgeFileError, match=r"clinical_drugs\.json: line 5: not valid JSON"):
        drugs.load_drugs(drugs.DRUGS_FILE, bad_json)


# ------------------------------------------------------------------------------- codes


def test_every_code_in_the_tables_is_well_formed() -> None:
    rx = [d.rxcui for d in drugs.DRUGS if d.rxcui] + [c for d in drugs.DRUGS for c in d.rxnorm]
    assert rx and all(rxnorm_ok(c) for c in rx), [c for c in rx if not rxnorm_ok(c)]
    sct = [c for g in conditions.CONDITION_GROUPS for c in g.snomed] + list(conditions.SDOH_NEEDS)
    assert all(snomed_ok(c) for c in sct), [c for c in sct if not snomed_ok(c)]
    icd = [p for g in conditions.CONDITION_GROUPS for p in g.icd10]
    assert all(icd10_ok(p) for p in icd), [p for p in icd if not icd10_ok(p)]


def test_every_fixture_code_is_known_or_knowingly_left_out() -> None:
    """Each valid RxNorm and SNOMED code the fixtures use is in the tables, except the few
    below, which are left out on purpose."""
    left_out = {
        "106258",  # topical hydrocortisone cream: the ACB score is for systemic use
    }
    known_rx = {c for d in drugs.DRUGS for c in d.rxnorm}
    known_sct = {c for g in conditions.CONDITION_GROUPS for c in g.snomed}
    for path in FIXTURES.glob("*.json"):
        if path.name.startswith("bad_"):
            continue
        for entry in json.loads(path.read_text()).get("entry", []):
            res = entry.get("resource", {})
            cc = res.get("medicationCodeableConcept") or res.get("code") or {}
            for coding in cc.get("coding", []):
                code, system = coding.get("code", ""), coding.get("system", "")
                if res.get("resourceType") == "MedicationRequest" and system == RXNORM:
                    assert code in known_rx or code in left_out or not rxnorm_ok(code), (
                        path.name,
                        coding,
                    )
                if res.get("resourceType") == "Condition" and system == SNOMED and snomed_ok(code):
                    assert code in known_sct, (path.name, coding)


# ------------------------------------------------------------------------------- no regression


@pytest.mark.bundle_sweep
@pytest.mark.parametrize("fixture", _fixture_names())
def test_fixture_medications_and_conditions_are_recognised_as_before_or_better(
    fixture: str,
) -> None:
    profile = ingest((FIXTURES / fixture).read_bytes())
    meds = {m.ref: m for m in profile.medications}
    problems = {p.ref: p for p in profile.problems}
    before = BASELINE[fixture]
    for ref, old in before["medications"].items():
        names = drugs.identify(meds[ref])
        assert set(old["drugs"]) <= set(names), (ref, old, names)
        classes = {c for n in names for c in drugs.drug(n).classes}
        lost = {(n, c) for n in names for c in set(old["classes"]) - classes}
        assert lost <= DROPPED_CLASSES, (ref, lost)
    for ref, old in before["problems"].items():
        assert set(old) <= set(conditions.classify(problems[ref])), (ref, old)


def test_the_baseline_covers_every_fixture_record() -> None:
    n_meds = sum(len(v["medications"]) for v in BASELINE.values())
    n_probs = sum(len(v["problems"]) for v in BASELINE.values())
    assert (n_meds, n_probs) == (198, 152)


# ------------------------------------------------------------------------------- coverage


REQUIRED_CLASSES = [
    "benzodiazepine",
    "z-drug",
    "nsaid",
    "ssri",
    "snri",
    "tca",
    "antipsychotic",
    "opioid",
    "loop-diuretic",
    "thiazide",
    "acei",
    "arb",
    "mra",
    "potassium-sparing",
    "sglt2i",
    "sulfonylurea",
    "insulin",
    "statin",
    "antiplatelet",
    "anticoagulant",
    "vka",
    "doac",
    "ppi",
    "bisphosphonate",
    "beta-blocker",
    "dhp-ccb",
    "rate-limiting-ccb",
    "cardiac-glycoside",
    "amiodarone",
    "lithium",
    "methotrexate",
    "antiepileptic",
    "gabapentinoid",
    "strong-anticholinergic",
    "sedating-antihistamine",
    "antimuscarinic-bladder",
]
REQUIRED_FLAGS = ["qt-risk", "serotonergic", "strong-cyp3a4-inhibitor", "cns-active", "falls-risk"]
REQUIRED_GROUPS = [
    "heart-failure",
    "af",
    "chd",
    "stroke",
    "tia",
    "pad",
    "hypertension",
    "diabetes-type-1",
    "diabetes-type-2",
    "ckd",
    "ckd-stage-3",
    "ckd-stage-4",
    "ckd-stage-5",
    "copd",
    "asthma",
    "dementia",
    "depression",
    "anxiety",
    "psychosis",
    "bipolar",
    "parkinsonism",
    "epilepsy",
    "fall",
    "syncope",
    "osteoporosis",
    "fragility-fracture",
    "gout",
    "gi-bleed",
    "peptic-ulcer",
    "gord",
    "urinary-retention",
    "incontinence",
    "glaucoma",
    "delirium",
    "insomnia",
    "substance-use",
    "overdose",
    "alcohol-use",
    "cancer",
    "hypothyroidism",
    "anemia",
    "obesity",
    "hyperkalaemia",
    "hyponatraemia",
    "liver-disease",
    "bradycardia",
    "qt-prolongation",
    "orthostatic-hypotension",
    "constipation",
]


def test_the_classes_flags_and_groups_criteria_need_exist() -> None:
    assert set(REQUIRED_CLASSES) <= set(drugs.CLASS_LABELS) - set(drugs.FLAG_LABELS)
    assert set(REQUIRED_FLAGS) <= set(drugs.FLAG_LABELS)
    assert set(REQUIRED_GROUPS) <= set(conditions.GROUPS_BY_KEY)
    for c in REQUIRED_CLASSES + [f"flag:{f}" for f in REQUIRED_FLAGS]:
        spec = c if c.startswith("flag:") else f"class:{c}"
        assert drugs.members(spec), spec


def test_renal_limits_cover_the_drugs_that_need_them() -> None:
    table = drugs.load_drugs()
    assert len(table.renal) >= 40
    for name in [
        "apixaban",
        "rivaroxaban",
        "edoxaban",
        "dabigatran",
        "allopurinol",
        "colchicine",
        "nitrofurantoin",
        "gabapentin",
        "pregabalin",
        "sotalol",
        "enoxaparin",
        "metformin",
        "ciprofloxacin",
        "sulfamethoxazole",
        "digoxin",
        "lithium",
        "spironolactone",
        "empagliflozin",
        "dapagliflozin",
        "glyburide",
        "morphine",
        "tramadol",
        "naproxen",
    ]:
        assert drugs.renal_limits(name), name
    for r in table.renal:
        assert r.source in table.sources and r.ref, r
        assert r.advice == r.advice.strip() and not r.advice.endswith(".")


def test_every_acb_score_and_class_names_its_source() -> None:
    table = drugs.load_drugs()
    scored = [d for d in drugs.DRUGS if d.acb]
    assert len(scored) >= 60
    assert all(d.acb_source in table.sources for d in scored)
    assert {d.name for d in scored if d.acb == 3} == drugs.members("class:strong-anticholinergic")


# ------------------------------------------------------------------------------- lookups


def test_identify_reads_codes_and_text() -> None:
    assert drugs.identify(_med("", (RXNORM, "855332"))) == ("warfarin",)  # clinical drug code
    assert drugs.identify(_med("", (RXNORM, "11289"))) == ("warfarin",)  # ingredient code
    assert drugs.identify(_med("Lasix 40mg")) == ("furosemide",)
    assert drugs.identify(_med("Isosorbide mononitrate 30 MG")) == ("isosorbide mononitrate",)
    assert drugs.identify(_med("", (RXNORM, "1599803"))) == ("donepezil", "memantine")
    assert drugs.identify(_med("Fluticasone / salmeterol inhaler")) == ("fluticasone", "salmeterol")
    assert drugs.identify(_med("Unknown medication", (RXNORM, "0000000"))) == ()
    assert drugs.identify(_med("", ("http://example.org/local", "855332"))) == ()


def test_classes_and_flags_are_closed_over_inclusion() -> None:
    warfarin = drugs.drug("warfarin")
    assert {"vka", "anticoagulant"} <= set(warfarin.classes)
    assert "bleeding-risk" in warfarin.flags
    assert drugs.matches("apixaban", "class:doac") and drugs.matches(
        "apixaban", "class:anticoagulant"
    )
    assert drugs.matches("verapamil", "class:antihypertensive")
    assert drugs.matches("sertraline", "flag:serotonergic") and drugs.matches(
        "tramadol", "flag:serotonergic"
    )
    assert drugs.matches("clarithromycin", "flag:strong-cyp3a4-inhibitor")
    assert drugs.matches("carbamazepine", "flag:siadh-risk")  # Beers: named antiepileptics only
    assert not drugs.matches("levetiracetam", "flag:siadh-risk")
    assert drugs.matches("pregabalin", "flag:cns-active") and not drugs.matches(
        "bupropion", "flag:falls-risk"
    )
    assert not drugs.matches("azithromycin", "flag:strong-cyp3a4-inhibitor")
    assert drugs.members("drug:warfarin") == {"warfarin"}
    assert drugs.members("drug:unobtainium") == frozenset() == drugs.members("nonsense")
    assert all(k in drugs.CLASS_LABELS for d in drugs.DRUGS for k in d.classes + d.flags)


def test_acb_strength_and_ceilings() -> None:
    assert (drugs.acb("amitriptyline"), drugs.acb("furosemide"), drugs.acb("amlodipine")) == (
        3,
        1,
        0,
    )
    assert drugs.acb("not a drug") == 0
    assert drugs.strength_mg("860975", "metformin") == 500.0
    assert drugs.strength_mg("857005", "hydrocodone") == 7.5
    assert drugs.strength_mg("745679", "albuterol") is None  # an inhaler states no mg per unit
    assert drugs.strength_mg("999", "metformin") is None
    cd = drugs.clinical_drug("314076")
    assert cd is not None and dict(cd.strengths) == {"lisinopril": 10.0}
    assert drugs.max_daily_mg("metformin") == 2550 and drugs.max_daily_mg("warfarin") is None


def test_renal_limit_picks_the_band_and_the_measure() -> None:
    def actions(name: str, **kw: float) -> list[tuple[str, float | None]]:
        return [(r.action, r.max_daily_mg) for r in drugs.renal_limit(name, **kw)]

    assert actions("metformin", egfr=60) == []
    assert actions("metformin", egfr=40) == [("max-dose", 1000.0)]
    assert actions("metformin", egfr=29.9) == [("avoid", None)]
    assert actions("metformin", egfr=30) == [("max-dose", 1000.0)]  # at_least is inclusive
    assert actions("gabapentin", crcl=45) == [("max-dose", 1400.0)]
    assert actions("gabapentin", egfr=20) == [("max-dose", 700.0)]  # eGFR stands in for CrCl
    assert actions("gabapentin", egfr=80, crcl=20) == [("max-dose", 700.0)]  # own measure first
    assert actions("naproxen", egfr=40) == [("review", None)]  # a class-wide limit
    assert actions("naproxen", egfr=40, crcl=25) == [("review", None), ("avoid", None)]
    assert actions("amlodipine", egfr=10) == []
    assert all(r.urgent for r in drugs.renal_limit("dabigatran", crcl=20))


def test_classify_uses_codes_text_ranges_and_implications() -> None:
    assert conditions.classify(_problem("", (SNOMED, "433144002"))) == ("ckd-stage-3", "ckd")
    assert conditions.classify(_problem("", (ICD10, "I25.10"))) == ("chd",)
    assert conditions.classify(_problem("", (ICD10, "I2510"))) == ("chd",)  # dots optional
    assert conditions.classify(_problem("", ("http://hl7.org/fhir/sid/icd-10", "K27.4"))) == (
        "peptic-ulcer",
    )
    assert conditions.classify(_problem("", (ICD10, "E11.65"))) == ("diabetes-type-2", "diabetes")
    assert "heart-failure" in conditions.classify(
        _problem("Heart failure with reduced ejection fraction")
    )
    assert conditions.classify(_problem("History of myocardial infarction (situation)")) == (
        "history",
    )
    assert conditions.classify(_problem("Stress (finding)", (SNOMED, "73595000"))) == ("sdoh-need",)
    assert conditions.classify(_problem("Body mass index 30+ - obesity (finding)")) == ("obesity",)
    assert conditions.classify(_problem("Wobbly knees", ("urn:local", "LPL-0042"))) == ()
    # VSAC value-set members, filtered by meaning: HFrEF is heart failure; a haemorrhagic
    # infarction is not an ischaemic stroke (no antiplatelet); venous hypertension is not
    # hypertension.
    assert "heart-failure" in conditions.classify(_problem("", (SNOMED, "703272007")))
    assert not conditions.matches_code("stroke", SNOMED, "230706003")
    assert conditions.matches_code("stroke", SNOMED, "422504002")
    assert not conditions.matches_code("hypertension", SNOMED, "234075003")
    assert conditions.matches_code("limited-life-expectancy", SNOMED, "300936002")
    assert conditions.matches_code("ckd", ICD10, "N18.4")
    assert not conditions.matches_code("ckd", SNOMED, "N18.4")
    assert conditions.expand_icd10("F11-F13") == ("F11", "F12", "F13")


def test_sdoh_needs_are_recognised_by_code_or_wording() -> None:
    assert conditions.is_sdoh_need(_problem("x", (SNOMED, "32911000")))
    assert conditions.is_sdoh_need(_problem("Lack of access to transportation (finding)"))
    assert not conditions.is_sdoh_need(
        _problem("Full-time employment (finding)", (SNOMED, "160903007"))
    )


def test_every_group_label_and_domain_is_usable_text() -> None:
    for g in conditions.CONDITION_GROUPS:
        assert g.label and g.label == g.label.strip() and not re.search(r"\s{2,}", g.label)
        assert set(g.domains) <= set(conditions.DOMAINS)


def test_a_broken_data_file_stops_start_up(tmp_path: Path) -> None:
    """Importing the knowledge package with a broken drug table fails, naming the file."""
    shutil.copy(conditions.CONDITIONS_FILE, tmp_path / "conditions.yaml")
    _broken(tmp_path, drugs.DRUGS_FILE, lambda d: _drug(d, "warfarin").update(acb="high"))
    # _datafile is loaded first, pointed at the broken copy, then the package is imported as the
    # service does at start-up.
    datafile = Path(drugs.__file__).with_name("_datafile.py")
    code = (
        "import importlib.util, sys; from pathlib import Path; import inference\n"
        "spec = importlib.util.spec_from_file_location("
        f"'inference.knowledge._datafile', {str(datafile)!r})\n"
        "m = importlib.util.module_from_spec(spec); sys.modules[spec.name] = m\n"
        f"spec.loader.exec_module(m); m.DATA_DIR = Path({str(tmp_path)!r})\n"
        "import inference.knowledge\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert "KnowledgeFileError: drugs.yaml: drugs[warfarin].acb: " in run.stderr


@pytest.mark.parametrize(
    "text",
    [
        "Family history: father had a myocardial infarction aged 46",
        "FH: ischaemic heart disease",
        "Mother with breast cancer",
        "Pulmonary embolism ruled out",
    ],
)
def test_a_relatives_problem_or_one_ruled_out_is_not_the_patients(text: str) -> None:
    """A blind review found a father's heart attack read as the patient's own (a statin "for
    secondary prevention" and an antiplatelet offered to a man with no vascular disease)."""
    assert conditions.classify(_problem(text)) == ("family-history",)


def test_the_patients_own_problem_still_reads_as_a_disease() -> None:
    assert conditions.classify(_problem("Myocardial infarction aged 46")) == ("chd",)
    # the code says myocardial infarction, the words say it was the father's: the words win
    fam = _problem("Family history of myocardial infarction", (SNOMED, "22298006"))
    assert conditions.classify(fam) == ("family-history",)


@pytest.mark.parametrize(
    ("text", "cancer"),
    [
        ("Lesion of scalp, excised (clinically basal cell carcinoma)", False),
        ("Non-melanoma skin cancer", False),
        ("Squamous cell carcinoma of lung", True),
        ("Breast cancer", True),
    ],
)
def test_a_basal_cell_carcinoma_in_words_is_not_the_cancer_the_checks_mean(
    text: str, cancer: bool
) -> None:
    """A blind review found advance care planning offered for an excised basal cell carcinoma,
    read as a serious illness through the word "carcinoma"."""
    assert ("cancer" in conditions.classify(_problem(text))) is cancer
