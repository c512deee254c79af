"""A test front end for approval questions: it answers each QuestionAsked the way a
test tells it to, by resolving the event's future, as the TUI's modal does."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from backend.engine.build import EngineParts
from backend.events import ApprovalRequest, EngineEvent, QuestionAsked
from backend.skills.models import SkillContext

Answerer = Callable[[ApprovalRequest], str | None]


@dataclass
class FrontEnd:
    answer: Answerer = lambda _request: "allow"
    asked: list[ApprovalRequest] = field(default_factory=list)

    def on_event(self, event: EngineEvent) -> None:
        if isinstance(event, QuestionAsked) and event.question.approval is not None:
            self.asked.append(event.question.approval)
            event.answer.set_result(self.answer(event.question.approval))


@pytest.fixture
def front_end(engine_parts: EngineParts) -> Iterator[FrontEnd]:
    front = FrontEnd()
    detach = engine_parts.questions.attach()
    remove = engine_parts.events.add_listener(front.on_event)
    yield front
    remove()
    detach()


def context(session_id: str, workspace: Path, agent: str = "engineer") -> SkillContext:
    return SkillContext(
        session_id=session_id,
        agent=agent,
        workspace=workspace,
        scopes=frozenset({"shell"}),
        can_write=True,
    )
