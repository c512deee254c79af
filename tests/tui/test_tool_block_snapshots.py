"""SVG snapshots of an answer with tool blocks (a read, an edit, a failing command) at 120x40."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from backend.archive.store import Archive
from backend.engine import Engine, EngineConfig
from backend.messages import Message, MessageType
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, seed_archive, settle
from tests.tui.test_tool_blocks import actions

SIZE = (120, 40)
SnapCompare = Callable[..., bool]


def _app(data_dir: Path, workspace: Path) -> SylkApp:
    sessions = seed_archive(data_dir, workspace)
    answer = Message[dict[str, Any]](
        id="m900",
        session_id=sessions[2].id,  # the active session, on screen at start
        source="engineer",
        type=MessageType.AGENT_REPLY,
        payload={
            "text": "Reading.\n\nx is 2 now; one test still fails.",
            "actions": [a.stored() for a in actions()],
        },
        timestamp=FROZEN_NOW - timedelta(minutes=1),
    )
    archive = Archive(data_dir)
    try:
        archive.append_messages([answer])
    finally:
        archive.close()
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    return SylkApp(engine, clock=lambda: FROZEN_NOW, tz=UTC)


async def _settled(pilot: Pilot[Any], *keys: str) -> None:
    await settle(pilot)
    main_screen(pilot.app).composer.cursor_blink = False  # type: ignore[arg-type]
    await pilot.press(*keys)
    await settle(pilot)


def test_an_answer_with_tool_blocks(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _settled(pilot)

    assert snap_compare(_app(data_dir, workspace), terminal_size=SIZE, run_before=run_before)


def test_every_block_unfolded_and_one_selected(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _settled(pilot, "alt+o")
        main_screen(pilot.app).transcript.focus()  # type: ignore[arg-type]
        await _settled(pilot, "[", "[")

    assert snap_compare(_app(data_dir, workspace), terminal_size=SIZE, run_before=run_before)
