"""The Inspector's checks as ops, through the engine's gateway: the project's own ruff and
mypy (found by discovery, run in the sandbox) on a real project, gated as commands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.engine import Engine, EngineConfig
from backend.skills.builtin.catalog import agent_context
from tests.integration.pipelines.conftest import BAD, PYPROJECT, VENV_BIN, write


@pytest.fixture
async def engine(data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    monkeypatch.setenv("PATH", os.pathsep.join([VENV_BIN, os.environ.get("PATH", "")]))
    (workspace / "pyproject.toml").write_text(PYPROJECT)
    write(workspace, BAD)
    eng = Engine(EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False))
    yield eng  # type: ignore[misc]
    await eng.aclose()


async def _check(engine: Engine, op: str, **args: object) -> dict[str, object]:
    session = await engine.ensure_session()
    await engine.approval_command(session.id, "auto")
    ctx = agent_context("inspector", session.id, engine.workspace,
                        confinement=engine.confinement(engine.workspace))  # fmt: skip
    gateway = await engine.tools_gateway()
    out = await gateway.execute(ctx, op, dict(args))
    assert out.ok, out.error
    assert out.result is not None
    return out.result


async def test_style_check_finds_the_lint_and_format_issues_of_the_named_files(
    engine: Engine,
) -> None:
    report = await _check(engine, "inspector.style.check", paths=["pkg/calc.py", "pkg/ugly.py"])
    issues = report["issues"]
    assert isinstance(issues, list)
    found = {(i["file"], i["category"]) for i in issues}
    assert ("pkg/calc.py", "lint") in found  # the unused import
    assert ("pkg/ugly.py", "format") in found
    assert all(i["category"] in ("lint", "format") for i in issues)  # no type issues here
    assert report["clean"] is False and report["level"] != "none"


async def test_full_validation_adds_the_type_errors(engine: Engine) -> None:
    report = await _check(engine, "inspector.implementation.validate", paths=["pkg/halves.py"])
    issues = report["issues"]
    assert isinstance(issues, list)
    assert any(i["category"] == "type" and i["file"] == "pkg/halves.py" for i in issues)


async def test_without_paths_and_without_changes_it_says_what_to_pass(engine: Engine) -> None:
    session = await engine.ensure_session()
    await engine.approval_command(session.id, "auto")
    ctx = agent_context("inspector", session.id, engine.workspace)
    gateway = await engine.tools_gateway()
    out = await gateway.execute(ctx, "inspector.style.check", {})
    assert not out.ok and out.error is not None
    assert out.error.code.value == "VALIDATION_ERROR"
    assert "no files to inspect" in out.error.message


async def test_in_ask_mode_with_nobody_to_ask_the_checks_are_refused(engine: Engine) -> None:
    session = await engine.ensure_session()
    ctx = agent_context("inspector", session.id, engine.workspace)
    gateway = await engine.tools_gateway()
    out = await gateway.execute(ctx, "inspector.style.check", {"paths": ["pkg/calc.py"]})
    assert not out.ok and out.error is not None
    assert out.error.details["reason"] == "approval_required"
