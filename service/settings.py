"""One settings object for the whole service, read from the environment and an optional file.

``Settings`` is made of groups (``settings.triton.url``, ``settings.store.dsn``, ...). Each
setting also has one flat name, its group's prefix and its field (``triton_`` + ``url``): the
environment variable is ``CANOE_<FLAT NAME>`` and the optional YAML file named by
``CANOE_CONFIG_FILE`` holds the flat names in lower case (or a group as a mapping,
``triton: {url: ...}``). The environment wins over the file, the file over the defaults. The
Helm chart's ConfigMap and Secrets set exactly these names; ``SETTING_NAMES`` lists them all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Literal

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
from inference.prompts import ChatFamily
from inference.protocol import StepKind
from service.core.model import Parameters
from service.errors import InputError
from service.jsonio import load_json_object

__all__ = [
    "NON_SETTING_VARIABLES",
    "SETTING_NAMES",
    "AuthSettings",
    "CdsSettings",
    "FhirSettings",
    "InferenceSettings",
    "LimitSettings",
    "PanelSettings",
    "ReasoningSettings",
    "ReviewSettings",
    "ServerSettings",
    "Settings",
    "StoreSettings",
    "TelemetrySettings",
    "TlsSettings",
    "TritonConfig",
    "load_settings",
    "parse_issuers",
    "setting_default",
]

# CANOE_* variables that are not settings of the service: the config file pointer, and the
# variables of the development tools, tests and examples, each with what it is for. The service
# ignores them (any other CANOE_* variable is refused as an unknown setting), and
# docs/settings.md lists them under their own heading.
NON_SETTING_VARIABLES: Mapping[str, str] = {
    "CONFIG_FILE": "YAML or JSON file of settings, flat names in lower case (the environment "
    "wins over it)",
    "SHARED_DIR": "tests: the team's shared folder holding the FHIR validators (default ../shared)",
    "DEBUG": "the CLI: print the traceback of an internal error",
    "SMART_LAUNCHER_DIR": "tests: a built SMART launcher the review-app tests run against",
    "QBAFPY": "benchmarks: a QBAF-Py checkout the argumentation engine is compared with",
    "IMAGE_CACHE": "image tests: where the built image's layers are cached",
    "IMAGE_STORAGE_DRIVER": "image tests: the storage driver of the image builder",
    "LLM_THREADS": "development LLM server (llm extra): CPU threads",
    "LLM_N_CTX": "development LLM server: context length in tokens",
    "LLM_N_BATCH": "development LLM server: prompt tokens per decode step",
    "LLM_FLASH_ATTN": "development LLM server: flash attention on (1) or off (0)",
    "LLM_GRAMMAR_MAX_ITEMS": "development LLM server: array bound of the guided-JSON grammar",
    "LLM_GRAMMAR_MAX_LENGTH": "development LLM server: string bound of the guided-JSON grammar",
    "LLM_GRAMMAR_ITEMS_BY_NAME": "development LLM server: array bounds by property (JSON)",
    "ADDR": "examples: the service's gRPC address",
    "TOKEN": "examples: the bearer token they send",
    "CACERT": "examples: the CA certificate they trust (TLS)",
    "TLS": "examples: 1 to call over TLS",
}
_DEFAULT_SIZES = {c: (b, e) for c, b, e in DEFAULT_PANEL_SIZES}


class _Group(BaseModel):
    """One group of settings; its flat names are ``prefix + field``. The string under each field
    is its description: `canoe settings` and docs/settings.md are made from it."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    prefix: ClassVar[str] = ""


class ServerSettings(_Group):
    grpc_host: str = Field(default="127.0.0.1", min_length=1)
    """Address gRPC, HTTP and metrics listen on. Loopback by default: a service that answers on
    every interface is a deliberate choice (a container sets 0.0.0.0), and `canoe serve` refuses
    a non-loopback address while gRPC callers are not authenticated (auth_mode none) unless
    allow_unauthenticated says so."""
    allow_unauthenticated: bool = False
    """Listen beyond loopback with auth_mode none (insecure)."""
    grpc_port: int = Field(default=50051, ge=0, le=65535)
    """gRPC port (0: any free port)."""
    http_port: int = Field(default=8080, ge=0, le=65535)
    """CDS Hooks and review app HTTP(S) port, with /healthz and /livez (0: any free port)."""
    metrics_port: int = Field(default=9464, ge=0, le=65535)
    """Prometheus /metrics port (0: off); worker k serves it on metrics_port + k."""
    grace_period_s: float = Field(default=20.0, ge=0, le=3600)
    """Seconds a stopping server lets requests in flight finish."""
    workers: int = Field(default=0, ge=0, le=256)
    """Processes of `canoe serve` sharing these ports (SO_REUSEPORT); 0: one per usable CPU."""
    http_header_timeout_s: float = Field(default=10.0, gt=0, le=300)
    """Seconds a request's headers may take to arrive, from the connection or from the
    request's first byte (slowloris bound, per worker)."""
    http_keep_alive_s: float = Field(default=5.0, gt=0, le=300)
    """Seconds an idle keep-alive HTTP connection is kept open."""
    http_max_connections: int = Field(default=512, ge=1, le=100_000)
    """HTTP connections one worker holds at most; more are answered 503 and closed (the default
    stays under the common limit of 1024 open files per process)."""


class TlsSettings(_Group):
    prefix = "tls_"
    cert_file: str = ""
    """Server certificate (PEM): TLS on gRPC and HTTP."""
    key_file: str = ""
    """The server certificate's private key (PEM)."""
    client_ca_file: str = ""
    """Client CA (PEM): mutual TLS on gRPC."""

    @model_validator(mode="after")
    def _coherent(self) -> TlsSettings:
        if bool(self.cert_file) != bool(self.key_file):
            raise ValueError("TLS needs both tls_cert_file and tls_key_file")
        if self.client_ca_file and not self.cert_file:
            raise ValueError("mutual TLS (tls_client_ca_file) needs tls_cert_file/tls_key_file")
        return self


class InferenceSettings(_Group):
    backend: Literal["embedded", "triton"] = "embedded"
    """Expert backend: embedded (deterministic, no model) or triton (LLMs on Triton)."""
    call_deadline_s: float = Field(default=30.0, gt=0, le=3600)
    """The client deadline of one model call, on either backend (not Triton's queue timeout)."""
    locale: Literal["uk", "us"] = "uk"
    """Where the plan is read: uk offers QRISK3 for a ten-year cardiovascular risk, us the
    ACC/AHA Pooled Cohort Equations (ASCVD risk)."""


class TritonConfig(_Group):
    """The Triton backend's settings as configured (``inference.triton.TritonSettings`` is what
    the backend takes; ``service.backends.triton_settings`` builds one from this)."""

    prefix = "triton_"
    url: str = ""
    """Triton gRPC address, host:port (backend triton)."""
    protocol: Literal["stream", "infer"] = "stream"
    """How model calls are made: Triton's decoupled streaming API (vLLM backend) or plain
    infer."""
    guided_key: Literal["structured_outputs", "guided_decoding"] = "structured_outputs"
    """The request parameter that carries the guided-JSON schema (vLLM's newer or older name)."""
    model_agent: str = Field(default="medgemma-4b-it", min_length=1)
    """Model of the panel's agents."""
    model_adjudicator: str = Field(default="medgemma-27b-text-it", min_length=1)
    """Model of adjudication and arbitration."""
    chat_template: ChatFamily = "gemma"
    """Chat template the prompts are laid out in."""
    concurrency: int = Field(default=8, ge=1, le=1024)
    """Model calls in flight at once (both backends: the planner's bound too)."""
    model_assess: str = ""
    """Model of the assess step ("": the agent model)."""
    model_panel: str = ""
    """Model of the panel step ("": the agent model)."""
    model_consult: str = ""
    """Model of the consult step ("": the agent model)."""
    model_score: str = ""
    """Model of the score step, each option's arguments scored on CANOE's five dimensions ("":
    the agent model)."""
    model_relate: str = ""
    """Model of the relate step ("": the agent model)."""
    model_adjudicate: str = ""
    """Model of the adjudicate step ("": the adjudicator model)."""
    model_arbitrate: str = ""
    """Model of the arbitrate step ("": the adjudicator model)."""
    model_synthesize: str = ""
    """Model of the synthesize step ("": the agent model)."""
    retries: int = Field(default=2, ge=0, le=10)
    """Retries of a failed model call."""
    breaker_threshold: int = Field(default=5, ge=1, le=1000)
    """Consecutive failures that open the circuit breaker."""
    breaker_cooldown_s: float = Field(default=30.0, ge=0, le=3600)
    """Seconds the breaker stays open before one trial call."""
    temperature: float = Field(default=0.0, ge=0, le=2)
    """Sampling temperature (0: greedy, reproducible)."""
    queue_timeout_us: int = Field(default=0, ge=0)
    """Triton's server-side queue timeout in microseconds; 0 means none (not the call
    deadline)."""

    def model_for(self, step: StepKind) -> str:
        """The model configured for one step kind ("" when the step keeps its default)."""
        model: str = getattr(self, f"model_{step}")
        return model


class PanelSettings(_Group):
    """Panel size by case complexity: "base" or "base,extended" (extended when the case needs
    one more role). Both backends use them; sizes must not shrink as complexity grows."""

    prefix = "panel_size_"
    low: tuple[int, int] = _DEFAULT_SIZES["low"]
    """Panel size of a low-complexity case: "base" or "base,extended"."""
    moderate: tuple[int, int] = _DEFAULT_SIZES["moderate"]
    """Panel size of a moderate-complexity case."""
    high: tuple[int, int] = _DEFAULT_SIZES["high"]
    """Panel size of a high-complexity case."""
    very_high: tuple[int, int] = _DEFAULT_SIZES["very high"]
    """Panel size of a very-high-complexity case."""

    @field_validator("low", "moderate", "high", "very_high", mode="before")
    @classmethod
    def _size(cls, value: object) -> tuple[int, int]:
        return parse_panel_size(value)

    @model_validator(mode="after")
    def _coherent(self) -> PanelSettings:
        _ = self.sizes  # validates them together
        return self

    @property
    def sizes(self) -> PanelSizes:
        """The four panel sizes, validated, in complexity order."""
        fields = {c: c.replace(" ", "_") for c in COMPLEXITIES}
        return panel_sizes(
            {c: getattr(self, f) for c, f in fields.items()},
            {c: f"panel_size_{f} (CANOE_PANEL_SIZE_{f.upper()})" for c, f in fields.items()},
        )


class ReasoningSettings(_Group):
    """CANOE's parameters. ``delta`` and ``beta`` (eq. 7, 8) have no value in either paper: the
    defaults 0.2 and 0.15 are this project's choices (see ``service.core.model.Parameters``)."""

    delta: float = Field(default=0.2, ge=0, le=1)
    """Clash window: a supporting and an attacking argument whose base strengths differ by less
    than this are adjudicated against each other (CANOE eq. 7)."""
    beta: float = Field(default=0.15, ge=0, le=1)
    """Calibration step: adjudicated clashes move a base strength by beta * (2w - 1), w its win
    rate (CANOE §4.3.1)."""
    threshold: float = Field(default=0.5, ge=0, le=1)
    """Final strength at or above which an option is included."""
    band: float = Field(default=0.05, ge=0, le=0.5)
    """Half-width of the borderline band around the threshold."""

    @property
    def parameters(self) -> Parameters:
        return Parameters(
            delta=self.delta, beta=self.beta, threshold=self.threshold, band=self.band
        )


class StoreSettings(_Group):
    prefix = "store_"
    dsn: str = Field(default="sqlite:///canoe.sqlite3", min_length=1)
    """Plan store: sqlite:///FILE or postgresql://user@host/db."""


class AuthSettings(_Group):
    prefix = "auth_"
    mode: Literal["none", "tokens", "jwt"] = "none"
    """gRPC authentication: none, bearer tokens from a file, or JWTs checked against a JWKS."""
    tokens_file: str = ""
    """Bearer tokens file (auth_mode tokens)."""
    jwks_file: str = ""
    """JWKS of the keys bearer JWTs are signed with (auth_mode jwt)."""
    issuer: str = ""
    """The iss a gRPC JWT must carry (auth_mode jwt)."""
    audience: str = ""
    """The aud a gRPC JWT must carry (auth_mode jwt)."""
    allow_any_audience: bool = False
    """jwt mode without an audience and an issuer accepts a token minted for any service by any
    issuer whose key is listed: `canoe serve` refuses it unless this says so (and logs it)."""
    jwt_max_lifetime_s: int = Field(default=3600, ge=60, le=86_400)
    """How long a gRPC JWT may live (exp - iat)."""

    @model_validator(mode="after")
    def _coherent(self) -> AuthSettings:
        if self.mode == "tokens" and not self.tokens_file:
            raise ValueError("auth_mode 'tokens' needs auth_tokens_file")
        if self.mode == "jwt" and not self.jwks_file:
            raise ValueError("auth_mode 'jwt' needs auth_jwks_file")
        return self


class TelemetrySettings(_Group):
    otlp_endpoint: str = ""
    """OpenTelemetry collector the traces go to ("": no export)."""
    log_level: Literal["debug", "info", "warning", "error", "critical"] = "info"
    """Lowest level of the JSON log lines written."""

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value


class LimitSettings(_Group):
    """Caps and deadlines on what one request may cost."""

    max_message_bytes: int = Field(default=8 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    """Largest gRPC message or HTTP body accepted, in bytes."""
    max_bundle_resources: int = Field(default=5000, ge=1, le=1_000_000)
    """Resources one Bundle may hold."""
    max_plan_memory_mb: int = Field(default=512, ge=16, le=65536)
    """Per-plan memory budget (MB). A Bundle whose estimated planning peak (from its count of
    JSON objects, before any model is built) is above it is refused with RESOURCE_EXHAUSTED / an
    OperationOutcome "too-costly". With up to max_concurrent_plans plans at once, a worker may
    need about that many times this."""
    max_concurrent_plans: int = Field(default=8, ge=1, le=1024)
    """Plans and contestations admitted at once per worker process; one more is refused at once
    (RESOURCE_EXHAUSTED / HTTP 429, with a retry hint), not queued. Admitted ones queue for the
    process's one CPU thread, so each takes about this many plan-times: lower it (1 to 3) to
    bound latency under overload, raise it for bursts."""
    request_deadline_s: float = Field(default=120.0, gt=0, le=3600)
    """Seconds one plan or contest may take (a caller's shorter deadline wins); past it the
    work stops and the caller gets DEADLINE_EXCEEDED / HTTP 504."""
    max_tasks_per_request: int = Field(default=200, ge=1, le=100_000)
    """Contestation Tasks in one Contest (more: RESOURCE_EXHAUSTED / HTTP 413)."""
    max_feedback_items: int = Field(default=100, ge=1, le=100_000)
    """Items in one CDS Hooks feedback request (an EHR reports on the cards it showed: a few)."""


class CdsSettings(_Group):
    """CDS Hooks. Per-CDS-client FHIR server allowlists live in the trusted-clients file
    (``jwks_file``: fhir_servers, fhir_http_hosts, fhir_private_networks), next to its keys."""

    prefix = "cds_"
    base_url: str = ""
    """The public URL CDS clients call (JWT aud is checked against it); "" means this machine on
    http_port."""
    jwks_file: str = ""
    """Trusted CDS clients: their keys and FHIR server allowlists (see `canoe cds keys`)."""
    review_url: str = ""
    """Public URL of the review app that cards link to ("": base_url + /review)."""
    prefetch_deadline_s: float = Field(default=10.0, gt=0, le=600)
    """Seconds all the FHIR reads of one hook call may take together (the reads the service
    makes itself where the EHR's prefetch is missing)."""
    prefetch_max_pages: int = Field(default=20, ge=1, le=1000)
    """Pages of a FHIR search followed at most."""


class FhirSettings(_Group):
    """Publishing and reading FHIR."""

    prefix = "fhir_"
    base: str = DEFAULT_BASE
    """Canonical base of every project FHIR URL (extensions, CodeSystems, ValueSets, our
    resources' fullUrls); `canoe definitions` writes the matching FHIR package. The default is a
    documentation domain (RFC 2606): a hospital sets its own."""
    clock_skew_s: int = Field(default=86_400, ge=0, le=7 * 86_400)
    """How far after the time of the request a record's date may lie and still count as a fact
    (an EHR clock ahead of ours, a time zone ahead of UTC); a later date is listed as unusable."""

    @property
    def clock_skew(self) -> timedelta:
        return timedelta(seconds=self.clock_skew_s)

    @field_validator("base")
    @classmethod
    def _base(cls, value: str) -> str:
        return check_base(value)


class KnowledgeSettings(_Group):
    """A site's knowledge folder over the shipped criteria (``inference.knowledge.site``).
    Validated when the planner is built: a bad file stops start-up naming the file, the path in
    it and the problem."""

    prefix = "knowledge_"
    dir: str = ""
    """A site's knowledge folder: site.yaml retiring criteria and setting their params, *.json
    adding criteria ("": the shipped knowledge as it is)."""
    drafts: bool = False
    """Criteria of status draft fire too: for testing them, never in production."""


class ReviewSettings(_Group):
    """Review app (``/review``, service/review)."""

    prefix = "review_"
    smart_client_id: str = Field(default="canoe-review", min_length=1)
    """SMART on FHIR client id of the review app."""
    smart_issuers: str = ""
    """EHRs allowed to launch the review app, as "tenant=https://ehr.example/fhir,..." (an
    unknown iss is refused)."""
    signing_key: str = ""
    """HMAC key for review links and sessions, at least 32 bytes ("": a random key made by
    `canoe serve` at start and handed to its workers; links from `canoe review-link` then do not
    work, and sessions end when the service stops)."""
    link_ttl_s: int = Field(default=900, ge=30, le=86_400)
    """How long a review link stays valid."""
    session_ttl_s: int = Field(default=3600, ge=60, le=86_400)
    """How long a review session lasts."""

    @field_validator("smart_issuers")
    @classmethod
    def _issuers(cls, value: str) -> str:
        parse_issuers(value)  # ValueError naming the bad entry
        return value

    @field_validator("signing_key")
    @classmethod
    def _key(cls, value: str) -> str:
        if value and len(value.encode("utf-8")) < 32:
            raise ValueError("must be at least 32 bytes (HS256)")
        return value


class Settings(BaseModel):
    """Every setting, by group. Flat names (``triton_url``) are accepted too, as keyword
    arguments or keys, and land in their group."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server: ServerSettings = ServerSettings()
    tls: TlsSettings = TlsSettings()
    inference: InferenceSettings = InferenceSettings()
    triton: TritonConfig = TritonConfig()
    panel: PanelSettings = PanelSettings()
    reasoning: ReasoningSettings = ReasoningSettings()
    store: StoreSettings = StoreSettings()
    auth: AuthSettings = AuthSettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    limits: LimitSettings = LimitSettings()
    cds: CdsSettings = CdsSettings()
    fhir: FhirSettings = FhirSettings()
    review: ReviewSettings = ReviewSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()

    @model_validator(mode="before")
    @classmethod
    def _nest_flat_names(cls, data: object) -> object:
        return _nest(data) if isinstance(data, Mapping) else data

    @model_validator(mode="after")
    def _coherent(self) -> Settings:
        if self.inference.backend == "triton" and not self.triton.url:
            raise ValueError("backend 'triton' needs triton_url (CANOE_TRITON_URL)")
        return self

    @property
    def cds_url(self) -> str:
        """``cds_base_url``, or this machine on the configured HTTP port (https under TLS)."""
        if self.cds.base_url:
            return self.cds.base_url.rstrip("/")
        scheme = "https" if self.tls.cert_file else "http"
        return f"{scheme}://localhost:{self.server.http_port}"


_GROUPS: dict[str, type[_Group]] = {
    name: field.annotation
    for name, field in Settings.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, _Group)
}


def _flat_names() -> dict[str, tuple[str, str]]:
    names: dict[str, tuple[str, str]] = {}
    for group, model in _GROUPS.items():
        for field in model.model_fields:
            flat = model.prefix + field
            if flat in names or flat in _GROUPS:
                raise RuntimeError(f"setting name {flat!r} is ambiguous")  # a programming error
            names[flat] = (group, field)
    return names


# Every setting's flat name (CANOE_<NAME> in upper case) -> (group, field).
SETTING_NAMES: Mapping[str, tuple[str, str]] = _flat_names()


def setting_default(name: str) -> object:
    """The default of the setting with this flat name."""
    group, field = SETTING_NAMES[name]
    return _GROUPS[group].model_fields[field].default


def _nest(values: Mapping[str, Any]) -> dict[str, Any]:
    """Flat names moved into their groups; groups given as mappings (or models) merged with
    them; anything else left as it is, for ``extra="forbid"`` to refuse by name."""
    out: dict[str, Any] = {}

    def section(group: str) -> dict[str, Any]:
        current = out.get(group)
        if not isinstance(current, dict):
            current = out[group] = {}
        return current

    for key, value in values.items():
        if key in SETTING_NAMES:
            group, field = SETTING_NAMES[key]
            section(group)[field] = value
        elif key in _GROUPS and isinstance(value, _Group):
            section(key).update(value.model_dump(exclude_unset=True))
        elif key in _GROUPS and isinstance(value, Mapping):
            section(key).update(value)
        else:
            out[key] = value
    return out


def _layered(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Later layers win, field by field within a group."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in _nest(layer).items():
            if isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = {**out[key], **value}
            else:
                out[key] = value
    return out


def load_settings(environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Defaults < config file < environment < explicit overrides (flat names or groups).
    Bad settings -> InputError, one line per field."""
    env = os.environ if environ is None else environ
    from_file: dict[str, Any] = {}
    path = env.get("CANOE_CONFIG_FILE", "")
    if path:
        loaded = _read_config_file(path)
        if not isinstance(loaded, dict):
            raise InputError(f"config file {path} must hold a mapping of settings")
        from_file = {str(k): v for k, v in loaded.items()}
    prefix = "CANOE_"
    from_env = {
        key[len(prefix) :].lower(): value
        for key, value in env.items()
        if key.startswith(prefix) and key[len(prefix) :] not in NON_SETTING_VARIABLES
    }
    try:
        return Settings.model_validate(_layered(from_file, from_env, overrides))
    except ValidationError as exc:
        raise InputError("invalid settings:\n" + _describe(exc)) from None


def read_data_file(path: str, what: str) -> object:
    """A configuration file's content: JSON through the one JSON loader, YAML (a superset)
    otherwise; every failure an InputError naming ``what`` and the path."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from exc
    if path.endswith(".json"):
        return load_json_object(raw, what=f"{what} {path}")
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise InputError(f"cannot read {what} {path}: {exc}") from exc
    except RecursionError:
        raise InputError(f"{what} {path} nests too deeply") from None


def _read_config_file(path: str) -> object:
    """The config file's mapping (an empty YAML file is no settings)."""
    return read_data_file(path, "config file") or {}


def _describe(exc: ValidationError) -> str:
    """One line per problem, ``name (CANOE_NAME): problem``, by flat name. Neither pydantic's
    documentation URL nor the input values: a setting can hold a secret (a DSN's password)."""
    lines = []
    for err in exc.errors(include_url=False, include_input=False, include_context=False):
        loc = [str(p) for p in err["loc"]]
        msg = err["msg"].removeprefix("Value error, ")
        whole_group = len(loc) == 1 and loc[0] in _GROUPS
        if err["type"] == "extra_forbidden" or (whole_group and err["type"] == "model_type"):
            msg = "unknown setting; the names are in service/settings.py (group prefix + field)"
        elif whole_group:
            loc = []  # a check across a group's fields names its fields in the message
        if len(loc) >= 2 and loc[0] in _GROUPS:
            loc = [_GROUPS[loc[0]].prefix + loc[1], *loc[2:]]
        name = ".".join(loc)
        # A check across fields (no name) names its fields in the message itself.
        lines.append(f"{name} (CANOE_{name.upper()}): {msg}" if name else msg)
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


def settings_markdown() -> str:
    """Every setting and every other CANOE_* variable as a Markdown page (docs/settings.md is
    this text; a test keeps the two equal)."""
    lines = [
        "# Settings",
        "",
        "<!-- Made by `canoe settings --markdown` from service/settings.py; do not edit. -->",
        "",
        "Each setting is read from the environment as `CANOE_<NAME>` or from the YAML/JSON file",
        "named by `CANOE_CONFIG_FILE` (flat names in lower case, or a group as a mapping). The",
        "environment wins over the file, the file over the defaults. A value of the wrong type",
        "or out of range stops start-up with one line per setting; any other `CANOE_*`",
        "variable is refused as an unknown setting, except those listed at the end.",
    ]
    for group, model in _GROUPS.items():
        lines += ["", f"## {group}", ""]
        if model.__doc__ and model.__doc__ != _Group.__doc__:
            lines += [" ".join(model.__doc__.split()).replace("``", "`"), ""]
        lines += ["| variable | type | default | what |", "| --- | --- | --- | --- |"]
        for field, info in model.model_fields.items():
            name = f"CANOE_{(model.prefix + field).upper()}"
            what = " ".join((info.description or "").split()).replace("|", "\\|")
            default = _shown_default(info.default)
            lines.append(f"| `{name}` | {_kind(info)} | {default} | {what} |")
    lines += ["", "## Not settings", ""]
    lines += ["| variable | what |", "| --- | --- |"]
    for name, what in NON_SETTING_VARIABLES.items():
        lines.append(f"| `CANOE_{name}` | {what} |")
    return "\n".join(lines) + "\n"


def _shown_default(value: object) -> str:
    if isinstance(value, tuple):
        return "`" + ",".join(str(v) for v in value) + "`"
    if value == "":
        return '""'
    return f"`{str(value).lower() if isinstance(value, bool) else value}`"


def _kind(info: Any) -> str:
    """The type in words, with its range or choices."""
    annotation = info.annotation
    choices = getattr(annotation, "__args__", ())
    if getattr(annotation, "__origin__", None) is Literal:
        return " \\| ".join(f"`{c}`" for c in choices)
    kind = {int: "integer", float: "number", bool: "true \\| false", str: "text"}.get(
        annotation, "base[,extended]"
    )
    bounds = []
    for meta in info.metadata:
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            bound = getattr(meta, attr, None)
            if bound is not None:
                bounds.append(f"{sign} {bound}")
        if getattr(meta, "min_length", None):
            bounds.append("not empty")
    return kind + (f" ({', '.join(bounds)})" if bounds else "")
