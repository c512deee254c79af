"""Exports carry an answer's tool blocks, in order with its text, in Markdown and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend.agents.tool_actions import begin_action, finish_action
from backend.config.approvals import ApprovalMode, ApprovalSettings
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.messages import Message, MessageType
from backend.sessions.models import Session
from sylk_tui import export
from tests.support.engine_env import engine_env
from tests.support.scripted import read_then_edit

SCRIPT = {"turns": read_then_edit("app.py", "x = 1", "x = 2", said="x is 2 now.")}


async def test_a_real_turns_blocks_are_exported_where_they_happened(
    data_dir: Path, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    script = workspace.parent / "script.json"
    script.write_text(json.dumps(SCRIPT))
    settings = load_config(None, env=engine_env(SYLK_SCRIPT=str(script)))
    settings = settings.model_copy(update={"approvals": ApprovalSettings(mode=ApprovalMode.AUTO)})
    config = EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted")
    engine = Engine.from_parts(build(config, settings))
    try:
        session = await engine.ensure_session()
        await engine.submit(session.id, "@engineer set x to 2")
        transcript = await engine.transcript(session.id)
        md = export.render(session, transcript, "md")
        document = json.loads(export.render(session, transcript, "json"))
    finally:
        await engine.aclose()

    read = md.index("> **engineer.file.read** `app.py` · ok")
    edit = md.index("> **engineer.file.edit** `app.py` · ok")
    assert md.index("Reading.") < read < md.index("Editing.") < edit < md.index("x is 2 now.")
    assert "```diff\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n```" in md
    reply = document["messages"][-2]  # the last is the checks' notice of the pipeline
    assert reply["type"] == "AGENT_REPLY"
    ops = [(a["op"], a["title"], a["status"]) for a in reply["payload"]["actions"]]
    assert ops == [("engineer.file.read", "app.py", "ok"), ("engineer.file.edit", "app.py", "ok")]
    assert "+x = 2" in reply["payload"]["actions"][1]["diff"]


def test_a_command_block_keeps_exit_code_and_output_and_no_output_breaks_its_fence(
    tmp_path: Path,
) -> None:
    hostile = "ok\n```\n# Injected heading\n````\nlast line"
    run = begin_action("c1", "engineer__shell__run", {"command": "make `x`"}, 4)
    result = {"exit_code": 2, "stdout": hostile, "stderr": "", "duration_ms": 2500.0}
    content = json.dumps({"op": "engineer.shell.run", "ok": True, "result": result,
                          "meta": {"trace_id": "t", "approval": {"decision": "allowed",
                                                                 "by": "user"}}})  # fmt: skip
    action = finish_action(run, content, False)
    session = Session(name="export", workspace=str(tmp_path))
    message = Message[dict[str, Any]](
        session_id=session.id,
        source="engineer",
        type=MessageType.AGENT_REPLY,
        payload={
            "text": "Run.\n\nIt \x1b]52;c;cm0=\x07failed.\n\n(stopped)",
            "actions": [action.stored()],
        },
    )
    md = export.to_markdown(session, [message])
    assert "> **engineer.shell.run** `` make `x` `` · exit 2 · 2.5s · allowed by you" in md
    fence = "`````"  # longer than the longest run of backticks in the output
    assert f"{fence}text\n{hostile}\n{fence}" in md
    assert md.index("Run.") < md.index("engineer.shell.run") < md.index("It failed.")
    assert md.rstrip().endswith("(stopped)")
    assert "It failed." in md and "\x1b" not in md and "\x07" not in md
    document = json.loads(export.to_json(session, [message]))
    [stored] = document["messages"][0]["payload"]["actions"]
    assert stored["exit_code"] == 2 and stored["output"].endswith("last line")
