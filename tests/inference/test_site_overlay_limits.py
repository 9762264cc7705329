"""A site overlay cannot break or silently weaken the service: a value out of its parameter's
range, of the wrong type or set twice, and a file too deep, too large, not UTF-8, not a regular
file or holding a number too long, each exits 2 naming the file and the place, both from
``canoe knowledge check`` and at start-up (``canoe plan`` with ``CANOE_KNOWLEDGE_DIR``). Real
overlay folders and the real CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inference.knowledge._datafile import MAX_DEPTH, MAX_FILE_BYTES, load_file
from inference.knowledge.parameters import PARAMETERS_FILE, ParametersFile
from tests.conftest import FHIR_FIXTURES, REPO_ROOT

BUNDLE = FHIR_FIXTURES / "adalberto_hartmann_ba18818d.json"
CREATED = "2026-11-30T09:00:00+00:00"
NEPHROLOGY = "refer-nephrology-low-egfr"


def _canoe(*args: str, site: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    if site is not None:
        env["CANOE_KNOWLEDGE_DIR"] = str(site)
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _site(folder: Path, files: dict[str, str | bytes]) -> Path:
    folder.mkdir()
    for name, body in files.items():
        if isinstance(body, bytes):
            (folder / name).write_bytes(body)
        else:
            (folder / name).write_text(body, encoding="utf-8")
    return folder


def _refused(folder: Path, file: str, place: str, problem: str) -> None:
    out = _canoe("knowledge", "check", str(folder))
    assert out.returncode == 2, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert f"{file}: {place}" in line and problem in line, line
    assert "Traceback" not in out.stderr


VALUES = [
    # a zero divisor would fail every plan
    ("parameters:\n  kidney.cockcroft_gault.divisor: 0\n", "parameters.kidney.cockcroft_gault"),
    # a negative eGFR threshold would silently drop every referral
    ("parameters:\n  kidney.ckd_egfr_ml_min: -5\n", "parameters.kidney.ckd_egfr_ml_min"),
    ("parameters:\n  kidney.ckd_egfr_ml_min: 400\n", "parameters.kidney.ckd_egfr_ml_min"),
    ("parameters:\n  window.marker_days: 30.5\n", "parameters.window.marker_days"),
    ("parameters:\n  polypharmacy.medicines: true\n", "parameters.polypharmacy.medicines"),
    ('parameters:\n  polypharmacy.medicines: "5"\n', "parameters.polypharmacy.medicines"),
    (f"params:\n  {NEPHROLOGY}:\n    egfr_refer: -30\n", f"params.{NEPHROLOGY}.egfr_refer"),
    (f"params:\n  {NEPHROLOGY}:\n    egfr_refer: 500\n", f"params.{NEPHROLOGY}.egfr_refer"),
    (f"params:\n  {NEPHROLOGY}:\n    egfr_refer: true\n", f"params.{NEPHROLOGY}.egfr_refer"),
    (
        "parameters:\n  window.marker_days: 100\n  window.marker_days: 200\n",
        "line 4",
    ),
]


@pytest.mark.parametrize(("body", "place"), VALUES)
def test_a_bad_value_is_refused_by_knowledge_check(tmp_path: Path, body: str, place: str) -> None:
    folder = _site(tmp_path / "site", {"site.yaml": "version: v1\n" + body})
    out = _canoe("knowledge", "check", str(folder))
    assert out.returncode == 2, out.stdout + out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert "site.yaml: " in line and place in line, line


def test_a_bad_value_stops_start_up(tmp_path: Path) -> None:
    folder = _site(
        tmp_path / "site",
        {"site.yaml": "version: v1\nparameters:\n  kidney.cockcroft_gault.divisor: 0\n"},
    )
    out = _canoe("plan", str(BUNDLE), "--created", CREATED, site=folder)
    assert out.returncode == 2
    assert (
        "site.yaml: parameters.kidney.cockcroft_gault.divisor: 0 is not in the allowed range"
        in (out.stderr)
    )


def test_a_value_in_range_is_accepted(tmp_path: Path) -> None:
    folder = _site(
        tmp_path / "site",
        {
            "site.yaml": "version: v1\nparameters:\n  kidney.ckd_egfr_ml_min: 45\n"
            f"params:\n  {NEPHROLOGY}:\n    egfr_refer: 25\n"
        },
    )
    out = _canoe("knowledge", "check", str(folder))
    assert out.returncode == 0, out.stderr
    assert "kidney.ckd_egfr_ml_min: 60 -> 45" in out.stdout
    assert "egfr_refer: 30 -> 25" in out.stdout


def test_duplicate_key_in_a_criteria_file_is_refused(tmp_path: Path) -> None:
    body = '{"version": "1", "criteria": [], "criteria": []}'
    folder = _site(tmp_path / "site", {"local.json": body})
    out = _canoe("knowledge", "check", str(folder))
    assert out.returncode == 2
    assert "local.json: " in out.stderr and "repeated" in out.stderr


def _deep_json() -> str:
    return '{"version": "1", "criteria": [' + "[" * 100_000 + "]" * 100_000 + "]}"


FILES = [
    ("deep.json", _deep_json(), "deep.json", f"nested deeper than {MAX_DEPTH}"),
    (
        "site.yaml",
        "version: v1\ndescription: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "site.yaml",
        "nest",  # libyaml's own limit, or ours
    ),
    (
        "site.yaml",
        "version: v1\ndescription: " + "[" * 100 + "]" * 100 + "\n",
        "site.yaml",
        f"nested deeper than {MAX_DEPTH}",
    ),
    (
        "big.json",
        '{"version": "1", "criteria": [' + "1" * 5000 + "]}",
        "big.json",
        "cannot be read",
    ),
    (
        "site.yaml",
        "version: v1\nparameters:\n  x.y: " + "9" * 5000 + "\n",
        "site.yaml",
        "cannot be read",
    ),
    ("site.yaml", b"version: caf\xe9\n", "site.yaml", "not UTF-8"),
    ("huge.json", " " * (MAX_FILE_BYTES + 1), "huge.json", "over the limit"),
]


@pytest.mark.parametrize(("name", "body", "file", "problem"), FILES)
def test_an_unreadable_overlay_file_exits_2_naming_it(
    tmp_path: Path, name: str, body: str | bytes, file: str, problem: str
) -> None:
    folder = _site(tmp_path / "site", {name: body})
    out = _canoe("knowledge", "check", str(folder))
    assert out.returncode == 2, out.stderr[-2000:]
    line = out.stderr.strip().splitlines()[-1]
    assert f"{file}: " in line and problem in line, line
    assert "Traceback" not in out.stderr


def test_a_fifo_named_json_is_refused_not_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "site.yaml").write_text("version: v1\n", encoding="utf-8")
    os.mkfifo(folder / "x.json")
    for args, site in (
        (("knowledge", "check", str(folder)), None),
        (("plan", str(BUNDLE)), folder),
    ):
        out = _canoe(*args, "--created", CREATED, site=site) if site else _canoe(*args)
        assert out.returncode == 2, out.stderr
        assert "x.json: " in out.stderr and "not a regular file" in out.stderr


def test_every_shipped_parameter_states_a_type_and_a_range() -> None:
    params = load_file(PARAMETERS_FILE, ParametersFile).parameters
    assert len(params) > 50
    for name, p in params.items():
        assert p.refuses(p.value) is None, name
        assert p.refuses(p.max + 1) is not None, name
        low = p.min if p.min is not None else p.above
        assert low is not None and p.refuses(low - 1) is not None, name
        assert p.refuses(True) is not None, name


def test_a_shipped_value_out_of_range_is_refused_naming_it(tmp_path: Path) -> None:
    text = PARAMETERS_FILE.read_text(encoding="utf-8").replace(
        "kidney.cockcroft_gault.divisor:\n    value: 72\n",
        "kidney.cockcroft_gault.divisor:\n    value: 0\n",
    )
    assert "value: 0\n" in text
    bad = tmp_path / "parameters.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"parameters\.yaml: parameters\.kidney\.cockcroft_gault"):
        load_file(bad, ParametersFile)


def test_the_criteria_json_shape_is_unchanged() -> None:
    # the shipped criteria still load through the hardened reader
    raw = json.loads((REPO_ROOT / "inference/knowledge/criteria/kidney.json").read_text())
    assert raw["criteria"]
