"""The few facts a front end's status line shows, read cheaply and without formatting.

``/status`` renders everything as text; a status bar wants the same facts as values,
small enough to read after every event: which model the Guide and the engineer use
in a session, its tokens and cost and everyone's, how many requests each routing tier
decided, and whether the file watcher and the MCP servers are well.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import SylkError
from backend.llm.accounting import UsageSummary, summarise
from backend.mcp.client.models import ServerState
from backend.worktrees.session_view import isolation_line

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

STATUS_ROLES = ("guide", "engineer")
"""The roles a status line names: the Guide routes every request, the engineer edits."""
ROUTE_TIERS = ("dsl", "cache", "pattern", "model")


@dataclass(frozen=True)
class RoleModel:
    role: str
    model: str
    """``provider/model``, ``offline`` when none is configured, or ``unusable``."""


@dataclass(frozen=True)
class StatusFacts:
    session_id: str
    models: tuple[RoleModel, ...]
    session_usage: UsageSummary
    all_usage: UsageSummary
    routes: tuple[tuple[str, int], ...]
    """Requests each routing tier decided, in tier order (tiers that decided none left out)."""
    watcher: str
    """``ok``, ``down``, ``off`` (it could not start) or ``idle`` (no index built yet)."""
    mcp_up: int
    mcp_total: int
    mcp_down: tuple[str, ...]
    by_session: Mapping[str, UsageSummary]
    """Every session's usage (those with none left out), from the same read as ``all_usage``."""
    isolation: str = ""
    """``worktree: BRANCH (from BASE)`` or ``isolation: none (why)`` (``backend.worktrees``)."""

    @property
    def offline(self) -> bool:
        return all(m.model == "offline" for m in self.models)


def _role_models(parts: EngineParts, session_id: str) -> tuple[RoleModel, ...]:
    session = parts.sessions.get(session_id)
    models = []
    for role in STATUS_ROLES:
        try:
            choice = parts.turns.choice(role, session)
        except SylkError:
            models.append(RoleModel(role, "unusable"))
            continue
        shown = "offline" if choice.offline else f"{choice.provider}/{choice.model}"
        models.append(RoleModel(role, shown))
    return tuple(models)


def _watcher(parts: EngineParts, workspace: Path) -> str:
    code = parts.knowledge.code.peek(workspace)
    if code is None or not code.ready:  # not indexed yet: its watcher is still starting
        return "idle"
    if code.watcher is None:
        return "off"
    return "ok" if code.watcher.healthy else "down"


def status_facts(parts: EngineParts, session_id: str) -> StatusFacts:
    """The facts for ``session_id`` (a typed error for an unknown one); one archive read."""
    session = parts.sessions.get(session_id)
    rows = parts.archive.usage_by_agent(None)
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["session_id"], []).append(row)
    flows = parts.guide.router.flow_log.snapshot()
    routes = []
    for tier in ROUTE_TIERS:
        stats = flows.routes.get(tier)
        if stats is not None and stats.count:
            routes.append((tier, stats.count))
    servers = parts.mcp.status()
    counted = [s for s in servers if s.state is not ServerState.DISABLED]
    return StatusFacts(
        session_id=session.id,
        models=_role_models(parts, session.id),
        session_usage=summarise(session.id, grouped.get(session.id, [])),
        all_usage=summarise(None, rows),
        routes=tuple(routes),
        watcher=_watcher(parts, Path(session.workspace)),
        mcp_up=sum(1 for s in counted if s.state is ServerState.UP),
        mcp_total=len(counted),
        mcp_down=tuple(s.name for s in counted if s.state is ServerState.DOWN),
        by_session={sid: summarise(sid, own) for sid, own in grouped.items()},
        isolation=isolation_line(session),
    )
