"""Each role's memory plan, exactly as the seed's "Agent Memory Management" table.

Librarian: checkpoints at 25/50/75%, compacts at 75%. Guide: checkpoints at 50/75/90%,
compacts at 95%. Academic, Architect, Inspector, Tester: their summary at 85%, compact at
95%. The Engineer hands its pipeline over at 95% (``handoff``); until a handoff is wired
in, or when one fails, it compacts there. The Archivalist and the Orchestrator are not in
the seed's table: they compact at 95% so no context ever overflows, writing nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.knowledge.chronicle.models import Category


@dataclass(frozen=True)
class MemoryPlan:
    """When a role checkpoints and compacts, and where its checkpoints go."""

    role: str
    checkpoints: tuple[float, ...]
    compact_at: float
    category: Category | None
    kind: str  # what the seed calls the role's checkpoint ("research paper", ...)
    handoff: bool = False

    def crossed(self, fraction: float, done: frozenset[float]) -> tuple[float, ...]:
        """The checkpoint levels reached at ``fraction`` and not yet written."""
        return tuple(level for level in self.checkpoints if fraction >= level and level not in done)

    def compacts(self, fraction: float) -> bool:
        return fraction >= self.compact_at


PLANS: dict[str, MemoryPlan] = {
    plan.role: plan
    for plan in (
        MemoryPlan(
            "librarian", (0.25, 0.50, 0.75), 0.75, Category.LIBRARIAN_CHECKPOINT, "codebase summary"
        ),
        MemoryPlan("guide", (0.50, 0.75, 0.90), 0.95, Category.GUIDE_CHECKPOINT, "routing summary"),
        MemoryPlan("academic", (0.85,), 0.95, Category.ACADEMIC_RESEARCH_PAPER, "research paper"),
        MemoryPlan("architect", (0.85,), 0.95, Category.ARCHITECT_WORKFLOW, "workflow and plan"),
        MemoryPlan("inspector", (0.85,), 0.95, Category.INSPECTOR_FINDINGS, "findings summary"),
        MemoryPlan("tester", (0.85,), 0.95, Category.TESTER_SUMMARY, "test summary"),
        MemoryPlan("engineer", (), 0.95, None, "pipeline handoff", handoff=True),
        MemoryPlan("archivalist", (), 0.95, None, "compaction"),
        MemoryPlan("orchestrator", (), 0.95, None, "compaction"),
    )
}


def plan_for(role: str) -> MemoryPlan:
    """``role``'s plan; an unknown role (an external agent) compacts at 95%, writing nothing."""
    return PLANS.get(role) or MemoryPlan(role, (), 0.95, None, "compaction")
