"""The Provider protocol every adapter implements.

An adapter makes exactly ONE attempt per ``stream`` call: it never retries,
and the vendor SDK's own retries are switched off. It yields vendor-neutral
stream events and raises a :class:`~backend.llm.errors.ProviderError` subclass
on failure. Retries, deadlines, the circuit breaker and assembling the final
:class:`~backend.llm.types.ChatResult` belong to the retrying client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from backend.llm.types import ChatRequest, StreamEvent


@runtime_checkable
class Provider(Protocol):
    name: str

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """One attempt at a chat turn, streamed."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
