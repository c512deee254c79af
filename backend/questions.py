"""Questions the engine puts to the user, and how a front end answers them.

A front end that can ask (the TUI) sets ``Engine.ask_user`` to a coroutine
function; it shows the question and returns the value of the option chosen,
or None when the user declines. Without one (``sylk run``), the engine says in
its answer how to make the choice with a command instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ChoiceOption:
    value: str
    label: str
    detail: str = ""
    recommended: bool = False


@dataclass(frozen=True)
class ChoiceQuestion:
    title: str
    prompt: str
    options: list[ChoiceOption] = field(default_factory=list)


Prompter = Callable[[ChoiceQuestion], Awaitable[str | None]]
