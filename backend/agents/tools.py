"""The tool executor interface of the agent loop.

The skill gateway's executor (``backend.agents.gateway_tools``) implements it: a model
sees the gateway verbs and a few core skills, and reaches the rest through them.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

from backend.llm.types import ToolCall, ToolSpec


class ToolOutcome(BaseModel):
    content: str
    is_error: bool = False


class ToolExecutor(Protocol):
    def specs(self) -> list[ToolSpec]: ...

    async def execute(self, call: ToolCall) -> ToolOutcome: ...
