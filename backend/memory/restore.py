"""An agent's compaction after a restart, read back from its newest compaction record.

The ledger lives in memory; the chronicle keeps each compaction with the transcript
message it stands in for (``compacted_through``) and the task's verbatim prompt, so the
first turn after a restart sees the same compacted conversation, not the whole transcript.
"""

from __future__ import annotations

from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import Category, ChronicleQuery
from backend.memory.ledger import AgentMemory
from backend.memory.thresholds import MemoryPlan

RESTORE_SCAN = 200  # the role's newest entries looked at for its last compaction


async def restore(
    chronicle: Chronicle, session_id: str, plan: MemoryPlan, memory: AgentMemory
) -> None:
    """Fill ``memory`` from ``plan.role``'s newest compaction in ``session_id``, if any."""
    query = ChronicleQuery(
        categories=[plan.category or Category.GENERAL], current_only=True, limit=RESTORE_SCAN
    )
    mine = [e for e in await chronicle.query(session_id, query) if e.agent == plan.role]
    if not mine:
        return
    # In the order they fell due (a checkpoint written beside a turn may be stored after
    # the compaction that followed it).
    mine.sort(key=lambda e: _index(e.data.get("checkpoint_index")))
    memory.checkpoint_index = max(0, _index(mine[-1].data.get("checkpoint_index")))
    compactions = [e for e in mine if isinstance(e.data.get("compacted_through"), str)]
    if not compactions:
        return
    last = compactions[-1]
    memory.through = str(last.data["compacted_through"])
    memory.summary = last.content
    prompt = last.data.get("prompt")
    memory.prompt = prompt if isinstance(prompt, str) and prompt else None
    memory.compactions = len(compactions)
    # Checkpoints written since that compaction still count as done.
    later = [e.data.get("level") for e in mine[mine.index(last) + 1 :]]
    reached = max((x for x in later if isinstance(x, float)), default=None)
    if reached is not None:
        memory.done = {level for level in plan.checkpoints if level <= reached}


def _index(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1
