"""An agent or MCP client without the cross-session scope never reads another session's
private history through the Engineer's consult ops (regression: a client served without
``--session`` asked "where did we leave off" and got the last active session's decisions
and messages).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.knowledge.chronicle.models import Category
from backend.messages import Message, MessageType
from backend.skills.builtin.catalog import agent_context
from backend.skills.session_scope import CROSS_SESSION_SCOPE

PRIVATE_DECISION = "Invoices stay in SQLite; no Postgres until 10k users."
PRIVATE_LINE = "the staging password rotation is done for the invoice service"


async def _other_sessions_work(engine: Engine, parts: EngineParts) -> str:
    session = await engine.create_session("private work")
    await parts.knowledge.chronicle.store(
        session.id, Category.DECISION, PRIVATE_DECISION, title="invoice storage"
    )
    await parts.sessions.append(
        Message[dict[str, Any]](
            session_id=session.id,
            source="engineer",
            target="user",
            type=MessageType.AGENT_REPLY,
            payload={"text": PRIVATE_LINE},
        )
    )
    return session.id


async def _consult(parts: EngineParts, workspace: Path, question: str, **ctx: Any) -> str:
    context = agent_context("engineer", "mcp-client-1", workspace, **ctx)
    env = await parts.gateway.execute(
        context, "engineer.consult.archivalist", {"question": question}
    )
    assert env.ok, env.error
    assert isinstance(env.result, dict)
    return str(env.result["answer"])


async def test_a_caller_without_the_scope_sees_only_its_own_session(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    await _other_sessions_work(engine, engine_parts)
    # Its own session has nothing yet: it is told so, not shown the last active one.
    first = await _consult(engine_parts, workspace, "where did we leave off?")
    assert "this session has recorded no work yet" in first
    for question in (
        "where did we leave off?",
        "what did we decide about invoice storage?",
        "what happened with the staging password rotation?",
        "did the tests pass?",
    ):
        answer = await _consult(engine_parts, workspace, question)
        # The question's own words may come back (and this caller's own timeline); the
        # other session's decision, its messages and its name may not.
        for private in ("no Postgres until 10k users", "is done for the invoice", "private work"):
            assert private not in answer, (question, answer)


async def test_the_cross_session_scope_still_reaches_the_last_active_session(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    await _other_sessions_work(engine, engine_parts)
    scopes = frozenset({CROSS_SESSION_SCOPE})
    resume = await _consult(engine_parts, workspace, "where did we leave off?", scopes=scopes)
    assert "private work" in resume and PRIVATE_LINE in resume
    said = await _consult(
        engine_parts, workspace, "what happened with the staging password rotation?", scopes=scopes
    )
    assert "is done for the invoice" in said
