"""The tool executor interface of the agent loop.

The skill gateway's executor (``backend.agents.gateway_tools``) implements it: a model
sees the gateway verbs and a few core skills, and reaches the rest through them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from pydantic import BaseModel

from backend.llm.types import ToolCall, ToolSpec

OutputSink = Callable[[str, str], None]
"""Called with ``(stream, chunk)`` as a running command prints (see ``command_output``)."""


class ToolOutcome(BaseModel):
    content: str
    is_error: bool = False


class ToolExecutor(Protocol):
    def specs(self) -> list[ToolSpec]: ...

    async def execute(self, call: ToolCall, on_output: OutputSink | None = None) -> ToolOutcome:
        """Run ``call``; a command it runs reports its output to ``on_output`` as it goes."""
        ...
