"""Agents never read, list or write outside their workspace, symlinks included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.agents.tools import WorkspaceTools
from backend.llm.types import ToolCall
from backend.workspace.files import PathOutsideWorkspaceError, Workspace, WorkspaceError


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Workspace, Path]:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("one\ntwo\nthree\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret")
    (root / "escape").symlink_to(outside)
    (root / "updir").symlink_to(tmp_path)
    return Workspace(root), outside


@pytest.mark.parametrize(
    "path", ["../secret.txt", "/etc/passwd", "escape", "updir/secret.txt", "src/../../secret.txt"]
)
def test_escapes_are_refused(tree: tuple[Workspace, Path], path: str) -> None:
    workspace, _ = tree
    with pytest.raises(PathOutsideWorkspaceError):
        workspace.read_text(path)


def test_writes_cannot_escape_through_a_symlinked_directory(tree: tuple[Workspace, Path]) -> None:
    workspace, outside = tree
    with pytest.raises(PathOutsideWorkspaceError):
        workspace.write_text("updir/planted.txt", "x")
    assert not (outside.parent / "planted.txt").exists()


def test_inside_the_workspace_everything_works(tree: tuple[Workspace, Path]) -> None:
    workspace, _ = tree
    assert workspace.read_text("src/app.py", start_line=2, end_line=3) == "two\nthree\n"
    assert workspace.read_text(str(workspace.root / "src" / "app.py")).startswith("one")
    assert "src/" in workspace.list_dir(".")
    written = workspace.write_text("new/dir/file.txt", "hello")
    assert written.read_text() == "hello"
    assert not list(written.parent.glob(".*sylk-tmp"))


def test_nul_bytes_and_missing_files(tree: tuple[Workspace, Path]) -> None:
    workspace, _ = tree
    with pytest.raises(WorkspaceError, match="NUL"):
        workspace.read_text("a\x00b")
    with pytest.raises(WorkspaceError, match="not a file"):
        workspace.read_text("missing.py")


async def test_tools_report_errors_to_the_model_instead_of_raising(
    tree: tuple[Workspace, Path],
) -> None:
    tools = WorkspaceTools(tree[0])
    assert [s.name for s in tools.specs()] == ["read_file", "list_dir"]
    ok = await tools.execute(ToolCall(id="1", name="read_file", arguments={"path": "src/app.py"}))
    assert not ok.is_error and ok.content.startswith("one")
    escape = await tools.execute(ToolCall(id="2", name="read_file", arguments={"path": "escape"}))
    assert escape.is_error and "outside the workspace" in escape.content
    bad = await tools.execute(ToolCall(id="3", name="read_file", arguments={"pathh": "x"}))
    assert bad.is_error and bad.content.startswith("VALIDATION_ERROR") and "path" in bad.content
    unknown = await tools.execute(ToolCall(id="4", name="rm_rf", arguments={}))
    assert unknown.is_error and "NOT_FOUND" in unknown.content and "read_file" in unknown.content


def test_workspace_root_itself_is_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    os.symlink(real, link)
    assert Workspace(link).root == real.resolve()
