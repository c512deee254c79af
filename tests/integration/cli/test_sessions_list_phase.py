"""`sylk sessions list` (plain and --json) shows each session's phase and workspace, read
from the archive by a separate process."""

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
    # state, phase, messages, name, workspace end each line (the header first)
    lines = {line.split()[-2]: line.split() for line in plain.stdout.splitlines()[1:]}
    assert lines["planned"][-5:-1] == ["active", "planning", "0", "planned"]
    assert lines["chat"][-5:-1] == ["created", "idle", "0", "chat"]
    assert lines["chat"][-1].endswith("/workspace") and lines["planned"][0] == "*"
