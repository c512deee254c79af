"""Started as ``sylk`` starts it, the app freezes its start-up heap once the sessions are
on screen (full garbage collections then skip it) and unfreezes it when it closes."""

from __future__ import annotations

import gc

from backend.engine import Engine, EngineConfig
from sylk_tui.app import SylkApp
from tests.tui.support import main_screen, wait_for

SIZE = (120, 40)


async def test_the_start_up_heap_is_frozen_once_ready_and_unfrozen_on_close(
    engine_config: EngineConfig,
) -> None:
    assert gc.get_freeze_count() == 0
    app = SylkApp(lambda: Engine(engine_config))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: main_screen(app).session_list.sessions, "a session")
        await wait_for(pilot, lambda: gc.get_freeze_count() > 0, "the heap frozen")
        assert gc.get_freeze_count() > 10_000  # modules, classes, the engine, the screen
    assert gc.get_freeze_count() == 0  # the next app in this process starts clean
