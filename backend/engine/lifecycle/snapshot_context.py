"""Each agent's context in a session snapshot, and made its context again by a restore.

Capture: for every agent, the ops it had loaded, its last compaction (summary and the
task's verbatim prompt, read back from the chronicle if this engine had not yet) and
its conversation's tail after that compaction: its answers and the requests routed to
it (the Guide's: every user line). Restore: each agent's context becomes a preface
built from that (``backend.memory.rewind``), standing in for the whole transcript up to
the restore, so no agent reads what was said after the snapshot; what is said after
the restore follows the preface. The rewind is a chronicle record, so it holds across
a restart. An agent with nothing in the snapshot starts from a preface saying so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from backend.memory.rewind import current, rewind
from backend.messages import MessageType
from backend.roles import AGENT_ROLES
from backend.sessions.snapshots import TAIL_MESSAGES, TAIL_TEXT_MAX, AgentSnapshot, TailMessage

if TYPE_CHECKING:
    from backend.archive.snapshot_rows import SnapshotRow
    from backend.engine.build import EngineParts

PREFACE_MAX = 16_000  # characters of a restored preface (the chronicle keeps 20,000)


async def capture_agents(
    parts: EngineParts, session_id: str, transcript: list[Any]
) -> dict[str, AgentSnapshot]:
    """Every agent's state in the session that has any (ops, compaction or tail)."""
    tracker = parts.gateway.tracker
    agents: dict[str, AgentSnapshot] = {}
    for role in AGENT_ROLES:
        memory = await current(parts.turns.context, parts.knowledge.chronicle, session_id, role)
        ids = [m.id for m in transcript]
        since = transcript[ids.index(memory.through) + 1 :] if memory.through in ids else transcript
        mine = [m for m in since if _belongs(m, role)][-TAIL_MESSAGES:]
        loaded = tracker.loaded(session_id, role) if tracker is not None else []
        if not mine and not loaded and memory.summary is None:
            continue
        tail = [
            TailMessage(
                id=m.id,
                source=m.source,
                type=str(m.type),
                text=str(m.payload.get("text", ""))[:TAIL_TEXT_MAX],
            )
            for m in mine
        ]
        agents[role] = AgentSnapshot(
            loaded_ops=loaded, tail=tail, summary=memory.summary, prompt=memory.prompt
        )
    return agents


def _belongs(message: Any, role: str) -> bool:
    """``role`` said it, or it was said to ``role`` (a user line routed to it)."""
    if role in (message.source, message.target):
        return True
    route = message.payload.get("route")
    routed = isinstance(route, dict) and route.get("target") == role
    return message.type == MessageType.USER_INPUT and routed


async def rewind_agents(
    parts: EngineParts, session_id: str, row: SnapshotRow, agents: dict[str, AgentSnapshot]
) -> list[str]:
    """Every agent's context back to the snapshot's; the roles whose rewind the archive
    refused (they hold until the engine restarts)."""
    last = await parts.sessions.transcript(session_id, limit=1)
    through = last[-1].id if last else None
    unkept: list[str] = []
    for role in AGENT_ROLES:
        agent = agents.get(role) or AgentSnapshot()
        kept = await rewind(
            parts.turns.context,
            parts.knowledge.chronicle,
            session_id,
            role,
            through=through,
            summary=preface_text(row, agent),
            prompt=agent.prompt,
            snapshot_id=row.id,
        )
        if not kept:
            unkept.append(role)
    return unkept


def preface_text(row: SnapshotRow, agent: AgentSnapshot) -> str:
    """What the agent knew at the snapshot, in words: the session was restored there."""
    label = f" ({row.label})" if row.label else ""
    head = (
        f"The session was restored to snapshot {row.short_id}{label} taken "
        f"{row.created_at[:19]}; what was said after it is undone."
    )
    parts = [head]
    if agent.summary:
        parts.append(f"Summary of the turns before it:\n{agent.summary[: PREFACE_MAX // 2]}")
    lines = [f"{m.source}: {m.text}" for m in agent.tail if m.text]
    if not lines and not agent.summary:
        parts.append("This agent had no conversation in the session at that point.")
    room = PREFACE_MAX - sum(len(p) + 2 for p in parts) - 40
    while lines and sum(len(x) + 1 for x in lines) > room:
        lines.pop(0)  # the oldest go first
    if lines:
        parts.append("The conversation's last messages then:\n" + "\n".join(lines))
    return "\n\n".join(parts)[:PREFACE_MAX]
