"""The Archivalist's ops through the real gateway, on a real chronicle."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from backend.archive.store import Archive
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.skills.builtin.archivalist import archivalist_skills
from backend.skills.builtin.catalog import KnowledgeWiring, agent_context, build_gateway
from backend.skills.envelopes import Envelope, ErrorCode, ErrorInfo
from backend.skills.gateway.gateway import Gateway

A, B = "sess-a", "sess-b"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('hi')\n")
    return root.resolve()


@pytest.fixture
def chronicle(tmp_path: Path) -> Iterator[Chronicle]:
    archive = Archive(tmp_path / "data")
    yield Chronicle(archive, tz=UTC)
    archive.close()


@pytest.fixture
def gateway(chronicle: Chronicle) -> Gateway:
    return build_gateway(knowledge=KnowledgeWiring(chronicle=chronicle))


def err(envelope: Envelope) -> ErrorInfo:
    assert envelope.error is not None, envelope
    return envelope.error


async def run(
    gw: Gateway, ws: Path, op: str, *, agent: str = "archivalist", session: str = A, **kw: Any
) -> Envelope:
    # The Inspector approves entries for promotion, so here it may write.
    ctx = agent_context(agent, session, ws, **({"can_write": True} if agent == "inspector" else {}))
    return await gw.execute(ctx, f"archivalist.{op}", kw)


async def test_store_then_query_within_and_across_sessions(gateway: Gateway, ws: Path) -> None:
    stored = await run(gateway, ws, "chronicle.store", content="Use WAL mode", category="decision",
                       title="SQLite journal")  # fmt: skip
    assert stored.ok, stored.error
    entry = stored.result["entry"]
    assert entry["session_id"] == A and entry["agent"] == "archivalist"
    assert [g.op for g in stored.guidance] == ["archivalist.pattern.promote"]

    mine = await run(gateway, ws, "chronicle.query", search_text="journal mode")
    assert [e["id"] for e in mine.result["entries"]] == [entry["id"]]
    other = await run(gateway, ws, "chronicle.query", session=B, search_text="journal")
    assert other.result["count"] == 0  # not promoted: session B cannot see it
    cross = await run(gateway, ws, "chronicle.cross_session_query", session=B, search_text="WAL")
    assert [e["id"] for e in cross.result["entries"]] == [entry["id"]]

    promoted = await run(gateway, ws, "pattern.promote", pattern_id=entry["id"])
    assert promoted.result["entry"]["promoted"] and not promoted.result["already_promoted"]
    assert promoted.result["entry"]["promoted_reason"] == "promoted explicitly by the archivalist"
    other = await run(gateway, ws, "chronicle.query", session=B, promoted_only=True)
    assert other.result["count"] == 1


async def test_records_briefing_and_summary(gateway: Gateway, ws: Path) -> None:
    assert (
        await run(gateway, ws, "chronicle.store", content="Add a CLI", category="task_state")
    ).ok
    rec = await run(gateway, ws, "file.record", path="app.py", operation="modified",
                    summary="print greeting", changes=["line 1"])  # fmt: skip
    assert rec.ok and rec.result["file"]["path"] == "app.py"
    fail = await run(gateway, ws, "failure.record", approach="argparse subcommands",
                     reason="too verbose", resolution="typer")  # fmt: skip
    assert fail.result["entry"]["category"] == "failure"
    for n in range(3):
        pat = await run(gateway, ws, "pattern.record", session=f"s{n}", category="cli",
                        name="verbs", pattern="commands are verbs")  # fmt: skip
    assert pat.result["uses"] == 3 and pat.result["promoted_now"]

    brief = await run(gateway, ws, "memory.briefing", tier="standard")
    text = brief.result["text"]
    assert "Add a CLI" in text and "modified `app.py`" in text and "commands are verbs" in text
    micro = await run(gateway, ws, "memory.briefing", tier="micro")
    assert len(micro.result["text"]) <= 600
    summary = await run(gateway, ws, "session.summary")
    assert summary.result["counts"] == {"task_state": 1, "failure": 1}
    assert summary.result["files"] == {"modified": 1}


async def test_validation_errors_are_typed(gateway: Gateway, ws: Path) -> None:
    bad = await run(gateway, ws, "chronicle.store", content="x", category="gossip")
    assert bad.code is ErrorCode.VALIDATION_ERROR
    bad = await run(gateway, ws, "chronicle.query", categories=["decisions"])
    assert bad.code is ErrorCode.VALIDATION_ERROR
    now = datetime.now(UTC)
    bad = await run(gateway, ws, "chronicle.query", since=now.isoformat(),
                    until=(now - timedelta(days=1)).isoformat())  # fmt: skip
    assert bad.code is ErrorCode.VALIDATION_ERROR and "time range is empty" in err(bad).message
    bad = await run(gateway, ws, "chronicle.query", time_scope="someday")
    assert bad.code is ErrorCode.VALIDATION_ERROR and "unknown time scope" in err(bad).message
    bad = await run(gateway, ws, "chronicle.query", time_scope="today", since=now.isoformat())
    assert bad.code is ErrorCode.VALIDATION_ERROR
    bad = await run(gateway, ws, "chronicle.query", since="2025-01-01T00:00:00")
    assert bad.code is ErrorCode.VALIDATION_ERROR  # no timezone
    missing = await run(gateway, ws, "pattern.promote", pattern_id="ent_missing")
    assert missing.code is ErrorCode.NOT_FOUND
    outside = await run(gateway, ws, "file.record", path="../../etc/passwd", operation="read")
    assert outside.code is ErrorCode.ACCESS_DENIED


async def test_other_sessions_entries_stay_private(gateway: Gateway, ws: Path) -> None:
    stored = await run(gateway, ws, "chronicle.store", content="private", category="insight")
    entry_id = stored.result["entry"]["id"]
    # An agent without the cross-session scope cannot promote (or learn of) it.
    hidden = await run(gateway, ws, "pattern.promote", agent="inspector", session=B,
                       pattern_id=entry_id)  # fmt: skip
    assert hidden.code is ErrorCode.NOT_FOUND
    denied = await run(gateway, ws, "chronicle.query", agent="engineer", cross_session=True)
    assert denied.code is ErrorCode.ACCESS_DENIED
    own = await run(gateway, ws, "pattern.promote", agent="inspector", pattern_id=entry_id)
    assert own.result["entry"]["promoted_reason"] == "validated and approved by the inspector"


async def test_ops_needing_a_model_or_a_chronicle_say_so(gateway: Gateway, ws: Path) -> None:
    facts = await run(gateway, ws, "analysis.extract_facts", entry_ids=["e1"])
    assert facts.code is ErrorCode.INTERNAL
    assert err(facts).details["reason"] == "not_available"
    assert "not wired into this gateway" in err(facts).message  # its handler comes from the engine
    bare = build_gateway()
    unwired = await run(bare, ws, "chronicle.query", search_text="x")
    assert err(unwired).details["reason"] == "not_available"
    assert all(s.handler.__name__.startswith("not_available") for s in archivalist_skills())
