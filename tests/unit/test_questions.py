"""Questions to the user travel as events carrying a future; any front end may answer."""

from __future__ import annotations

import asyncio

from backend.events import (
    ChoiceOption,
    ChoiceQuestion,
    EngineEvent,
    QuestionAsked,
    QuestionSettled,
    event_to_json,
)
from backend.questions import QuestionBoard

QUESTION = ChoiceQuestion("Pick a linter", "Both are common.", [ChoiceOption("ruff", "ruff")])


def board_and_events() -> tuple[QuestionBoard, list[EngineEvent]]:
    events: list[EngineEvent] = []
    return QuestionBoard(events.append), events


async def test_nobody_to_answer_means_no_question_is_asked() -> None:
    board, events = board_and_events()
    assert await board.ask(QUESTION, "s1") is None
    assert events == [] and board.pending() == []


async def test_an_answer_by_future_or_by_id_settles_the_question() -> None:
    board, events = board_and_events()
    board.attach()
    first = asyncio.create_task(board.ask(QUESTION, "s1"))
    second = asyncio.create_task(board.ask(QUESTION, "s2"))
    await asyncio.sleep(0)
    asked = [e for e in events if isinstance(e, QuestionAsked)]
    assert [a.session_id for a in asked] == ["s1", "s2"]
    assert [q.question_id for q in board.pending("s2")] == [asked[1].question_id]

    asked[0].answer.set_result("ruff")  # the TUI resolves the future it was handed
    assert board.answer(asked[1].question_id, None)  # the CLI knows only the id
    assert await first == "ruff" and await second is None
    settled = [e for e in events if isinstance(e, QuestionSettled)]
    assert [(s.question_id, s.value) for s in settled] == [
        (asked[0].question_id, "ruff"),
        (asked[1].question_id, None),
    ]
    assert board.pending() == [] and not board.answer(asked[0].question_id, "again")


async def test_a_stopped_turn_withdraws_its_question() -> None:
    board, events = board_and_events()
    board.attach()
    waiting = asyncio.create_task(board.ask(QUESTION, "s1"))
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert waiting.cancelled() and board.pending() == []
    assert isinstance(events[-1], QuestionSettled) and events[-1].withdrawn


async def test_when_the_last_front_end_leaves_pending_questions_are_withdrawn() -> None:
    board, events = board_and_events()
    detach = board.attach()
    waiting = asyncio.create_task(board.ask(QUESTION, "s1"))
    await asyncio.sleep(0)
    detach()
    detach()  # twice is harmless
    assert await waiting is None
    assert isinstance(events[-1], QuestionSettled) and events[-1].withdrawn
    assert not board.answered_here


def test_the_event_serialises_without_its_future() -> None:
    loop = asyncio.new_event_loop()
    try:
        asked = QuestionAsked(question_id="q1", question=QUESTION, answer=loop.create_future())
        text = event_to_json(asked)
    finally:
        loop.close()
    assert '"question_id":"q1"' in text and "answer" not in text and "ruff" in text
