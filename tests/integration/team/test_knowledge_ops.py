"""The Archivalist's and the Academic's remaining ops on a real engine (issue 13): facts
from a text or the transcript, conflicting decisions resolved by the caller's choice, a
comparison citing the library and the code, a workspace file ingested into the library
(and what is refused), a design outline citing what it used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.knowledge.chronicle.models import Category, ChronicleQuery
from backend.messages import Message, MessageType
from backend.skills.builtin.catalog import agent_context

NOTE = (
    "We decided to keep invoices in SQLite. Exports must not block the event loop.\n"
    "The ledger lives in billing/ledger.py; run `pytest -q tests/billing` after a change.\n"
    "$ ruff check billing\n"
)


async def _run(parts: EngineParts, agent: str, sid: str, ws: Path, op: str, **args: Any) -> Any:
    ctx = agent_context(agent, sid, ws)
    return await parts.gateway.execute(ctx, op, args, dry_run=False)


async def test_facts_come_out_of_a_text_typed_and_may_be_stored(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    session = await engine.ensure_session()
    env = await _run(engine_parts, "archivalist", session.id, workspace,
                     "archivalist.analysis.extract_facts", text=NOTE, store=True)  # fmt: skip
    assert env.ok, env.error
    facts = {(f["kind"], f["text"]) for f in env.result["facts"]}
    assert ("decision", "We decided to keep invoices in SQLite.") in facts
    assert ("constraint", "Exports must not block the event loop.") in facts
    assert ("file", "billing/ledger.py") in facts
    assert ("command", "pytest -q tests/billing") in facts and (
        "command",
        "ruff check billing",
    ) in facts
    assert env.result["counts"]["decision"] == 1 and len(env.result["stored"]) == 2
    again = await _run(engine_parts, "archivalist", session.id, workspace,
                       "archivalist.analysis.extract_facts", text=NOTE)  # fmt: skip
    assert again.result["facts"] == env.result["facts"]  # deterministic
    stored = await engine_parts.knowledge.chronicle.query(
        session.id, ChronicleQuery(categories=[Category.DECISION], current_only=True)
    )
    assert [e.content for e in stored] == ["We decided to keep invoices in SQLite."]


async def test_facts_come_out_of_a_transcript_range(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    session = await engine.ensure_session()
    for text in ("hello there", "We agreed to drop Python 3.9 support.", "Edit setup.cfg next."):
        await engine_parts.sessions.append(
            Message[dict[str, Any]](session_id=session.id, source="user", target="architect",
                                    type=MessageType.USER_INPUT, payload={"text": text})
        )  # fmt: skip
    env = await _run(engine_parts, "archivalist", session.id, workspace,
                     "archivalist.analysis.extract_facts",
                     transcript_from=1, transcript_to=2)  # fmt: skip
    assert env.ok, env.error
    found = {(f["kind"], f["text"], f["source"]) for f in env.result["facts"]}
    assert ("decision", "We agreed to drop Python 3.9 support.", "message:1") in found
    assert ("file", "setup.cfg", "message:2") in found
    empty = await _run(engine_parts, "archivalist", session.id, workspace,
                       "archivalist.analysis.extract_facts")  # fmt: skip
    assert not empty.ok and empty.error.code == "VALIDATION_ERROR"


async def test_conflicting_decisions_are_listed_then_resolved_by_the_callers_choice(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    session = await engine.ensure_session()
    chronicle = engine_parts.knowledge.chronicle
    first = await chronicle.store(session.id, Category.DECISION, "Use SQLite.", title="Storage")
    second = await chronicle.store(session.id, Category.DECISION, "Use Postgres.", title="storage")
    await chronicle.store(session.id, Category.DECISION, "Use ruff.", title="linter")

    async def resolve(**args: Any) -> Any:
        return await _run(engine_parts, "archivalist", session.id, workspace,
                          "archivalist.concurrency.resolve_conflict", **args)  # fmt: skip

    listed = await resolve()
    assert listed.ok and listed.result["count"] == 1 and listed.result["resolved"] is None
    ids = {e["id"] for e in listed.result["conflicts"]["storage"]}
    assert ids == {first.id, second.id}
    stray = await resolve(keep_entry_id="ent_nope")
    assert not stray.ok and stray.error.code == "CONFLICT"
    kept = await resolve(subject="storage", keep_entry_id=second.id, reason="the user chose it")
    assert kept.ok, kept.error
    resolution = kept.result["resolved"]
    assert resolution["data"]["kept"] == second.id and set(resolution["data"]["resolves"]) == ids
    assert "Use Postgres." in resolution["content"] and "the user chose it" in resolution["content"]
    after = await resolve()
    assert after.result["count"] == 0  # both stay in the history; the resolution stands


async def test_a_comparison_cites_the_library_and_the_code(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    (workspace / "store.py").write_text(
        'import sqlite3\n\n\ndef open_db():\n    """Open the SQLite database."""\n'
        "    return sqlite3.connect('x')\n"
    )
    session = await engine.ensure_session()
    await engine.start_indexing(session.id)
    env = await _run(engine_parts, "academic", session.id, workspace,
                     "academic.research.compare", options=["SQLite", "Postgres"])  # fmt: skip
    assert env.ok, env.error
    rows = {r["criterion"]: r["cells"] for r in env.result["rows"]}
    library = rows["guidance in the library"]["SQLite"]
    assert any(s.startswith("sylk://library/") for s in library["sources"])
    assert "sqlite" in library["finding"].lower()
    code = rows["use in this codebase"]
    assert any(s.startswith("store.py:") for s in code["SQLite"]["sources"]), code
    assert (
        code["Postgres"]["sources"] == []
        and "| criterion | SQLite | Postgres |" in env.result["table"]
    )


async def test_a_workspace_file_becomes_library_fragments(
    engine: Engine, engine_parts: EngineParts, workspace: Path, tmp_path: Path
) -> None:
    session = await engine.ensure_session()
    (workspace / "docs").mkdir()
    (workspace / "docs" / "queues.md").write_text(
        "# Queue etiquette\n\nBackpressure keeps producers honest.\n\n"
        "## Dead letters\n\nPark poison messages in a dead-letter queue after three tries.\n"
    )

    async def ingest(**args: Any) -> Any:
        return await _run(engine_parts, "academic", session.id, workspace,
                          "academic.source.ingest", **args)  # fmt: skip

    env = await ingest(path="docs/queues.md", tags=["queues"])
    assert env.ok, env.error
    assert env.result["count"] == 2 and not env.result["skipped"]
    found = await _run(engine_parts, "academic", session.id, workspace,
                       "academic.library.query",
                       query="poison messages dead-letter queue")  # fmt: skip
    assert any(m["uri"] in env.result["fragments"] for m in found.result["matches"])
    outside = tmp_path / "outside.md"
    outside.write_text("# secret\n\nnot yours\n")
    refused = await ingest(path=str(outside))
    assert not refused.ok and refused.error.code == "ACCESS_DENIED"
    (workspace / "blob.md").write_bytes(b"# x\n\x00\x01binary")
    binary = await ingest(path="blob.md")
    assert not binary.ok and "binary" in binary.error.message.lower()
    (workspace / "huge.md").write_text("# big\n\n" + "x" * 300_000)
    huge = await ingest(path="huge.md")
    assert not huge.ok and huge.error.code in {"VALIDATION_ERROR", "RESOURCE_LIMIT"}, huge.error
    (workspace / "pic.png").write_bytes(b"\x89PNG")
    wrong = await ingest(path="pic.png")
    assert not wrong.ok and wrong.error.code == "VALIDATION_ERROR"


async def test_a_design_proposal_is_an_outline_citing_what_it_used(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    (workspace / "retry.py").write_text("def retry_with_backoff(call):\n    return call()\n")
    session = await engine.ensure_session()
    await engine.start_indexing(session.id)
    env = await _run(engine_parts, "academic", session.id, workspace, "academic.design.proposal",
                     topic="retries with backoff", constraints=["no new dependencies"])  # fmt: skip
    assert env.ok, env.error
    text = env.result["proposal"]
    for heading in ("## Request", "## Constraints", "## Context in this codebase",
                    "## Guidance from the library", "## Open questions"):  # fmt: skip
        assert heading in text
    assert "sylk://library/errors/retries-backoff" in env.result["sources"]["library"]
    assert "no new dependencies" in text and env.result["model"].startswith("not used")
