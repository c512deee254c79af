"""Turns for the scripted model, as a real model would make them: ops called through the
gateway's ``execute`` verb, and a script file the scripted provider reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def execute(op: str, **args: Any) -> dict[str, Any]:
    """A tool call of ``op`` with ``args`` that really acts (``dry_run`` false)."""
    return {"name": "execute", "arguments": {"op": op, "args": args, "dry_run": False}}


def read_then_edit(path: str, old: str, new: str, *, said: str) -> list[dict[str, Any]]:
    """An engineer's turns: read ``path``, replace ``old`` by ``new``, then say ``said``."""
    return [
        {"text": "Reading.", "tool_calls": [execute("engineer.file.read", path=path)]},
        {"text": "Editing.", "tool_calls": [
            execute("engineer.file.edit", path=path, old_content=old, new_content=new)]},
        {"text": said},
    ]  # fmt: skip


def write_script(path: Path, turns: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"turns": turns}))
    return path
