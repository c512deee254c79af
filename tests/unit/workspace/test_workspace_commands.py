"""Commands run in the workspace: confined directory, no credentials, typed errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.sandbox import sandbox_support
from backend.skills.envelopes import ErrorCode, code_for
from backend.workspace.commands import (
    CommandTimeoutError,
    NoSuchDirectoryError,
    run_command_line,
)
from backend.workspace.files import PathOutsideWorkspaceError, Workspace
from tests.support.polling import finishes


async def test_a_command_runs_in_the_workspace_with_an_allow_listed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Credentials under names a deny-list would miss, and anything else of Sylk's own.
    leaked = {"SYLK_TEST_API_KEY": "sk-secret", "DB_PASSWD": "hunter2",
              "DATABASE_URL": "postgres://u:pw@db/x", "GH_PAT": "ghp_x", "NPM_AUTH": "npm_x",
              "SENTRY_DSN": "https://key@sentry/1", "SYLK_TEST_PLAIN": "not needed"}  # fmt: skip
    for name, value in leaked.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LANG", "C.UTF-8")
    (tmp_path / "sub").mkdir()
    result = await run_command_line(Workspace(tmp_path), "pwd; env", "sub", 10)
    assert result["exit_code"] == 0
    lines = result["stdout"].splitlines()
    assert lines[0] == str((tmp_path / "sub").resolve())
    names = {line.split("=", 1)[0] for line in lines[1:] if "=" in line}
    assert names.isdisjoint(leaked) and "LANG=C.UTF-8" in lines and "PATH" in names
    assert not any(value in result["stdout"] for value in leaked.values())
    assert result["sandbox"] == sandbox_support().level


async def test_closing_its_output_does_not_outlive_the_time_limit(tmp_path: Path) -> None:
    # The limit covers the whole run: a command that closes stdout and stderr and
    # keeps running is still stopped at the limit (it used to run on unbounded).
    command = "exec >&- 2>&-; sleep 600"
    with pytest.raises(CommandTimeoutError) as stopped:
        await finishes(
            run_command_line(Workspace(tmp_path), command, ".", 1), what="the command's limit"
        )
    assert code_for(stopped.value) is ErrorCode.INTERNAL
    assert stopped.value.details and stopped.value.details["reason"] == "timeout"


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
