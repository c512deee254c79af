"""A restore makes each agent's context the snapshot's again, on real engines.

The transcript is append-only, so what was said after a snapshot stays in it; after
``/session restore`` an agent's next model request must hold the snapshot's conversation
(as a preface) and not those later turns, and so must the first request of an engine
started afresh on the same data (the rewind is a chronicle record). The scripted
provider's ``expect`` checks the request's last user message: the preface is merged
into it only when no message stands between them, so a match proves both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.agents.conversation import conversation
from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.knowledge.chronicle.models import ChronicleQuery
from backend.memory.keeper import ContextKeeper
from backend.memory.ledger import ContextLedger
from tests.integration.plans.conftest import parts, say, scripted

ROLE = "inspector"
BEFORE = "ALPHA-7 the parser drops trailing commas"
AFTER = "BETA-9 rewrote the lexer entirely"


async def _history(engine_parts: EngineParts, sid: str, ledger: ContextLedger) -> str:
    """What the role's model would be sent now, as one text (the engine's own keeper)."""
    keeper = ContextKeeper(ledger, engine_parts.knowledge.chronicle, conversation)
    transcript = await engine_parts.sessions.transcript(sid, limit=400)
    history = await keeper.prepare(sid, ROLE, transcript, "next", window=200_000)
    return "\n".join(m.text for m in history)


async def test_after_a_restore_the_agent_reads_the_snapshot_tail_not_the_later_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    scripted(tmp_path, monkeypatch, [
        {"expect": "first question", "text": BEFORE},
        {"expect": "second question", "text": AFTER},
        {"expect": BEFORE, "text": "GAMMA-3 reviewed again"},
    ])  # fmt: skip
    first = parts(data_dir, workspace)
    engine = Engine.from_parts(first)
    try:
        sid = (await engine.create_session("ctx")).id
        assert BEFORE in (await say(engine, sid, f"@{ROLE} first question"))["text"]
        said = await say(engine, sid, "/session snapshot good")
        assert "'good'" in said["text"], said
        assert AFTER in (await say(engine, sid, f"@{ROLE} second question"))["text"]
        # before the restore, the later turn is in the agent's context
        assert AFTER in await _history(first, sid, first.turns.context)

        said = await say(engine, sid, "/session restore good")
        assert "restored" in said["text"], said
        now = await _history(first, sid, first.turns.context)
        assert BEFORE in now and "first question" in now
        assert AFTER not in now and "second question" not in now
        # the real next request: the preface and the question in one user message
        assert "GAMMA-3" in (await say(engine, sid, f"@{ROLE} third question"))["text"]
        kept = await first.knowledge.chronicle.query(sid, ChronicleQuery(current_only=True))
        assert any(e.data.get("restored_from") and e.agent == ROLE for e in kept)
    finally:
        await engine.aclose()

    scripted(tmp_path, monkeypatch, [{"expect": "fourth question", "text": "DELTA-4 later"}])
    second = parts(data_dir, workspace)  # a fresh engine: the ledger is read back
    engine = Engine.from_parts(second)
    try:
        fresh = await _history(second, sid, ContextLedger())
        assert BEFORE in fresh and "GAMMA-3" in fresh and "third question" in fresh
        assert AFTER not in fresh and "second question" not in fresh
        assert "DELTA-4" in (await say(engine, sid, f"@{ROLE} fourth question"))["text"]
    finally:
        await engine.aclose()


async def test_a_restore_after_a_restore_goes_back_again_and_a_later_turn_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    scripted(tmp_path, monkeypatch, [
        {"expect": "first question", "text": BEFORE},
        {"expect": "second question", "text": AFTER},
    ])  # fmt: skip
    built = parts(data_dir, workspace)
    engine = Engine.from_parts(built)
    try:
        sid = (await engine.create_session("ctx")).id
        await say(engine, sid, "/session snapshot empty")  # nothing said yet
        await say(engine, sid, f"@{ROLE} first question")
        await say(engine, sid, "/session snapshot one")
        await say(engine, sid, f"@{ROLE} second question")
        await engine.restore_snapshot(sid, "empty")
        text = await _history(built, sid, built.turns.context)
        assert BEFORE not in text and AFTER not in text
        assert "no conversation in the session" in text
        await engine.restore_snapshot(sid, "one")  # forward again: the tail comes back
        text = await _history(built, sid, built.turns.context)
        assert BEFORE in text and AFTER not in text
        # both rewinds are kept; the newest wins when read back
        assert BEFORE in await _history(built, sid, ContextLedger())
    finally:
        await engine.aclose()
