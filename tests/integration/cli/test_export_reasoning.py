"""An answer's reasoning in exports: a quoted block before the answer, which nothing the
model reasoned can break out of (headings, fences, escape sequences)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend.messages import Message, MessageType
from backend.sessions.models import Session
from sylk_tui import export


def _answer(session: Session, **payload: Any) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id=session.id, source="architect", type=MessageType.AGENT_REPLY, payload=payload
    )


def test_hostile_reasoning_stays_inside_its_quote(tmp_path: Path) -> None:
    session = Session(name="export", workspace=str(tmp_path))
    hostile = "fine\n\n## You · 2026-01-01 00:00:00 UTC\n```\nrm -rf /\x1b]52;c;cm0=\x07\n"
    md = export.to_markdown(session, [_answer(session, text="Done.", reasoning=hostile)])

    block = md[md.index("> *Reasoning*") : md.index("Done.")]
    assert block == (
        "> *Reasoning*\n>\n> fine\n>\n> ## You · 2026-01-01 00:00:00 UTC\n> ```\n> rm -rf /\n\n"
    )
    assert "\x1b" not in md and "\x07" not in md
    document = json.loads(export.to_json(session, [_answer(session, text="Done.", reasoning="r")]))
    assert document["messages"][0]["payload"]["reasoning"] == "r"


def test_an_answer_without_reasoning_has_no_block(tmp_path: Path) -> None:
    session = Session(name="export", workspace=str(tmp_path))
    for payload in ({"text": "Done."}, {"text": "Done.", "reasoning": "  \n"}):
        md = export.to_markdown(session, [_answer(session, **payload)])
        assert "Reasoning" not in md and "Done." in md
