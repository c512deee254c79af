"""The engineer pipeline's handoff at 95% of its context, through the real engine: the
scripted model reports the usage (of a 128k window), the Architect reviews on its own
script thread, the records land in the chronicle's real SQLite file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from backend.engine.plan_runs.pipeline_work import pipeline_desk
from backend.events import EngineNotice, HandoffCompleted
from backend.knowledge.chronicle.models import Category, ChronicleQuery
from backend.pipelines.context import PipelineState
from tests.integration.pipelines.task_runs import Desk
from tests.support.polling import until
from tests.support.scripted import execute

FULL = {"input_tokens": 124_000, "output_tokens": 500}  # 97.3% of the default 128k
LIGHT = {"input_tokens": 2_000, "output_tokens": 100}
REVIEWED = "Keep the plan; add the docstring last."


def engineer_turns(path: str, usage: dict[str, int], *, expect: str = "") -> list[dict[str, Any]]:
    """One engineer turn: write ``path`` (a model call), then say so (a second call, whose
    usage is the turn's context)."""
    first: dict[str, Any] = {"text": "Writing.", "usage": LIGHT,
                             "tool_calls": [execute("engineer.file.write", path=path,
                                                    content=f"{path}\n")]}  # fmt: skip
    if expect:
        first["expect"] = expect
    return [first, {"text": f"Wrote {path}.", "usage": usage}]


def write_script(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    engineer: list[dict[str, Any]],
    architect: list[dict[str, Any]],
) -> None:
    path = tmp_path / "script.json"
    threads = {"architect": {"match": "HANDOFF_REQUEST", "turns": architect}}
    path.write_text(json.dumps({"turns": engineer, "threads": threads}))
    monkeypatch.setenv("SYLK_SCRIPT", str(path))


async def handoff_entries(desk: Desk, session_id: str) -> list[dict[str, Any]]:
    query = ChronicleQuery(categories=[Category.PIPELINE_HANDOFF], current_only=True)
    entries = await desk.parts.knowledge.chronicle.query(session_id, query)
    return sorted((dict(e.data or {}) for e in entries), key=lambda d: d["handoff_index"])


def completed(desk: Desk) -> list[HandoffCompleted]:
    return [e for e in desk.events if isinstance(e, HandoffCompleted)]


async def test_an_engineer_at_95_percent_hands_off_to_a_new_pipeline_with_its_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    write_script(tmp_path, monkeypatch, [
        *engineer_turns("a.txt", FULL),
        # The new pipeline's first request carries the bundled state and the verbatim prompt.
        *engineer_turns("b.txt", LIGHT, expect="PIPELINE HANDOFF 1 (task q1, from q1/p1"),
    ], [{"text": REVIEWED}])  # fmt: skip
    desk = Desk(data_dir, workspace)
    try:
        sid = await desk.session("auto-edit")
        reply = await desk.say(sid, "@engineer write a.txt then b.txt")
        assert str(reply["text"]).endswith("Wrote b.txt.")
        assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()

        [event] = completed(desk)
        assert (event.old_pipeline_id, event.new_pipeline_id) == ("q1/p1", "q1/p2")
        assert event.handoff_index == 1 and event.review == "model"
        [record] = await handoff_entries(desk, sid)
        assert record["fallback"] is False and record["handoff_reason"] == "engineer_context_95%"
        assert record["context_fraction"] > 0.95
        assert record["engineer_state"]["original_prompt"] == "write a.txt then b.txt"
        assert record["engineer_state"]["files_changed"] == [
            {"path": "a.txt", "operation": "modified"}
        ]
        assert record["review"] == {"by": "model", "notes": REVIEWED}
        assert set(record) >= {"inspector_state", "tester_state", "timestamp", "session_id"}

        # The old pipeline is closed (ended by the handoff, not failed in words); the new one
        # finished the task, starting from the files the old one changed.
        old, new = pipeline_desk(desk.parts).finished(sid)
        assert old.pipeline.state is PipelineState.FAILED
        assert old.pipeline.reason.startswith("handed off to q1/p2 (handoff 1")
        assert new.pipeline.state is PipelineState.COMPLETED
        assert new.pipeline.context.modified_files == ["a.txt", "b.txt"]
        warned = [e.text for e in desk.events if isinstance(e, EngineNotice) and e.level != "info"]
        assert not [t for t in warned if "handed off" in t]
    finally:
        await desk.aclose()


async def test_a_chain_of_two_handoffs_is_indexed_1_and_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    write_script(tmp_path, monkeypatch, [
        *engineer_turns("a.txt", FULL),
        *engineer_turns("b.txt", FULL, expect="PIPELINE HANDOFF 1 (task q1, from q1/p1"),
        *engineer_turns("c.txt", LIGHT, expect="PIPELINE HANDOFF 2 (task q1, from q1/p2"),
    ], [{"text": "no change"}, {"text": "no change"}])  # fmt: skip
    desk = Desk(data_dir, workspace)
    try:
        sid = await desk.session("auto-edit")
        reply = await desk.say(sid, "@engineer write three files")
        assert str(reply["text"]).endswith("Wrote c.txt.")
        assert [(e.handoff_index, e.new_pipeline_id) for e in completed(desk)] == [
            (1, "q1/p2"), (2, "q1/p3"),
        ]  # fmt: skip
        records = await handoff_entries(desk, sid)
        assert [r["handoff_index"] for r in records] == [1, 2]
        second = records[1]["engineer_state"]
        assert [f["path"] for f in second["files_changed"]] == ["a.txt", "b.txt"]
        assert second["original_prompt"] == "write three files"  # verbatim down the chain
    finally:
        await desk.aclose()


async def test_a_failing_handoff_is_retried_then_falls_back_to_summarise_and_compact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    refused = {"error": {"kind": "bad_request", "message": "review refused"}}
    write_script(tmp_path, monkeypatch, engineer_turns("a.txt", FULL), [refused] * 3)
    desk = Desk(data_dir, workspace)
    try:
        sid = await desk.session("auto-edit")
        reply = await desk.say(sid, "@engineer write a.txt")
        assert str(reply["text"]).endswith("Wrote a.txt.")
        assert completed(desk) == []
        [record] = await handoff_entries(desk, sid)
        assert record["fallback"] is True and record["review"] is None
        [task] = pipeline_desk(desk.parts).finished(sid)
        assert task.pipeline.state is PipelineState.COMPLETED  # the same pipeline went on
        assert any("summarised to the archive" in n for n in task.pipeline.context.notes)
        warned = [
            e.text for e in desk.events if isinstance(e, EngineNotice) and e.level == "warning"
        ]
        assert any("handoff failed" in t and "review refused" in t for t in warned)
        # Three attempts, each a real Architect turn that failed.
        failed = [
            m for m in await desk.engine.transcript(sid) if "review refused" in str(m.payload)
        ]
        assert len(failed) == 3
    finally:
        await desk.aclose()


async def test_the_user_stops_the_chain_and_the_engineer_goes_on_in_its_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    write_script(tmp_path, monkeypatch, [
        *engineer_turns("a.txt", FULL),
        *engineer_turns("b.txt", FULL, expect="PIPELINE HANDOFF 1"),
    ], [{"text": "no change"}])  # fmt: skip
    desk = Desk(data_dir, workspace)
    try:
        sid = await desk.session("ask")
        answer = asyncio.create_task(desk.say(sid, "@engineer write a.txt and b.txt"))
        first = await desk.question(sid)  # p1's write waits for approval
        desk.parts.questions.answer(first.question_id, "allow")
        await until(lambda: completed(desk), what="handoff 1")
        second = await desk.question(sid)  # p2's write waits: its turn is running
        stopped = await desk.say(sid, "/task q1 handoff_stop")
        assert "handoff chain stopped (1 handoff(s) so far)" in stopped["text"]
        desk.parts.questions.answer(second.question_id, "allow")
        reply = await answer
        assert str(reply["text"]).endswith("Wrote b.txt.")
        assert len(completed(desk)) == 1  # p2 at 97% handed off no further
        assert [r["handoff_index"] for r in await handoff_entries(desk, sid)] == [1]
        assert pipeline_desk(desk.parts).finished(sid)[-1].pipeline.state is (
            PipelineState.COMPLETED
        )
    finally:
        await desk.aclose()


async def test_the_user_asks_for_a_handoff_below_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    write_script(tmp_path, monkeypatch, [
        *engineer_turns("a.txt", LIGHT),
        *engineer_turns("b.txt", LIGHT, expect="reason user_request"),
    ], [{"text": "no change"}])  # fmt: skip
    desk = Desk(data_dir, workspace)
    try:
        sid = await desk.session("ask")
        answer = asyncio.create_task(desk.say(sid, "@engineer write a.txt and b.txt"))
        first = await desk.question(sid)
        asked = await desk.say(sid, "/task q1 handoff")
        assert "a handoff to a new pipeline follows the engineer's current" in asked["text"]
        desk.parts.questions.answer(first.question_id, "allow")
        await until(lambda: completed(desk), what="the handoff the user asked for")
        second = await desk.question(sid)  # the new pipeline's write
        desk.parts.questions.answer(second.question_id, "allow")
        await answer
        [event] = completed(desk)
        assert event.handoff_index == 1
        [record] = await handoff_entries(desk, sid)
        assert record["handoff_reason"] == "user_request"
    finally:
        await desk.aclose()
