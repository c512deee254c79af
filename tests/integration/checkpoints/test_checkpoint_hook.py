"""The pre-tool hook through a real gateway: only a real change inside an agent turn
takes the "before" snapshot; reads, dry runs and calls outside a turn cost none; without
git the change still happens and says it has no checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.checkpoints.git_process import GitMissingError, run_git
from backend.checkpoints.service import Checkpoints
from backend.config.approvals import ApprovalMode
from backend.engine import EngineConfig
from backend.engine.build import build
from backend.engine.checkpoint_work import checkpoint_hook
from backend.skills.builtin.catalog import agent_context, build_gateway
from backend.skills.envelopes import Envelope
from backend.skills.gateway.gateway import Gateway

SESSION = "h00k"


@pytest.fixture
def gateway() -> Gateway:
    built = build_gateway()
    built.hooks.install(checkpoint_hook())
    return built


async def _run(gateway: Gateway, ws: Path, op: str, dry_run: bool, **args: Any) -> Envelope:
    return await gateway.execute(agent_context("engineer", SESSION, ws), op, args, dry_run=dry_run)


async def test_only_a_real_change_in_a_turn_snapshots(
    gateway: Gateway, data_dir: Path, project: Path
) -> None:
    checkpoints = Checkpoints(data_dir)
    outside = await _run(gateway, project, "engineer.file.write", False, path="a.txt", content="1")
    assert outside.ok  # no turn (an MCP client's call): no checkpoint, nothing refused
    async with checkpoints.turn(SESSION, "engineer", project) as turn:
        read = await _run(gateway, project, "engineer.file.read", False, path="src/app.py")
        preview = await _run(
            gateway, project, "engineer.file.write", True, path="b.txt", content=""
        )
        assert read.ok and preview.ok
        assert turn.before is None  # a read and a dry run change nothing
        wrote = await _run(
            gateway, project, "engineer.file.write", False, path="b.txt", content="2"
        )
        assert wrote.ok and turn.before is not None
        turn.turn_id = "t1"
    assert turn.recorded is not None
    outcome = await checkpoints.undo(SESSION, project)
    assert outcome.removed == ["b.txt"]
    assert (project / "a.txt").read_text() == "1"  # made outside any turn: not undone


async def test_without_git_the_change_happens_and_says_it_cannot_be_undone(
    gateway: Gateway,
    data_dir: Path,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(GitMissingError):
        await run_git(data_dir, project, ["status"])
    checkpoints = Checkpoints(data_dir)
    async with checkpoints.turn(SESSION, "engineer", project) as turn:
        wrote = await _run(
            gateway, project, "engineer.file.write", False, path="c.txt", content="3"
        )
    assert wrote.ok and (project / "c.txt").read_text() == "3"
    assert any("no checkpoint for this turn" in w for w in wrote.meta.warnings)
    assert turn.recorded is None


async def test_a_call_the_approval_gate_refuses_costs_no_snapshot(
    data_dir: Path, project: Path
) -> None:
    config = EngineConfig(data_dir=data_dir, workspace=project, watch_files=False,
                          approval_mode=ApprovalMode.READ_ONLY)  # fmt: skip
    parts = build(config)
    try:
        async with parts.checkpoints.turn(SESSION, "engineer", project) as turn:
            refused = await _run(
                parts.gateway, project, "engineer.file.write", False, path="d.txt", content="4"
            )
        assert not refused.ok and not (project / "d.txt").exists()
        assert turn.before is None  # the gate ran first: no snapshot for a refused call
    finally:
        await parts.aclose()
