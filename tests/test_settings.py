"""Settings reach the backends: every Triton setting and the panel sizes, set through the
environment or the YAML config file, arrive in ``TritonSettings`` / ``EmbeddedExperts``; bad
settings are refused with one readable line per field and no echoed values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fhir_mapping.ingest import ingest
from inference.embedded import EmbeddedExperts
from inference.protocol import CallContext
from inference.triton import STEP_KINDS, TritonSettings
from service.backends import build_experts, triton_settings
from service.errors import InputError
from service.settings import load_settings
from tests.conftest import fixture_bundle

# (setting, value as text, value as YAML, TritonSettings attribute, expected value there)
NUMERIC: list[tuple[str, str, Any, str, Any]] = [
    ("triton_retries", "4", 4, "retries", 4),
    ("triton_breaker_threshold", "9", 9, "breaker_threshold", 9),
    ("triton_breaker_cooldown_s", "12.5", 12.5, "breaker_cooldown_s", 12.5),
    ("triton_temperature", "0.7", 0.7, "temperature", 0.7),
    ("triton_queue_timeout_us", "250000", 250000, "queue_timeout_us", 250000),
    ("triton_concurrency", "3", 3, "concurrency", 3),
]


def triton(settings: Any) -> TritonSettings:
    return triton_settings(settings)


def via_file(tmp_path: Path, values: dict[str, Any]) -> dict[str, str]:
    path = tmp_path / "canoe.yaml"
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return {"CANOE_CONFIG_FILE": str(path)}


def test_defaults_reach_triton_unchanged() -> None:
    t = triton(load_settings({}))
    base = TritonSettings()
    assert t.models == ()
    assert (t.retries, t.breaker_threshold, t.breaker_cooldown_s) == (
        base.retries,
        base.breaker_threshold,
        base.breaker_cooldown_s,
    )
    assert (t.temperature, t.queue_timeout_us) == (base.temperature, None)
    assert t.model_for("vote") == "medgemma-4b-it"
    assert t.model_for("adjudicate") == "medgemma-27b-text-it"


def test_one_set_of_defaults() -> None:
    """TritonSettings used on its own (tests, scripts) defaults like the service's Settings."""
    t, base = triton(load_settings({})), TritonSettings()
    assert (t.agent_model, t.adjudicator_model) == (base.agent_model, base.adjudicator_model)
    assert (t.protocol, t.guided_key, t.concurrency, t.chat_template) == (
        base.protocol,
        base.guided_key,
        base.concurrency,
        base.chat_template,
    )
    assert t.panel_sizes == base.panel_sizes


@pytest.mark.parametrize("step", STEP_KINDS)
@pytest.mark.parametrize("source", ["env", "file"])
def test_model_per_step_kind(step: str, source: str, tmp_path: Path) -> None:
    name = f"model-for-{step}"
    env = (
        {f"CANOE_TRITON_MODEL_{step.upper()}": name}
        if source == "env"
        else via_file(tmp_path, {f"triton_model_{step}": name})
    )
    t = triton(load_settings(env))
    assert t.model_for(step) == name
    others = [s for s in STEP_KINDS if s != step]
    assert all(t.model_for(s) != name for s in others)  # only that step kind moves


@pytest.mark.parametrize(("field", "text", "yaml_value", "attr", "want"), NUMERIC)
@pytest.mark.parametrize("source", ["env", "file"])
def test_numeric_triton_settings(
    field: str, text: str, yaml_value: Any, attr: str, want: Any, source: str, tmp_path: Path
) -> None:
    env = (
        {f"CANOE_{field.upper()}": text}
        if source == "env"
        else via_file(tmp_path, {field: yaml_value})
    )
    assert getattr(triton(load_settings(env)), attr) == want
    assert getattr(TritonSettings(), attr) != want  # the value really changed something


def test_environment_wins_over_file(tmp_path: Path) -> None:
    env = via_file(tmp_path, {"triton_retries": 1, "triton_model_vote": "from-file"})
    env["CANOE_TRITON_RETRIES"] = "6"
    t = triton(load_settings(env))
    assert t.retries == 6
    assert t.model_for("vote") == "from-file"


@pytest.mark.parametrize("source", ["env", "file"])
def test_panel_sizes_reach_both_backends(source: str, tmp_path: Path) -> None:
    env = (
        {"CANOE_PANEL_SIZE_HIGH": "5,6", "CANOE_PANEL_SIZE_VERY_HIGH": "7"}
        if source == "env"
        else via_file(tmp_path, {"panel_size_high": [5, 6], "panel_size_very_high": 7})
    )
    settings = load_settings(env)
    want = (("low", 2, 2), ("moderate", 3, 3), ("high", 5, 6), ("very high", 7, 7))
    assert settings.panel_sizes == want
    assert triton(settings).panel_sizes == want
    experts = build_experts(settings)
    assert isinstance(experts, EmbeddedExperts)
    assert experts.panel_sizes["high"] == (5, 6)


async def test_configured_panel_size_changes_the_embedded_panel() -> None:
    profile = ingest(fixture_bundle("adalberto_hartmann").read_bytes())
    ctx = CallContext(deadline_s=30.0)
    default = EmbeddedExperts()
    assessment = await default.assess(profile, (), ctx)
    before = await default.assemble_panel(profile, assessment, ctx)
    level = assessment.complexity.upper().replace(" ", "_")
    lo, _ = default.panel_sizes[assessment.complexity]
    # One role fewer than the default at this complexity, the lower levels shrunk to fit.
    env = {
        f"CANOE_PANEL_SIZE_{c.upper().replace(' ', '_')}": str(min(b, lo - 1))
        for c, (b, _) in default.panel_sizes.items()
    }
    env[f"CANOE_PANEL_SIZE_{level}"] = str(lo - 1)
    smaller = build_experts(load_settings(env))
    after = await smaller.assemble_panel(profile, assessment, ctx)
    assert len(before) >= lo
    assert len(after) == lo - 1
    assert [m.role for m in after] == [m.role for m in before][: lo - 1]  # same ranking, cut


def test_unknown_name_is_refused_clearly() -> None:
    with pytest.raises(InputError) as info:
        load_settings({"CANOE_TRITON_RETRYS": "3"})
    text = str(info.value)
    assert "triton_retrys (CANOE_TRITON_RETRYS): unknown setting" in text
    assert "https://" not in text


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({"CANOE_TRITON_CONCURRENCY": "-1"}, "triton_concurrency"),
        ({"CANOE_TRITON_RETRIES": "-2"}, "triton_retries"),
        ({"CANOE_TRITON_TEMPERATURE": "9"}, "triton_temperature"),
        ({"CANOE_TRITON_QUEUE_TIMEOUT_US": "-5"}, "triton_queue_timeout_us"),
        ({"CANOE_TRITON_BREAKER_THRESHOLD": "0"}, "triton_breaker_threshold"),
        ({"CANOE_PANEL_SIZE_LOW": "0"}, "panel_size_low"),
        ({"CANOE_PANEL_SIZE_MODERATE": "4,3"}, "panel_size_moderate"),
        ({"CANOE_PANEL_SIZE_VERY_HIGH": "3"}, "panel_size_very_high"),  # below 'high'
    ],
)
def test_invalid_value_names_the_field(env: dict[str, str], field: str) -> None:
    with pytest.raises(InputError) as info:
        load_settings(env)
    lines = str(info.value).splitlines()
    assert lines[0] == "invalid settings:"
    assert len(lines) == 2
    assert lines[1].startswith(f"{field} (CANOE_{field.upper()})")


def test_error_lists_each_field_and_echoes_no_input() -> None:
    secret = "postgresql://canoe:hunter2-secret@db/canoe"
    with pytest.raises(InputError) as info:
        load_settings(
            {
                "CANOE_STORE_DSN": secret,
                "CANOE_TRITON_CONCURRENCY": "-1",
                "CANOE_GRPC_PORT": "not-a-port",
            }
        )
    text = str(info.value)
    assert "hunter2" not in text
    assert "not-a-port" not in text  # values are not echoed, only the field and the problem
    assert "errors.pydantic.dev" not in text
    names = [line.split(" ", 1)[0] for line in text.splitlines()[1:]]
    assert sorted(names) == ["grpc_port", "triton_concurrency"]


def test_hardening_defaults() -> None:
    s = load_settings({})
    assert s.max_tasks_per_request == 200
    assert s.cds_prefetch_deadline_s == 10.0
    assert s.cds_prefetch_max_pages == 20
    assert s.auth_jwt_max_lifetime_s == 3600


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("deep.json", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "not valid JSON"),
        ("deep2.json", '{"a": ' + "[" * 70 + "]" * 70 + "}", "deeper than"),
        ("list.json", "[]", "JSON object"),
        ("deep.yaml", "a: " + "[" * 5000 + "]" * 5000, "config file"),
    ],
)
def test_a_config_file_that_cannot_be_read_is_an_input_error(
    tmp_path: Path, name: str, text: str, why: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError, match=why):
        load_settings({"CANOE_CONFIG_FILE": str(path)})
