"""The guard on a real archive and question board: checks that reach one limit at once
(parallel nodes) share one question; after "stop" a call over that same limit stops
without asking again, and a new limit set meanwhile lets it go on."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from backend.archive.store import Archive
from backend.budgets import BudgetGuard, BudgetHooks, with_limit
from backend.config.budgets import BudgetLimits
from backend.events import EngineEvent, QuestionAsked
from backend.questions import QuestionBoard
from tests.support.polling import until


def _row(tokens: int) -> dict[str, Any]:
    return {"session_id": "s1", "turn_id": "t", "agent": "engineer", "provider": "p",
            "model": "m", "input_tokens": tokens, "output_tokens": 0, "cache_read_tokens": 0,
            "cache_write_tokens": 0, "cost_usd": None, "at": "y"}  # fmt: skip


async def test_checks_at_one_limit_share_one_question_and_stop_is_remembered(
    data_dir: Path,
) -> None:
    archive = Archive(data_dir)
    events: list[EngineEvent] = []
    board = QuestionBoard(events.append)
    board.attach()
    metadata: dict[str, Any] = {}
    notices: list[str] = []
    stopped: list[str] = []

    async def set_metadata(_sid: str, key: str, value: Any) -> None:
        metadata[key] = value

    async def notice(_sid: str, text: str, **_: Any) -> None:
        notices.append(text)

    guard = BudgetGuard(
        archive=archive,
        questions=board,
        configured=BudgetLimits(session_tokens=400),
        hooks=BudgetHooks(lambda _: metadata, set_metadata, notice, stopped.append),
    )
    try:
        await archive.arecord_usage([_row(500)])
        checks = [asyncio.create_task(guard.check("s1", f"p1/e{n}")) for n in range(3)]
        await until(board.pending, what="the budget question")
        [asked] = board.pending()
        assert board.answer(asked.question_id, "stop")
        said = await asyncio.gather(*checks)
        assert len(set(said)) == 1 and str(said[0]).startswith("Budget reached, work stopped")
        assert stopped == ["s1"]
        assert await guard.check("s1", None) == said[0]  # remembered: not asked again
        assert len([e for e in events if isinstance(e, QuestionAsked)]) == 1

        metadata["budget"] = with_limit(metadata, "session", "tokens", 1000)  # /budget
        assert await guard.check("s1", None) is None
        assert notices[0].startswith("⏸ Budget reached") and notices[1].startswith("■")
    finally:
        archive.close()
