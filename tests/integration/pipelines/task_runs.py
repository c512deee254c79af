"""What the /task and @engineer pipeline tests share: a small Python project checked by
Sylk's own ruff and pytest, an engine with the scripted model, and the scripted turns.

The pause point is real: in approval mode ``ask`` the engineer's first write waits for
the user's answer on the QuestionBoard, so a test can steer the pipeline while its
engineer's turn is running, then let the turn go on.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.events import EngineEvent, EngineNotice, QuestionAsked
from tests.integration.plans.conftest import parts
from tests.support.polling import until
from tests.support.scripted import execute

PYPROJECT = """\
[project]
name = "fx"
version = "0"

[tool.ruff]
line-length = 100

[tool.pytest.ini_options]
pythonpath = ["."]
"""
BAD = "import os\n\nVERBOSE = True\n"  # ruff F401 at line 1
FIXED = "VERBOSE = True\n"


def python_project(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Python project whose linter and tests are Sylk's own ruff and pytest."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                                os.environ.get("PATH", "")]))  # fmt: skip
    (workspace / "pyproject.toml").write_text(PYPROJECT)
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "__init__.py").write_text("")
    return workspace


def script(path: Path, monkeypatch: pytest.MonkeyPatch, turns: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps({"turns": turns}))
    monkeypatch.setenv("SYLK_SCRIPT", str(path))


def writes(path: str, content: str, *, expect: str | None = None) -> list[dict[str, Any]]:
    """An engineer's turns: write ``path``, then say so."""
    first: dict[str, Any] = {"text": "Writing.", "tool_calls": [
        execute("engineer.file.write", path=path, content=content)]}  # fmt: skip
    if expect is not None:
        first["expect"] = expect
    return [first, {"text": f"Wrote {path}."}]


class Desk:
    """An engine with the scripted model, its events kept, a front end attached."""

    def __init__(self, data_dir: Path, workspace: Path, **config: Any) -> None:
        self.parts: EngineParts = parts(data_dir, workspace, **config)
        self.engine = Engine.from_parts(self.parts)
        self.events: list[EngineEvent] = []
        self.engine.events.add_listener(self.events.append)
        self.detach = self.parts.questions.attach()  # approvals wait for an answer

    async def aclose(self) -> None:
        self.detach()
        await self.engine.aclose()

    async def session(self, mode: str) -> str:
        session = await self.engine.ensure_session()
        await self.engine.approval_command(session.id, mode)
        return session.id

    async def question(self, session_id: str) -> QuestionAsked:
        """The first question waiting in the session (an approval of the engineer's write)."""
        await until(lambda: self.parts.questions.pending(session_id), what="a question")
        return self.parts.questions.pending(session_id)[0]

    async def say(self, session_id: str, text: str) -> dict[str, Any]:
        reply = (await self.engine.submit(session_id, text))[-1]
        return dict(reply.payload)

    async def checks(self, session_id: str) -> dict[str, Any]:
        """The newest notice of what a pipeline's checks found (after the engineer's answer)."""
        found = [m for m in await self.engine.transcript(session_id) if m.payload.get("pipeline")]
        return dict(found[-1].payload)

    def notices(self, prefix: str) -> list[str]:
        return [
            e.text.removeprefix(prefix)
            for e in self.events
            if isinstance(e, EngineNotice) and e.text.startswith(prefix)
        ]
