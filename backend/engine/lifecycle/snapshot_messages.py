"""The session's undelivered bus messages in a snapshot, and delivered again by a restore.

Captured: every message queued in one of the session's inboxes, waiting in the retry
queue, or dead-lettered (the newest ``DEAD_LETTERS_KEPT``). On restore:

* a one-way message (a broadcast note, a late reply to the user) queued or waiting for
  a retry is sent again to its agent, with a fresh life span (its deadline moved by the
  time since it was sent, as a dead letter's replay does) and ``restored_from`` in its
  metadata; a copy still in flight is not sent twice, and a dead letter of it is dropped;
* a request (its sender awaited the reply: an agent turn asked by the user, a consult
  asked by another agent's turn) is not sent again: the wait ended with the work that
  awaited it, and a reply to it would reach no one or, worse, an agent's inbox as a new
  request. The restore's reply names each, so the user can ask again;
* a dead letter goes back to the dead-letter queue (unless it is there), to be seen and
  replayed as before.

A message of another session, or one that does not parse, makes the snapshot unreadable
before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from backend.bus.dead_letter import DeadLetterReason
from backend.errors import SylkError
from backend.guide.guide import USER
from backend.messages import Message, MessageStatus
from backend.roles import AGENT_ROLES
from backend.sessions.snapshots import PendingHeld, PendingMessage, SnapshotUnreadableError

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

DEAD_LETTERS_KEPT = 50
Envelope = Message[dict[str, Any]]


@dataclass
class MessagesBack:
    """What a restore did with the snapshot's pending messages."""

    sent: int = 0
    dead_letters: int = 0
    not_sent: list[str] = field(default_factory=list)  # one line per message, why

    def lines(self) -> list[str]:
        said = [f"Not sent again: {why}" for why in self.not_sent]
        if self.sent or self.dead_letters:
            said.insert(0, f"{self.sent} pending message(s) delivered again, "
                           f"{self.dead_letters} dead letter(s) back.")  # fmt: skip
        return said


def capture_messages(parts: EngineParts, session_id: str) -> list[PendingMessage]:
    """The session's undelivered messages, as the bus holds them now."""
    guide = parts.guide
    found: list[PendingMessage] = []
    if guide.bus.has_session(session_id):
        awaited = guide.bus.awaited(session_id)
        for agent in guide.bus.agents(session_id):
            for m in guide.bus.inbox(session_id, agent).peek():
                found.append(_pending(m, "inbox", request=m.id in awaited))
        for m in guide.retry.queued(session_id):
            found.append(_pending(m, "retry", request=m.id in awaited))
    for letter in guide.dead_letters.entries(session_id, limit=DEAD_LETTERS_KEPT):
        found.append(
            PendingMessage(
                message=letter.message.model_dump(mode="json"),
                held="dead_letter",
                reason=letter.reason.value,
                error=letter.error,
            )
        )
    return found


def _pending(message: Message[Any], held: PendingHeld, *, request: bool) -> PendingMessage:
    data = message.model_dump(mode="json")
    if request and isinstance(data.get("payload"), dict):  # never sent again: no history
        data["payload"] = {k: v for k, v in data["payload"].items() if k != "history"}
    return PendingMessage(message=data, held=held, request=request)


def checked_messages(
    snapshot_id: str, session_id: str, pending: list[PendingMessage]
) -> list[tuple[PendingMessage, Envelope]]:
    """Each pending message parsed, all of them the session's; else unreadable."""
    checked: list[tuple[PendingMessage, Envelope]] = []
    for item in pending:
        try:
            message = Envelope.model_validate(item.message)
        except ValidationError as exc:
            why = f"a pending message does not parse: {exc.errors()[0]['msg']}"
            raise SnapshotUnreadableError(snapshot_id, why) from None
        if message.session_id != session_id:
            raise SnapshotUnreadableError(
                snapshot_id, f"message {message.id} is not this session's"
            )
        checked.append((item, message))
    return checked


async def deliver_again(
    parts: EngineParts,
    session_id: str,
    snapshot_id: str,
    checked: list[tuple[PendingMessage, Envelope]],
) -> MessagesBack:
    """Send the one-way messages again, list the requests, put the dead letters back."""
    guide, back = parts.guide, MessagesBack()
    in_flight = _in_flight(parts, session_id)
    dead = {e.message.id: e for e in guide.dead_letters.entries(session_id)}
    for item, message in checked:
        if item.held == "dead_letter":
            if message.id not in dead and message.id not in in_flight:
                reason = _reason(item.reason)
                guide.dead_letters.add(message, reason, error=item.error)
                back.dead_letters += 1
            continue
        if item.request:
            text = str(message.payload.get("text") or message.type)[:80]
            back.not_sent.append(f"a request to the {message.target} ({text!r}): "
                                 "the wait for its reply ended; ask again")  # fmt: skip
            continue
        if message.id in in_flight:
            continue
        target = message.target or ""
        if target not in (*AGENT_ROLES, USER):
            back.not_sent.append(f"message {message.id[:8]} to {target or 'nobody'}: no such agent")
            continue
        if target == USER and not guide.bus.has_agent(session_id, USER):
            back.not_sent.append(f"a late reply {message.id[:8]}: nobody waits for it now")
            continue
        try:
            if target != USER:
                parts.dispatcher.ensure(session_id, target)
            await guide.send(_fresh(parts, message, snapshot_id), timeout=0)
        except SylkError as exc:
            back.not_sent.append(f"message {message.id[:8]} to the {target}: {exc}")
            continue
        if message.id in dead:
            guide.dead_letters.purge(session_id, ids=[dead[message.id].id])
        back.sent += 1
    return back


def _in_flight(parts: EngineParts, session_id: str) -> set[str]:
    bus = parts.guide.bus
    ids = {m.id for m in parts.guide.retry.queued(session_id)}
    if bus.has_session(session_id):
        for agent in bus.agents(session_id):
            ids.update(m.id for m in bus.inbox(session_id, agent).peek())
    return ids


def _fresh(parts: EngineParts, message: Envelope, snapshot_id: str) -> Envelope:
    """A fresh life span, as a dead letter's replay gives one."""
    now = parts.guide.bus.wall_clock()
    shift = now - message.timestamp
    return message.model_copy(
        update={
            "attempt": 0,
            "status": MessageStatus.PENDING,
            "error": None,
            "timestamp": now,
            "deadline": None if message.deadline is None else message.deadline + shift,
            "metadata": {**message.metadata, "restored_from": snapshot_id},
        }
    )


def _reason(value: str | None) -> DeadLetterReason:
    try:
        return DeadLetterReason(value or "")
    except ValueError:
        return DeadLetterReason.UNDELIVERABLE
