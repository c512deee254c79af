"""`sylk sessions list` (plain and --json) shows each session's phase, read from the
archive by a separate process."""

from __future__ import annotations

import json
from pathlib import Path

from backend.engine import Engine, EngineConfig
from backend.sessions.phases import SessionPhase
from tests.integration.cli.test_cli import sylk


async def test_the_listing_shows_each_sessions_phase(data_dir: Path, workspace: Path) -> None:
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    try:
        planned = await engine.create_session("planned")
        await engine.set_phase(planned.id, SessionPhase.PLANNING, "add a --verbose flag")
        await engine.create_session("chat", activate=False)
    finally:
        await engine.aclose()

    listed = sylk("sessions", "list", "--json", data_dir=data_dir, workspace=workspace)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["planned"]["phase"] == "planning"
    assert rows["chat"]["phase"] == "idle"

    plain = sylk("sessions", "list", data_dir=data_dir, workspace=workspace)
    lines = {line.split()[-1]: line.split() for line in plain.stdout.splitlines()}
    assert lines["planned"][-3:] == ["active", "planning", "planned"]
    assert lines["chat"][-3:] == ["created", "idle", "chat"]
