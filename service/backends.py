"""Builds the expert backend and the planner the settings ask for. The one place that chooses."""

from __future__ import annotations

from typing import get_args

from inference.evidence import EvidenceBase
from inference.protocol import Experts, StepKind
from service.pipeline import Planner
from service.settings import Settings

__all__ = ["build_experts", "build_planner", "loop_agnostic"]


def build_experts(settings: Settings, evidence: EvidenceBase | None = None) -> Experts:
    if settings.backend == "triton":
        from inference.triton import TritonExperts, TritonSettings

        return TritonExperts(
            TritonSettings.from_env(_triton_env(settings)),
        )
    from inference.embedded import EmbeddedExperts

    return EmbeddedExperts(
        (evidence or EvidenceBase.load()).version, panel_sizes=settings.panel_sizes
    )


def build_planner(settings: Settings, experts: Experts | None = None) -> Planner:
    evidence = EvidenceBase.load()
    return Planner(
        experts or build_experts(settings, evidence),
        evidence,
        parameters=settings.parameters,
        concurrency=settings.triton_concurrency,
        call_deadline_s=settings.call_deadline_s,
    )


def loop_agnostic(experts: Experts) -> bool:
    """True when ``experts`` hold nothing bound to an event loop, so a plan may run on a worker
    thread's own loop: the embedded backend (pure computation over its knowledge base)."""
    from inference.embedded import EmbeddedExperts

    return isinstance(experts, EmbeddedExperts)


def _triton_env(settings: Settings) -> dict[str, str]:
    """The settings as the ``CANOE_*`` variables ``TritonSettings.from_env`` reads: every
    Triton-related setting, so none configured here is silently dropped on the way."""
    env = {
        "CANOE_TRITON_URL": settings.triton_url,
        "CANOE_TRITON_PROTOCOL": settings.triton_protocol,
        "CANOE_TRITON_GUIDED_KEY": settings.triton_guided_key,
        "CANOE_TRITON_MODEL_AGENT": settings.triton_model_agent,
        "CANOE_TRITON_MODEL_ADJUDICATOR": settings.triton_model_adjudicator,
        "CANOE_TRITON_CONCURRENCY": str(settings.triton_concurrency),
        "CANOE_CALL_DEADLINE_S": str(settings.call_deadline_s),
        "CANOE_TRITON_CHAT_TEMPLATE": settings.triton_chat_template,
        "CANOE_TRITON_RETRIES": str(settings.triton_retries),
        "CANOE_TRITON_BREAKER_THRESHOLD": str(settings.triton_breaker_threshold),
        "CANOE_TRITON_BREAKER_COOLDOWN_S": str(settings.triton_breaker_cooldown_s),
        "CANOE_TRITON_TEMPERATURE": str(settings.triton_temperature),
        # 0 means no server-side queue timeout: an empty value leaves TritonSettings' None.
        "CANOE_TRITON_QUEUE_TIMEOUT_US": (
            str(settings.triton_queue_timeout_us) if settings.triton_queue_timeout_us else ""
        ),
    }
    for step in get_args(StepKind):  # "" keeps the step's default model
        env[f"CANOE_TRITON_MODEL_{step.upper()}"] = getattr(settings, f"triton_model_{step}")
    for complexity, base, extended in settings.panel_sizes:
        key = complexity.upper().replace(" ", "_")
        env[f"CANOE_PANEL_SIZE_{key}"] = f"{base},{extended}"
    return env
