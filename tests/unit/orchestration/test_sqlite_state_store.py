"""The SQLite DAG state store: records round-trip, the file is private, bad files are typed."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from backend.orchestration import DagStateError, NodeRecord, NodeStatus, SqliteDagStateStore


async def test_a_record_round_trips_and_a_save_replaces_the_last(tmp_path: Path) -> None:
    store = SqliteDagStateStore(tmp_path / "dags.sqlite")
    try:
        await store.save("d1", "a", NodeRecord(NodeStatus.RUNNING, 1, digest="x"))
        passed = NodeRecord(NodeStatus.PASSED, 2, {"files": ["a.py"], "n": 1.5}, None, 0.25, "x")
        await store.save("d1", "a", passed)
        await store.save("d2", "a", NodeRecord(NodeStatus.FAILED, 1, None, "boom", 0.1, "y"))
        assert await store.load("d1") == {"a": passed}
        assert (await store.load("d2"))["a"].error == "boom"
        assert await store.load("nope") == {}
    finally:
        await store.aclose()
    reopened = SqliteDagStateStore(tmp_path / "dags.sqlite")
    try:
        assert await reopened.load("d1") == {"a": passed}
    finally:
        await reopened.aclose()


async def test_the_file_and_its_wal_are_private(tmp_path: Path) -> None:
    path = tmp_path / "dags.sqlite"
    store = SqliteDagStateStore(path)
    try:
        await store.save("d", "a", NodeRecord(NodeStatus.PASSED, 1, "secret", digest="x"))
        for file in (path, Path(f"{path}-wal")):
            assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    finally:
        await store.aclose()


async def test_a_file_that_is_no_database_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "dags.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    store = SqliteDagStateStore(path)
    try:
        with pytest.raises(DagStateError, match="cannot be used"):
            await store.load("d")
    finally:
        await store.aclose()


async def test_a_store_from_a_newer_sylk_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dags.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version=99")
    store = SqliteDagStateStore(path)
    try:
        with pytest.raises(DagStateError, match="newer Sylk"):
            await store.load("d")
    finally:
        await store.aclose()


async def test_a_closed_store_refuses_work(tmp_path: Path) -> None:
    store = SqliteDagStateStore(tmp_path / "dags.sqlite")
    await store.aclose()
    await store.aclose()  # idempotent
    with pytest.raises(DagStateError, match="closed"):
        await store.save("d", "a", NodeRecord(NodeStatus.PASSED))


async def test_a_symlink_in_place_of_the_file_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep me")
    (tmp_path / "dags.sqlite").symlink_to(target)
    store = SqliteDagStateStore(tmp_path / "dags.sqlite")
    try:
        with pytest.raises(DagStateError):
            await store.load("d")
    finally:
        await store.aclose()
    assert target.read_text() == "keep me"
