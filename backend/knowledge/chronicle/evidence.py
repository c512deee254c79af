"""What the offline history answers read beyond the chronicle's own records.

Test runs the Tester made (its ``tester.tests.run`` results, kept with the agent
steps), conversation lines that report a test result, and which past messages
were themselves questions to the archive. Read-only, on the archive's read
connection.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from backend.archive.dialects import driver_sql, json_text
from backend.knowledge.chronicle import store
from backend.knowledge.chronicle.models import ALL_TIME, TimeRange, TranscriptHit
from backend.knowledge.chronicle.text import clip

if TYPE_CHECKING:
    from backend.knowledge.chronicle.chronicle import Chronicle

TEST_RUN_OP = "tester.tests.run"
# The porter tokeniser folds passed/passing/passes into "pass"; "fail" likewise.
_RESULT_MATCH = '("pass" OR "fail" OR "green" OR "red" OR "error"*) AND ("test"* OR "pytest")'
_TALLY = re.compile(
    r"\b\d+ (?:passed|failed|errors?|skipped|tests?|xfailed|deselected)\b", re.IGNORECASE
)
_QUESTION_START = re.compile(
    r"^\s*(?:did|do|does|are|is|were|was|have|has|had|why|what|how|which|can|could|should"
    r"|will|would)\b",
    re.IGNORECASE,
)
# Tool results scanned for test runs: the newest few hundred are plenty for "the last run".
_STEP_WINDOW = 300


@dataclass(frozen=True)
class RecordedRun:
    """One test run the Tester made, as its tool result recorded it."""

    session_id: str
    at: datetime
    command: str
    passed: bool | None  # None: the run did not finish (timed out, refused)
    summary: str


async def recorded_test_runs(
    chronicle: Chronicle,
    time: TimeRange = ALL_TIME,
    *,
    session_ids: Sequence[str] = (),
    limit: int = 5,
) -> list[RecordedRun]:
    """The newest real (not dry) test runs in ``time`` (in ``session_ids``, or any)."""
    where = "kind = 'tool_result' AND data LIKE ?"
    args: list[Any] = [f"%{TEST_RUN_OP}%"]
    if session_ids:
        where += f" AND session_id IN ({', '.join('?' for _ in session_ids)})"
        args += list(session_ids)

    def run(conn: Connection) -> list[tuple[str, str, str]]:
        rows = driver_sql(
            conn,
            f"SELECT session_id, at, data FROM agent_steps WHERE {where} ORDER BY seq DESC LIMIT ?",
            (*args, _STEP_WINDOW),
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    runs: list[RecordedRun] = []
    for session_id, at_text, data in await chronicle.archive.aread(run):
        at = datetime.fromisoformat(at_text)
        if (time.since and at < time.since) or (time.until and at >= time.until):
            continue
        found = _parse_run(session_id, at, data)
        if found is not None:
            runs.append(found)
        if len(runs) == limit:
            break
    return runs


def _parse_run(session_id: str, at: datetime, data: str) -> RecordedRun | None:
    try:
        step = json.loads(data).get("data", {})
        envelope = json.loads(step.get("content") or "{}")
    except (json.JSONDecodeError, AttributeError):
        return None
    if not isinstance(envelope, dict) or envelope.get("op") != TEST_RUN_OP:
        return None
    result: Any = envelope.get("result")
    if envelope.get("ok") and isinstance(result, dict):
        if result.get("dry_run"):
            return None  # shown what would run, ran nothing
        passed = bool(result.get("passed", result.get("exit_code") == 0))
        output = f"{result.get('stdout') or ''}\n{result.get('stderr') or ''}"
        return RecordedRun(session_id, at, str(result.get("command", "")), passed, _tally(output))
    error = envelope.get("error") or {}
    message = str(error.get("message", "the run failed")) if isinstance(error, dict) else ""
    return RecordedRun(session_id, at, "", None, clip(message, 160))


def _tally(output: str) -> str:
    """pytest's closing line ("3 failed, 41 passed in 2.10s"), else the last line of output."""
    lines = [line.strip(" =") for line in output.splitlines() if line.strip(" =")]
    for line in reversed(lines):
        if _TALLY.search(line):
            return clip(line, 160)
    return clip(lines[-1], 160) if lines else ""


def is_question(text: str) -> bool:
    return text.rstrip().endswith("?") or _QUESTION_START.match(text) is not None


async def reported_results(
    chronicle: Chronicle,
    time: TimeRange = ALL_TIME,
    *,
    session_ids: Sequence[str] = (),
    limit: int = 5,
) -> list[TranscriptHit]:
    """Agents' messages that report a test result, best first.

    The user's own lines are left out: "make the failing tests pass" names a result
    it wants, not one that happened.
    """
    hits = await chronicle.archive.aread(
        lambda conn: store.search_transcript(
            conn, _RESULT_MATCH, session_ids=session_ids, time=time, limit=limit * 4
        )
    )
    kept = [h for h in hits if h.source not in ("user", "sylk") and h.type != "SYSTEM_NOTICE"]
    return [h for h in kept if not is_question(h.text)][:limit]


async def archive_questions(chronicle: Chronicle, seqs: Sequence[int]) -> set[int]:
    """Which of the messages ``seqs`` were questions the Guide sent to the Archivalist."""
    if not seqs:
        return set()
    marks = ", ".join("?" for _ in seqs)

    def run(conn: Connection) -> list[Any]:
        target = json_text(conn, "envelope", "payload", "route", "target")
        sql = (
            f"SELECT seq FROM transcript WHERE seq IN ({marks}) AND source = 'user' "
            f"AND {target} = 'archivalist'"
        )
        return list(driver_sql(conn, sql, tuple(seqs)).all())

    rows = await chronicle.archive.aread(run)
    return {int(r[0]) for r in rows}
