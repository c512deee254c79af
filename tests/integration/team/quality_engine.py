"""An engine on a small real Python project for the Inspector's and Tester's ops.

The project is the pipelines' fixture (a lint error in ``pkg/calc.py``, a type error in
``pkg/halves.py``, a badly formatted ``pkg/ugly.py``, a failing test); the tools are
Sylk's own ruff, mypy, pytest and coverage, put first on PATH (outside the workspace),
found by discovery from the project's pyproject as they would be for a user. Ops are
called through the gateway's ``execute`` as a model would, in ``auto`` approval mode
unless a test says otherwise.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine, EngineConfig
from backend.skills.builtin.catalog import agent_context
from backend.skills.envelopes import Envelope
from tests.integration.pipelines.conftest import BAD, PYPROJECT, VENV_BIN, write
from tests.support.scripted import write_script


def project(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join([VENV_BIN, os.environ.get("PATH", "")]))
    (workspace / "pyproject.toml").write_text(PYPROJECT)
    write(workspace, BAD)


async def open_engine(
    data_dir: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    turns: list[dict[str, Any]] | None = None,
) -> AsyncIterator[Engine]:
    """An engine on the project; with ``turns``, on the scripted model playing them."""
    project(workspace, monkeypatch)
    extra: dict[str, Any] = {}
    if turns is not None:
        script = write_script(data_dir.parent / "script.json", turns)
        monkeypatch.setenv("SYLK_SCRIPT", str(script))
        extra["provider"] = "scripted"
    eng = Engine(EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False, **extra))
    try:
        yield eng
    finally:
        await eng.aclose()


async def call(
    engine: Engine,
    agent: str,
    op: str,
    *,
    mode: str | None = "auto",
    dry_run: bool | None = None,
    **args: Any,
) -> Envelope:
    session = await engine.ensure_session()
    if mode is not None:
        await engine.approval_command(session.id, mode)
    ctx = agent_context(agent, session.id, engine.workspace,
                        confinement=engine.confinement(engine.workspace))  # fmt: skip
    gateway = await engine.tools_gateway()
    return await gateway.execute(ctx, op, dict(args), dry_run=dry_run)


async def ok(engine: Engine, agent: str, op: str, **args: Any) -> dict[str, Any]:
    out = await call(engine, agent, op, **args)
    assert out.ok, out.error
    assert isinstance(out.result, dict)
    return out.result


async def refused(engine: Engine, agent: str, op: str, **args: Any) -> tuple[str, str, Any]:
    """(code, message, details) of a call that must fail with a typed error."""
    out = await call(engine, agent, op, **args)
    assert not out.ok and out.error is not None, out.result
    return out.error.code.value, out.error.message, out.error.details
