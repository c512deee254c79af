"""`sylk archive migrate`: a laptop's SQLite archive, filled by a real engine, copied
into PostgreSQL without loss; a second run copies nothing; bad sources and targets are
refused with a typed error."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from sqlalchemy import make_url

from backend.archive.store import Archive
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.knowledge.chronicle.models import ChronicleQuery
from sylk_tui.cli import main
from tests.integration.orchestration.plan_runs import node, plan
from tests.support.postgres import PgServer
from tests.support.scripted import write_script

HOST = socket.gethostname()


async def _fill(config: EngineConfig) -> dict[str, object]:
    """Sessions, a conversation with a model call (usage), chronicle entries (one
    promoted), a plan and a snapshot, through the engine."""
    parts = build(config)
    engine = Engine.from_parts(parts)
    try:
        first = await engine.create_session("laptop work", isolation=False)
        await engine.submit(first.id, "@architect outline the invoice tokenizer")
        second = await engine.create_session("second", isolation=False)
        await engine.submit(second.id, "remember the migration to tokens")
        chronicle = parts.knowledge.chronicle
        shared = await chronicle.store(first.id, "decision", "Adopt tsvector search")
        await chronicle.promote(shared.id)
        await chronicle.store(second.id, "decision", "Keep invoices private for now")
        await parts.plans.propose(first.id, plan(node("a", "librarian")), source="test")
        await engine.snapshot_session(first.id, label="before")
        assert parts.archive.usage_by_agent(), "the scripted call recorded its usage"
        return {
            "sessions": {s.id: s.name for s in engine.list_sessions()},
            "said": {s: [m.id for m in parts.archive.load_transcript(s)]
                     for s in (first.id, second.id)},
            "shared": shared.id,
        }  # fmt: skip
    finally:
        await engine.aclose()


def _migrate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["archive", "migrate", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


async def test_a_laptop_archive_moves_to_postgresql_without_loss(
    engine_config: EngineConfig, postgres_url: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("SYLK_CONFIG_DIR", str(tmp_path / "no-config"))
    script = write_script(tmp_path / "script.json", [{"text": "Outlined."}] * 4)
    monkeypatch.setenv("SYLK_SCRIPT", str(script))
    monkeypatch.setenv("SYLK_PROVIDER", "scripted")
    before = await _fill(engine_config)
    data = ["--data-dir", str(engine_config.data_dir)]

    code, out, err = _migrate(capsys, *data, "--to", postgres_url)
    assert code == 0, err
    table = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    for name in ("sessions", "transcript", "chronicle_entries", "usage", "plans", "snapshots"):
        assert int(table[name][1]) > 0 and table[name][1] == table[name][2] == table[name][3]
        assert table[name][-1] == "yes", out

    monkeypatch.setenv("SYLK_DATABASE_URL", postgres_url)
    parts = build(engine_config)
    assert parts.archive.dialect == "postgresql"
    shared = Engine.from_parts(parts)
    try:
        assert {s.id: s.name for s in shared.list_sessions()} == before["sessions"]
        assert all(str(s.owner) == f"{s.owner.user}@{HOST}" for s in shared.list_sessions()
                   if s.owner is not None)  # fmt: skip
        said = before["said"]
        assert isinstance(said, dict)
        for sid, ids in said.items():
            assert [m.id for m in parts.archive.load_transcript(sid)] == ids
        hits = await parts.knowledge.chronicle.search_transcript("migration")
        assert {h.session_id for h in hits} == {sid for sid, n in before["sessions"].items()  # type: ignore[union-attr]
                                                if n == "second"}  # fmt: skip
        found = await parts.knowledge.chronicle.query(
            "another-session", ChronicleQuery(search_text="tsvector")
        )
        assert before["shared"] in [e.id for e in found], found  # promoted: every session's
    finally:
        await shared.aclose()

    monkeypatch.delenv("SYLK_DATABASE_URL")
    code, out, err = _migrate(capsys, *data, "--to", postgres_url)
    assert code == 0, err
    assert all(line.split()[2] == "0" for line in out.splitlines()[1:]), out  # nothing twice
    assert "0 rows copied" in err

    # A row changed on the server since: the comparison names its table, exit 1.
    target = Archive(tmp_path / "pg", url=postgres_url)
    target.write(lambda conn: conn.exec_driver_sql("UPDATE transcript SET text = 'edited'"))
    target.close()
    code, out, err = _migrate(capsys, *data, "--to", postgres_url)
    assert code == 1 and "differs after the copy: transcript" in err, (out, err)


def test_bad_sources_and_targets_are_refused(
    tmp_path: Path, postgres_url: str, postgres_server: PgServer,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("SYLK_CONFIG_DIR", str(tmp_path / "no-config"))
    data = tmp_path / "data"
    data.mkdir()
    db = data / "sylk.db"
    args = ["--data-dir", str(data)]

    code, _, err = _migrate(capsys, *args, "--to", postgres_url)
    assert code == 1 and "there is no archive at" in err  # nothing to copy, none made
    assert not db.exists()

    db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    code, _, err = _migrate(capsys, *args, "--to", postgres_url)
    assert code == 1 and "sylk: error:" in err and "Traceback" not in err

    code, _, err = _migrate(capsys, *args, "--from", f"sqlite:///{db}", "--to", f"sqlite:///{db}")
    assert code == 1 and "--to names the archive being copied" in err

    foreign = make_url(postgres_url).database
    assert foreign is not None
    postgres_server.execute("CREATE TABLE invoices (id int)", foreign)
    good = tmp_path / "good"
    Archive(good).close()
    code, _, err = _migrate(capsys, *args, "--from", f"sqlite:///{good / 'sylk.db'}",
                            "--to", postgres_url)  # fmt: skip
    assert code == 1 and "is not a Sylk archive" in err, err
