"""What the budget tests share: a three-node plan (librarian, then two engineers, one
after the other) whose every scripted model call reports 100 tokens, so the use at
each call is known exactly; the budget questions asked, and answering them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine
from backend.events import EngineEvent, QuestionAsked
from backend.messages import MessageType
from tests.integration.orchestration.plan_runs import (
    Run,
    architect_proposes,
    engineer_edits,
    node,
    plan,
    script,
)
from tests.integration.plans.conftest import parts, say
from tests.support.polling import until

CALL = {"input_tokens": 90, "output_tokens": 10}  # 100 tokens a model call


def chain_plan(**engineer: Any) -> dict[str, Any]:
    """t1 -> e1 -> e2; ``engineer`` is the engineers' metadata (e.g. ``timeout_ms``)."""
    return plan(
        node("t1", "librarian"), node("e1", "engineer", "t1", **engineer),
        node("e2", "engineer", "e1", **engineer),
    )  # fmt: skip


def budget_script(
    path: Path, monkeypatch: pytest.MonkeyPatch, workspace: Path, **engineer: Any
) -> None:
    """2 Architect calls, 1 librarian call, 3 calls for each engineer: 900 tokens in all."""
    for name in ("a.py", "b.py"):
        (workspace / name).write_text("VERBOSE = False\n")
    turns = [
        *architect_proposes(chain_plan(**engineer)),
        {"expect": "Task t1 of plan p1", "text": "Flags live in a.py and b.py."},
        *engineer_edits("a.py", "VERBOSE = False", "VERBOSE = True"),
        *engineer_edits("b.py", "VERBOSE = False", "VERBOSE = True"),
    ]
    script(path, monkeypatch, [{**turn, "usage": CALL} for turn in turns])


def budget_questions(run: Run) -> list[QuestionAsked]:
    return [
        e
        for e in run.events
        if isinstance(e, QuestionAsked) and e.question.title.startswith("Budget reached")
    ]


async def answer_budget(run: Run, value: str, *, nth: int = 1) -> QuestionAsked:
    """Wait for the ``nth`` budget question and answer it with ``value``."""
    await until(lambda: len(budget_questions(run)) >= nth, what=f"budget question {nth}")
    asked = budget_questions(run)[nth - 1]
    assert run.engine.answer_question(asked.question_id, value)
    return asked


def model_calls(run: Run, session_id: str) -> list[str]:
    """Each model call's role, in order, from the archive's usage rows."""
    rows = run.parts.archive.usage_by_agent(session_id)
    return [str(r["agent"]) for r in rows for _ in range(int(r["calls"]))]


class BudgetRun(Run):
    """:class:`Run` with a config file (``[budgets]``) of its own."""

    def __init__(self, data_dir: Path, workspace: Path, config_file: Path | None = None) -> None:
        self.parts = parts(data_dir, workspace, run_approved_plans=True, config_file=config_file)
        self.engine = Engine.from_parts(self.parts)
        self.events: list[EngineEvent] = []
        self.engine.events.add_listener(self.events.append)

    async def approve_and_answer(self, session_id: str) -> None:
        """Approve plan p1; budget questions are answered here from then on."""
        await say(self.engine, session_id, "/plan approve p1")
        self.engine.attach_questions()  # the plan review is settled: only budgets ask now

    async def notices(self, session_id: str) -> list[str]:
        """Every notice in the transcript, in order (budget and plan notices among them)."""
        return [
            str(m.payload["text"])
            for m in await self.engine.transcript(session_id)
            if m.type is MessageType.SYSTEM_NOTICE
        ]
