"""The text of /status: sessions, model, skill search, MCP servers, routing per tier, knowledge
caches per intent, agents' health, dead letters; the session list (/session list);
and the notice an agent's change of health becomes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from backend.bus.health import AgentHealth, HealthStatus
from backend.events import EngineNotice
from backend.guide.guide import Guide
from backend.llm.accounting import UsageSummary
from backend.llm.selection import ModelChoice
from backend.sessions.models import Session
from backend.sessions.phases import SessionPhase, describe_next
from backend.worktrees.session_view import isolation_line


def _ms(us: float | None) -> str:
    return "-" if us is None else f"{us / 1000:.2f}ms" if us >= 1000 else f"{us:.0f}µs"


CacheStats = Mapping[str, Mapping[str, float | int]]  # intent -> hits, misses, ...


def cache_lines(caches: Mapping[str, CacheStats]) -> list[str]:
    """One short line per intent that saw use: hit rate, hits of asked, invalidated, kept."""
    lines: list[str] = []
    for owner, stats in caches.items():
        for intent, s in stats.items():
            asked = int(s["hits"]) + int(s["misses"])
            if asked or s["invalidations"]:
                lines.append(
                    f"  {owner[:11]:<11} {intent:<10} {s['hit_rate']:>4.0%} "
                    f"{s['hits']}/{asked} · {s['invalidations']} dropped · {s['entries']} kept"
                )
    return lines


def render_status(
    guide: Guide,
    session_id: str,
    sessions_text: str,
    usage: UsageSummary,
    model_line: str,
    *,
    search_line: str | None = None,
    caches: Sequence[str] = (),
    approvals: Sequence[str] = (),
    phase: SessionPhase | None = None,
    mcp_servers: Sequence[str] = (),
) -> str:
    lines = ["Sessions:", sessions_text, ""]
    if phase is not None:
        lines.append(phase_line(phase))
    lines += [
        f"Model: {model_line}",
        f"Usage: {usage.status_line()}",
    ]
    lines += [f"  {agent.status_line()}" for agent in usage.agents]  # cached tokens per agent
    if search_line:
        lines.append(f"Skill search: {search_line}")
    if approvals:
        lines += ["", "Approvals:", *approvals]
    if mcp_servers:  # configured external servers: up, starting, or down and why
        lines += ["", "MCP servers:", *mcp_servers]
    flows = guide.router.flow_log.snapshot()
    cache = guide.router.cache.stats()
    lines += ["", "Routing (count, p50, p99):"]
    for tier in ("dsl", "cache", "pattern", "model"):
        stats = flows.routes.get(tier)
        if stats is not None and stats.count:
            lines.append(
                f"  {tier:<8} {stats.count:>6}  {_ms(stats.p50_us):>9}  {_ms(stats.p99_us):>9}"
            )
    lines.append(
        f"  cache hit rate {cache.hit_rate:.0%} ({cache.hits} of {cache.hits + cache.misses})"
    )
    if caches:
        lines += ["", "Knowledge caches (hit rate, hits/asked):", *caches]
    health = guide.health.report(session_id)
    lines += ["", "Agents in this session:"]
    if not health:
        lines.append("  none started yet")
    for agent in health:
        stalled = f", stalled {agent.stalled_for:.0f}s" if agent.stalled_for else ""
        error = f", {type(agent.error).__name__}: {agent.error}" if agent.error else ""
        lines.append(
            f"  {agent.agent:<12} {agent.status.value:<8} queue {agent.queue_depth}"
            f", circuit {agent.circuit}{stalled}{error}"
        )
    letters = guide.dead_letters.entries(session_id)
    lines += ["", f"Dead letters in this session: {len(letters)}"]
    return "\n".join(lines)


def phase_line(phase: SessionPhase) -> str:
    """The session's phase in /status, and where it may go next."""
    return f"Phase: {phase.value} (next: {describe_next(phase)})"


def describe_sessions(sessions: Sequence[Session], active_id: str | None) -> str:
    """One numbered line per session (state, then phase), the active one marked with ``*``."""
    if not sessions:
        return "no sessions"
    lines = []
    for n, s in enumerate(sessions, 1):
        mark = "*" if s.id == active_id else " "
        failure = s.metadata.get("failure") if s.state.value == "failed" else None
        why = f"  (failed: {failure})" if failure else ""  # backend.engine.lifecycle
        lines.append(
            f"{mark}{n:>2}  {s.short_id}  {s.state.value:<9}  {s.phase.value:<10}  {s.name}{why}"
        )
    active = [s for s in sessions if s.id == active_id]
    if active:  # its branch, or why it works in the workspace itself
        lines.append(isolation_line(active[0]))
    return "\n".join(lines)


def model_line(choice: ModelChoice) -> str:
    if choice.offline:
        return "offline (no model configured)"
    return f"{choice.provider}/{choice.model} ({choice.reason})"


def health_notice(health: AgentHealth, previous: HealthStatus) -> EngineNotice:
    """What the user is told when an agent stalls, fails or recovers."""
    if health.status is HealthStatus.HEALTHY:
        text = f"The {health.agent} is working again (was {previous.value})."
        level = "info"
    else:
        detail = f": {health.error}" if health.error else ""
        waited = f" for {health.stalled_for:.0f}s" if health.stalled_for else ""
        text = (
            f"The {health.agent} is {health.status.value}{waited}{detail} "
            f"({health.queue_depth} waiting). Other agents keep working; see /status."
        )
        level = "warning" if health.status is HealthStatus.STALLED else "error"
    return EngineNotice(session_id=health.session_id, level=level, text=text)
