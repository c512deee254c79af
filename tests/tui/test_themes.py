"""Themes: switched by key, by /theme and from the palette; the choice survives a restart."""

from __future__ import annotations

from pathlib import Path

from backend.engine import Engine
from screens.session_commands import palette_entries
from sylk_tui.themes import THEME_FILE, ThemeChoice
from tests.tui.support import RecordingApp, main_screen, send_line, settle
from themes import DEFAULT_THEME, THEMES

SIZE = (120, 40)


async def test_the_theme_chosen_is_kept_across_a_restart(engine: Engine, tmp_path: Path) -> None:
    await engine.create_session("first")
    theme_file = tmp_path / THEME_FILE
    app = RecordingApp(engine, theme_file=theme_file)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == DEFAULT_THEME == "sylk-dark"
        await send_line(pilot, "/theme sylk-light")
        await pilot.pause()
        assert app.theme == "sylk-light"
        assert main_screen(app).composer.text == ""
    assert theme_file.stat().st_mode & 0o777 == 0o600
    again = RecordingApp(engine, theme_file=theme_file)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert again.theme == "sylk-light"
        await pilot.press("ctrl+t")  # the key: the next of Sylk's themes
        await pilot.pause()
        assert again.theme == "sylk-dark"
    assert ThemeChoice(theme_file).load(["sylk-dark", "sylk-light"], "x") == "sylk-dark"


async def test_a_mistyped_theme_is_refused_with_the_likely_one(engine: Engine) -> None:
    await engine.create_session("first")
    app = RecordingApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_line(pilot, "/theme sylk-lite")
        await pilot.pause()
        assert app.theme == DEFAULT_THEME
        errors = [text for severity, text in app.notices if severity == "error"]
        assert errors and "did you mean sylk-light?" in errors[-1]


async def test_the_palette_offers_each_theme(engine: Engine) -> None:
    await engine.create_session("first")
    app = RecordingApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        entries = {entry.text: entry for entry in palette_entries(main_screen(app))}
        for theme in THEMES:
            assert f"Theme: {theme.name}" in entries
        entries["Theme: sylk-light"].run()
        await pilot.pause()
        await pilot.pause()
        assert app.theme == "sylk-light"


def test_an_unreadable_or_stale_choice_falls_back_to_the_default(tmp_path: Path) -> None:
    path = tmp_path / THEME_FILE
    known = [theme.name for theme in THEMES]
    assert ThemeChoice(path).load(known, DEFAULT_THEME) == DEFAULT_THEME  # none yet
    path.write_text("{not json")
    assert ThemeChoice(path).load(known, DEFAULT_THEME) == DEFAULT_THEME
    path.write_text('{"theme": "gone-theme"}')
    assert ThemeChoice(path).load(known, DEFAULT_THEME) == DEFAULT_THEME
    path.write_text('["sylk-light"]')
    assert ThemeChoice(path).load(known, DEFAULT_THEME) == DEFAULT_THEME
