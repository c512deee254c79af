"""The approval modal: an agent's edit or command asks, the keys answer (y, a, n, d
with a reason, Esc), and the gateway call goes on or is refused accordingly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.skills.envelopes import Envelope
from backend.skills.models import SkillContext
from screens.approval import ApprovalScreen, DiffView
from sylk_tui.app import SylkApp
from tests.tui.support import settle, wait_for

SIZE = (120, 40)
SHELL = "engineer.shell.run"


@pytest.fixture
async def parts(data_dir: Path, workspace: Path) -> AsyncIterator[EngineParts]:
    built = build(EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False))
    built.approvals.gate.sandboxed = lambda: True  # the same modal on any machine
    yield built


async def _ask(
    pilot: Pilot[Any], parts: EngineParts, op: str, args: dict[str, Any]
) -> asyncio.Task[Envelope]:
    """Start an agent's call in the background and wait for its modal."""
    await settle(pilot)
    session = await Engine.from_parts(parts).ensure_session()
    ctx = SkillContext(session_id=session.id, agent="engineer", workspace=parts.config.workspace,
                       scopes=frozenset({"shell"}), can_write=True)  # fmt: skip
    call = asyncio.create_task(parts.gateway.execute(ctx, op, args, dry_run=False))
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen), "the modal")
    return call


async def _answered(pilot: Pilot[Any], call: asyncio.Task[Envelope]) -> Envelope:
    await wait_for(pilot, call.done, "the call to end")
    await wait_for(pilot, lambda: not isinstance(pilot.app.screen, ApprovalScreen), "closed")
    return call.result()


async def test_y_allows_a_command_once(parts: EngineParts, workspace: Path) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        call = await _ask(pilot, parts, SHELL, {"command": "touch made"})
        modal = app.screen
        assert isinstance(modal, ApprovalScreen)
        assert modal.request.command == "touch made"
        assert "Allow the engineer to run `touch made`?" in modal.question.title
        await pilot.press("y")
        out = await _answered(pilot, call)
    assert out.ok and out.meta.approval is not None and out.meta.approval["by"] == "user"
    assert (workspace / "made").exists()


async def test_a_offers_the_prefix_pattern_and_keeps_it(
    parts: EngineParts, workspace: Path
) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        call = await _ask(pilot, parts, SHELL, {"command": "touch one"})
        await pilot.press("a")
        chooser = app.screen.query_one("#approval-rules", OptionList)
        assert chooser.display and chooser.option_count == 2  # "touch *" and "touch one"
        assert chooser.get_option_at_index(0).id == "touch *"
        await pilot.press("enter")
        assert (await _answered(pilot, call)).ok
        session = await Engine.from_parts(parts).ensure_session()
        ctx = SkillContext(session_id=session.id, agent="engineer", workspace=workspace,
                           scopes=frozenset({"shell"}), can_write=True)  # fmt: skip
        again = await parts.gateway.execute(ctx, SHELL, {"command": "touch two"}, dry_run=False)
        assert again.ok and not isinstance(app.screen, ApprovalScreen)  # asked nothing
    assert (workspace / "one").exists() and (workspace / "two").exists()


async def test_n_and_escape_deny(parts: EngineParts, workspace: Path) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        call = await _ask(pilot, parts, SHELL, {"command": "touch no"})
        await pilot.press("n")
        out = await _answered(pilot, call)
        assert not out.ok and out.error is not None
        assert out.error.details["reason"] == "denied_by_user"
        call = await _ask(pilot, parts, SHELL, {"command": "touch esc"})
        await pilot.press("escape")
        assert not (await _answered(pilot, call)).ok
    assert not (workspace / "no").exists() and not (workspace / "esc").exists()


async def test_d_sends_the_typed_reason_to_the_agent(parts: EngineParts) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        call = await _ask(pilot, parts, SHELL, {"command": "touch x"})
        await pilot.press("d")
        reason = app.screen.query_one("#approval-reason", Input)
        assert reason.display and reason.has_focus
        await pilot.press(*"use make", "enter")  # typed keys never answer the modal
        out = await _answered(pilot, call)
    assert out.error is not None and out.error.details["user_reason"] == "use make"
    assert "use make" in out.error.message


async def test_an_edit_shows_its_diff_coloured(parts: EngineParts, workspace: Path) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        call = await _ask(pilot, parts, "engineer.file.write",
                          {"path": "notes.md", "content": "first\nsecond\n"})  # fmt: skip
        diff = app.screen.query_one(DiffView)
        coloured = diff.coloured()
        added = [span for span in coloured.spans if span.style]
        assert "+first" in coloured.plain and added  # + lines carry the theme's colour
        assert app.screen.query_one("#approval-diff").has_focus  # scrolls with the keys
        await pilot.press("a")  # one rule for an edit: the file, kept at once
        assert (await _answered(pilot, call)).ok
    assert (workspace / "notes.md").read_text() == "first\nsecond\n"
