"""Which engine event becomes which of the app's messages (``EVENT_MESSAGES``).

Looked up by the event's ``kind``; kinds the UI does not show map to nothing. It
imports the engine's event models (pydantic), so ``messages.engine_message`` loads it
with the first event rather than before the first frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel
from textual.message import Message

from backend.archive_events import ArchiveChanged
from backend.events import (
    ActiveSessionChanged,
    AgentStepEvent,
    DagStatusChanged,
    EngineEvent,
    EngineNotice,
    FileConflict,
    HandoffCompleted,
    IndexProgress,
    MessageAppended,
    PipelineMoved,
    PlanApproved,
    PlanChanged,
    QuestionAsked,
    QuestionSettled,
    SessionChanged,
    SessionCreated,
    SessionPhaseChanged,
)
from sylk_tui.engine_link.messages import (
    AgentStepped,
    ChoiceRequested,
    DagMoved,
    EngineNoticePosted,
    ForegroundChanged,
    IndexChanged,
    PipelineChanged,
    QuestionClosed,
    SessionAdded,
    SessionUpdated,
    TranscriptAppended,
)
from sylk_tui.team_view import TeamChanged


# -- the table ----------------------------------------------------------------------------
def index_text(event: IndexProgress) -> str:
    if event.phase in ("building", "rebuilding"):
        verb = "indexing" if event.phase == "building" else "re-indexing"
        return f"{verb} {event.done:,}/{event.total:,} files" if event.total else f"{verb}…"
    if event.phase == "failed":
        return f"index failed: {event.error}"
    if event.phase == "ready":
        return f"{event.total:,} files indexed"
    return f"index updated ({event.changed} changed)"


TOOL_STEPS = frozenset({"tool_call", "tool_output", "tool_result"})


def _plan_moved(event: PlanChanged) -> Message | None:
    """A plan stored or moved, as a notice; its approval has its own (PlanApproved)."""
    if event.status == "approved":
        return None
    status = event.status.replace("_", " ")
    text = f"Plan {event.plan_id} (version {event.version}): {status}"
    return EngineNoticePosted("info", text, event.plan_id)


def _agent_stepped(event: AgentStepEvent, _by_hand: bool) -> AgentStepped:
    step = event.step
    text = step.data.get("text") if step.kind in ("text_delta", "reasoning_delta") else None
    data = step.data if step.kind in TOOL_STEPS else {}
    return AgentStepped(
        step.session_id, step.role, step.kind, text if isinstance(text, str) else "", data
    )


def _teammate_promoted(event: ArchiveChanged) -> Message | None:
    """A decision a teammate promoted on the shared archive, as a toast; a teammate's
    session made or moved, as a refresh of the team indicator and ``/team``."""
    if not event.teammate:
        return None
    if event.change != "promoted":
        return TeamChanged()
    return EngineNoticePosted("info", f"{event.owner} promoted a decision for the team")


EventT = TypeVar("EventT", bound=BaseModel)


class Rule(Generic[EventT]):
    """How one kind of engine event becomes a message; ``by_hand`` is true while
    the user's own switch runs in the engine."""

    def __init__(
        self, event: type[EventT], convert: Callable[[EventT, bool], Message | None]
    ) -> None:
        self.kind: str = event.model_fields["kind"].default
        self._convert = convert

    def __call__(self, event: EngineEvent, by_hand: bool) -> Message | None:
        return self._convert(cast(EventT, event), by_hand)


def _table(*rules: Rule[Any]) -> Mapping[str, Rule[Any]]:
    return MappingProxyType({rule.kind: rule for rule in rules})


EVENT_MESSAGES: Mapping[str, Rule[Any]] = _table(
    Rule(MessageAppended, lambda e, _: TranscriptAppended(e.message)),
    Rule(SessionCreated, lambda e, _: SessionAdded(e.session)),
    Rule(SessionChanged, lambda e, _: SessionUpdated(e.session, e.operation, e.old_state)),
    Rule(SessionPhaseChanged, lambda e, _: SessionUpdated(e.session, "phase", e.session.state)),
    Rule(
        ActiveSessionChanged,
        lambda e, by_hand: ForegroundChanged(e.session_id, e.previous_id, follow=not by_hand),
    ),
    Rule(
        EngineNotice,
        lambda e, _: None if e.progress else EngineNoticePosted(e.level, e.text, e.plan_id),
    ),
    Rule(
        QuestionAsked,
        lambda e, _: ChoiceRequested(e.question_id, e.question, e.answer, e.session_id, e.at),
    ),
    Rule(QuestionSettled, lambda e, _: QuestionClosed(e.question_id, e.withdrawn)),
    Rule(IndexProgress, lambda e, _: IndexChanged(e.workspace, index_text(e))),
    Rule(AgentStepEvent, _agent_stepped),
    Rule(PlanChanged, lambda e, _: _plan_moved(e)),
    Rule(
        PlanApproved,
        lambda e, _: EngineNoticePosted(
            "info", f"Plan {e.plan_id} (version {e.version}) approved", e.plan_id
        ),
    ),
    Rule(DagStatusChanged, lambda e, _: DagMoved(e)),
    # Both sessions' transcripts carry the conflict; the toast reaches the one on screen.
    Rule(FileConflict, lambda e, _: EngineNoticePosted("warning", e.text)),
    Rule(
        HandoffCompleted,
        lambda e, _: EngineNoticePosted(
            "info",
            f"Task {e.task_id}: handed to a new pipeline (handoff {e.handoff_index})",
            e.plan_id,
        ),
    ),
    Rule(PipelineMoved, lambda e, _: PipelineChanged(e)),
    Rule(ArchiveChanged, lambda e, _: _teammate_promoted(e)),
)
"""Engine event kind -> how it becomes a message; a kind not here is not shown."""


def message_for(event: EngineEvent, *, by_hand: bool = False) -> Message | None:
    """The app-wide message for an engine event (``None``: the UI ignores it)."""
    rule = EVENT_MESSAGES.get(event.kind)
    return rule(event, by_hand) if rule is not None else None
