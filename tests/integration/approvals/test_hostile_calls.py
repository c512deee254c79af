"""What a model (or a hostile repository's instructions to it) might try: raise its own
permissions through arguments or flags, reach outside tools, hide a command in another."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.skills.builtin.declare import WRITE, Params, declare
from backend.skills.models import SkillContext
from tests.integration.approvals.conftest import FrontEnd, context

SHELL = "engineer.shell.run"


@pytest.mark.parametrize(
    "args",
    [
        {"command": "touch made", "approval": "auto"},
        {"command": "touch made", "dry_run": False, "yes": True},
        {"command": "touch made", "mode": "auto", "approved": True},
    ],
)
async def test_arguments_cannot_carry_approval(
    engine: Engine, engine_parts: EngineParts, workspace: Path, args: dict[str, object]
) -> None:
    session = await engine.create_session("s")
    out = await engine_parts.gateway.execute(context(session.id, workspace), SHELL, args,
                                             dry_run=False)  # fmt: skip
    assert not out.ok and out.error is not None and out.error.code == "VALIDATION_ERROR"
    assert not (workspace / "made").exists()


async def test_the_verbs_own_flags_cannot_skip_the_gate(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    session = await engine.create_session("s")
    ctx = context(session.id, workspace)
    for call in (
        {"op": SHELL, "args": {"command": "touch made"}, "dry_run": False},
        {"op": SHELL, "args": {"command": "touch made"}, "dry_run": False,
         "idempotency_key": "k1"},
    ):  # fmt: skip
        out = await engine_parts.gateway.execute(
            ctx, str(call["op"]), call["args"], dry_run=False,  # type: ignore[arg-type]
            idempotency_key=call.get("idempotency_key"),  # type: ignore[arg-type]
        )  # fmt: skip
        assert out.error is not None and out.error.details["reason"] == "approval_required"
    assert not (workspace / "made").exists()


class _Anything(Params):
    query: str = ""


async def test_an_outside_tool_asks_even_in_auto(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    called: list[str] = []

    async def handler(_ctx: SkillContext, params: _Anything) -> dict[str, str]:
        called.append(params.query)
        return {"done": params.query}

    engine_parts.gateway.registry.register(
        declare("github.create_issue", "mcp", "An MCP server's tool.", _Anything, handler,
                kind=WRITE, action="external", searchable=False)
    )  # fmt: skip
    session = await engine.create_session("s")
    await engine.approval_command(session.id, "auto")
    engine_parts.approvals.gate.sandboxed = lambda: True
    front_end.answer = lambda _request: "deny"
    ctx = context(session.id, workspace, agent="engineer")
    out = await engine_parts.gateway.execute(ctx, "github.create_issue", {"query": "x"})
    assert not out.ok and called == []
    (asked,) = front_end.asked
    assert asked.action == "external" and asked.sandbox == "outside Sylk's sandbox"
    assert asked.command.startswith('github.create_issue {"query": "x"}')
    front_end.answer = lambda request: f"allow-session:{request.session_rules[0]}"
    assert (await engine_parts.gateway.execute(ctx, "github.create_issue", {"query": "y"})).ok
    assert (await engine_parts.gateway.execute(ctx, "github.create_issue", {"query": "z"})).ok
    assert called == ["y", "z"] and len(front_end.asked) == 2


async def test_routing_an_approval_command_through_an_op_changes_nothing(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    from backend.config.approvals import ApprovalMode
    from backend.skills.builtin.catalog import agent_context

    session = await engine.create_session("s")
    ctx = agent_context("guide", session.id, workspace)
    out = await engine_parts.gateway.execute(
        ctx, "guide.route.message", {"input": "/approval auto"}, dry_run=False
    )
    assert out.ok, out.error  # a decision, not carried out
    assert engine.approval_mode(session.id) is ApprovalMode.ASK
