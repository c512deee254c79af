"""A running command's output, relayed to whoever watches the turn, without flooding them.

The command runner calls an output sink with each chunk it reads (``(stream,
chunk)``, see :data:`backend.skills.call_flags.COMMAND_OUTPUT_KEY`). A command can
print megabytes a second; the transcript shows its last twenty lines. So the
relay coalesces: it sends at most one batch per ``interval_s`` (100 ms), and a
batch holds at most ``max_chars`` (the newest 4 KiB; how much older text was
skipped is counted in ``dropped``). Batches go out in order, and :meth:`aclose`
sends the last one, so the final ``tool_result`` always comes after every batch
of its call.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.1
MAX_BATCH_CHARS = 4 * 1024

Emit = Callable[[dict[str, Any]], Awaitable[None]]
"""Sends one batch: ``{"stream": "stdout"|"stderr"|"mixed", "text": ..., "dropped": n}``."""


class OutputRelay:
    """An output sink for one tool call; made on the event loop that runs the call."""

    def __init__(
        self,
        emit: Emit,
        *,
        interval_s: float = FLUSH_INTERVAL_S,
        max_chars: int = MAX_BATCH_CHARS,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._emit = emit
        self._interval = interval_s
        self._max = max_chars
        self._streams: list[str] = []
        self._text = ""
        self._dropped = 0
        self._timer: asyncio.TimerHandle | None = None
        self._sending: asyncio.Task[None] | None = None
        self._closed = False
        self.chunks = 0
        """Chunks received, for tests and figures."""
        self.batches = 0
        """Batches sent."""

    def __call__(self, stream: str, chunk: str) -> None:
        if threading.get_ident() != self._thread:  # a runner reading in a thread
            self._loop.call_soon_threadsafe(self, stream, chunk)
            return
        if self._closed or not chunk:
            return
        self.chunks += 1
        if stream not in self._streams:
            self._streams.append(stream)
        self._text += chunk
        if len(self._text) > self._max:
            self._dropped += len(self._text) - self._max
            self._text = self._text[-self._max :]
        if self._timer is None:
            self._timer = self._loop.call_later(self._interval, self._flush)

    def _flush(self) -> None:
        self._timer = None
        if not self._text:
            return
        stream = self._streams[0] if len(self._streams) == 1 else "mixed"
        batch = {"stream": stream, "text": self._text, "dropped": self._dropped}
        self._streams, self._text, self._dropped = [], "", 0
        self.batches += 1
        self._sending = self._loop.create_task(
            self._send(self._sending, batch), name="sylk-command-output"
        )

    async def _send(self, previous: asyncio.Task[None] | None, batch: dict[str, Any]) -> None:
        if previous is not None:
            await previous  # in order: a batch never overtakes the one before it
        try:
            await self._emit(batch)
        except Exception:  # a watcher's failure must not fail the command
            log.exception("relaying command output failed")

    async def aclose(self) -> None:
        """Send what is pending and wait until every batch is out; later chunks are dropped."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        self._flush()
        if self._sending is not None:
            await self._sending

    def discard(self) -> None:
        """The call was cancelled: drop what is pending and stop sending."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._sending is not None:
            self._sending.cancel()
