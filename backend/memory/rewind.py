"""An agent's context put back to a session snapshot's (``/session restore``).

The transcript is append-only: after a restore it still holds what was said after the
snapshot. So the restore rewinds each agent's context as a compaction would: a preface
(the snapshot's conversation tail, and the task and summary of a compaction it held)
stands in for everything up to ``through``, the last transcript message at restore time;
what is said after the restore follows it. The rewind is stored in the chronicle as the
role's newest compaction record (``compacted_through``, ``restored_from``), so
:func:`backend.memory.restore.restore` reads it back after an engine restart, and a real
compaction after it (a higher ``checkpoint_index``) supersedes it as usual.
"""

from __future__ import annotations

import logging

from backend.clock import utc_now
from backend.errors import SylkError
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import MAX_CONTENT_CHARS, Category
from backend.memory.ledger import AgentMemory, ContextLedger
from backend.memory.restore import restore
from backend.memory.thresholds import plan_for

log = logging.getLogger("sylk.memory")


async def current(
    ledger: ContextLedger, chronicle: Chronicle, session_id: str, role: str
) -> AgentMemory:
    """``role``'s memory in ``session_id`` with its compaction read back from the
    chronicle if this engine has not yet (what a snapshot records of it)."""
    memory = ledger.get(session_id, role)
    async with memory.lock:
        await _read_back(chronicle, session_id, memory, role)
    return memory


async def _read_back(chronicle: Chronicle, session_id: str, memory: AgentMemory, role: str) -> None:
    if memory.restored:
        return
    memory.restored = True
    try:
        await restore(chronicle, session_id, plan_for(role), memory)
    except SylkError as exc:  # an unreadable archive costs the compaction, not the work
        log.warning("the %s's compaction was not read back: %s", role, exc)


async def rewind(
    ledger: ContextLedger,
    chronicle: Chronicle,
    session_id: str,
    role: str,
    *,
    through: str | None,
    summary: str,
    prompt: str | None,
    snapshot_id: str,
) -> bool:
    """``role``'s context in ``session_id`` becomes ``summary`` (the preface) followed by
    the transcript after ``through``. True when it is also kept in the chronicle (and so
    survives a restart); False when the archive refused it (it holds until a restart)."""
    plan = plan_for(role)
    memory = ledger.get(session_id, role)
    async with memory.lock:
        await _read_back(chronicle, session_id, memory, role)  # numbering goes on from it
        index = memory.reserve()
        memory.through, memory.summary, memory.prompt = through, summary, prompt
        memory.last_usage, memory.use = None, None  # counted of the context rewound away
        memory.done.clear()
        memory.compactions += 1
        data = {
            "timestamp": utc_now().isoformat(),
            "session_id": session_id,
            "checkpoint_index": index,
            "compacted": True,
            "compacted_through": through,
            "prompt": prompt,
            "restored_from": snapshot_id,
            "written_by": "restore",
        }
        try:
            await chronicle.store(
                session_id,
                plan.category or Category.GENERAL,
                summary[:MAX_CONTENT_CHARS],
                title=f"{role} context restored from snapshot {snapshot_id[:8]}",
                agent=role,
                data=data,
            )
        except SylkError as exc:
            log.warning("the %s's restored context was not stored: %s", role, exc)
            return False
        return True
