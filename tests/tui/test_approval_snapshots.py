"""SVG snapshots of the approval modal at 120x40: a command, and an edit with its diff."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from backend.approvals import answers
from backend.engine import Engine, EngineConfig
from backend.events import ApprovalRequest
from screens.approval import ApprovalScreen
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, seed_archive, settle

SIZE = (120, 40)
SnapCompare = Callable[..., bool]
SANDBOX = "commands run sandboxed: Landlock in user, mount and pid namespaces"
COMMAND = ApprovalRequest(
    op="engineer.shell.run", agent="engineer", action="command", mode="ask", sandbox=SANDBOX,
    command="pytest -q tests/unit", cwd=".", session_rules=("pytest *", "pytest -q tests/unit"),
)  # fmt: skip
EDIT = ApprovalRequest(
    op="engineer.file.edit", agent="engineer", action="edit", mode="ask",
    sandbox="edits stay inside the workspace", path="src/app.py", session_rules=("src/app.py",),
    diff="--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n import os\n"
    "-def main():\n+def main() -> int:\n     return 0\n",
)  # fmt: skip


def _app(
    data_dir: Path, workspace: Path, request: ApprovalRequest, *keys: str
) -> tuple[SylkApp, Any]:
    seed_archive(data_dir, workspace)
    app = SylkApp(Engine(EngineConfig(data_dir=data_dir, workspace=workspace)),
                  clock=lambda: FROZEN_NOW, tz=UTC)  # fmt: skip

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        main_screen(pilot.app).composer.cursor_blink = False  # type: ignore[arg-type]
        await pilot.app.push_screen(ApprovalScreen(answers.question(request)))
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return app, run_before


def test_a_command_to_approve(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app, run_before = _app(data_dir, workspace, COMMAND)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_a_command_allowed_for_the_session_picks_a_rule(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path
) -> None:
    app, run_before = _app(data_dir, workspace, COMMAND, "a")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_an_edit_to_approve(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app, run_before = _app(data_dir, workspace, EDIT)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
