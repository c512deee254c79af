"""A snapshot keeps the session's undelivered bus messages; a restore delivers them again.

On a real engine's bus: a broadcast note queued for an agent whose consumer is not
taking messages, a request whose sender waits for the reply, and a dead letter. Then
everything is lost (the agents leave, their queues dead-lettered; the dead letter is
purged). Restoring sends the note again through the agent's real consumer to the note
desk, names the request without sending it (its wait is over), and puts the dead letter
back. Also: a doctored snapshot whose message belongs to another session is refused
before anything is written, and what happens to questions that were waiting.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from typing import Any

import pytest

from backend.agents.dispatch import DESK_KEY
from backend.bus.dead_letter import DeadLetterReason
from backend.bus.errors import BusError
from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.events import ChoiceOption, ChoiceQuestion
from backend.messages import Message, MessageType, Priority
from backend.sessions.snapshots import SnapshotUnreadableError
from backend.team.messages import NOTE_DESK, NOTES_KEY
from tests.support.polling import until


def _note(sid: str, text: str) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id=sid, source="architect", target="academic", type=MessageType.SYSTEM_NOTICE,
        payload={"text": text, "from": "architect", "id": "bc_test"},
        metadata={DESK_KEY: NOTE_DESK}, priority=Priority.HIGH,
    )  # fmt: skip


def _notes(parts: EngineParts, sid: str) -> list[str]:
    kept = parts.sessions.get(sid).metadata.get(NOTES_KEY) or {}
    return [n["text"] for n in kept.get("academic", [])]


async def test_pending_messages_come_back_and_requests_are_named(
    engine: Engine, engine_parts: EngineParts
) -> None:
    sid = (await engine.create_session("bus")).id
    guide, bus = engine_parts.guide, engine_parts.guide.bus
    bus.register(sid, "academic")  # an inbox whose consumer takes nothing now
    note = _note(sid, "NOTE-1 use the v2 API")
    await guide.send(note, timeout=0)
    bus.register(sid, "tester")
    request = Message[dict[str, Any]](
        session_id=sid, source="user", target="tester", type=MessageType.USER_INPUT,
        payload={"text": "run the whole suite", "history": [{"role": "user", "text": "x"}]},
    )  # fmt: skip
    waiting = asyncio.create_task(guide.ask(request, timeout=30))
    await until(lambda: bus.inbox(sid, "tester").qsize() == 1)
    failed = _note(sid, "NOTE-0 an old failure")
    guide.dead_letters.add(failed, DeadLetterReason.HANDLER_FAILED, error="boom")

    snap = await engine.snapshot_session(sid, "busy")
    assert snap.workflow is not None
    held = {(p.held, p.request) for p in snap.workflow.pending_messages}
    assert held == {("inbox", False), ("inbox", True), ("dead_letter", False)}
    kept_request = next(p for p in snap.workflow.pending_messages if p.request)
    assert "history" not in kept_request.message["payload"]  # never sent again

    # Everything is lost: the agents leave (their queues dead-lettered, the waiting
    # sender fails at once), the old dead letter is purged.
    bus.unregister(sid, "academic")
    bus.unregister(sid, "tester")
    with pytest.raises(BusError):
        await waiting
    guide.dead_letters.purge(sid, ids=[e.id for e in guide.dead_letters.entries(sid)
                                       if e.message.id == failed.id])  # fmt: skip
    assert _notes(engine_parts, sid) == []

    said = await engine.submit(sid, "/session restore busy")
    await until(lambda: _notes(engine_parts, sid) == ["NOTE-1 use the v2 API"])
    notice = next(m for m in await engine.transcript(sid) if m.payload.get("restored"))
    text = notice.payload["text"]
    assert "1 pending message(s) delivered again, 1 dead letter(s) back." in text, text
    assert "Not sent again: a request to the tester ('run the whole suite')" in text
    assert "restored" in said[-1].payload["text"]
    letters = {e.message.id: e for e in guide.dead_letters.entries(sid)}
    assert letters[failed.id].reason is DeadLetterReason.HANDLER_FAILED  # back, replayable
    assert note.id not in letters  # delivered, so its dead letter went
    assert letters[request.id].reason is DeadLetterReason.AGENT_UNREGISTERED  # as it was

    # Again: the notes kept go back to the snapshot's (none), the note is pending there,
    # so it arrives once more, once (the dead letter is there already: not doubled).
    await engine.restore_snapshot(sid, "busy")
    await until(lambda: _notes(engine_parts, sid) == ["NOTE-1 use the v2 API"])
    assert [e.message.id for e in guide.dead_letters.entries(sid)].count(failed.id) == 1


async def test_a_pending_message_of_another_session_is_refused_before_anything_is_written(
    engine: Engine, engine_parts: EngineParts
) -> None:
    sid = (await engine.create_session("doctored")).id
    snap = await engine.snapshot_session(sid, "doctored")
    doc = json.loads(snap.model_dump_json())
    stranger = json.loads(_note("someone-else", "NOTE-X").model_dump_json())
    doc["workflow"]["pending_messages"] = [{"message": stranger, "held": "inbox"}]
    with sqlite3.connect(engine_parts.archive.path) as db:
        db.execute("UPDATE snapshots SET data = ? WHERE id = ?", (json.dumps(doc), snap.id))
    before = len(await engine.transcript(sid))
    with pytest.raises(SnapshotUnreadableError) as refused:
        await engine.restore_snapshot(sid, "doctored")
    assert "is not this session's" in str(refused.value)
    assert len(await engine.transcript(sid)) == before  # nothing written, nothing said
    assert not engine_parts.guide.bus.has_agent(sid, "academic")


async def test_a_question_still_asked_stays_open_and_a_gone_one_is_named_not_asked(
    engine: Engine, engine_parts: EngineParts
) -> None:
    sid = (await engine.create_session("asking")).id
    board = engine_parts.questions
    detach = board.attach()  # a front end that answers
    try:
        question = ChoiceQuestion("Deploy?", "Ship build 42 now?", [ChoiceOption("yes", "Yes")])
        asking = asyncio.create_task(board.ask(question, sid))
        await until(lambda: len(board.pending(sid)) == 1)
        await engine.snapshot_session(sid, "asked")

        await engine.restore_snapshot(sid, "asked")  # its flow still waits: left open
        assert len(board.pending(sid)) == 1 and not asking.done()
        text = [m for m in await engine.transcript(sid) if m.payload.get("restored")][-1]
        assert "Still waiting for you: Deploy?: Ship build 42 now? (F2)" in text.payload["text"]

        asking.cancel()  # the flow that asked is gone
        await asyncio.gather(asking, return_exceptions=True)
        assert board.pending(sid) == []
        await engine.restore_snapshot(sid, "asked")
        text = [m for m in await engine.transcript(sid) if m.payload.get("restored")][-1]
        assert (
            "Was waiting for you: Deploy?: Ship build 42 now? (not asked again now"
            in (text.payload["text"])
        )
        assert board.pending(sid) == []  # a question without a flow is never re-asked
    finally:
        detach()
