"""What Sylk knows of each agent's context in each session, between its turns.

Kept in memory: the last model call's usage (the provider's count of what the window
held), the last measured use (``/status``), the checkpoint levels written since the
last compaction, and the compaction itself (the summary that stands in for the turns
up to a transcript message, and the task's verbatim prompt).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from backend.llm.types import Usage
from backend.memory.windows import ContextUse

log = logging.getLogger("sylk.memory")
CLOSE_WAIT_S = 10.0  # how long closing waits for checkpoints still being written


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

    def reserve(self) -> int:
        """The next checkpoint's number, taken when it falls due (numbers follow the
        context's growth even when checkpoints are written side by side)."""
        self.checkpoint_index += 1
        return self.checkpoint_index


class ContextLedger:
    """Every agent's :class:`AgentMemory`, by session and role."""

    def __init__(self) -> None:
        self._agents: dict[tuple[str, str], AgentMemory] = {}
        self._pending: set[asyncio.Task[None]] = set()  # checkpoints being written

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

    def track(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` (a checkpoint) beside the turn; :meth:`aclose` waits for it."""
        task = asyncio.get_running_loop().create_task(work)
        self._pending.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("a checkpoint failed", exc_info=exc)

    async def settle(self) -> None:
        """Wait until every checkpoint being written is stored (or failed)."""
        while self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    async def aclose(self, timeout_s: float = CLOSE_WAIT_S) -> None:
        """Let the checkpoints being written finish, for up to ``timeout_s``; then stop them."""
        if not self._pending:
            return
        _, late = await asyncio.wait(set(self._pending), timeout=timeout_s)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)

    def restart(self, session_id: str, role: str, through: str | None) -> None:
        """``role``'s context in ``session_id`` starts afresh after transcript message
        ``through``: a new pipeline's engineer after a handoff, whose context is the
        handoff state alone, not the old pipeline's turns (their usage, checkpoints and
        any summary go with them, so its measured use drops)."""
        memory = self.get(session_id, role)
        memory.through, memory.summary, memory.prompt = through, None, None
        memory.last_usage, memory.use = None, None
        memory.done.clear()
        memory.restored = True  # an older compaction is not read back over the handoff

    def forget(self, session_id: str) -> None:
        """Drop a session's entries (it was closed or deleted)."""
        for key in [k for k in self._agents if k[0] == session_id]:
            del self._agents[key]
