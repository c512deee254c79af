"""The app survives what a terminal and a broken engine call do to it.

A resize storm (down to 1x1 and back) on the main screen with sessions and on every
modal raises nothing, and the app still answers keys after it. A worker whose engine
call fails (a monkeypatched verb raising RuntimeError) shows an error notice; a corrupt
row in the real SQLite archive is skipped with a warning naming it, the rest of its
transcript shows; and the app goes on: the next key works.
"""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.screen import Screen

from backend.archive.store import DB_NAME, Archive
from backend.engine import Engine, EngineConfig
from backend.messages import Message, MessageType
from screens.approvals_inbox import ApprovalsInbox
from screens.help import HelpScreen
from screens.main_screen import MainScreen
from screens.plans.dag_view import DagViewScreen
from screens.sessions.confirm import ConfirmScreen
from screens.sessions.new_session import NewSessionScreen
from screens.state.pending import PendingQuestion
from tests.tui.support import (
    FROZEN_NOW,
    RecordingApp,
    main_screen,
    seed_archive,
    settle,
    transcript_texts,
    wait_for,
)
from tests.tui.test_approvals_inbox_snapshots import _questions
from tests.tui.test_dag_view_snapshots import _feed

SIZE = (120, 40)
STORM = [(40, 10), (1, 1), (0, 0), (2, 1), (200, 60)]
"""Sizes a terminal passes through while its window is dragged, to nothing and back."""

MODALS: list[tuple[tuple[str, ...], type[Screen[Any]]]] = [
    (("f1",), HelpScreen),
    (("f2",), ApprovalsInbox),
    (("ctrl+g",), DagViewScreen),
    (("ctrl+n",), NewSessionScreen),
    (("alt+c",), ConfirmScreen),
    (("ctrl+p",), CommandPalette),
]


def _app(data_dir: Path, workspace: Path) -> RecordingApp:
    seed_archive(data_dir, workspace)
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    return RecordingApp(engine, clock=lambda: FROZEN_NOW, tz=UTC)


async def _storm(pilot: Pilot[Any]) -> None:
    """Every size of ``STORM``, each frame let through, then back to ``SIZE``."""
    for width, height in STORM:
        await pilot.resize_terminal(width, height)
        await pilot.pause()
    await pilot.resize_terminal(*SIZE)
    await settle(pilot)


def _shows(app: RecordingApp, screen: type[Screen[Any]]) -> bool:
    return isinstance(app.screen, screen)


def _names(app: RecordingApp) -> set[str]:
    return {session.name for session in app.state.sessions.values()}


def _errors(app: RecordingApp) -> list[str]:
    return [text for severity, text in app.notices if severity == "error"]


def _warnings(app: RecordingApp) -> list[str]:
    return [text for severity, text in app.notices if severity == "warning"]


async def _still_answers_keys(pilot: Pilot[Any], app: RecordingApp) -> None:
    """F1 opens the help screen, Escape closes it: the app is alive and draws."""
    await pilot.press("f1")
    await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
    await pilot.press("escape")
    await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "the main screen")


async def test_a_resize_storm_on_the_main_screen_and_every_modal_raises_nothing(
    data_dir: Path, workspace: Path
) -> None:
    app = _app(data_dir, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main_screen(app).composer.cursor_blink = False
        assert len(app.state.sessions) == 4
        viewed = app.state.viewed_id
        assert viewed is not None
        _feed(app.state.plans, viewed)  # the DAG view has a plan to draw
        loop = asyncio.get_running_loop()
        for n, (session_id, question) in enumerate(_questions(sorted(app.state.sessions))):
            at = FROZEN_NOW - timedelta(minutes=10 - n)
            app.state.pending.add(
                PendingQuestion(f"q{n}", session_id, question, loop.create_future(), at)
            )
        await settle(pilot)

        await _storm(pilot)
        assert isinstance(app.screen, MainScreen)
        for keys, modal in MODALS:
            await pilot.press(*keys)
            await wait_for(pilot, partial(_shows, app, modal), modal.__name__)
            await _storm(pilot)
            assert isinstance(app.screen, modal), f"{modal.__name__} closed in the storm"
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "back")
        # Pilot re-raises at exit anything a handler raised; the app also still works.
        await _still_answers_keys(pilot, app)
        assert app.state.viewed_id == viewed and len(app.state.sessions) == 4
        assert not _errors(app)


async def test_a_failing_engine_call_is_a_notice_and_the_app_goes_on(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _app(data_dir, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        engine = await app.bridge.ready()

        async def broken(name: str | None = None) -> object:
            raise RuntimeError("the disk is on fire")

        # The one place a stand-in is fine: a verb failing in a way nothing real makes
        # it fail on demand.
        monkeypatch.setattr(engine, "create_session", broken)
        await pilot.press("ctrl+n", *"spike", "enter")
        await wait_for(pilot, lambda: _errors(app), "an error notice")
        assert "Could not create a session" in _errors(app)[-1]
        assert "the disk is on fire" in _errors(app)[-1]
        assert "spike" not in _names(app)

        monkeypatch.undo()  # the next call reaches the real engine again
        await _still_answers_keys(pilot, app)
        await pilot.press("ctrl+n", *"spike", "enter")
        await wait_for(pilot, lambda: "spike" in _names(app), "the session created after all")
        assert len(_errors(app)) == 1


async def test_a_corrupt_archive_row_is_a_notice_and_the_app_goes_on(
    data_dir: Path, workspace: Path
) -> None:
    sessions = seed_archive(data_dir, workspace)
    first = sessions[0]  # not on screen at start, nor read ahead (its neighbour is 2)
    archive = Archive(data_dir)
    archive.append_messages([Message[dict[str, Any]](id="kept", session_id=first.id,
                             source="user", type=MessageType.USER_INPUT,
                             payload={"text": "a line that reads fine"})])  # fmt: skip
    archive.close()
    with sqlite3.connect(data_dir / DB_NAME) as db:
        db.execute(
            "INSERT INTO transcript (id, session_id, type, source, timestamp, text, envelope)"
            " VALUES ('bad', ?, 'agent_reply', 'engineer', '', '', '{\"not\": \"a message')",
            (first.id,),
        )
        [(seq,)] = db.execute("SELECT seq FROM transcript WHERE id = 'bad'").fetchall()
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    app = RecordingApp(engine, clock=lambda: FROZEN_NOW, tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        on_screen = app.state.viewed_id
        assert on_screen == sessions[2].id
        await pilot.press("alt+1")
        await wait_for(pilot, lambda: _warnings(app), "a warning")
        # The rest of the transcript shows; the notice names the session, the row and the
        # file in words (no parser's text), and says what to do.
        assert _warnings(app) == [
            f"1 message of api-refactor could not be read (row {seq} in {data_dir / DB_NAME});"
            " the rest is shown (the row stays in the file untouched; /export saves what is"
            " readable)"
        ]
        await wait_for(pilot, lambda: "a line that reads fine" in transcript_texts(app), "kept")
        assert app.state.viewed_id == first.id and not _errors(app)
        await pilot.press("alt+3")  # back to a healthy session: it shows
        await wait_for(pilot, lambda: app.state.viewed_id == on_screen, "session 3 again")
        await _still_answers_keys(pilot, app)
