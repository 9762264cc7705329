"""Builds the expert backend and the planner the settings ask for. The one place that chooses."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from inference.evidence import EvidenceBase
from inference.protocol import STEP_KINDS, Experts
from service.errors import InputError
from service.pipeline import Planner
from service.settings import Settings

if TYPE_CHECKING:
    from inference.triton import TritonSettings

__all__ = [
    "build_experts",
    "build_planner",
    "install_knowledge",
    "loop_agnostic",
    "triton_settings",
]


def build_experts(settings: Settings, evidence: EvidenceBase | None = None) -> Experts:
    if settings.inference.backend == "triton":
        from inference.triton import TritonExperts

        return TritonExperts(triton_settings(settings))
    from inference.embedded import EmbeddedExperts

    return EmbeddedExperts(
        (evidence or EvidenceBase.load()).version,
        panel_sizes=settings.panel.sizes,
        locale=settings.inference.locale,
    )


def install_knowledge(settings: Settings) -> None:
    """Make the shipped knowledge, with the site folder of ``knowledge_dir`` when set, the one
    plans use. A bad site file is refused like a bad setting (InputError, exit status 2),
    naming the folder, the file, the path in it and the problem."""
    from inference.knowledge.criteria import KnowledgeError
    from inference.knowledge.site import install, load_site, shipped, with_drafts

    folder = settings.knowledge.dir
    try:
        knowledge = load_site(Path(folder)) if folder else shipped()
        install(with_drafts(knowledge) if settings.knowledge.drafts else knowledge)
    except KnowledgeError as exc:
        raise InputError(f"knowledge_dir (CANOE_KNOWLEDGE_DIR) {folder}: {exc}") from None


def build_planner(settings: Settings, experts: Experts | None = None) -> Planner:
    from inference.knowledge.locale import clinician_wording

    install_knowledge(settings)
    evidence = EvidenceBase.load()
    return Planner(
        experts or build_experts(settings, evidence),
        evidence,
        parameters=settings.reasoning.parameters,
        concurrency=settings.triton.concurrency,
        call_deadline_s=settings.inference.call_deadline_s,
        wording=clinician_wording(settings.inference.locale),
    )


def triton_settings(settings: Settings) -> TritonSettings:
    """The Triton backend's options, built from the one ``Settings`` (no environment round trip):
    every Triton-related setting, so none configured is silently dropped on the way."""
    from inference.triton import TritonSettings

    return TritonSettings(
        url=settings.triton.url,
        protocol=settings.triton.protocol,
        guided_key=settings.triton.guided_key,
        agent_model=settings.triton.model_agent,
        adjudicator_model=settings.triton.model_adjudicator,
        # "" keeps the step's default model
        models=tuple(
            (step, model) for step in STEP_KINDS if (model := settings.triton.model_for(step))
        ),
        concurrency=settings.triton.concurrency,
        deadline_s=settings.inference.call_deadline_s,
        chat_template=settings.triton.chat_template,
        retries=settings.triton.retries,
        breaker_threshold=settings.triton.breaker_threshold,
        breaker_cooldown_s=settings.triton.breaker_cooldown_s,
        temperature=settings.triton.temperature,
        # 0 means no server-side queue timeout
        queue_timeout_us=settings.triton.queue_timeout_us or None,
        panel_sizes=settings.panel.sizes,
    )


def loop_agnostic(experts: Experts) -> bool:
    """True when ``experts`` hold nothing bound to an event loop, so a plan may run on a worker
    thread's own loop: the embedded backend (pure computation over its knowledge base)."""
    from inference.embedded import EmbeddedExperts

    return isinstance(experts, EmbeddedExperts)
