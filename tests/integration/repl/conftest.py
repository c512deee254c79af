from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.repl.repl_process import Terminal
from tests.support.scripted import read_then_edit


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    """Terminals a test opens; each is closed (its repl killed if still running)."""
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        terminal.close()


@pytest.fixture
def edit_script(tmp_path: Path, workspace: Path) -> dict[str, str]:
    """The scripted model's turns: read notes.txt, change "milk" to "bread" (an edit the
    default approval mode asks about), then say so; the env that makes the repl use it."""
    (workspace / "notes.txt").write_text("buy milk\n")
    script = tmp_path / "script.json"
    turns = read_then_edit("notes.txt", "milk", "bread", said="Changed it.")
    script.write_text(json.dumps({"turns": turns}))
    return {"SYLK_SCRIPT": str(script), "SYLK_PROVIDER": "scripted"}
