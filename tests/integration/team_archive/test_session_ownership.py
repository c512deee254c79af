"""Each session records its owner; an engine runs only its own, and `--team` lists all."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest

from backend.errors import SessionNotFoundError
from backend.sessions.ownership import SessionOwner
from sylk_tui.cli import main
from tests.integration.team_archive.teammates import said, teammate

HOST = socket.gethostname()


async def test_a_teammates_sessions_are_never_loaded_or_touched(
    data_dir: Path, workspace: Path
) -> None:
    alice = teammate(data_dir, workspace, "alice")
    try:
        mine = await alice.create_session("alice work", isolation=False)
        assert mine.owner == SessionOwner(user="alice", host=HOST)
    finally:
        await alice.aclose()
    bob = teammate(data_dir, workspace, "bob")
    try:
        assert bob.list_sessions(include_closed=True) == []  # alice's is not loaded
        with pytest.raises(SessionNotFoundError):
            await bob.fail_session(mine.id, "not yours")
        with pytest.raises(SessionNotFoundError):
            await bob.delete_session(mine.id)
        own = await bob.create_session("bob work", isolation=False)
        rows = {r.id: r for r in bob.team.team_rows()}
        assert str(rows[mine.id].owner) == f"alice@{HOST}" and rows[mine.id].state == "active"
        assert rows[own.id].owner == bob.team.reader
    finally:
        await bob.aclose()
    again = teammate(data_dir, workspace, "alice")
    try:
        assert [s.id for s in again.list_sessions()] == [mine.id]
        assert again.get_session(mine.id).state.value == "active"  # untouched by bob
    finally:
        await again.aclose()


def test_sessions_list_shows_own_and_team_shows_every_owner(
    data_dir: Path, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    monkeypatch.setenv("SYLK_CONFIG_DIR", str(config_dir))
    common = ["--data-dir", str(data_dir), "--workspace", str(workspace)]
    for user in ("alice", "bob"):
        (config_dir / "config.toml").write_text(f'[team]\nuser = "{user}"\n')
        assert main(["sessions", "new", f"{user} work", "--no-isolation", *common]) == 0
    capsys.readouterr()
    assert main(["sessions", "list", "--json", *common]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["bob work"]
    assert main(["sessions", "list", "--team", "--json", *common]) == 0
    team = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["owner"], r["mine"]) for r in team] == [
        ("alice work", f"alice@{HOST}", False),
        ("bob work", f"bob@{HOST}", True),
    ]
    assert all(set(r) == {"id", "name", "state", "owner", "mine"} for r in team)
    assert main(["sessions", "list", "--team", *common]) == 0
    assert f"alice work  alice@{HOST}" in capsys.readouterr().out


async def _alice_hands_over(data_dir: Path, workspace: Path) -> None:
    alice = teammate(data_dir, workspace, "alice")
    try:
        handed = await alice.create_session("handed over", isolation=False)
        alice.archive.append_messages([said(handed.id, "the context bob needs")])
    finally:
        await alice.aclose()


def test_an_imported_session_is_the_importers(
    data_dir: Path, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    asyncio.run(_alice_hands_over(data_dir, workspace))
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    monkeypatch.setenv("SYLK_CONFIG_DIR", str(config_dir))
    common = ["--data-dir", str(data_dir), "--workspace", str(workspace)]
    (config_dir / "config.toml").write_text('[team]\nuser = "alice"\n')
    exported = tmp_path / "s.json"
    assert main(["sessions", "export", "1", "--format", "json", "-o", str(exported), *common]) == 0
    other = tmp_path / "bob-data"
    other.mkdir()
    (config_dir / "config.toml").write_text('[team]\nuser = "bob"\n')
    mine = ["--data-dir", str(other), "--workspace", str(workspace)]
    assert main(["sessions", "import", str(exported), *mine]) == 0
    capsys.readouterr()
    assert main(["sessions", "list", "--json", *mine]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["handed over"]
