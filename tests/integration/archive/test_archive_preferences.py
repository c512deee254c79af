"""Global preferences live in the archive and survive a restart (SQLite and PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

from backend.archive.store import Archive


def test_preference_round_trip_and_replace(tmp_path: Path, archive_url: str) -> None:
    archive = Archive(tmp_path, url=archive_url)
    assert archive.get_preference("tools.python.linter") is None
    archive.set_preference("tools.python.linter", {"name": "ruff", "source": "user_choice"})
    archive.set_preference("tools.python.linter", {"name": "flake8", "source": "user_choice"})
    archive.set_preference("tools.go.linter", {"name": "golangci-lint"})
    archive.set_preference("theme", "dark")
    archive.close()

    reopened = Archive(tmp_path, url=archive_url)
    try:
        assert reopened.get_preference("tools.python.linter") == {
            "name": "flake8",
            "source": "user_choice",
        }
        assert set(reopened.preferences("tools.")) == {"tools.python.linter", "tools.go.linter"}
        count = reopened.read(
            lambda conn: conn.exec_driver_sql("SELECT count(*) FROM preferences").scalar()
        )
        assert count == 3
    finally:
        reopened.close()
