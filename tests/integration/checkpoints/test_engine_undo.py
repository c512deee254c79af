"""/undo and /diff through the engine: a scripted engineer's turns write real files
through the gateway, the commands answer in the transcript, and a restarted engine on
the same data dir still undoes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from backend.checkpoints.records import TurnRunningError
from backend.engine import Engine, EngineConfig
from backend.messages import MessageType
from tests.integration.checkpoints.conftest import files_of
from tests.support.polling import finishes, until

# As `sylk run --yes`: the approval gate lets the scripted edits through.
_YES: dict[str, Any] = {"assume_yes": True}


def _call(op: str, **args: str) -> dict[str, Any]:
    return {"name": "execute", "arguments": {"op": op, "args": args}}


def _script(tmp_path: Path) -> Path:
    """Two engineer turns: the first edits app.py and creates new.py, the second edits util.py."""
    turns = [
        {"tool_calls": [_call("engineer.file.read", path="src/app.py")]},
        {"tool_calls": [
            _call("engineer.file.write", path="src/app.py", content="def main():\n    return 2\n"),
            _call("engineer.file.write", path="src/new.py", content="NEW = True\n"),
        ]},
        {"text": "Changed app.py and added new.py."},
        {"tool_calls": [_call("engineer.file.read", path="src/util.py")]},
        {"tool_calls": [_call("engineer.file.write", path="src/util.py", content="X = 2\n")]},
        {"text": "Bumped X."},
    ]  # fmt: skip
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    return script


def _engine(config: EngineConfig) -> Engine:
    return Engine(config)


async def _say(engine: Engine, session_id: str, text: str) -> dict[str, Any]:
    reply = (await engine.submit(session_id, text))[-1]
    return dict(reply.payload) | {"type": reply.type}


async def test_undo_and_diff_through_the_engine_survive_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, project: Path
) -> None:
    monkeypatch.setenv("SYLK_SCRIPT", str(_script(tmp_path)))
    config = EngineConfig(data_dir=data_dir, workspace=project, provider="scripted",
                          watch_files=False, **_YES)  # fmt: skip
    start = files_of(project)
    engine = _engine(config)
    try:
        session = await engine.ensure_session()
        first = await _say(engine, session.id, "@engineer make main return 2 and add new.py")
        assert first["type"] is MessageType.AGENT_REPLY and first["stop"] == "final", first
        after_first = files_of(project)
        assert after_first["src/new.py"][1] == b"NEW = True\n"
        second = await _say(engine, session.id, "@engineer bump X")
        assert second["stop"] == "final", second
        diff = await _say(engine, session.id, "/diff")
        assert diff["type"] is MessageType.SYSTEM_NOTICE and diff.get("preformatted")
        assert diff.get("format") == "diff"  # the transcript colours it, exports fence it
        assert "3 files changed since this session's start" in diff["text"]
        assert "+    return 2" in diff["text"] and "+X = 2" in diff["text"]
        undone = await _say(engine, session.id, "/undo")
        assert "restored: src/util.py" in undone["text"], undone
        assert "1 earlier turn can still be undone" in undone["text"]
        assert files_of(project) == after_first
    finally:
        await engine.aclose()

    restarted = _engine(config)
    try:
        outcome = await restarted.undo(session.id)
        assert outcome.restored == ["src/app.py"] and outcome.removed == ["src/new.py"]
        assert files_of(project) == start
        nothing = await _say(restarted, session.id, "/undo")
        assert nothing.get("error") == "NothingToUndoError"
        assert "nothing to undo" in nothing["text"]
    finally:
        await restarted.aclose()


async def test_undo_refuses_through_the_engine_when_the_user_edited_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, project: Path
) -> None:
    monkeypatch.setenv("SYLK_SCRIPT", str(_script(tmp_path)))
    config = EngineConfig(data_dir=data_dir, workspace=project, provider="scripted",
                          watch_files=False, **_YES)  # fmt: skip
    engine = _engine(config)
    try:
        session = await engine.ensure_session()
        await _say(engine, session.id, "@engineer make main return 2 and add new.py")
        (project / "src" / "app.py").write_text("the user's fix\n")
        refused = await _say(engine, session.id, "/undo")
        assert refused.get("error") == "UndoConflictError"
        assert "changed since the agent's turn: src/app.py" in refused["text"]
        assert (project / "src" / "app.py").read_text() == "the user's fix\n"
        assert (project / "src" / "new.py").exists()
        with pytest.raises(Exception, match="takes no arguments"):
            await engine.route("/undo everything")
    finally:
        await engine.aclose()


async def test_undo_waits_for_a_running_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, project: Path
) -> None:
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"turns": [{"text": "thinking " * 200}], "chunk_delay_s": 0.05}))
    monkeypatch.setenv("SYLK_SCRIPT", str(script))
    engine = _engine(EngineConfig(data_dir=data_dir, workspace=project, provider="scripted",
                                  watch_files=False))  # fmt: skip
    try:
        session = await engine.ensure_session()
        answer = asyncio.create_task(engine.submit(session.id, "@engineer think long"))
        await until(lambda: engine.turn_running(session.id))
        with pytest.raises(TurnRunningError):
            await engine.undo(session.id)
        refused = await _say(engine, session.id, "/undo")
        assert refused.get("error") == "TurnRunningError"
        engine.cancel_turn(session.id)
        await finishes(answer, what="the cancelled turn")
    finally:
        await engine.aclose()
