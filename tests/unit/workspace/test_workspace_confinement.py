"""Agents never read, list or write outside their workspace, symlinks included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.agents.gateway_tools import GatewayToolExecutor
from backend.llm.types import ToolCall
from backend.skills.builtin.catalog import agent_context, build_gateway
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


async def test_agent_tools_report_errors_to_the_model_instead_of_raising(
    tree: tuple[Workspace, Path],
) -> None:
    workspace = tree[0]
    gateway = build_gateway()
    tools = GatewayToolExecutor(
        gateway, agent_context("librarian", "s1", workspace.root), agent="librarian"
    )
    names = [s.name for s in tools.specs()]
    assert len(names) <= 6 and {"search", "describe", "execute", "batch"} <= set(names)

    def read(path: str, call_id: str) -> ToolCall:
        args = {"op": "librarian.file.read", "args": {"path": path}}
        return ToolCall(id=call_id, name="execute", arguments=args)

    ok = await tools.execute(read("src/app.py", "1"))
    assert not ok.is_error and "one" in ok.content
    escape = await tools.execute(read("escape", "2"))
    assert escape.is_error and "outside" in escape.content
    assert "top secret" not in escape.content
    bad = await tools.execute(
        ToolCall(id="3", name="execute", arguments={"op": "librarian.file.read", "args": {}})
    )
    assert bad.is_error and "VALIDATION_ERROR" in bad.content and "path" in bad.content
    unknown = await tools.execute(
        ToolCall(id="4", name="execute", arguments={"op": "librarian.file.raed", "args": {}})
    )
    assert unknown.is_error and "NOT_FOUND" in unknown.content
    assert "librarian.file.read" in unknown.content  # a suggestion for the typo


def test_workspace_root_itself_is_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    os.symlink(real, link)
    assert Workspace(link).root == real.resolve()


def test_a_planted_temp_name_is_never_written_through(tmp_path: Path) -> None:
    # A cloned repository commits the name the old writer used, pointing outside.
    outside = tmp_path / "bashrc"
    outside.write_text("# the user's shell config\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "settings.py").write_text("DEBUG = True\n")
    (root / "settings.py").chmod(0o640)
    (root / ".settings.py.sylk-tmp").symlink_to(outside)
    ws = Workspace(root)
    ws.write_text("settings.py", "DEBUG = False\n")
    assert outside.read_text() == "# the user's shell config\n"
    assert (root / "settings.py").read_text() == "DEBUG = False\n"
    assert (root / "settings.py").stat().st_mode & 0o777 == 0o640  # an edit keeps the mode
    assert (root / ".settings.py.sylk-tmp").is_symlink()  # left as planted, not followed
    assert sorted(p.name for p in root.iterdir()) == [".settings.py.sylk-tmp", "settings.py"]


def test_a_line_range_read_is_capped_and_a_binary_file_is_a_typed_answer(tmp_path: Path) -> None:
    from backend.workspace.files import MAX_READ_BYTES, BinaryFileError, WorkspaceError

    line = "x" * 1023 + "\n"
    (tmp_path / "big.txt").write_text(line * (2 * MAX_READ_BYTES // len(line)))
    ws = Workspace(tmp_path)
    # start_line=1 once read the whole file past the cap (a 60 MB answer).
    with pytest.raises(WorkspaceError, match="over 262144 bytes"):
        ws.read_text("big.txt", start_line=1)
    assert ws.read_text("big.txt", start_line=1, end_line=3) == line * 3
    assert ws.read_text("big.txt", start_line=400, end_line=401) == line * 2
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    with pytest.raises(BinaryFileError, match="binary file"):
        ws.read_text("logo.png")
    with pytest.raises(BinaryFileError):
        ws.read_text("logo.png", start_line=1, end_line=2)
