"""Builds the expert backend and the planner the settings ask for. The one place that chooses."""

from __future__ import annotations

from inference.evidence import EvidenceBase
from inference.protocol import Experts
from service.pipeline import Planner
from service.settings import Settings

__all__ = ["build_experts", "build_planner"]


def build_experts(settings: Settings, evidence: EvidenceBase | None = None) -> Experts:
    if settings.backend == "triton":
        from inference.triton import TritonExperts, TritonSettings

        return TritonExperts(
            TritonSettings.from_env(_triton_env(settings)),
        )
    from inference.embedded import EmbeddedExperts

    return EmbeddedExperts((evidence or EvidenceBase.load()).version)


def build_planner(settings: Settings, experts: Experts | None = None) -> Planner:
    evidence = EvidenceBase.load()
    return Planner(
        experts or build_experts(settings, evidence),
        evidence,
        parameters=settings.parameters,
        concurrency=settings.triton_concurrency,
        call_deadline_s=settings.call_deadline_s,
    )


def _triton_env(settings: Settings) -> dict[str, str]:
    return {
        "CANOE_TRITON_URL": settings.triton_url,
        "CANOE_TRITON_PROTOCOL": settings.triton_protocol,
        "CANOE_TRITON_GUIDED_KEY": settings.triton_guided_key,
        "CANOE_TRITON_MODEL_AGENT": settings.triton_model_agent,
        "CANOE_TRITON_MODEL_ADJUDICATOR": settings.triton_model_adjudicator,
        "CANOE_TRITON_CONCURRENCY": str(settings.triton_concurrency),
        "CANOE_CALL_DEADLINE_S": str(settings.call_deadline_s),
        "CANOE_TRITON_CHAT_TEMPLATE": settings.triton_chat_template,
    }
