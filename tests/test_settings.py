"""Settings reach the backends: every Triton setting and the panel sizes, set through the
environment or the YAML config file, arrive in ``TritonSettings`` / ``EmbeddedExperts``; bad
settings are refused with one readable line per field and no echoed values."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fhir_mapping.ingest import ingest
from inference.embedded import EmbeddedExperts
from inference.protocol import AssemblePanel, Assess, CallContext
from inference.triton import STEP_KINDS, TritonSettings
from service.backends import build_experts, triton_settings
from service.errors import InputError
from service.settings import (
    NON_SETTING_VARIABLES,
    SETTING_NAMES,
    Settings,
    StoreSettings,
    load_settings,
    settings_markdown,
)
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
    assert t.model_for("consult") == "medgemma-4b-it"
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
    env = via_file(tmp_path, {"triton_retries": 1, "triton_model_consult": "from-file"})
    env["CANOE_TRITON_RETRIES"] = "6"
    t = triton(load_settings(env))
    assert t.retries == 6
    assert t.model_for("consult") == "from-file"


@pytest.mark.parametrize("source", ["env", "file"])
def test_panel_sizes_reach_both_backends(source: str, tmp_path: Path) -> None:
    env = (
        {"CANOE_PANEL_SIZE_HIGH": "5,6", "CANOE_PANEL_SIZE_VERY_HIGH": "7"}
        if source == "env"
        else via_file(tmp_path, {"panel_size_high": [5, 6], "panel_size_very_high": 7})
    )
    settings = load_settings(env)
    want = (("low", 3, 3), ("moderate", 3, 3), ("high", 5, 6), ("very high", 7, 7))
    assert settings.panel.sizes == want
    assert triton(settings).panel_sizes == want
    experts = build_experts(settings)
    assert isinstance(experts, EmbeddedExperts)
    assert experts.panel_sizes["high"] == (5, 6)


async def test_configured_panel_size_changes_the_embedded_panel() -> None:
    profile = ingest(fixture_bundle("adalberto_hartmann").read_bytes())
    ctx = CallContext(deadline_s=30.0)
    default = EmbeddedExperts()
    assessment = await default.run(Assess(profile, ()), ctx)
    before = await default.run(AssemblePanel(profile, assessment), ctx)
    level = assessment.complexity.upper().replace(" ", "_")
    lo, _ = default.panel_sizes[assessment.complexity]
    # One role fewer than the default at this complexity, the lower levels shrunk to fit.
    env = {
        f"CANOE_PANEL_SIZE_{c.upper().replace(' ', '_')}": str(min(b, lo - 1))
        for c, (b, _) in default.panel_sizes.items()
    }
    env[f"CANOE_PANEL_SIZE_{level}"] = str(lo - 1)
    smaller = build_experts(load_settings(env))
    after = await smaller.run(AssemblePanel(profile, assessment), ctx)
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
    assert s.limits.max_tasks_per_request == 200
    assert s.cds.prefetch_deadline_s == 10.0
    assert s.cds.prefetch_max_pages == 20
    assert s.auth.jwt_max_lifetime_s == 3600


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


# Every setting by its documented name: (CANOE_ variable, where it lands, value as text, value
# there). All set at once, so the values are chosen to be coherent with each other (TLS pair,
# JWT mode with its JWKS, a long enough signing key, non-shrinking panel sizes) and each differs
# from its default, so a name that lands in the wrong field, or nowhere, fails.
KEY = "k" * 40
EVERY_SETTING: list[tuple[str, str, str, Any]] = [
    ("CANOE_GRPC_HOST", "server.grpc_host", "127.0.0.2", "127.0.0.2"),
    ("CANOE_ALLOW_UNAUTHENTICATED", "server.allow_unauthenticated", "true", True),
    ("CANOE_GRPC_PORT", "server.grpc_port", "6001", 6001),
    ("CANOE_HTTP_PORT", "server.http_port", "6002", 6002),
    ("CANOE_METRICS_PORT", "server.metrics_port", "6003", 6003),
    ("CANOE_GRACE_PERIOD_S", "server.grace_period_s", "4.5", 4.5),
    ("CANOE_WORKERS", "server.workers", "3", 3),
    ("CANOE_HTTP_HEADER_TIMEOUT_S", "server.http_header_timeout_s", "2.5", 2.5),
    ("CANOE_HTTP_KEEP_ALIVE_S", "server.http_keep_alive_s", "7", 7.0),
    ("CANOE_HTTP_MAX_CONNECTIONS", "server.http_max_connections", "64", 64),
    ("CANOE_TLS_CERT_FILE", "tls.cert_file", "/tls/cert.pem", "/tls/cert.pem"),
    ("CANOE_TLS_KEY_FILE", "tls.key_file", "/tls/key.pem", "/tls/key.pem"),
    ("CANOE_TLS_CLIENT_CA_FILE", "tls.client_ca_file", "/tls/ca.pem", "/tls/ca.pem"),
    ("CANOE_BACKEND", "inference.backend", "triton", "triton"),
    ("CANOE_CALL_DEADLINE_S", "inference.call_deadline_s", "12", 12.0),
    ("CANOE_LOCALE", "inference.locale", "us", "us"),
    ("CANOE_TRITON_URL", "triton.url", "triton:8001", "triton:8001"),
    ("CANOE_TRITON_PROTOCOL", "triton.protocol", "infer", "infer"),
    ("CANOE_TRITON_GUIDED_KEY", "triton.guided_key", "guided_decoding", "guided_decoding"),
    ("CANOE_TRITON_MODEL_AGENT", "triton.model_agent", "agent-m", "agent-m"),
    ("CANOE_TRITON_MODEL_ADJUDICATOR", "triton.model_adjudicator", "adj-m", "adj-m"),
    ("CANOE_TRITON_CHAT_TEMPLATE", "triton.chat_template", "llama3", "llama3"),
    ("CANOE_TRITON_CONCURRENCY", "triton.concurrency", "5", 5),
    *[
        (f"CANOE_TRITON_MODEL_{step.upper()}", f"triton.model_{step}", f"m-{step}", f"m-{step}")
        for step in STEP_KINDS
    ],
    ("CANOE_TRITON_RETRIES", "triton.retries", "7", 7),
    ("CANOE_TRITON_BREAKER_THRESHOLD", "triton.breaker_threshold", "11", 11),
    ("CANOE_TRITON_BREAKER_COOLDOWN_S", "triton.breaker_cooldown_s", "3.5", 3.5),
    ("CANOE_TRITON_TEMPERATURE", "triton.temperature", "0.3", 0.3),
    ("CANOE_TRITON_QUEUE_TIMEOUT_US", "triton.queue_timeout_us", "900", 900),
    ("CANOE_PANEL_SIZE_LOW", "panel.low", "1", (1, 1)),
    ("CANOE_PANEL_SIZE_MODERATE", "panel.moderate", "2,3", (2, 3)),
    ("CANOE_PANEL_SIZE_HIGH", "panel.high", "5", (5, 5)),
    ("CANOE_PANEL_SIZE_VERY_HIGH", "panel.very_high", "8,9", (8, 9)),
    ("CANOE_DELTA", "reasoning.delta", "0.25", 0.25),
    ("CANOE_BETA", "reasoning.beta", "0.1", 0.1),
    ("CANOE_THRESHOLD", "reasoning.threshold", "0.6", 0.6),
    ("CANOE_BAND", "reasoning.band", "0.07", 0.07),
    ("CANOE_STORE_DSN", "store.dsn", "postgresql://db/canoe", "postgresql://db/canoe"),
    ("CANOE_AUTH_MODE", "auth.mode", "jwt", "jwt"),
    ("CANOE_AUTH_TOKENS_FILE", "auth.tokens_file", "/auth/tokens", "/auth/tokens"),
    ("CANOE_AUTH_JWKS_FILE", "auth.jwks_file", "/auth/jwks", "/auth/jwks"),
    ("CANOE_AUTH_ISSUER", "auth.issuer", "https://idp.test", "https://idp.test"),
    ("CANOE_AUTH_AUDIENCE", "auth.audience", "canoe-aud", "canoe-aud"),
    ("CANOE_AUTH_ALLOW_ANY_AUDIENCE", "auth.allow_any_audience", "1", True),
    ("CANOE_AUTH_JWT_MAX_LIFETIME_S", "auth.jwt_max_lifetime_s", "600", 600),
    ("CANOE_OTLP_ENDPOINT", "telemetry.otlp_endpoint", "http://otel:4317", "http://otel:4317"),
    ("CANOE_LOG_LEVEL", "telemetry.log_level", "debug", "debug"),
    ("CANOE_MAX_MESSAGE_BYTES", "limits.max_message_bytes", "4096", 4096),
    ("CANOE_MAX_BUNDLE_RESOURCES", "limits.max_bundle_resources", "77", 77),
    ("CANOE_MAX_PLAN_MEMORY_MB", "limits.max_plan_memory_mb", "256", 256),
    ("CANOE_MAX_CONCURRENT_PLANS", "limits.max_concurrent_plans", "2", 2),
    ("CANOE_REQUEST_DEADLINE_S", "limits.request_deadline_s", "60", 60.0),
    ("CANOE_MAX_TASKS_PER_REQUEST", "limits.max_tasks_per_request", "9", 9),
    ("CANOE_MAX_FEEDBACK_ITEMS", "limits.max_feedback_items", "7", 7),
    ("CANOE_CDS_BASE_URL", "cds.base_url", "https://cds.test/x", "https://cds.test/x"),
    ("CANOE_CDS_JWKS_FILE", "cds.jwks_file", "/cds/clients.json", "/cds/clients.json"),
    ("CANOE_CDS_REVIEW_URL", "cds.review_url", "https://rv.test", "https://rv.test"),
    ("CANOE_CDS_PREFETCH_DEADLINE_S", "cds.prefetch_deadline_s", "2.5", 2.5),
    ("CANOE_CDS_PREFETCH_MAX_PAGES", "cds.prefetch_max_pages", "4", 4),
    (
        "CANOE_FHIR_BASE",
        "fhir.base",
        "https://fhir.hospital.test/c",
        "https://fhir.hospital.test/c",
    ),
    ("CANOE_FHIR_CLOCK_SKEW_S", "fhir.clock_skew_s", "3600", 3600),
    ("CANOE_REVIEW_SMART_CLIENT_ID", "review.smart_client_id", "rv-client", "rv-client"),
    ("CANOE_REVIEW_SMART_ISSUERS", "review.smart_issuers", "t=https://e/f", "t=https://e/f"),
    ("CANOE_REVIEW_SIGNING_KEY", "review.signing_key", KEY, KEY),
    ("CANOE_REVIEW_LINK_TTL_S", "review.link_ttl_s", "60", 60),
    ("CANOE_REVIEW_SESSION_TTL_S", "review.session_ttl_s", "120", 120),
    ("CANOE_KNOWLEDGE_DIR", "knowledge.dir", "/etc/canoe/knowledge", "/etc/canoe/knowledge"),
    ("CANOE_KNOWLEDGE_DRAFTS", "knowledge.drafts", "true", True),
]
ROOT = Path(__file__).resolve().parents[1]
# Where the names are documented or set for a deployment. Names ending in "_" are families
# spelled out in the same text (CANOE_TRITON_MODEL_<STEP>, CANOE_PANEL_SIZE_<LEVEL>).
DOCUMENTED_IN = (
    "README.md",
    "docs/operations.md",
    "docs/architecture.md",
    "docs/clinical-validation.md",
    "compose.yaml",
    "Dockerfile",
    "helm/canoe/templates/configmap.yaml",
    "helm/canoe/templates/_helpers.tpl",
    "helm/canoe/values.yaml",
)
NOT_SETTINGS = {f"CANOE_{name}" for name in NON_SETTING_VARIABLES}


def at(settings: Any, dotted: str) -> Any:
    group, field = dotted.split(".")
    return getattr(getattr(settings, group), field)


def test_the_table_covers_every_setting_once() -> None:
    names = [var for var, *_ in EVERY_SETTING]
    assert len(names) == len(set(names))
    assert sorted(v.removeprefix("CANOE_").lower() for v in names) == sorted(SETTING_NAMES)
    assert {p for _, p, *_ in EVERY_SETTING} == {".".join(v) for v in SETTING_NAMES.values()}


def test_every_documented_variable_is_a_setting() -> None:
    known = {var for var, *_ in EVERY_SETTING}
    documented: set[str] = set()
    for name in DOCUMENTED_IN:
        text = (ROOT / name).read_text(encoding="utf-8")
        documented |= set(re.findall(r"CANOE_[A-Z0-9_]*[A-Z0-9]\b", text))
    documented -= NOT_SETTINGS
    assert len(documented) > 40  # the pattern really finds the documented names
    assert documented <= known, sorted(documented - known)


@pytest.mark.parametrize("source", ["env", "file", "file-groups"])
def test_every_variable_lands_in_its_group(source: str, tmp_path: Path) -> None:
    env = {var: text for var, _, text, _ in EVERY_SETTING}
    if source != "env":
        flat = {var.removeprefix("CANOE_").lower(): text for var, text in env.items()}
        if source == "file-groups":  # a YAML file may also spell groups as mappings
            nested: dict[str, dict[str, str]] = {}
            for name, text in flat.items():
                group, field = SETTING_NAMES[name]
                nested.setdefault(group, {})[field] = text
            env = via_file(tmp_path, nested)
        else:
            env = via_file(tmp_path, flat)
    settings = load_settings(env)
    defaults = load_settings({})
    for var, dotted, _, want in EVERY_SETTING:
        assert at(settings, dotted) == want, var
        assert at(defaults, dotted) != want, var  # the value really moved the setting


def test_flat_names_are_accepted_as_keywords_and_groups_as_models() -> None:
    s = Settings(triton_url="t:1", backend="triton", store=StoreSettings(dsn="sqlite:///x.db"))
    assert (s.triton.url, s.inference.backend, s.store.dsn) == ("t:1", "triton", "sqlite:///x.db")
    assert load_settings({"CANOE_TRITON_RETRIES": "4"}, triton_retries=5).triton.retries == 5


def test_a_group_name_is_not_a_setting() -> None:
    with pytest.raises(InputError) as info:
        load_settings({"CANOE_TRITON": "x", "CANOE_PANEL_SIZE": "3"})
    unknown = "unknown setting; the names are in service/settings.py (group prefix + field)"
    assert sorted(str(info.value).splitlines()[1:]) == [
        f"panel_size (CANOE_PANEL_SIZE): {unknown}",
        f"triton (CANOE_TRITON): {unknown}",
    ]


def test_a_check_across_a_group_names_its_fields() -> None:
    with pytest.raises(InputError) as info:
        load_settings({"CANOE_TLS_KEY_FILE": "/k.pem", "CANOE_AUTH_MODE": "tokens"})
    assert sorted(str(info.value).splitlines()[1:]) == [
        "TLS needs both tls_cert_file and tls_key_file",
        "auth_mode 'tokens' needs auth_tokens_file",
    ]


# How a program reads an environment variable, in Python, shell and YAML (compose, Helm).
READ_AS = re.compile(
    r"""(?:environ\[\s*["']|\bget\(\s*["']|getenv\(\s*["']|\$\{?|\bname:\s*|^\s*-\s*"""
    r"|^\s*export\s+)(CANOE_[A-Z0-9_]*[A-Z0-9])\b"
    r"|^\s+(CANOE_[A-Z0-9_]*[A-Z0-9]):",
    re.MULTILINE,
)
SCANNED = ("service", "fhir_mapping", "inference", "client", "examples", "tests", "helm", "compose")


def _read_in(text: str) -> set[str]:
    return {a or b for a, b in READ_AS.findall(text)}


def test_every_canoe_variable_a_program_reads_is_a_setting_or_declared() -> None:
    """Any CANOE_* variable the service, its tools, tests or examples read is either a setting
    or one of the declared others, so that setting it never stops the service as an unknown
    setting (CANOE_SMART_LAUNCHER_DIR once did); and every declared other is really read."""
    read: set[str] = set()
    for folder in SCANNED:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".sh", ".yaml", ".yml", ".tpl"} and path.is_file():
                read |= _read_in(path.read_text(encoding="utf-8"))
    for name in ("Dockerfile", "compose.yaml", "dev.py"):
        read |= _read_in((ROOT / name).read_text(encoding="utf-8"))
    settings = {f"CANOE_{name.upper()}" for name in SETTING_NAMES}
    assert len(read & settings) > 20  # the pattern really finds the names programs read
    assert read <= settings | NOT_SETTINGS, sorted(read - settings - NOT_SETTINGS)
    assert read >= NOT_SETTINGS, sorted(NOT_SETTINGS - read)


def test_the_declared_other_variables_do_not_stop_the_service() -> None:
    env = dict.fromkeys(NOT_SETTINGS - {"CANOE_CONFIG_FILE"}, "/x")
    assert load_settings(env) == load_settings({})


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("CANOE_GRPC_PORT", "70000", "less than or equal to 65535"),
        ("CANOE_HTTP_PORT", "-1", "greater than or equal to 0"),
        ("CANOE_METRICS_PORT", "http", "valid integer"),
        ("CANOE_LOG_LEVEL", "verbose", "'debug', 'info', 'warning', 'error' or 'critical'"),
        ("CANOE_TRITON_CHAT_TEMPLATE", "mistral", "'gemma', 'llama3', 'chatml' or 'none'"),
        ("CANOE_GRPC_HOST", "", "at least 1 character"),
        ("CANOE_WORKERS", "1000", "less than or equal to 256"),
    ],
)
def test_a_setting_out_of_its_type_or_range_is_refused(
    variable: str, value: str, says: str
) -> None:
    with pytest.raises(InputError) as info:
        load_settings({variable: value})
    line = str(info.value).splitlines()[1]
    assert line.startswith(f"{variable.removeprefix('CANOE_').lower()} ({variable}): ")
    assert says in line
    assert value not in line.split(": ", 1)[1] or value in says  # no echoed value


def test_log_level_is_read_in_any_case() -> None:
    assert load_settings({"CANOE_LOG_LEVEL": "WARNING"}).telemetry.log_level == "warning"


def test_every_setting_is_described() -> None:
    undescribed = [
        name
        for name, (group, field) in SETTING_NAMES.items()
        if len(Settings.model_fields[group].annotation.model_fields[field].description or "") < 10
    ]
    assert undescribed == []


def test_docs_settings_page_is_the_generated_one() -> None:
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert page == settings_markdown(), "run: .venv/bin/canoe settings > docs/settings.md"
    for name in SETTING_NAMES:
        assert f"`CANOE_{name.upper()}`" in page
