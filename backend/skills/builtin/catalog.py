"""Every builtin skill of the nine agents, and the defaults an engine needs to use them.

Real handlers: workspace reads, code search, structure, Python dependencies
and definitions (Librarian, Engineer), file write/edit and shell (Engineer),
test runs (Tester), ``guide.help.show``, and the Engineer's consult ops (they
answer with cross-domain guidance). Guide routing/status and ``session.*`` run
the callables the engine passes in :class:`GuideWiring`. Everything else is
declared in full and fails honestly as not available (see
:mod:`backend.skills.builtin.declare`). The agents are :data:`backend.roles.AGENT_ROLES`.

Suggested rights (:func:`agent_context`): the Engineer and Tester hold the
``shell`` scope; the Archivalist holds ``history.cross_session``; agents whose
role is to change things may write.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.knowledge.fragments.library import FragmentLibrary
from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.skills.builtin.academic import academic_skills
from backend.skills.builtin.architect import PlanWiring
from backend.skills.builtin.archivalist import archivalist_skills
from backend.skills.builtin.discovery import discovery_skills
from backend.skills.builtin.engineer import Consult, engineer_skills
from backend.skills.builtin.guide import GuideWiring, guide_skills
from backend.skills.builtin.librarian import librarian_skills
from backend.skills.builtin.library_resources import attach_library
from backend.skills.builtin.teams import (
    architect_skills,
    inspector_skills,
    orchestrator_skills,
    tester_skills,
)
from backend.skills.gateway.contextual import ContextTracker
from backend.skills.gateway.gateway import Gateway
from backend.skills.hooks.registry import HookRegistry
from backend.skills.models import Skill, SkillContext
from backend.skills.registry import Registry
from backend.skills.search.embedding import EmbeddingStage

if TYPE_CHECKING:
    from backend.knowledge.code.hub import CodeKnowledgeHub

DOMAINS = {
    "guide": "Routing messages to agents, intent classification, help and system status",
    "session": "Sessions: list, switch, and your session's private context",
    "architect": "Planning: implementation plans (task DAGs), approvals, clarifications",
    "orchestrator": "Executing plans: running task DAGs and dispatching tasks",
    "engineer": "Doing the work: read, write and edit files, run shell commands",
    "librarian": "The local codebase: search code, read and list files, structure, imports",
    "archivalist": "History: decisions, patterns and failures recorded across sessions",
    "academic": "External knowledge: research, comparisons, best practices, sources",
    "inspector": "Validation: requirement checks, style, deep analysis, issue reports",
    "tester": "Testing: run tests, plan tests, analyse failures, coverage",
}

_SCOPES: dict[str, frozenset[str]] = {
    "engineer": frozenset({"shell"}),
    "tester": frozenset({"shell"}),
    "archivalist": frozenset({"history.cross_session"}),
}
_WRITERS = frozenset({"engineer", "tester", "architect", "orchestrator", "archivalist", "guide"})


@dataclass(frozen=True)
class KnowledgeWiring:
    """The knowledge services an engine runs; ops whose service is missing answer
    not-available."""

    code: CodeKnowledgeHub | None = None  # the Librarian's code indexes
    chronicle: Any | None = None  # the Archivalist's chronicle
    library: FragmentLibrary | None = None  # the Academic's fragment library
    tools: ToolDiscovery | None = None  # dynamic tool discovery (linters, tests, ...)
    consult: Consult | None = None  # an agent's answer from its stores, for the Engineer


def builtin_skills(
    registry: Registry,
    wiring: GuideWiring | None = None,
    knowledge: KnowledgeWiring | None = None,
    plans: PlanWiring | None = None,
) -> list[Skill]:
    knowledge = knowledge or KnowledgeWiring()
    return [
        *guide_skills(registry, wiring),
        *architect_skills(plans),
        *orchestrator_skills(),
        *engineer_skills(knowledge.consult),
        *librarian_skills(knowledge.code),
        *archivalist_skills(knowledge.chronicle),
        *academic_skills(knowledge.library),
        *discovery_skills(knowledge.tools),
        *inspector_skills(),
        *tester_skills(),
    ]


def register_builtins(
    registry: Registry | None = None,
    *,
    wiring: GuideWiring | None = None,
    knowledge: KnowledgeWiring | None = None,
    plans: PlanWiring | None = None,
) -> Registry:
    registry = registry if registry is not None else Registry()
    for name, description in DOMAINS.items():
        registry.define_domain(name, description=description)
    registry.register_all(builtin_skills(registry, wiring, knowledge, plans))
    return registry


def default_scopes(agent: str) -> frozenset[str]:
    return _SCOPES.get(agent, frozenset())


def default_can_write(agent: str) -> bool:
    return agent in _WRITERS


def agent_context(agent: str, session_id: str, workspace: Path, **overrides: Any) -> SkillContext:
    """A context with the suggested rights for ``agent`` (override any field)."""
    fields: dict[str, Any] = {
        "session_id": session_id,
        "agent": agent,
        "workspace": workspace,
        "scopes": default_scopes(agent),
        "can_write": default_can_write(agent),
    }
    fields.update(overrides)
    return SkillContext(**fields)


def build_gateway(
    *,
    wiring: GuideWiring | None = None,
    knowledge: KnowledgeWiring | None = None,
    hooks: HookRegistry | None = None,
    window: int = 3,
    embedding: EmbeddingStage | None = None,
    plans: PlanWiring | None = None,
) -> Gateway:
    """A gateway over a fresh registry holding every builtin, with a context tracker
    (and semantic search when ``embedding`` is given); the library's fragments, if one
    is given, become searchable resources."""
    registry = register_builtins(wiring=wiring, knowledge=knowledge, plans=plans)
    gateway = Gateway(
        registry,
        hooks,
        context_tracker=ContextTracker(registry, window=window),
        embedding=embedding,
    )
    if knowledge is not None and knowledge.library is not None:
        attach_library(gateway, knowledge.library)
    return gateway
