"""One settings object for the whole service, read from the environment and an optional file.

Environment variables are ``CANOE_<NAME>``; the optional YAML file named by ``CANOE_CONFIG_FILE``
holds the same keys in lower case without the prefix. The environment wins over the file, the file
over the defaults. The Helm chart's ConfigMap and Secrets set exactly these names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from fhir_mapping.definitions import DEFAULT_BASE, check_base
from inference.panel_sizes import (
    COMPLEXITIES,
    DEFAULT_PANEL_SIZES,
    PanelSizes,
    panel_sizes,
    parse_panel_size,
)
from inference.protocol import StepKind
from service.core.model import Parameters
from service.errors import InputError
from service.jsonio import load_json_object

__all__ = ["Settings", "load_settings"]

# CANOE_* variables that are not settings: the config file pointer and tool/test switches.
_NOT_SETTINGS = frozenset({"CONFIG_FILE", "SHARED_DIR", "DEBUG"})
_DEFAULT_SIZES = {c: (b, e) for c, b, e in DEFAULT_PANEL_SIZES}


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Transport
    grpc_host: str = "0.0.0.0"
    grpc_port: int = 50051
    http_port: int = 8080
    metrics_port: int = 9464
    grace_period_s: float = 20.0
    # Processes of `canoe serve` sharing these ports (SO_REUSEPORT); 0: one per usable CPU.
    workers: int = Field(default=0, ge=0)

    # Inference
    backend: Literal["embedded", "triton"] = "embedded"
    triton_url: str = ""
    triton_protocol: Literal["stream", "infer"] = "stream"
    triton_guided_key: Literal["structured_outputs", "guided_decoding"] = "structured_outputs"
    triton_model_agent: str = "medgemma-4b-it"
    triton_model_adjudicator: str = "medgemma-27b-text-it"
    triton_chat_template: str = "gemma"
    triton_concurrency: int = Field(default=8, ge=1)
    call_deadline_s: float = Field(default=30.0, gt=0)
    # Per step kind: "" means the step's default (adjudicator model for adjudicate/arbitrate,
    # agent model for the rest).
    triton_model_assess: str = ""
    triton_model_panel: str = ""
    triton_model_vote: str = ""
    triton_model_argue: str = ""
    triton_model_relate: str = ""
    triton_model_adjudicate: str = ""
    triton_model_arbitrate: str = ""
    triton_model_synthesize: str = ""
    triton_retries: int = Field(default=2, ge=0, le=10)
    triton_breaker_threshold: int = Field(default=5, ge=1)
    triton_breaker_cooldown_s: float = Field(default=30.0, ge=0)
    triton_temperature: float = Field(default=0.0, ge=0, le=2)
    # Triton's server-side queue timeout in microseconds; 0 means none (not the call deadline).
    triton_queue_timeout_us: int = Field(default=0, ge=0)

    # Panel size by case complexity: "base" or "base,extended" (extended when the case needs
    # one more role). Both backends use them; sizes must not shrink as complexity grows.
    panel_size_low: tuple[int, int] = _DEFAULT_SIZES["low"]
    panel_size_moderate: tuple[int, int] = _DEFAULT_SIZES["moderate"]
    panel_size_high: tuple[int, int] = _DEFAULT_SIZES["high"]
    panel_size_very_high: tuple[int, int] = _DEFAULT_SIZES["very high"]

    # Reasoning (CANOE defaults from the authors' arena code)
    delta: float = Field(default=0.2, ge=0, le=1)
    beta: float = Field(default=0.15, ge=0, le=1)
    threshold: float = Field(default=0.5, ge=0, le=1)
    band: float = Field(default=0.05, ge=0, le=0.5)

    # State
    store_dsn: str = "sqlite:///canoe.sqlite3"

    # Auth and TLS
    auth_mode: Literal["none", "tokens", "jwt"] = "none"
    auth_tokens_file: str = ""
    auth_jwks_file: str = ""
    auth_issuer: str = ""
    auth_audience: str = ""
    tls_cert_file: str = ""
    tls_key_file: str = ""
    tls_client_ca_file: str = ""

    # Operations
    otlp_endpoint: str = ""
    log_level: str = "info"

    # Limits
    max_message_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    max_bundle_resources: int = Field(default=5000, ge=1)
    max_concurrent_plans: int = Field(default=8, ge=1)
    request_deadline_s: float = Field(default=120.0, gt=0)

    # CDS Hooks
    # The public URL CDS clients call (JWT aud is checked against it); "" means this machine on
    # http_port (see cds_url).
    cds_base_url: str = ""
    cds_jwks_file: str = ""
    cds_review_url: str = ""

    # Hardening (issue 11): caps and deadlines on what one request may cost, and how long a
    # gRPC JWT may live. Per-CDS-client FHIR server allowlists live in the trusted-clients file
    # (cds_jwks_file: fhir_servers, fhir_http_hosts, fhir_private_networks), next to its keys.
    max_tasks_per_request: int = Field(default=200, ge=1)
    cds_prefetch_deadline_s: float = Field(default=10.0, gt=0)
    cds_prefetch_max_pages: int = Field(default=20, ge=1, le=1000)
    auth_jwt_max_lifetime_s: int = Field(default=3600, ge=60)

    # ---- Publishing (issue 16): the canonical base of every project-owned FHIR URL ----------
    # Extensions, CodeSystems, ValueSets and our resources' fullUrls in every output live under
    # it; `canoe definitions` writes the matching FHIR package. The default is a documentation
    # domain (RFC 2606): a hospital sets its own.
    fhir_base: str = DEFAULT_BASE

    @field_validator("fhir_base")
    @classmethod
    def _fhir_base(cls, value: str) -> str:
        return check_base(value)

    @property
    def cds_url(self) -> str:
        """``cds_base_url``, or this machine on the configured HTTP port (https under TLS)."""
        if self.cds_base_url:
            return self.cds_base_url.rstrip("/")
        scheme = "https" if self.tls_cert_file else "http"
        return f"{scheme}://localhost:{self.http_port}"

    # ---- end of issue 16's block ------------------------------------------------------------
    # Review app (``/review``, service/review): SMART on FHIR client id; the EHRs allowed to
    # launch it, as "tenant=https://ehr.example/fhir,..." (an unknown iss is refused); the HMAC
    # key for review links and sessions ("" = a random key per process: links from
    # `canoe review-link` then do not work, and sessions end with the process); lifetimes.
    review_smart_client_id: str = "canoe-review"
    review_smart_issuers: str = ""
    review_signing_key: str = ""
    review_link_ttl_s: int = Field(default=900, ge=30, le=86_400)
    review_session_ttl_s: int = Field(default=3600, ge=60, le=86_400)

    @field_validator(
        "panel_size_low",
        "panel_size_moderate",
        "panel_size_high",
        "panel_size_very_high",
        mode="before",
    )
    @classmethod
    def _panel_size(cls, value: object) -> tuple[int, int]:
        return parse_panel_size(value)

    @field_validator("review_smart_issuers")
    @classmethod
    def _issuers(cls, value: str) -> str:
        parse_issuers(value)  # ValueError naming the bad entry
        return value

    @model_validator(mode="after")
    def _coherent(self) -> Settings:
        if self.backend == "triton" and not self.triton_url:
            raise ValueError("backend 'triton' needs triton_url (CANOE_TRITON_URL)")
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            raise ValueError("TLS needs both tls_cert_file and tls_key_file")
        if self.tls_client_ca_file and not self.tls_cert_file:
            raise ValueError("mutual TLS (tls_client_ca_file) needs tls_cert_file/tls_key_file")
        if self.auth_mode == "tokens" and not self.auth_tokens_file:
            raise ValueError("auth_mode 'tokens' needs auth_tokens_file")
        if self.auth_mode == "jwt" and not self.auth_jwks_file:
            raise ValueError("auth_mode 'jwt' needs auth_jwks_file")
        _ = self.panel_sizes  # validates them together
        if self.review_signing_key and len(self.review_signing_key.encode("utf-8")) < 32:
            raise ValueError("review_signing_key must be at least 32 bytes (HS256)")
        return self

    @property
    def panel_sizes(self) -> PanelSizes:
        """The four panel sizes, validated, in complexity order."""
        fields = {c: "panel_size_" + c.replace(" ", "_") for c in COMPLEXITIES}
        return panel_sizes(
            {c: getattr(self, f) for c, f in fields.items()},
            {c: f"{f} (CANOE_{f.upper()})" for c, f in fields.items()},
        )

    def triton_model_for(self, step: StepKind) -> str:
        """The model configured for one step kind ("" when the step keeps its default)."""
        model: str = getattr(self, f"triton_model_{step}")
        return model

    @property
    def parameters(self) -> Parameters:
        return Parameters(
            delta=self.delta, beta=self.beta, threshold=self.threshold, band=self.band
        )


def load_settings(environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Defaults < config file < environment < explicit overrides. Bad settings -> InputError."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    path = env.get("CANOE_CONFIG_FILE", "")
    if path:
        loaded = _read_config_file(path)
        if not isinstance(loaded, dict):
            raise InputError(f"config file {path} must hold a mapping of settings")
        values.update(loaded)
    prefix = "CANOE_"
    for key, value in env.items():
        if key.startswith(prefix) and key[len(prefix) :] not in _NOT_SETTINGS:
            values[key[len(prefix) :].lower()] = value
    values.update(overrides)
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        raise InputError("invalid settings:\n" + _describe(exc)) from None


def _read_config_file(path: str) -> object:
    """The file's mapping: JSON through the one JSON loader, YAML (a superset) otherwise."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read config file {path}: {exc.strerror}") from exc
    if path.endswith(".json"):
        return load_json_object(raw, what=f"config file {path}")
    try:
        return yaml.safe_load(raw) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"cannot read config file {path}: {exc}") from exc
    except RecursionError:
        raise InputError(f"config file {path} nests too deeply") from None


def _describe(exc: ValidationError) -> str:
    """One line per problem, ``name: problem``, naming the CANOE_ variable. Neither pydantic's
    documentation URL nor the input values: a setting can hold a secret (a DSN's password)."""
    lines = []
    for err in exc.errors(include_url=False, include_input=False, include_context=False):
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown setting; the names are the fields of service/settings.py Settings"
        # A check across fields (loc empty) names its fields in the message itself.
        lines.append(f"{loc} (CANOE_{loc.upper()}): {msg}" if loc else msg)
    return "\n".join(lines)


def parse_issuers(text: str) -> dict[str, str]:
    """``"tenant=https://ehr/fhir,other=https://..."`` -> {iss: tenant} (iss without a trailing
    slash). Raises ValueError naming the bad entry."""
    out: dict[str, str] = {}
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            continue
        tenant, sep, iss = entry.partition("=")
        if not sep or not tenant.strip() or not iss.strip().startswith(("https://", "http://")):
            raise ValueError(f"{entry!r} is not 'tenant=https://ehr.example/fhir'")
        out[iss.strip().rstrip("/")] = tenant.strip()
    return out
