"""Two sessions in one shared (non-git) workspace: file locks serialise their edits, and
a conflict is said in both sessions as soon as the second one changes the same file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from backend.config.approvals import ApprovalMode
from backend.engine import EngineConfig
from backend.engine.build import EngineParts, build
from backend.events import EngineEvent, FileConflict, MessageAppended
from backend.skills.builtin.catalog import agent_context
from backend.skills.envelopes import Envelope

TEXT = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.fixture
async def parts(data_dir: Path, workspace: Path) -> Any:
    (workspace / "shared.txt").write_text(TEXT)
    built = build(
        EngineConfig(data_dir=data_dir, workspace=workspace, approval_mode=ApprovalMode.AUTO_EDIT)
    )
    yield built
    await built.aclose()


def seen(parts: EngineParts) -> list[EngineEvent]:
    events: list[EngineEvent] = []
    parts.events.add_listener(events.append)
    return events


async def run(parts: EngineParts, session: str, op: str, **args: Any) -> Envelope:
    ctx = agent_context("engineer", session, parts.config.workspace.resolve())
    dry = False if op != "engineer.file.read" else None
    return await parts.gateway.execute(ctx, op, args, dry_run=dry)


async def edit(parts: EngineParts, session: str, old: str, new: str) -> Envelope:
    return await run(parts, session, "engineer.file.edit", path="shared.txt",
                     old_content=old, new_content=new)  # fmt: skip


def conflicts(events: list[EngineEvent], session: str) -> list[FileConflict]:
    return [e for e in events if isinstance(e, FileConflict) and e.session_id == session]


def notices(events: list[EngineEvent], session: str) -> list[str]:
    return [
        e.message.payload["text"]
        for e in events
        if isinstance(e, MessageAppended) and e.session_id == session
        and "conflict" in e.message.payload
    ]  # fmt: skip


async def test_concurrent_edits_are_serialised_and_both_sessions_are_warned(
    parts: EngineParts,
) -> None:
    a = await parts.sessions.create_session("alpha", activate=False)
    b = await parts.sessions.create_session("beta", activate=False)
    events = seen(parts)
    assert (await run(parts, a.id, "engineer.file.read", path="shared.txt", start_line=1,
                      end_line=1)).ok  # fmt: skip
    assert (await run(parts, b.id, "engineer.file.read", path="shared.txt", start_line=15,
                      end_line=15)).ok  # fmt: skip

    # Each edit reads the whole file, then writes it back: unserialised, one is lost.
    done = await asyncio.gather(
        edit(parts, a.id, "line 1\n", "ALPHA 1\n"), edit(parts, b.id, "line 15\n", "BETA 15\n")
    )
    assert all(env.ok for env in done), done
    text = (parts.config.workspace / "shared.txt").read_text()
    assert "ALPHA 1\n" in text and "BETA 15\n" in text
    assert len(parts.resources.locks) == 0  # nothing held, nothing left in the table

    for mine, theirs in ((a.id, b.id), (b.id, a.id)):
        (warned,) = conflicts(events, mine)
        assert warned.path == "shared.txt" and warned.other_session_id == theirs
        assert warned.lines is None and "same file" in warned.text
        (note,) = notices(events, mine)
        assert "shared.txt" in note and "same file" in note


async def test_overlapping_lines_are_named_once_and_listed_in_status(parts: EngineParts) -> None:
    a = await parts.sessions.create_session("alpha", activate=False)
    b = await parts.sessions.create_session("beta")  # active: it can complete
    events = seen(parts)
    await run(parts, a.id, "engineer.file.read", path="shared.txt")
    assert (await edit(parts, a.id, "line 3\nline 4\n", "A3\nA4\n")).ok
    assert conflicts(events, a.id) == []  # one session alone: nothing to say

    await run(parts, b.id, "engineer.file.read", path="shared.txt")
    assert (await edit(parts, b.id, "A4\nline 5\n", "B4\nB5\n")).ok
    for session in (a.id, b.id):
        (warned,) = conflicts(events, session)
        assert warned.lines == (4, 4) and "overlapping line 4" in warned.text

    # The same pair, file and kind again: not said twice.
    await run(parts, b.id, "engineer.file.read", path="shared.txt")
    assert (await edit(parts, b.id, "A3\n", "B3\n")).ok
    assert len(conflicts(events, a.id)) == 1 and len(notices(events, b.id)) == 1

    status = parts.status_text(a.id)
    assert "Conflicts with other live sessions:" in status
    assert "shared.txt is also changed by session beta" in status
    # Once one of the two has ended, the conflict is no longer current.
    await parts.sessions.complete_session(b.id)
    assert parts.resources.watch.current(a.id) == []
    assert "Conflicts" not in parts.status_text(a.id)


async def test_different_files_say_nothing(parts: EngineParts) -> None:
    a = await parts.sessions.create_session("alpha", activate=False)
    b = await parts.sessions.create_session("beta", activate=False)
    events = seen(parts)
    assert (await run(parts, a.id, "engineer.file.write", path="one.txt", content="1\n")).ok
    assert (await run(parts, b.id, "engineer.file.write", path="two.txt", content="2\n")).ok
    assert not [e for e in events if isinstance(e, FileConflict)]
    assert "Conflicts" not in parts.status_text(a.id)
