"""The repl's loop in-process, over a real engine, with lines handed in by the test:
the prompt follows the session, a question that comes while the prompt waits is asked
at once (the prompt comes back after), and the end of input leaves."""

from __future__ import annotations

import asyncio

from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.events import ChoiceOption, ChoiceQuestion
from sylk_tui.repl.loop import Repl
from tests.support.polling import finishes, until


class HandedLines:
    """Lines the test hands in one at a time; every prompt shown is kept."""

    def __init__(self) -> None:
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.answers: asyncio.Queue[str | None] = asyncio.Queue()
        self.prompts: list[str] = []
        self.asked: list[str] = []
        self.closed = False

    async def read(self, prompt: str) -> str | None:
        self.prompts.append(prompt)
        return await self.lines.get()

    async def ask(self, prompt: str) -> str | None:
        self.asked.append(prompt)
        return await self.answers.get()

    def close(self) -> None:
        self.closed = True


async def test_the_prompt_follows_the_session_and_the_end_of_input_leaves(
    engine: Engine,
) -> None:
    lines = HandedLines()
    first = await engine.create_session("first")
    repl = asyncio.create_task(Repl(engine, lines).run(first.id))
    await until(lambda: lines.prompts == ["sylk:first> "])
    lines.lines.put_nowait("/session new second")
    await until(lambda: lines.prompts[-1:] == ["sylk:second> "])
    lines.lines.put_nowait("/session switch first")
    await until(lambda: len(lines.prompts) == 3 and lines.prompts[-1] == "sylk:first> ")
    lines.lines.put_nowait(None)
    assert await finishes(repl, what="the repl at the end of input") == 0
    assert lines.closed


async def test_a_question_asked_while_the_prompt_waits_is_answered_at_once(
    engine: Engine, engine_parts: EngineParts
) -> None:
    lines = HandedLines()
    session = await engine.create_session("work")
    repl = asyncio.create_task(Repl(engine, lines).run(session.id))
    await until(lambda: len(lines.prompts) == 1)
    options = [ChoiceOption("ruff", "ruff"), ChoiceOption("pylint", "pylint")]
    question = ChoiceQuestion("Which linter?", "for python", options=options)
    asked = asyncio.create_task(engine_parts.questions.ask(question, session.id))
    await until(lambda: len(lines.asked) == 1)  # the prompt gave way to the question
    lines.answers.put_nowait("2")
    assert await finishes(asked, what="the answer") == "pylint"
    await until(lambda: len(lines.prompts) == 2)  # and came back
    lines.lines.put_nowait("/quit")
    assert await finishes(repl, what="the repl after /quit") == 0
    assert not engine.pending_questions()
