"""Idempotency keys: a retried write with the same key happens once.

Per session, a bounded LRU map from key to (fingerprint of op + args, the
envelope or the call still in flight). The same key with the same request
returns the first envelope (``meta.replayed = true``); with a different
request it is a CONFLICT. Only successful calls keep their key: a failed call
releases it so a retry runs again. Dry runs never take a key (nothing happened).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from backend.skills.envelopes import Envelope, ErrorCode, failure


def fingerprint(op: str, args: dict[str, Any]) -> str:
    raw = json.dumps([op, args], sort_keys=True, default=str).encode()
    return hashlib.sha256(raw).hexdigest()


@dataclass
class _Entry:
    fingerprint: str
    outcome: asyncio.Future[Envelope]


class IdempotencyStore:
    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._sessions: dict[str, OrderedDict[str, _Entry]] = {}

    async def run(
        self,
        session_id: str,
        key: str,
        *,
        op: str,
        args: dict[str, Any],
        trace_id: str,
        call: Callable[[], Awaitable[Envelope]],
    ) -> Envelope:
        entries = self._sessions.setdefault(session_id, OrderedDict())
        fp = fingerprint(op, args)
        entry = entries.get(key)
        if entry is not None:
            entries.move_to_end(key)
            if entry.fingerprint != fp:
                return failure(
                    op,
                    ErrorCode.CONFLICT,
                    f"idempotency key {key!r} was already used for a different request",
                    trace_id=trace_id,
                    details={"idempotency_key": key},
                    help_path=op,
                )
            first = await asyncio.shield(entry.outcome)
            replay = first.model_copy(deep=True)
            replay.meta.replayed = True
            return replay
        future: asyncio.Future[Envelope] = asyncio.get_running_loop().create_future()
        entries[key] = _Entry(fp, future)
        while len(entries) > self.capacity:
            entries.popitem(last=False)
        try:
            envelope = await call()
        except BaseException as exc:
            entries.pop(key, None)
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        if not envelope.ok:
            entries.pop(key, None)
        future.set_result(envelope)
        return envelope

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
