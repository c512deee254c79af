"""A model client whose calls count as one agent's context, for an agent without turns.

The Guide's model tier asks one bounded ``route`` call per unsure request and keeps no
conversation, so there is nothing to checkpoint or compact; what its window holds is
still worth seeing in ``/status`` ("guide 1% of 200k"), so each call's usage is noted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from backend.llm.types import ChatRequest, ChatResult, StreamEvent
from backend.memory.ledger import ContextLedger
from backend.memory.windows import ContextUse, input_tokens

OnEvent = Callable[[StreamEvent], Awaitable[None] | None]


class ChatRunner(Protocol):
    async def run(self, request: ChatRequest, on_event: OnEvent | None = None) -> ChatResult: ...


class MeteredClient:
    """``inner``'s calls, each one's usage noted as ``role``'s context in ``session_id``."""

    def __init__(
        self, inner: ChatRunner, ledger: ContextLedger, session_id: str, role: str, window: int
    ) -> None:
        self._inner = inner
        self._ledger = ledger
        self._session_id = session_id
        self._role = role
        self._window = window

    async def run(self, request: ChatRequest, on_event: OnEvent | None = None) -> ChatResult:
        result = await self._inner.run(request, on_event)
        usage = result.usage
        tokens = input_tokens(usage) + usage.output_tokens
        if tokens > 0:
            memory = self._ledger.get(self._session_id, self._role)
            memory.use = ContextUse(tokens, self._window, estimated=usage.estimated)
        return result
