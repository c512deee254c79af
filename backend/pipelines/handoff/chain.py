"""A task's chain of pipeline handoffs, and the steps of one handoff.

The seed's flow: the Engineer (at 95% of its context, or when the user asks) bundles
the three roles' state; the Architect reviews it; the Orchestrator creates the new
pipeline with the state injected and closes the old one; ``HANDOFF_COMPLETE``. Each
handoff is stored for audit (the chronicle's ``pipeline_handoff`` category). A step
that fails (the review's model call, the store) is retried as a whole; once the
attempts are spent the fallback is the seed's: summarise, store the summary, and
compact, so the same pipeline goes on from the summary.

:class:`HandoffChains` keeps each task's chain by session and task id: its index
(1, 2, 3... across the task's pipelines), whether the user stopped it
(``/task ID handoff_stop``: no further handoff, the engineer goes on in its pipeline)
or asked for one (``/task ID handoff``: after the engineer's current or next turn).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from backend.errors import ErrorKind, SylkError
from backend.pipelines.handoff.state import ArchitectReview, PipelineHandoff

HANDOFF_AT = 0.95  # the Engineer's context use that triggers a handoff (seed)
HANDOFF_ATTEMPTS = 3  # one try and two retries, then the fallback
HANDOFF_VERBS = ("handoff", "handoff_stop")

Review = Callable[[PipelineHandoff], Awaitable[ArchitectReview]]
Store = Callable[[PipelineHandoff, bool], Awaitable[str]]  # (handoff, fallback) -> entry id


class HandoffStepError(SylkError):
    """One step of a handoff failed (the review, the store): the handoff is retried."""

    error_kind = ErrorKind.CONFLICT


def pipeline_id(task_id: str, index: int) -> str:
    """The id of a task's pipeline after ``index`` handoffs: q1/p1, q1/p2, ..."""
    return f"{task_id}/p{index + 1}"


@dataclass
class HandoffChain:
    """One task's handoffs so far, and what the user said about them."""

    session_id: str
    task_id: str
    index: int = 0  # handoffs completed; the current pipeline is pipeline_id(task, index)
    stopped: bool = False
    requested: bool = False
    handoffs: list[PipelineHandoff] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # each failed attempt, why
    fallbacks: int = 0  # summarise-and-compact instead of a handoff
    summary: str = ""  # the latest fallback's summary: what the engineer goes on from
    original_prompt: str = ""  # the task's first request, verbatim down the chain

    @property
    def current(self) -> str:
        return pipeline_id(self.task_id, self.index)

    def due(self, fraction: float) -> str:
        """Why a handoff is due now ("" if none): the user asked, or the context is full."""
        if self.stopped:
            return ""
        if self.requested:
            return "user_request"
        return "engineer_context_95%" if fraction >= HANDOFF_AT else ""


@dataclass(frozen=True)
class HandoffOutcome:
    """A completed handoff (``handoff`` set, stored as ``entry_id``) or the fallback's
    stored summary (``fallback``)."""

    handoff: PipelineHandoff
    entry_id: str
    fallback: bool
    errors: tuple[str, ...] = ()


async def hand_off(
    handoff: PipelineHandoff,
    *,
    review: Review,
    store: Store,
    attempts: int = HANDOFF_ATTEMPTS,
) -> HandoffOutcome:
    """Review and store ``handoff`` (retried as a whole), else store it as the
    fallback's summary; a store that fails even then raises :class:`HandoffStepError`."""
    errors: list[str] = []
    new_id = pipeline_id(handoff.task_id, handoff.handoff_index)
    for attempt in range(1, attempts + 1):
        try:
            reviewed = handoff.model_copy(
                update={"review": await review(handoff), "new_pipeline_id": new_id}
            )
            return HandoffOutcome(reviewed, await store(reviewed, False), False, tuple(errors))
        except SylkError as error:
            errors.append(f"attempt {attempt}: {error.message}")
    entry = await store(handoff, True)
    return HandoffOutcome(handoff, entry, True, tuple(errors))


class HandoffChains:
    """Every live task's chain, by session and task id."""

    def __init__(self) -> None:
        self._chains: dict[tuple[str, str], HandoffChain] = {}

    def chain(self, session_id: str, task_id: str) -> HandoffChain:
        key = (session_id, task_id)
        if key not in self._chains:
            self._chains[key] = HandoffChain(session_id, task_id)
        return self._chains[key]

    def forget(self, session_id: str, task_id: str) -> None:
        """The task ended for good: its next run starts a chain of its own."""
        self._chains.pop((session_id, task_id), None)

    def command(self, session_id: str, task_id: str, verb: str, label: str) -> str:
        """``/task ID handoff`` or ``/task ID handoff_stop``; the answer for the user."""
        chain = self.chain(session_id, task_id)
        done = f" ({chain.index} handoff(s) so far)"
        if verb == "handoff_stop":
            if chain.stopped:
                return f"{label}: its handoff chain is already stopped{done}."
            chain.stopped, chain.requested = True, False
            return (
                f"{label}: handoff chain stopped{done}; no further handoff, the engineer "
                "goes on in its current pipeline."
            )
        if chain.stopped:
            return f"{label}: its handoff chain was stopped by you; no handoff now{done}."
        chain.requested = True
        return (
            f"{label}: a handoff to a new pipeline follows the engineer's current or next "
            f"turn (handoff {chain.index + 1}){done}."
        )
