"""Use is read from a real archive: an archive file made before ``usage.pipeline_id``
opens with the column added (old rows count for their session, in no pipeline), and
with nobody to answer (``sylk run``), a call over a limit is not made: the turn ends
with the limit and how to raise it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from backend.archive.store import DB_NAME, Archive
from backend.budgets import spend_of
from backend.budgets.spend import pipelines_of
from tests.integration.budgets.budget_runs import CALL, BudgetRun
from tests.integration.orchestration.plan_runs import script
from tests.integration.plans.conftest import say

OLD_USAGE = """CREATE TABLE usage (
    seq INTEGER NOT NULL PRIMARY KEY, session_id VARCHAR NOT NULL, turn_id VARCHAR NOT NULL,
    agent VARCHAR NOT NULL, provider VARCHAR NOT NULL, model VARCHAR NOT NULL,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL,
    cost_usd FLOAT, at VARCHAR NOT NULL, estimated BOOLEAN NOT NULL DEFAULT 0)"""


def _row(pipeline_id: str | None, cost: float | None) -> dict[str, Any]:
    return {"session_id": "s1", "turn_id": "t", "agent": "engineer", "provider": "p",
            "model": "m", "input_tokens": 50, "output_tokens": 5, "cache_read_tokens": 40,
            "cache_write_tokens": 5, "cost_usd": cost, "at": "y",
            "pipeline_id": pipeline_id}  # fmt: skip


async def test_an_archive_before_pipeline_ids_gets_the_column_and_sums_by_pipeline(
    data_dir: Path,
) -> None:
    Archive(data_dir).close()
    db = data_dir / DB_NAME
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE usage")
        conn.execute(OLD_USAGE)
        conn.execute(
            "INSERT INTO usage (seq, session_id, turn_id, agent, provider, model, input_tokens,"
            " output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, at) VALUES"
            " (1, 's1', 't1', 'guide', 'p', 'm', 100, 0, 0, 0, 0.25, 'x')"
        )
    archive = Archive(data_dir)
    try:
        await archive.arecord_usage([_row("p1/e1", 0.5), _row("p1/e1", None), _row(None, 1.0)])
        whole = await spend_of(archive, "s1")
        assert (whole.calls, whole.tokens, whole.cost_usd, whole.unpriced) == (4, 400, 1.75, 1)
        e1 = await spend_of(archive, "s1", "p1/e1")
        assert (e1.calls, e1.tokens, e1.cost_usd) == (2, 200, 0.5)
        assert await pipelines_of(archive, "s1") == {"p1/e1": (200, 0.5)}
        assert (await spend_of(archive, "s2")).calls == 0
    finally:
        archive.close()


async def test_with_nobody_to_answer_a_call_over_the_limit_is_not_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    turns = [{"text": f"answer {n}", "usage": CALL} for n in range(3)]
    script(tmp_path / "s.json", monkeypatch, turns)
    config = tmp_path / "sylk.toml"
    config.write_text("[budgets]\nsession_tokens = 150\n")
    run = BudgetRun(data_dir, workspace, config)  # no front end attached: nobody answers
    try:
        sid = (await run.engine.ensure_session()).id
        for n in range(2):  # 0 then 100 tokens used: under the limit
            assert (await say(run.engine, sid, "@architect hello"))["text"] == f"answer {n}"
        reply = await say(run.engine, sid, "@architect hello")  # 200 used of 150
        assert reply["stop"] == "error"
        assert reply["error"] == (
            "Budget reached, work stopped (session tokens: 200 tokens used of 150 tokens): "
            "nobody here can answer; raise it with /budget session tokens N or [budgets] "
            "in the config"
        )
        assert (await spend_of(run.parts.archive, sid)).calls == 2  # the third was not made
    finally:
        await run.engine.aclose()
