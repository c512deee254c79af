"""What Sylk knows of each agent's context in each session, between its turns.

Kept in memory: the last model call's usage (the provider's count of what the window
held), the last measured use (``/status``), the checkpoint levels written since the
last compaction, and the compaction itself (the summary that stands in for the turns
up to a transcript message, and the task's verbatim prompt).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from backend.llm.types import Usage
from backend.memory.windows import ContextUse


@dataclass
class AgentMemory:
    """One agent's context in one session."""

    last_usage: Usage | None = None
    use: ContextUse | None = None
    done: set[float] = field(default_factory=set)
    checkpoint_index: int = 0
    compactions: int = 0
    through: str | None = None  # the last transcript message the summary stands in for
    summary: str | None = None
    prompt: str | None = None  # the task as the user asked it, kept verbatim
    restored: bool = False  # read back from the chronicle once (after a restart)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class ContextLedger:
    """Every agent's :class:`AgentMemory`, by session and role."""

    def __init__(self) -> None:
        self._agents: dict[tuple[str, str], AgentMemory] = {}

    def get(self, session_id: str, role: str) -> AgentMemory:
        return self._agents.setdefault((session_id, role), AgentMemory())

    def note_usage(self, session_id: str, role: str, usage: Usage) -> None:
        """A model call of ``role`` in ``session_id`` ended; its usage is the newest count."""
        self.get(session_id, role).last_usage = usage

    def uses(self, session_id: str) -> dict[str, ContextUse]:
        """Each agent's last measured context use in ``session_id``, by role."""
        return {
            role: memory.use
            for (session, role), memory in sorted(self._agents.items())
            if session == session_id and memory.use is not None
        }

    def status_line(self, session_id: str) -> str | None:
        """``guide 12% of 200k · librarian ~3% of 128k`` (``~``: estimated), or None."""
        uses = self.uses(session_id)
        if not uses:
            return None
        return " · ".join(f"{role} {use.describe()}" for role, use in uses.items())

    def forget(self, session_id: str) -> None:
        """Drop a session's entries (it was deleted)."""
        for key in [k for k in self._agents if k[0] == session_id]:
            del self._agents[key]
