"""Metering an agent's context before each turn: checkpoints, then compaction.

Before a role's model sees its conversation, :meth:`ContextKeeper.prepare` measures it
against the model's window (the provider's count of the last call plus the new request,
else the estimate), writes the role's checkpoint to the chronicle when a threshold of its
:class:`~backend.memory.thresholds.MemoryPlan` is crossed, and at the plan's compaction
level replaces the older turns with the summary, keeping the task's verbatim prompt and
the latest exchanges. Several levels crossed at once give one checkpoint (the highest).
A checkpoint alone is written beside the turn (the user does not wait for the summary
call; the ledger tracks it and closing waits for it); a compaction waits for its summary,
since the turn's conversation is made of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from backend.clock import utc_now
from backend.errors import SylkError
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import MAX_CONTENT_CHARS, Category
from backend.llm.types import ChatMessage
from backend.memory.ledger import AgentMemory, ContextLedger
from backend.memory.restore import restore
from backend.memory.summaries import SummaryCall, render, write_summary
from backend.memory.thresholds import MemoryPlan, plan_for
from backend.memory.windows import ContextUse, estimate, input_tokens
from backend.messages import Message

log = logging.getLogger("sylk.memory")

KEEP_RECENT = 4  # transcript messages kept verbatim after a compaction (two exchanges)
PROMPT_HEADER = "# The task, as the user asked it (verbatim)"
SUMMARY_HEADER = "# Summary of the earlier turns"

Records = list[Message[dict[str, Any]]]
# (transcript messages, the request being answered, a preface) -> the model's conversation
Builder = Callable[[Records, str, str | None], list[ChatMessage]]


def preface(memory: AgentMemory) -> str | None:
    """What stands in for the compacted turns: the task verbatim, then the summary."""
    if memory.summary is None:
        return None
    parts = [f"{PROMPT_HEADER}\n{memory.prompt}"] if memory.prompt else []
    parts.append(f"{SUMMARY_HEADER}\n{memory.summary}")
    return "\n\n".join(parts)


def _since(records: Records, through: str | None) -> Records:
    """``records`` after ``through`` (all of them when it is older than the window)."""
    ids = [r.id for r in records]
    return records[ids.index(through) + 1 :] if through in ids else records


class ContextKeeper:
    """Checkpoints and compaction for every agent, over a :class:`ContextLedger`."""

    def __init__(self, ledger: ContextLedger, chronicle: Chronicle, build: Builder) -> None:
        self.ledger = ledger
        self._chronicle = chronicle
        self._build = build

    def measure(
        self, memory: AgentMemory, history: list[ChatMessage], current: str, window: int
    ) -> ContextUse:
        """The provider's count of the last call (what it put in and took out) plus the
        new request; with no count yet, the estimate of the whole conversation."""
        last = memory.last_usage
        if last is not None and input_tokens(last) > 0:
            tokens = input_tokens(last) + last.output_tokens
            tokens += estimate([ChatMessage.user(current)])
            return ContextUse(tokens, window, estimated=last.estimated)
        return ContextUse(estimate(history), window, estimated=True)

    async def prepare(
        self,
        session_id: str,
        role: str,
        records: Records,
        current: str,
        *,
        window: int,
        call: SummaryCall | None = None,
        model: str | None = None,
        handoff: bool = False,
    ) -> list[ChatMessage]:
        """``role``'s conversation for this turn, checkpointed and compacted as its plan says.

        ``handoff``: the turn is a pipeline's, whose handoff owns a role with a handoff plan
        (the Engineer's, ``backend.pipelines.handoff``): it is measured, never compacted."""
        plan = plan_for(role)
        memory = self.ledger.get(session_id, role)
        async with memory.lock:
            if not memory.restored:  # after a restart: the compaction the chronicle kept
                memory.restored = True
                try:
                    await restore(self._chronicle, session_id, plan, memory)
                except SylkError as exc:  # an unreadable archive costs the compaction, not the turn
                    log.warning("the %s's compaction was not read back: %s", role, exc)
            kept = _since(records, memory.through)
            history = self._build(kept, current, preface(memory))
            use = self.measure(memory, history, current, window)
            memory.use = use
            if handoff and plan.handoff:
                return history
            crossed = plan.crossed(use.fraction, frozenset(memory.done))
            compact = plan.compacts(use.fraction) and len(kept) > KEEP_RECENT
            if not crossed and not compact:
                return history
            older = history[:-1]  # the request being answered is not summarised
            if not compact:  # a checkpoint alone is written while the turn goes on
                memory.done.update(crossed)
                checkpoint = self._checkpoint(
                    session_id, plan, memory, use=use, older=older, call=call, model=model,
                    crossed=crossed, index=memory.reserve(),
                )  # fmt: skip
                self.ledger.track(checkpoint)
                return history
            fields, written_by = await write_summary(plan, older, call=call, model=model)
            first = next((m.text for m in older if m.role == "user" and m.text), None)
            through, prompt = kept[-KEEP_RECENT - 1].id, memory.prompt or first
            # The compaction's summary goes to the Archivalist first: one the archive
            # refused is tried again next turn, and nothing is compacted away.
            text = render(role, fields, written_by)
            data = {**fields, "written_by": written_by, "compacted": True,
                    "level": max(crossed, default=None), "compacted_through": through,
                    "prompt": prompt}  # fmt: skip
            index = memory.reserve()
            if not await self._record(session_id, plan, index, use=use, text=text, data=data):
                return history
            memory.through, memory.prompt = through, prompt
            return self._compact(memory, kept, current, text)

    async def _checkpoint(
        self,
        session_id: str,
        plan: MemoryPlan,
        memory: AgentMemory,
        *,
        use: ContextUse,
        older: list[ChatMessage],
        call: SummaryCall | None,
        model: str | None,
        crossed: tuple[float, ...],
        index: int,
    ) -> None:
        """A checkpoint written beside the turn (its number reserved when it was due)."""
        fields, written_by = await write_summary(plan, older, call=call, model=model)
        text = render(plan.role, fields, written_by)
        data = {**fields, "written_by": written_by, "compacted": False, "level": max(crossed)}
        if not await self._record(session_id, plan, index, use=use, text=text, data=data):
            memory.done.difference_update(crossed)  # due again at the next turn

    def _compact(
        self, memory: AgentMemory, kept: Records, current: str, text: str
    ) -> list[ChatMessage]:
        memory.summary = text
        memory.compactions += 1
        memory.done.clear()  # the thresholds count again from the compacted context
        memory.last_usage = None  # the provider's count was of the turns just dropped
        history = self._build(kept[-KEEP_RECENT:], current, preface(memory))
        if memory.use is not None:
            memory.use = ContextUse(estimate(history), memory.use.window, estimated=True)
        return history

    async def _record(
        self,
        session_id: str,
        plan: MemoryPlan,
        index: int,
        *,
        use: ContextUse,
        text: str,
        data: dict[str, Any],
    ) -> bool:
        """The checkpoint to the Archivalist, under the role's category, the seed's shape."""
        header = {
            "timestamp": utc_now().isoformat(),
            "session_id": session_id,
            "context_usage": round(use.fraction, 4),
            "checkpoint_index": index,
        }
        what = "compaction" if data["compacted"] and not plan.checkpoints else plan.kind
        title = f"{plan.role} {what} {index} at {use.percent}% of context"
        try:
            await self._chronicle.store(
                session_id,
                plan.category or Category.GENERAL,
                text[:MAX_CONTENT_CHARS],
                title=title,
                agent=plan.role,
                data={**header, **data, "estimated_usage": use.estimated},
            )
        except SylkError as exc:
            log.warning("the %s's checkpoint was not stored: %s", plan.role, exc)
            return False
        return True
