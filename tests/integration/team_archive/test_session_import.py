"""`sylk sessions import` writes into the configured archive (``database_url``: the
team's PostgreSQL, not the local file) and takes a session with no messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sylk_tui.cli import main


def test_an_empty_session_is_imported_into_the_configured_archive(
    data_dir: Path, workspace: Path, tmp_path: Path, archive_url: str, *,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    monkeypatch.setenv("SYLK_CONFIG_DIR", str(config_dir))
    here = ["--data-dir", str(tmp_path / "alone"), "--workspace", str(workspace)]
    assert main(["sessions", "new", "nothing said yet", "--no-isolation", *here]) == 0
    exported = tmp_path / "empty.json"
    assert main(["sessions", "export", "1", "--format", "json", "-o", str(exported), *here]) == 0
    assert json.loads(exported.read_text())["messages"] == []

    monkeypatch.setenv("SYLK_DATABASE_URL", archive_url)
    team = ["--data-dir", str(data_dir), "--workspace", str(workspace)]
    capsys.readouterr()
    assert main(["sessions", "import", str(exported), *team]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "imported 'nothing said yet'" in out.err
    assert main(["sessions", "list", "--json", *team]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["nothing said yet"]
    if archive_url.startswith("postgresql"):  # the local file was never made
        assert not (data_dir / "sylk.db").exists()
    assert main(["sessions", "import", str(exported), *team]) == 1  # a conflict, typed
    assert "--new-id" in capsys.readouterr().err
