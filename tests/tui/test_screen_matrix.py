"""SVG snapshots of every screen at 120x40 and 80x24, in the dark and the light theme.

One seeded archive (four sessions, a Markdown answer with tool blocks on the session
on screen) and a frozen clock; each screen is reached by the keys a user presses: the
main screen, help (F1), the approvals inbox (F2), the DAG view (ctrl+g) with the
engineer's pipeline open, the new-session, confirm and merge-offer dialogs, and the command palette
narrowed to "export" (typed, so its rows come in one order). The
other snapshot tests look closely at one screen at 120x40 in the dark theme; this
matrix is there so a change that cuts, overlaps or loses contrast at the small size or
in the light theme shows in review.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input

from backend.archive.store import Archive
from backend.engine import Engine, EngineConfig
from backend.messages import Message, MessageType
from screens.approvals_inbox import ApprovalsInbox
from screens.help import HelpScreen
from screens.plans.dag_view import DagViewScreen
from screens.sessions.confirm import ConfirmScreen
from screens.sessions.merge_offer import MergeOfferScreen
from screens.sessions.new_session import NewSessionScreen
from screens.state.pending import PendingQuestion
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, seed_archive, settle
from tests.tui.test_approvals_inbox_snapshots import _questions
from tests.tui.test_dag_view_snapshots import _feed
from tests.tui.test_tool_blocks import actions

SnapCompare = Callable[..., bool]
RunBefore = Callable[[Pilot[Any]], Awaitable[None]]

SIZES = {"120x40": (120, 40), "80x24": (80, 24)}
THEMES = ("sylk-dark", "sylk-light")
MATRIX = [
    pytest.param(size, theme, id=f"{label}-{theme}")
    for label, size in SIZES.items()
    for theme in THEMES
]

ANSWER = """\
Reading.

## Why `test_sync` is flaky

The watcher **debounces** for 50 ms and the test asserts after 20 ms:

1. the event arrives late;
2. the assertion runs first.

| run | debounce | result |
|-----|----------|--------|
| 1   | 50 ms    | fails  |
| 2   | 10 ms    | passes |

```python
await until(lambda: seen, what="the watcher's event")
```

See [the polling helper](tests/support/polling.py).
"""


def _app(data_dir: Path, workspace: Path) -> SylkApp:
    sessions = seed_archive(data_dir, workspace)
    answer = Message[dict[str, Any]](
        id="m900",
        session_id=sessions[2].id,  # the active session, on screen at start
        source="engineer",
        type=MessageType.AGENT_REPLY,
        # The tool calls were made after the first 8 characters ("Reading."), as in
        # test_tool_blocks: the blocks sit between that line and the Markdown below.
        payload={"text": ANSWER, "actions": [a.stored() for a in actions()]},
        timestamp=FROZEN_NOW - timedelta(minutes=1),
    )
    archive = Archive(data_dir)
    try:
        archive.append_messages([answer])
    finally:
        archive.close()
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    # The app closes the engine when the snapshot run ends.
    return SylkApp(engine, clock=lambda: FROZEN_NOW, tz=UTC)


def _on(
    theme: str, reach: Callable[[Pilot[Any]], Awaitable[None]], screen: type | None
) -> RunBefore:
    """Settle, set ``theme``, then ``reach`` the screen and check it is the one shown."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await settle(pilot)
        main_screen(app).composer.cursor_blink = False  # type: ignore[arg-type]
        app.theme = theme
        await reach(pilot)
        await settle(pilot)
        for field in app.screen.query(Input):  # a blinking cursor is drawn or not
            field.cursor_blink = False
        await settle(pilot)
        if screen is not None:
            assert isinstance(app.screen, screen), app.screen

    return run_before


def _keys(*keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def press(pilot: Pilot[Any]) -> None:
        await pilot.press(*keys)

    return press


async def _with_questions(pilot: Pilot[Any]) -> None:
    """Four questions from three sessions wait, as the engine would ask them; F2."""
    app = pilot.app
    assert isinstance(app, SylkApp)
    loop = asyncio.get_running_loop()
    asked = FROZEN_NOW - timedelta(minutes=10)
    ids = sorted(app.state.sessions)
    for n, (session_id, question) in enumerate(_questions(ids)):
        at = asked + timedelta(minutes=n)
        app.state.pending.add(
            PendingQuestion(f"q{n}", session_id, question, loop.create_future(), at)
        )
    await settle(pilot)
    await pilot.press("f2")


async def _with_a_plan(pilot: Pilot[Any]) -> None:
    """A plan mid-run on the session on screen; ctrl+g, then the engineer's pipeline."""
    app = pilot.app
    assert isinstance(app, SylkApp)
    session_id = app.state.viewed_id
    assert session_id is not None
    _feed(app.state.plans, session_id)
    await pilot.press("ctrl+g")
    await settle(pilot)
    await pilot.press("down", "enter")


def _check(
    snap_compare: SnapCompare,
    data_dir: Path,
    workspace: Path,
    size: tuple[int, int],
    run_before: RunBefore,
) -> None:
    assert snap_compare(_app(data_dir, workspace), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize(("size", "theme"), MATRIX)
def test_main_screen(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path, size: tuple[int, int], theme: str
) -> None:
    _check(snap_compare, data_dir, workspace, size, _on(theme, _keys(), None))


@pytest.mark.parametrize(("size", "theme"), MATRIX)
def test_help_screen(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path, size: tuple[int, int], theme: str
) -> None:
    _check(snap_compare, data_dir, workspace, size, _on(theme, _keys("f1"), HelpScreen))


@pytest.mark.parametrize(("size", "theme"), MATRIX)
def test_approvals_inbox(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path, size: tuple[int, int], theme: str
) -> None:
    run_before = _on(theme, _with_questions, ApprovalsInbox)
    _check(snap_compare, data_dir, workspace, size, run_before)


@pytest.mark.parametrize(("size", "theme"), MATRIX)
def test_dag_view(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path, size: tuple[int, int], theme: str
) -> None:
    _check(snap_compare, data_dir, workspace, size, _on(theme, _with_a_plan, DagViewScreen))


@pytest.mark.parametrize(("size", "theme"), MATRIX)
def test_new_session_dialog(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path, size: tuple[int, int], theme: str
) -> None:
    run_before = _on(theme, _keys("ctrl+n", *"spike"), NewSessionScreen)
    _check(snap_compare, data_dir, workspace, size, run_before)


@pytest.mark.parametrize(("size", "theme"), MATRIX)
def test_confirm_dialog(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path, size: tuple[int, int], theme: str
) -> None:
    run_before = _on(theme, _keys("alt+c"), ConfirmScreen)  # complete the session on screen
    _check(snap_compare, data_dir, workspace, size, run_before)


async def _merge_offer(pilot: Pilot[Any]) -> None:
    """The offer a completed session on its own branch gets (the seed has no repository)."""
    offer = MergeOfferScreen("fix flaky sync test", "sylk/fix-flaky-sync-test-0123abcd", "main")
    await pilot.app.push_screen(offer)


@pytest.mark.parametrize(("size", "theme"), MATRIX)
def test_merge_offer_dialog(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path, size: tuple[int, int], theme: str
) -> None:
    run_before = _on(theme, _merge_offer, MergeOfferScreen)
    _check(snap_compare, data_dir, workspace, size, run_before)


@pytest.mark.parametrize(("size", "theme"), MATRIX)
def test_command_palette(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path, size: tuple[int, int], theme: str
) -> None:
    run_before = _on(theme, _keys("ctrl+p", *"export"), CommandPalette)
    _check(snap_compare, data_dir, workspace, size, run_before)
