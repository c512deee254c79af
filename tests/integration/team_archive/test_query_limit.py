"""A teammate's private chronicle entries are left out in SQL, before the LIMIT: a
query for 5 returns the caller's 5 however many newer private entries a teammate has."""

from __future__ import annotations

from pathlib import Path

from backend.skills.builtin.catalog import agent_context
from tests.integration.team_archive.teammates import teammate


async def test_a_teammates_newer_private_entries_never_take_the_limits_places(
    data_dir: Path, workspace: Path, archive_url: str
) -> None:
    alice = teammate(data_dir, workspace, "alice", archive_url)
    try:
        mine = await alice.create_session("alice work", isolation=False)
        chronicle = alice._parts.knowledge.chronicle
        own = {
            (await chronicle.store(mine.id, "decision", f"alice decided {n}")).id for n in range(5)
        }
        bob = teammate(data_dir, workspace, "bob", archive_url)
        try:
            theirs = await bob.create_session("bob work", isolation=False)
            for n in range(30):  # newer than every one of alice's
                await bob._parts.knowledge.chronicle.store(
                    theirs.id, "decision", f"bob decided {n}"
                )
        finally:
            await bob.aclose()
        now = await alice.create_session("alice now", isolation=False)  # asks from here
        ctx = agent_context("archivalist", now.id, workspace)  # holds history.cross_session
        gateway = alice._parts.gateway
        for op, args in [
            ("archivalist.chronicle.cross_session_query", {"limit": 5}),
            ("archivalist.chronicle.query", {"cross_session": True, "limit": 5}),
            ("archivalist.chronicle.query", {"cross_session": True, "search_text": "decided",
                                             "limit": 5}),
        ]:  # fmt: skip
            found = await gateway.execute(ctx, op, args)
            assert found.ok, (op, found)
            assert {e["id"] for e in found.result["entries"]} == own, op
    finally:
        await alice.aclose()
