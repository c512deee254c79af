"""Commands run in the workspace: confined directory, no credentials, typed errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.skills.envelopes import ErrorCode, code_for
from backend.workspace.commands import NoSuchDirectoryError, run_command_line
from backend.workspace.files import PathOutsideWorkspaceError, Workspace


async def test_a_command_runs_in_the_workspace_without_the_parents_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYLK_TEST_API_KEY", "sk-secret")
    monkeypatch.setenv("SYLK_TEST_PLAIN", "visible")
    (tmp_path / "sub").mkdir()
    result = await run_command_line(
        Workspace(tmp_path), 'pwd; echo "[$SYLK_TEST_API_KEY|$SYLK_TEST_PLAIN]"', "sub", 10
    )
    assert result["exit_code"] == 0
    assert result["stdout"].splitlines() == [str((tmp_path / "sub").resolve()), "[|visible]"]


async def test_a_directory_the_workspace_lacks_is_not_found_and_one_outside_is_denied(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("x")
    ws = Workspace(tmp_path)
    with pytest.raises(NoSuchDirectoryError) as missing:
        await run_command_line(ws, "true", "a.txt", 10)
    assert code_for(missing.value) is ErrorCode.NOT_FOUND
    with pytest.raises(PathOutsideWorkspaceError) as outside:
        await run_command_line(ws, "true", "..", 10)
    assert code_for(outside.value) is ErrorCode.ACCESS_DENIED
