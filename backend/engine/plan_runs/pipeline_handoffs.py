"""The engine's side of the engineer pipeline handoff (``backend.pipelines.handoff``).

After each engineer turn of a pipeline, :meth:`PipelineHandoffs.after_turn` measures
the engineer's context: the input tokens of the turn's *last* model call (cache reads
and writes included), read from the turn's ``usage`` steps as the event stream carried
them, against the model's window from ``[context]`` (``backend.memory.windows``); a
turn whose steps were not seen falls back to the answer's summed usage, an upper bound.
At 95%, or when the user asked (``/task ID handoff``), and unless the user stopped the
chain, the pipeline hands off: the three roles' state is bundled, the Architect reviews
it (one turn of the Architect's model; with no model configured the state passes
unchanged and the record says ``pass-through``), it is stored in the chronicle
(``pipeline_handoff``), and the old pipeline ends with :class:`HandedOffError`.
:class:`~backend.engine.plan_runs.pipeline_work.PipelineWork` then takes the successor
(:meth:`take_successor`: the new pipeline's context and first request, the state
injected) and runs it; ``HandoffCompleted`` is published as it starts. From then on
the engineer's memory in that session (``ContextLedger.restart``) starts after the old
pipeline's last transcript message (its review's), so the new engineer's context is
the handoff state alone and its measured use drops: it does not hand off again at once.

When every attempt failed, the fallback: the summary is stored (marked ``fallback``)
and the pipeline goes on, its engineer's request from then on the summary and the
verbatim prompt (:meth:`request_for`) instead of the growing original.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from backend.engine.plan_runs.dag_nodes import AskAgent, Record, result_of
from backend.errors import ErrorKind, SylkError
from backend.events import (
    AgentStepEvent,
    EngineEvent,
    EngineNotice,
    EventStream,
    HandoffCompleted,
)
from backend.guide.routing.decision import RouteDecision, Target
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import Category
from backend.llm.types import Usage
from backend.memory.ledger import ContextLedger
from backend.memory.windows import ContextUse, context_window, input_tokens
from backend.pipelines.context import EngineerResult, PipelineContext
from backend.pipelines.handoff.chain import (
    HandoffChains,
    HandoffStepError,
    hand_off,
)
from backend.pipelines.handoff.state import (
    ArchitectReview,
    PipelineHandoff,
    bundle,
    handoff_prompt,
)

if TYPE_CHECKING:
    from backend.engine.build import EngineParts
    from backend.team.pipeline_desk import PipelineDesk

WindowOf = Callable[[str, str], int]  # (provider, model) -> tokens
LastMessage = Callable[[str], Awaitable[str | None]]  # session id -> its transcript's last id
REVIEW_ASK = (
    "HANDOFF_REQUEST: an engineer pipeline reached its context limit and hands its task "
    "to a new pipeline. Examine the bundled state below; if the workflow needs adjusting, "
    "say how in a few lines (they reach the new pipeline), else answer 'no change'. "
    "Do not run the task yourself.\n\n"
)
HANDED_OFF = "handed off to "  # how an old pipeline's end reason starts
USAGE_SEEN_MAX = 256  # engineer turns whose last usage is remembered


class HandedOffError(SylkError):
    """Ends the old pipeline: its task goes on in the new one (not a failure of it)."""

    error_kind = ErrorKind.CONFLICT


@dataclass(frozen=True)
class Successor:
    """The new pipeline the Orchestrator creates: its context and first request."""

    context: PipelineContext
    request: str
    handoff: PipelineHandoff
    entry_id: str
    through: str | None = None  # the old pipeline's last transcript message


class PipelineHandoffs:
    """Each pipeline task's handoffs; ``chains`` is what ``/task ID handoff...`` changes."""

    def __init__(
        self,
        *,
        events: EventStream,
        chronicle: Chronicle,
        window_of: WindowOf,
        chains: HandoffChains | None = None,
        memory: ContextLedger | None = None,
        last_message: LastMessage | None = None,
    ) -> None:
        self._events = events
        self._chronicle = chronicle
        self._window_of = window_of
        # The engineer's context, restarted after the old pipeline's last message when a
        # handoff completes (None: not kept, as in unit tests of the chain alone).
        self._memory = memory
        self._last_message = last_message
        self.chains = chains or HandoffChains()
        self._last_usage: dict[str, tuple[Usage, str, str]] = {}  # turn id -> usage, where
        self._successors: dict[tuple[str, str], Successor] = {}
        events.add_listener(self._on_event)

    @classmethod
    def install(cls, parts: EngineParts, desk: PipelineDesk) -> PipelineHandoffs:
        """The engine's handoffs: windows from ``[context]``, records in the chronicle,
        and ``/task ID handoff|handoff_stop`` on the pipelines' desk."""
        settings = parts.settings
        handoffs = cls(
            events=parts.events,
            chronicle=parts.knowledge.chronicle,
            window_of=lambda provider, model: context_window(settings, provider, model),
            memory=parts.turns.context,
            last_message=partial(_last_message, parts),
        )
        desk.handoffs = handoffs.chains
        return handoffs

    # -- measuring -------------------------------------------------------------------
    def _on_event(self, event: EngineEvent) -> None:
        if not isinstance(event, AgentStepEvent) or event.step.kind != "usage":
            return
        step = event.step
        if step.role != "engineer":
            return
        data = step.data
        usage = Usage.model_validate(data.get("usage") or {})
        self._last_usage[step.turn_id] = (usage, str(data.get("provider")), str(data.get("model")))
        while len(self._last_usage) > USAGE_SEEN_MAX:
            self._last_usage.pop(next(iter(self._last_usage)))

    def context_use(self, record: Record) -> ContextUse | None:
        """The engineer's context after the turn ``record`` answered; None: no count."""
        payload = record.payload
        seen = self._last_usage.pop(str(payload.get("turn_id")), None)
        if seen is not None:
            usage, provider, model = seen
        else:
            usage = Usage.model_validate(payload.get("usage") or {})
            provider, model = str(payload.get("provider")), str(payload.get("model"))
        tokens = input_tokens(usage) + usage.output_tokens
        if tokens <= 0:
            return None
        return ContextUse(tokens, self._window_of(provider, model), estimated=usage.estimated)

    # -- the handoff -----------------------------------------------------------------
    def request_for(self, session_id: str, task_id: str, request: str) -> str:
        """The engineer's request: after a fallback, the summary (with the verbatim prompt)."""
        return self.chains.chain(session_id, task_id).summary or request

    async def after_turn(
        self,
        ask: AskAgent,
        *,
        session_id: str,
        plan_id: str | None,
        context: PipelineContext,
        record: Record,
        result: EngineerResult,
        request: str,
    ) -> None:
        """Hand the task off if it is due; raises :class:`HandedOffError` when it did."""
        chain = self.chains.chain(session_id, context.task_id)
        use = self.context_use(record)
        reason = chain.due(use.fraction if use is not None else 0.0)
        if not reason:
            return
        chain.requested = False
        chain.original_prompt = chain.original_prompt or request  # later ones: handoff texts
        state = context.model_copy(deep=True)  # with this turn, as the next check would see
        state.add_files(result)
        state.engineer_texts.append(result.text)
        handoff = bundle(
            state, chain.original_prompt, session_id=session_id, old_pipeline_id=chain.current,
            index=chain.index + 1, reason=reason, dag_id=plan_id or "",
            fraction=use.fraction if use is not None else None,
        )  # fmt: skip

        async def review(h: PipelineHandoff) -> ArchitectReview:
            return await self._review(ask, session_id, h)

        outcome = await hand_off(handoff, review=review, store=self._store)
        chain.failures += list(outcome.errors)
        if outcome.fallback:
            chain.fallbacks += 1
            chain.summary = handoff_prompt(handoff)
            context.notes.append(
                f"handoff {handoff.handoff_index} failed ({len(outcome.errors)} attempts): "
                f"summarised to the archive ({outcome.entry_id}) and compacted"
            )
            self._notice(session_id, plan_id, f"Task {context.task_id}: handoff failed "
                         f"({outcome.errors[-1] if outcome.errors else 'unknown'}); the "
                         "state is summarised to the archive and the pipeline goes on from "
                         "the summary", "warning")  # fmt: skip
            return
        done = outcome.handoff
        chain.index += 1
        chain.handoffs.append(done)
        fresh = PipelineContext(
            task_id=context.task_id, task_prompt=context.task_prompt,
            constraints=list(context.constraints),
            compliance_criteria=list(context.compliance_criteria),
            upstream_outputs=dict(context.upstream_outputs),
            modified_files=list(state.modified_files), created_files=list(state.created_files),
            notes=[*state.notes, f"handoff {done.handoff_index} from {done.old_pipeline_id}"],
        )  # fmt: skip
        key = (session_id, context.task_id)
        through = await self._last_message(session_id) if self._last_message else None
        self._successors[key] = Successor(
            fresh, handoff_prompt(done), done, outcome.entry_id, through
        )
        raise HandedOffError(
            f"{HANDED_OFF}{done.new_pipeline_id} (handoff {done.handoff_index}, {reason})",
            details={"reason": "handed_off", "handoff_index": done.handoff_index},
        )

    def take_successor(
        self, session_id: str, task_id: str, plan_id: str | None
    ) -> Successor | None:
        """The new pipeline to run in place of the one that just ended, if it handed off;
        publishes ``HandoffCompleted`` (the old pipeline is closed, the new one starts).
        None: the task's chain ended with that pipeline."""
        successor = self._successors.pop((session_id, task_id), None)
        if successor is None:
            self.chains.forget(session_id, task_id)
            return None
        done = successor.handoff
        if self._memory is not None:  # the new engineer's context is the handoff state only
            self._memory.restart(session_id, "engineer", successor.through)
        self._events.publish(_completed(session_id, plan_id, done, successor.entry_id))
        by = done.review.by if done.review else "none"
        text = (
            f"Task {task_id}: handoff {done.handoff_index} complete, {done.old_pipeline_id} "
            f"closed, {done.new_pipeline_id} started (review: {by})"
        )
        self._notice(session_id, plan_id, text, "info")
        return successor

    async def _review(self, ask: AskAgent, session_id: str, h: PipelineHandoff) -> ArchitectReview:
        text = REVIEW_ASK + handoff_prompt(h)
        decision = RouteDecision(target=Target.ARCHITECT, confidence=1.0, tier="dsl", text=text)
        record = await ask(session_id, decision)
        if record.payload.get("offline"):
            return ArchitectReview(by="pass-through", notes="no model configured for the "
                                   "Architect: the state passes unreviewed")  # fmt: skip
        result = result_of(record)
        if not result.ok:
            raise HandoffStepError(f"the Architect's review failed: {result.error}")
        return ArchitectReview(by="model", notes=str(result.output or "").strip())

    async def _store(self, h: PipelineHandoff, fallback: bool) -> str:
        data: dict[str, Any] = {**h.model_dump(mode="json"), "fallback": fallback}
        title = (
            f"handoff {h.handoff_index} of task {h.task_id} failed: summary"
            if fallback
            else f"handoff {h.handoff_index} of task {h.task_id}"
        )
        try:
            entry = await self._chronicle.store(
                h.session_id, Category.PIPELINE_HANDOFF, handoff_prompt(h),
                title=title, agent="engineer", data=data,
            )  # fmt: skip
        except SylkError as error:
            raise HandoffStepError(f"storing the handoff failed: {error.message}") from error
        return entry.id

    def _notice(self, session_id: str, plan_id: str | None, text: str, level: str) -> None:
        self._events.publish(
            EngineNotice(
                session_id=session_id, text=text, plan_id=plan_id,
                level="warning" if level == "warning" else "info",
            )
        )  # fmt: skip


async def _last_message(parts: EngineParts, session_id: str) -> str | None:
    """The id of the session's last transcript message (the old pipeline's, and its
    review's, at a handoff), or None for an empty transcript."""
    last = await parts.sessions.transcript(session_id, limit=1)
    return last[-1].id if last else None


def _completed(
    session_id: str, plan_id: str | None, done: PipelineHandoff, entry_id: str
) -> HandoffCompleted:
    return HandoffCompleted(
        session_id=session_id, plan_id=plan_id, task_id=done.task_id,
        old_pipeline_id=done.old_pipeline_id, new_pipeline_id=done.new_pipeline_id,
        handoff_index=done.handoff_index, entry_id=entry_id,
        review=done.review.by if done.review else "",
    )  # fmt: skip
