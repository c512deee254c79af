"""Read before write: real files in a temporary workspace, through a real gateway."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine, EngineParts
from backend.skills.builtin.catalog import agent_context, build_gateway
from backend.skills.envelopes import Envelope, ErrorCode
from backend.skills.gateway.gateway import Gateway
from backend.skills.gateway.read_guard import ReadGuard, install_read_guard

APP = "def main():\n    return 1\n\n\ndef helper():\n    return 2\n"


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(APP)
    return workspace.resolve()


@pytest.fixture
def guarded() -> tuple[Gateway, ReadGuard]:
    gateway = build_gateway()
    return gateway, install_read_guard(gateway)


@pytest.fixture
def gateway(guarded: tuple[Gateway, ReadGuard]) -> Gateway:
    return guarded[0]


async def run(
    gw: Gateway, ws: Path, op: str, *, session: str = "s1", agent: str = "engineer", **kw: Any
) -> Envelope:
    dry_run = kw.pop("dry_run", None)
    return await gw.execute(agent_context(agent, session, ws), op, kw, dry_run=dry_run)


async def edit(gw: Gateway, ws: Path, path: str = "src/app.py", **kw: Any) -> Envelope:
    args = {"old_content": "return 1", "new_content": "return 10", "dry_run": False, **kw}
    return await run(gw, ws, "engineer.file.edit", path=path, **args)


def refused(env: Envelope, reason: str, path: str = "src/app.py") -> None:
    assert not env.ok and env.error is not None, env
    assert env.error.code is ErrorCode.CONFLICT
    assert env.error.details["reason"] == reason
    assert env.error.details["path"] == path
    step = env.error.details["guidance"][0]
    assert step["op"] == "engineer.file.read" and step["args"] == {"path": path}


async def test_an_edit_without_a_read_is_refused_with_the_read_to_do(
    gateway: Gateway, ws: Path
) -> None:
    env = await edit(gateway, ws)
    refused(env, "not_read")
    assert env.error is not None and env.error.message == "read src/app.py before changing it"
    assert (ws / "src" / "app.py").read_text() == APP  # nothing changed
    # Overwriting an existing file is a change too.
    overwrite = await run(gateway, ws, "engineer.file.write", path="src/app.py", content="x\n")
    refused(overwrite, "not_read")


async def test_read_then_edit_applies_and_the_edit_counts_as_a_read(
    gateway: Gateway, ws: Path
) -> None:
    read = await run(gateway, ws, "engineer.file.read", path="src/app.py")
    assert read.ok
    assert (await edit(gateway, ws)).ok
    assert "return 10" in (ws / "src" / "app.py").read_text()
    # After its own edit the agent knows the file: a second edit needs no new read.
    again = await edit(gateway, ws, old_content="return 2", new_content="return 20")
    assert again.ok, again.error


async def test_a_change_on_disk_after_the_read_needs_a_new_read(gateway: Gateway, ws: Path) -> None:
    assert (await run(gateway, ws, "librarian.file.read", path="src/app.py")).ok
    (ws / "src" / "app.py").write_text(APP + "\n# changed by another process\n")
    env = await edit(gateway, ws)
    refused(env, "changed_since_read")
    assert env.error is not None
    assert env.error.message == "src/app.py changed since you read it: read it again"
    assert (await run(gateway, ws, "engineer.file.read", path="src/app.py")).ok
    assert (await edit(gateway, ws)).ok


async def test_a_line_range_read_counts_and_only_what_was_read_is_compared(
    gateway: Gateway, ws: Path
) -> None:
    part = await run(gateway, ws, "engineer.file.read", path="src/app.py", start_line=1, end_line=2)
    assert part.ok and part.result["content"] == "def main():\n    return 1\n"
    # A change outside the lines read leaves what the model saw intact ...
    (ws / "src" / "app.py").write_text(APP.replace("return 2", "return 3"))
    assert (await edit(gateway, ws)).ok
    # ... a change inside them does not (the edit above recorded the whole file).
    (ws / "src" / "app.py").write_text("def main():\n    return 99\n")
    refused(await edit(gateway, ws, old_content="return 99"), "changed_since_read")
    # Re-reading just that range supersedes the stale whole-file record.
    assert (await run(gateway, ws, "engineer.file.read", path="src/app.py", end_line=2)).ok
    assert (await edit(gateway, ws, old_content="return 99")).ok


async def test_a_new_file_needs_no_read_and_its_writer_may_edit_it(
    gateway: Gateway, ws: Path
) -> None:
    content = "A = 1\r\nB = 2\r\n"  # written with CRLF; reads return it with LF
    created = await run(gateway, ws, "engineer.file.write", path="src/new.py", content=content)
    assert created.ok and created.result["created"] is True
    env = await edit(gateway, ws, "src/new.py", old_content="B = 2", new_content="B = 3")
    assert env.ok, env.error
    rewritten = await run(gateway, ws, "engineer.file.write", path="src/new.py", content="C = 1\n")
    assert rewritten.ok, rewritten.error


async def test_dry_runs_need_no_read(gateway: Gateway, ws: Path) -> None:
    preview = await edit(gateway, ws, dry_run=True)
    assert preview.ok and preview.result["dry_run"] is True
    assert "+    return 10" in preview.result["diff"]
    write = await run(
        gateway, ws, "engineer.file.write", path="src/app.py", content="x", dry_run=True
    )
    assert write.ok and write.result["would"] == "overwrite"
    # A preview is not a read: applying still needs one.
    refused(await edit(gateway, ws), "not_read")


async def test_a_symlink_and_its_target_are_one_file(gateway: Gateway, ws: Path) -> None:
    (ws / "link.py").symlink_to(ws / "src" / "app.py")
    assert (await run(gateway, ws, "engineer.file.read", path="link.py")).ok
    assert (await edit(gateway, ws, "src/app.py")).ok
    (ws / "src" / "app.py").write_text(APP)
    refused(await edit(gateway, ws, "link.py"), "changed_since_read")
    assert (await run(gateway, ws, "engineer.file.read", path="./src/../src/app.py")).ok
    assert (await edit(gateway, ws, "link.py")).ok


async def test_sessions_do_not_share_reads_and_forgetting_drops_them(
    guarded: tuple[Gateway, ReadGuard], ws: Path
) -> None:
    gateway, guard = guarded
    assert (await run(gateway, ws, "engineer.file.read", path="src/app.py", session="s1")).ok
    refused(await edit(gateway, ws, session="s2"), "not_read")
    gateway.forget_session("s1")
    assert "s1" not in guard.ledger.sessions()
    refused(await edit(gateway, ws, session="s1"), "not_read")


async def test_a_failed_edit_records_nothing(gateway: Gateway, ws: Path) -> None:
    unread = await edit(gateway, ws, old_content="not there")
    refused(unread, "not_read")  # the guard answers before the op looks
    assert (await run(gateway, ws, "engineer.file.read", path="src/app.py")).ok
    no_match = await edit(gateway, ws, old_content="not there")
    assert not no_match.ok and no_match.error is not None
    assert no_match.error.code is ErrorCode.VALIDATION_ERROR


async def test_the_engine_installs_the_guard(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("draft\n")
    session = await engine.ensure_session()
    await engine.approval_command(session.id, "auto-edit")  # no one here to approve edits
    ctx = agent_context("engineer", session.id, workspace)
    args = {"path": "notes.md", "old_content": "draft", "new_content": "final"}
    env = await engine_parts.gateway.execute(ctx, "engineer.file.edit", args, dry_run=False)
    assert env.code is ErrorCode.CONFLICT and env.error is not None
    assert env.error.details["reason"] == "not_read"
    assert (await engine_parts.gateway.execute(ctx, "engineer.file.read", {"path": "notes.md"})).ok
    env = await engine_parts.gateway.execute(ctx, "engineer.file.edit", args, dry_run=False)
    assert env.ok, env.error
    assert (workspace / "notes.md").read_text() == "final\n"
    await engine.complete_session(session.id)
    assert session.id not in engine_parts.read_guard.ledger.sessions()
