"""The app may be handed a function that builds the engine: its first frame comes first.

``sylk`` starts the TUI this way, so the screen is drawn before the engine's modules
are imported and its archive opened; everything the user does waits for the engine.
A failure to build it ends the app with the error, as a failure before start did.
"""

from __future__ import annotations

from pathlib import Path

from backend.archive.store import DB_NAME
from backend.engine import Engine, EngineConfig
from backend.errors import ArchiveCorruptError
from sylk_tui.app import SylkApp
from tests.tui.support import main_screen, send_line, settle, wait_for

SIZE = (120, 40)


async def test_an_engine_built_after_the_first_frame_serves_the_user(
    engine_config: EngineConfig,
) -> None:
    built: list[Engine] = []

    def build() -> Engine:
        built.append(Engine(engine_config))
        return built[-1]

    app = SylkApp(build)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: main_screen(app).session_list.sessions, "a session")
        await send_line(pilot, "/session new second")
        await wait_for(pilot, lambda: len(main_screen(app).session_list.sessions) == 2, "two")
        await settle(pilot)
        assert {s.name for s in main_screen(app).session_list.sessions} == {"session 1", "second"}
    assert len(built) == 1
    assert [s.name for s in built[0].list_sessions()] == ["session 1", "second"]
    assert built[0].events.subscriber_count == 0  # closed with the app
    assert app.startup_error is None


async def test_an_engine_that_cannot_be_built_ends_the_app_with_its_error(
    engine_config: EngineConfig,
) -> None:
    db = Path(engine_config.data_dir) / DB_NAME
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"this is not a SQLite database" * 100)
    app = SylkApp(lambda: Engine(engine_config))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.startup_error is not None, "the start-up error")
    assert isinstance(app.startup_error, ArchiveCorruptError)
    assert app.return_code == 1
