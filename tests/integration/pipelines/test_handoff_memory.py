"""After a handoff the new pipeline's engineer starts from the handoff state alone: its
memory (``backend.memory.ledger``) begins after the old pipeline's last transcript
message, so the old turns neither fill its context nor count in its measured use."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.events import HandoffCompleted
from backend.memory.keeper import _since
from tests.integration.pipelines.task_runs import Desk
from tests.integration.pipelines.test_handoff import (
    FULL,
    LIGHT,
    completed,
    engineer_turns,
    handoff_entries,
    write_script,
)


async def test_the_new_engineer_measures_only_the_handoff_state_and_does_not_hand_off_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    write_script(tmp_path, monkeypatch, [
        *engineer_turns("a.txt", FULL),
        *engineer_turns("b.txt", LIGHT, expect="PIPELINE HANDOFF 1"),
    ], [{"text": "no change"}])  # fmt: skip
    desk = Desk(data_dir, workspace)
    try:
        sid = await desk.session("auto-edit")
        seen: list[str | None] = []
        ledger = desk.parts.turns.context
        desk.engine.events.add_listener(
            lambda e: (
                seen.append(ledger.get(sid, "engineer").through)
                if isinstance(e, HandoffCompleted)
                else None
            )
        )
        reply = await desk.say(sid, "@engineer write a.txt then b.txt")
        assert str(reply["text"]).endswith("Wrote b.txt.")
        assert len(completed(desk)) == 1  # the light turn of p2 did not hand off again
        memory = ledger.get(sid, "engineer")
        transcript = await desk.engine.transcript(sid)
        ids = [m.id for m in transcript]
        # Its context starts after the old pipeline's last message (the review's answer).
        assert seen == [memory.through] and memory.through in ids
        old = transcript[: ids.index(memory.through) + 1]
        assert any("Wrote a.txt." in str(m.payload.get("text")) for m in old)
        assert not any("Wrote a.txt." in str(m.payload.get("text"))
                       for m in _since(transcript, memory.through))  # fmt: skip
        # Measured before p2's turn: an estimate of the handoff state, not p1's 97%.
        assert memory.use is not None and memory.use.fraction < 0.1
        assert memory.summary is None and not memory.done
    finally:
        await desk.aclose()


async def test_a_chain_still_hands_off_when_usage_climbs_again_each_from_its_own_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    write_script(tmp_path, monkeypatch, [
        *engineer_turns("a.txt", FULL),
        # p2's context restarted, but its own turn fills it again: it hands off too.
        *engineer_turns("b.txt", FULL, expect="PIPELINE HANDOFF 1"),
        *engineer_turns("c.txt", LIGHT, expect="PIPELINE HANDOFF 2"),
    ], [{"text": "no change"}, {"text": "no change"}])  # fmt: skip
    desk = Desk(data_dir, workspace)
    try:
        sid = await desk.session("auto-edit")
        starts: list[str | None] = []
        ledger = desk.parts.turns.context
        desk.engine.events.add_listener(
            lambda e: (
                starts.append(ledger.get(sid, "engineer").through)
                if isinstance(e, HandoffCompleted)
                else None
            )
        )
        await desk.say(sid, "@engineer write three files")
        assert [e.handoff_index for e in completed(desk)] == [1, 2]
        assert [r["handoff_index"] for r in await handoff_entries(desk, sid)] == [1, 2]
        ids = [m.id for m in await desk.engine.transcript(sid)]
        first, second = starts
        assert first in ids and second in ids and ids.index(first) < ids.index(second)
    finally:
        await desk.aclose()
