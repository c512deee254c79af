"""`sylk mcp serve`: a real server process and the official client. A client without
write rights is read-only; with them it gets the config's mode or --approval, and what
would ask is refused, as no one is there to answer."""

from __future__ import annotations

from pathlib import Path

from tests.integration.mcp.test_mcp_serve_session import execute, serve

WRITE = {"path": "from-mcp.txt", "content": "hello\n"}


async def test_with_write_rights_the_default_mode_refuses_what_would_ask(
    data_dir: Path, workspace: Path
) -> None:
    async with serve(data_dir, workspace, "--allow-write") as client:
        out = await execute(client, "engineer.file.write", **WRITE)
    assert not out["ok"] and out["error"]["code"] == "ACCESS_DENIED"
    assert out["error"]["details"]["reason"] == "approval_required"
    assert "--approval" in out["error"]["message"]
    assert not (workspace / "from-mcp.txt").exists()


async def test_approval_auto_edit_lets_the_clients_edits_through(
    data_dir: Path, workspace: Path
) -> None:
    async with serve(data_dir, workspace, "--allow-write", "--approval", "auto-edit") as client:
        out = await execute(client, "engineer.file.write", **WRITE)
        assert out["ok"], out
        assert out["meta"]["approval"]["by"] == "mode"
        command = await client.call_tool(
            "execute",
            {"op": "engineer.shell.run", "args": {"command": "touch x"}, "dry_run": False},
        )
    assert (workspace / "from-mcp.txt").read_text() == "hello\n"
    refused = command.structured_content
    assert isinstance(refused, dict) and not refused["ok"]
    assert refused["error"]["code"] == "ACCESS_DENIED"  # no shell scope, and it would ask
    assert not (workspace / "x").exists()


async def test_without_write_rights_an_approval_flag_changes_nothing(
    data_dir: Path, workspace: Path
) -> None:
    async with serve(data_dir, workspace, "--approval", "auto") as client:
        out = await execute(client, "engineer.file.write", **WRITE)
    assert not out["ok"] and out["error"]["code"] == "ACCESS_DENIED"
    assert not (workspace / "from-mcp.txt").exists()
