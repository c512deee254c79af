"""The `sylk` command, run as a real process on a real data dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SYLK = [sys.executable, "-m", "sylk_tui"]


def sylk(*args: str, data_dir: Path, workspace: Path, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return subprocess.run(
        [*SYLK, *args, "--data-dir", str(data_dir), "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_new_list_and_export(data_dir: Path, workspace: Path, tmp_path: Path) -> None:
    made = sylk("sessions", "new", "alpha", data_dir=data_dir, workspace=workspace)
    assert made.returncode == 0, made.stderr
    sid, name = made.stdout.strip().split("\t")
    assert name == "alpha"
    sylk("sessions", "new", "beta", data_dir=data_dir, workspace=workspace)

    listed = sylk("sessions", "list", "--json", data_dir=data_dir, workspace=workspace)
    rows = json.loads(listed.stdout)
    assert [r["name"] for r in rows] == ["alpha", "beta"]
    assert rows[0]["id"] == sid and rows[0]["state"] == "created"
    assert rows[0]["workspace"] == str(workspace.resolve())

    plain = sylk("sessions", "list", data_dir=data_dir, workspace=workspace)
    assert "alpha" in plain.stdout and sid[:8] in plain.stdout

    out = tmp_path / "alpha.json"
    exported = sylk(
        "sessions", "export", "alpha", "--format", "json", "-o", str(out),
        data_dir=data_dir, workspace=workspace,
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    doc = json.loads(out.read_text())
    assert doc["format"] == "sylk-session" and doc["session"]["id"] == sid
    assert doc["messages"] == []

    md = sylk(
        "sessions", "export", sid[:6], "--format", "md", data_dir=data_dir, workspace=workspace
    )
    assert md.stdout.startswith("# alpha") and sid in md.stdout


async def test_export_carries_the_transcript(data_dir: Path, workspace: Path) -> None:
    from backend.engine import Engine, EngineConfig

    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    session = await engine.ensure_session()
    await engine.submit(session.id, "explain the cache")
    await engine.submit(session.id, "/session list")
    await engine.aclose()
    md = sylk("sessions", "export", "1", data_dir=data_dir, workspace=workspace).stdout
    assert "## You" in md and "explain the cache" in md and "No language model" in md
    assert "*→ librarian · pattern · EXPLAIN" in md  # how the Guide routed it
    assert "```" in md  # multi-line command output is fenced
    doc = json.loads(
        sylk(
            "sessions", "export", "1", "--format", "json", data_dir=data_dir, workspace=workspace
        ).stdout
    )
    assert [m["type"] for m in doc["messages"]] == [
        "USER_INPUT", "AGENT_REPLY", "USER_INPUT", "SYSTEM_NOTICE",
    ]  # fmt: skip
    assert doc["messages"][1]["payload"]["answered_from"] == "knowledge"


@pytest.mark.parametrize(
    ("args", "fragment", "code"),
    [
        (("sessions", "export", "nope"), "no session matches 'nope'", 1),
        (("sessions", "export", "x", "--format", "pdf"), "invalid choice", 2),
        (("sessions", "frob"), "invalid choice", 2),
    ],
)
def test_errors_are_one_clear_line(
    data_dir: Path, workspace: Path, args: tuple[str, ...], fragment: str, code: int
) -> None:
    result = sylk(*args, data_dir=data_dir, workspace=workspace)
    assert result.returncode == code
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_workspace(data_dir: Path, tmp_path: Path) -> None:
    result = sylk("sessions", "list", data_dir=data_dir, workspace=tmp_path / "missing")
    assert result.returncode == 2
    assert "is not a directory" in result.stderr and "Traceback" not in result.stderr


def test_corrupt_archive_is_reported_and_left_alone(data_dir: Path, workspace: Path) -> None:
    db = data_dir / "sylk.db"
    junk = os.urandom(8192)
    db.write_bytes(junk)
    result = sylk("sessions", "list", data_dir=data_dir, workspace=workspace)
    assert result.returncode == 1
    assert "sylk: error:" in result.stderr and "Traceback" not in result.stderr
    assert "move" in result.stderr  # says how to get going again
    assert db.read_bytes() == junk


def test_data_dir_from_environment(tmp_path: Path, workspace: Path) -> None:
    env_dir = tmp_path / "from-env"
    result = subprocess.run(
        [*SYLK, "sessions", "new", "envy", "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "SYLK_DATA_DIR": str(env_dir)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert (env_dir / "sylk.db").exists()
    assert oct(env_dir.stat().st_mode & 0o777) == "0o700"
