"""Coverage tells the truth about a site's knowledge: a family whose every criterion the site
retired is not "checked", a draft placeholder does not count, and the plan (deliberation meta,
Provenance, the coverage statement) names the retired criteria with the site's reasons. A real
overlay folder and the real CLI as a subprocess."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from inference.knowledge.criteria import CRITERIA_DIR
from tests.conftest import FHIR_FIXTURES, REPO_ROOT

BUNDLE = FHIR_FIXTURES / "adalberto_hartmann_ba18818d.json"
CREATED = "2026-11-30T09:00:00+00:00"
# The families the site empties and the criteria kinds that make them (data/scope.yaml).
EMPTIED = {
    "interactions": ("drug-drug", "duplicate-class", "burden"),
    "dose-limits": ("dose-ceiling",),
    "drug-disease": ("drug-disease",),
}
REASON = "our formulary service runs these checks"


def _shipped() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(CRITERIA_DIR.glob("*.json")):
        out += json.loads(path.read_text(encoding="utf-8"))["criteria"]
    return out


def _overlay(folder: Path) -> list[str]:
    """A site folder retiring every active interaction, dose and drug-disease criterion, with
    a draft placeholder of each kind left in their place; the ids it retired."""
    kinds = {k for ks in EMPTIED.values() for k in ks}
    shipped = _shipped()
    retired = [c["id"] for c in shipped if c["kind"] in kinds and c["status"] == "active"]
    folder.mkdir()
    lines = ["version: no-med-checks-1", "retire:"]
    lines += [f"  - id: {cid}\n    reason: {REASON}" for cid in retired]
    (folder / "site.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    drafts = []
    for kind in sorted(kinds):
        c = dict(next(c for c in shipped if c["kind"] == kind and c["id"] in retired))
        c["id"] = f"site-draft-{kind}"
        c["status"] = "draft"
        c["option"] = {**c["option"], "id": f"opt-site-draft-{kind}"}
        drafts.append(c)
    (folder / "drafts.json").write_text(
        json.dumps({"version": "site-1", "criteria": drafts}), encoding="utf-8"
    )
    return retired


def _canoe(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANOE_")}
    env["CANOE_KNOWLEDGE_DIR"] = str(site)
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_families_a_site_emptied_are_not_checked(tmp_path: Path) -> None:
    retired = _overlay(tmp_path / "site")
    out = _canoe(tmp_path / "site", "plan", str(BUNDLE), "--format", "fhir", "--created", CREATED)
    assert out.returncode == 0, out.stderr
    bundle = json.loads(out.stdout)
    by_type = {e["resource"]["resourceType"]: e["resource"] for e in bundle["entry"]}
    doc = json.loads(base64.b64decode(by_type["Binary"]["data"]))
    cov = doc["meta"]["coverage"]
    families = {f["key"]: f for f in cov["families"]}
    for key in EMPTIED:
        assert families[key]["ran"] is False, key
        assert families[key].get("site_emptied") is True, key
        assert "retired by the site" in families[key]["why"]
    assert families["monitoring"]["ran"] is True  # a family the site kept still runs
    assert [(r["criterion"], r["reason"]) for r in cov["retired"]] == [
        (cid, REASON) for cid in retired
    ]
    # Provenance: each retired criterion is a removal, with the site's reason
    removals = {
        e["what"]["identifier"]["value"]: e["what"]["display"]
        for e in by_type["Provenance"]["entity"]
        if e["role"] == "removal"
    }
    assert set(removals) == set(retired)
    assert all(REASON in text and "no-med-checks-1" in text for text in removals.values())
    # the statement a reader sees names the emptied families apart from what was checked
    narrative = by_type["CarePlan"]["text"]["div"]
    checked = narrative.split("Checked: ", 1)[1].split("(knowledge", 1)[0]
    for label in ("drug interactions", "dose limits", "drug-disease cautions"):
        assert label not in checked
    assert "Retired by the site&#x27;s knowledge, not run: drug interactions" in narrative


def test_text_statement_names_the_emptied_families(tmp_path: Path) -> None:
    _overlay(tmp_path / "site")
    out = _canoe(tmp_path / "site", "plan", str(BUNDLE), "--created", CREATED)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if "Checked: " in x)
    assert "interactions" not in line.split("Retired by", 1)[0]
    assert (
        "Retired by the site's knowledge, not run: drug interactions; drug-disease cautions; "
        "dose limits." in line
    )
