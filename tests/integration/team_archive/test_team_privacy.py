"""Cross-session reads stop at the user: bob, holding the cross-session scope, tries every
read that names a session or spans sessions against alice's, on the archive they share."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine
from backend.mcp.server.client_sessions import caller_context
from backend.mcp.server.content.session_resources import SessionResources, TranscriptAccessError
from backend.skills.builtin.catalog import agent_context
from backend.skills.envelopes import Envelope, ErrorCode
from backend.skills.session_scope import transcript_uri
from tests.integration.team_archive.teammates import said, teammate

SECRET = "alicesecret"


@dataclass
class Alice:
    session: str
    private_entry: str
    shared_entry: str


async def _alices_history(data_dir: Path, workspace: Path, url: str | None) -> Alice:
    alice = teammate(data_dir, workspace, "alice", url)
    try:
        session = await alice.create_session("alice work", isolation=False)
        alice.archive.append_messages([said(session.id, f"the {SECRET} plan for payments")])
        chronicle = alice._parts.knowledge.chronicle
        private = await chronicle.store(
            session.id, "decision", f"{SECRET} pricing stays private", title="pricing"
        )
        shared = await chronicle.store(
            session.id, "decision", "Use WAL mode for every database", title="journal"
        )
        await chronicle.promote(shared.id, reason="the whole team should know")
        return Alice(session.id, private.id, shared.id)
    finally:
        await alice.aclose()


async def _as(engine: Engine, sid: str, op: str, **args: Any) -> Envelope:
    ctx = agent_context("archivalist", sid, engine.workspace)  # holds history.cross_session
    return await engine._parts.gateway.execute(ctx, op, args)


async def test_bob_reads_nothing_private_of_alice(
    data_dir: Path, workspace: Path, archive_url: str
) -> None:
    alice = await _alices_history(data_dir, workspace, archive_url)
    bob = teammate(data_dir, workspace, "bob", archive_url)
    try:
        sid = (await bob.create_session("bob work", isolation=False)).id
        for op, args in [
            ("sessions.transcript", {"session_id": alice.session}),
            ("sessions.transcript", {"session_id": alice.session[:6]}),
            ("archivalist.memory.briefing", {"session_id": alice.session}),
            ("archivalist.session.summary", {"session_id": alice.session}),
            ("archivalist.analysis.extract_facts", {"session_id": alice.session,
                                                     "transcript_from": 0}),
            ("archivalist.chronicle.query", {"session_id": alice.session, "search_text": SECRET}),
            ("archivalist.chronicle.cross_session_query", {"session_ids": [alice.session]}),
            ("archivalist.chronicle.store", {"session_id": alice.session, "content": "x",
                                              "category": "decision"}),
        ]:  # fmt: skip
            refused = await _as(bob, sid, op, **args)
            assert not refused.ok and refused.error is not None, (op, refused)
            assert refused.error.code is ErrorCode.ACCESS_DENIED, (op, refused.error)
            assert SECRET not in refused.model_dump_json()
        teammates = await _as(bob, sid, "sessions.transcript", session_id=alice.session)
        assert teammates.error is not None and "another user's" in teammates.error.message
        listed = await _as(bob, sid, "sessions.list")
        assert alice.session not in {s["id"] for s in listed.result["sessions"]}
        for op, args in [
            ("archivalist.chronicle.query", {"cross_session": True}),
            ("archivalist.chronicle.query", {"cross_session": True, "search_text": SECRET}),
            ("archivalist.chronicle.cross_session_query", {}),
            ("archivalist.chronicle.cross_session_query", {"search_text": "pricing"}),
        ]:
            found = await _as(bob, sid, op, **args)
            ids = {e["id"] for e in found.result["entries"]}
            assert alice.private_entry not in ids and SECRET not in found.model_dump_json(), op
        everyone = await _as(bob, sid, "archivalist.chronicle.cross_session_query")
        assert alice.shared_entry in {e["id"] for e in everyone.result["entries"]}  # promoted
        promote = await _as(bob, sid, "archivalist.pattern.promote", pattern_id=alice.private_entry)
        assert promote.error is not None and promote.error.code is ErrorCode.NOT_FOUND
        answer = await bob._parts.knowledge.consult(
            "archivalist", sid, workspace, f"what did we discuss about {SECRET}?", True
        )
        assert "payments" not in (answer or "") and "pricing stays" not in (answer or "")
        # An MCP client served with --cross-session, bound to bob's session.
        client = caller_context(bob, session=sid, cross_session=True)
        resources = SessionResources(bob.archive, client)
        with pytest.raises(TranscriptAccessError):
            await resources.read(transcript_uri(alice.session))
        listing = await resources.read("sylk://sessions")
        assert listing is not None and alice.session not in listing.text
    finally:
        await bob.aclose()


async def test_alice_reads_her_own_other_sessions(data_dir: Path, workspace: Path) -> None:
    alice = await _alices_history(data_dir, workspace, None)
    again = teammate(data_dir, workspace, "alice")
    try:
        sid = (await again.create_session("alice later", isolation=False)).id
        read = await _as(again, sid, "sessions.transcript", session_id=alice.session)
        assert read.ok and SECRET in read.model_dump_json()
        found = await _as(again, sid, "archivalist.chronicle.query", cross_session=True)
        assert alice.private_entry in {e["id"] for e in found.result["entries"]}
        answer = await again._parts.knowledge.consult(
            "archivalist", sid, workspace, f"what did we discuss about {SECRET}?", True
        )
        assert "payments" in (answer or "")  # the answer bob was refused is there to find
    finally:
        await again.aclose()
