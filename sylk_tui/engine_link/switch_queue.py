"""Bringing sessions to the front by hand: the latest request wins.

Flipping through the list (alt+down, alt+down, …) asks for a switch at every key;
the engine should bring only the session the user stops at to the front. One
drain at a time takes the newest request, waits its turn among the engine calls
(``lock``), and switches; requests made meanwhile replace each other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class SwitchQueue:
    def __init__(
        self,
        switch: Callable[[str], Awaitable[object]],
        front: Callable[[], str | None],
        lock: asyncio.Lock,
    ) -> None:
        self._switch = switch
        self._front = front
        self._lock = lock
        self._wanted: str | None = None
        self.draining = False
        self.steering = False
        """True while a switch asked for by hand runs in the engine: the foreground
        changes it causes must not move the screen, which is already there."""

    @property
    def wanted(self) -> str | None:
        return self._wanted

    def want(self, session_id: str) -> bool:
        """Ask for ``session_id`` in front; True when a drain must be started for it."""
        self._wanted = session_id
        return not self.draining and session_id != self._front()

    def forget(self) -> None:
        """Drop the request not yet carried out (the user went somewhere else)."""
        self._wanted = None

    async def drain(self) -> None:
        """Switch until the newest request is in front (or dropped)."""
        self.draining = True
        try:
            while self._wanted is not None:
                async with self._lock:
                    target, self._wanted = self._wanted, None
                    if target is None or target == self._front():
                        continue
                    self.steering = True
                    try:
                        await self._switch(target)
                    finally:
                        self.steering = False
        finally:
            self.draining = False
