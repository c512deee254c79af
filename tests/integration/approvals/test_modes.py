"""Modes per session set with /approval (kept across a restart), the run's override and
--yes, config rules, the network switch, /status, and the MCP server's callers."""

from __future__ import annotations

from pathlib import Path

from backend.config.approvals import ApprovalMode, ApprovalSettings
from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.mcp.server.server import caller_context
from backend.skills.builtin.declare import declare
from backend.skills.models import SkillContext
from tests.integration.approvals.conftest import FrontEnd, context
from tests.support.engine_env import quiet_config

SHELL = "engineer.shell.run"


async def _say(engine: Engine, session_id: str, line: str) -> str:
    recorded = await engine.submit(session_id, line)
    return str(recorded[-1].payload["text"])


async def test_approval_sets_the_sessions_mode_and_it_survives_a_restart(
    data_dir: Path, workspace: Path
) -> None:
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    engine = Engine(config)
    session = await engine.create_session("s")
    assert "approval mode ask" in await _say(engine, session.id, "/approval")
    answer = await _say(engine, session.id, "/approval read-only")
    assert "read-only" in answer
    bad = await _say(engine, session.id, "/approval yolo")
    assert "read-only, ask, auto-edit, auto" in bad
    await engine.aclose()

    parts = build(config)
    again = Engine.from_parts(parts)
    try:
        assert again.approval_mode(session.id) is ApprovalMode.READ_ONLY
        ctx = context(session.id, workspace)
        out = await parts.gateway.execute(ctx, "engineer.file.write", {"path": "a", "content": ""})
        assert not out.ok and out.error is not None and out.error.code == "ACCESS_DENIED"
        assert out.error.details["reason"] == "read_only"
        assert "read-only" in out.error.message and "/approval" in out.error.message
        assert not (workspace / "a").exists()
        status = await _say(again, session.id, "/status")
        assert "approval mode read-only (set for this session)" in status
        parts.approvals.gate.sandboxed = lambda: False  # as on a machine without one
        status = await _say(again, session.id, "/status")
        assert "commands run unconfined: every command needs approval" in status
    finally:
        await again.aclose()


async def test_auto_edit_lets_edits_through_and_commands_still_ask(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    session = await engine.create_session("s")
    await _say(engine, session.id, "/approval auto-edit")
    ctx = context(session.id, workspace)
    out = await engine_parts.gateway.execute(
        ctx, "engineer.file.write", {"path": "a", "content": "x"}
    )
    assert out.ok and front_end.asked == []
    assert out.meta.approval is not None and out.meta.approval["by"] == "mode"
    await _say(engine, session.id, "/approval auto-edit")
    run = await engine_parts.gateway.execute(ctx, SHELL, {"command": "true"}, dry_run=False)
    assert len(front_end.asked) == 1 and run.meta.approval is not None
    assert run.meta.approval["by"] == "user"


async def test_auto_runs_sandboxed_commands_and_asks_where_none_confines_them(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    session = await engine.create_session("s")
    await _say(engine, session.id, "/approval auto")
    ctx = context(session.id, workspace)
    gate = engine_parts.approvals.gate
    gate.sandboxed = lambda: True
    run = await engine_parts.gateway.execute(ctx, "engineer.net.none", {}, dry_run=False)
    assert run.meta.approval is None  # an unknown op never reaches the gate
    confined = await engine_parts.gateway.execute(ctx, SHELL, {"command": "true"}, dry_run=False)
    assert front_end.asked == [] and confined.meta.approval is not None
    assert confined.meta.approval["by"] == "mode"
    gate.sandboxed = lambda: False  # another OS, an old kernel: every command asks
    loose = await engine_parts.gateway.execute(ctx, SHELL, {"command": "true"}, dry_run=False)
    assert len(front_end.asked) == 1 and loose.meta.approval is not None
    assert loose.meta.approval["by"] == "user"
    assert front_end.asked[0].sandbox.startswith("none: commands run unconfined")


async def test_the_run_mode_yes_and_deny_rules(data_dir: Path, workspace: Path) -> None:
    settings = quiet_config(approvals=ApprovalSettings(allow=["touch *"], deny=["rm -rf *"]))
    config = EngineConfig(
        data_dir=data_dir, workspace=workspace, watch_files=False,
        approval_mode=ApprovalMode.ASK, assume_yes=True,
    )  # fmt: skip
    parts = build(config, settings)
    engine = Engine.from_parts(parts)
    try:
        session = await engine.create_session("s")
        ctx = context(session.id, workspace)
        (workspace / "keep").mkdir()
        denied = await parts.gateway.execute(ctx, SHELL, {"command": "true && rm -rf keep"},
                                             dry_run=False)  # fmt: skip
        assert not denied.ok and denied.error is not None
        assert denied.error.details == {"reason": "deny_rule", "rule": "rm -rf *", "by": "rule"}
        assert (workspace / "keep").is_dir()  # --yes never overrides a deny rule
        ruled = await parts.gateway.execute(ctx, SHELL, {"command": "touch x"}, dry_run=False)
        assert ruled.ok and ruled.meta.approval is not None
        assert ruled.meta.approval["by"] == "rule" and ruled.meta.approval["rule"] == "touch *"
        yes = await parts.gateway.execute(ctx, SHELL, {"command": "mkdir made"}, dry_run=False)
        assert yes.ok and yes.meta.approval is not None and yes.meta.approval["by"] == "yes"
        await engine.submit(session.id, "/approval read-only")  # the run's mode still wins
        assert engine.approval_mode(session.id) is ApprovalMode.ASK
    finally:
        await engine.aclose()


async def test_the_network_switch_reaches_the_handler(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    seen: list[bool] = []

    async def probe(ctx: SkillContext, _params: object) -> dict[str, bool]:
        seen.append(ctx.confinement.network)
        return {"network": ctx.confinement.network}

    engine_parts.gateway.registry.register(
        declare("engineer.net.probe", "engineer", "Report the network switch.", handler=probe,
                kind="write", action="command")  # type: ignore[arg-type]
    )  # fmt: skip
    session = await engine.create_session("s")
    ctx = context(session.id, workspace)
    assert "network for commands: off" in await _say(engine, session.id, "/network")
    await engine_parts.gateway.execute(ctx, "engineer.net.probe", {})
    assert "on" in await _say(engine, session.id, "/network on")
    await engine_parts.gateway.execute(ctx, "engineer.net.probe", {})
    assert seen == [False, True]
    assert "/network takes on or off" in await _say(engine, session.id, "/network maybe")


async def test_mcp_callers_get_the_mode_their_rights_allow(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    reader = caller_context(engine, can_write=False)
    writer = caller_context(engine, can_write=True)
    assert reader.approval is ApprovalMode.READ_ONLY
    assert writer.approval is ApprovalMode.ASK  # the config's default
    out = await engine_parts.gateway.execute(
        writer, "engineer.file.write", {"path": "mcp.txt", "content": "x"}
    )
    assert not out.ok and out.error is not None
    assert out.error.details["reason"] == "approval_required"
    assert not (workspace / "mcp.txt").exists()
