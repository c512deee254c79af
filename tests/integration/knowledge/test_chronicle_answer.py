"""Searching past conversations, briefings, and the offline answer to a history question."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from backend.archive.store import Archive
from backend.events import AgentStep
from backend.knowledge.chronicle.answer import answer_history
from backend.knowledge.chronicle.answer_lines import FOUND, NOTHING
from backend.knowledge.chronicle.briefing import BUDGET, build_briefing, build_summary
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.messages import Message, MessageType
from backend.sessions.models import Session
from tests.support.clocks import FakeWall

A, B = "sess-a-0001", "sess-b-0002"
NOW = datetime(2025, 3, 12, 15, 0, tzinfo=UTC)


def say(
    session: str, text: str, at: datetime, source: str = "user", **payload: Any
) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id=session,
        source=source,
        target="guide" if source == "user" else "user",
        type=MessageType.USER_INPUT if source == "user" else MessageType.AGENT_REPLY,
        payload={"text": text, **payload},
        timestamp=at,
    )


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def archive(data_dir: Path, tmp_path: Path, archive_url: str) -> Iterator[Archive]:
    """On SQLite and on PostgreSQL: transcript search and the answers run on both."""
    archive = Archive(data_dir, url=archive_url)
    archive.save_sessions(
        [
            Session(id=A, name="auth-work", workspace=str(tmp_path)),
            Session(id=B, name="cache-work", workspace=str(tmp_path)),
        ]
    )
    yield archive
    archive.close()


@pytest.fixture
def clock() -> FakeWall:
    return FakeWall(NOW)


@pytest.fixture
def chronicle(archive: Archive, clock: FakeWall) -> Chronicle:
    return Chronicle(archive, clock=clock, tz=UTC)


async def ask(chronicle: Chronicle, text: str, **kw: Any) -> str:
    fields: dict[str, Any] = {"intent": None, "subject": None, "time_scope": None}
    fields.update(kw)
    fields.setdefault("session_id", A)
    return await answer_history(chronicle, text=text, **fields)


# -- the conversation index ------------------------------------------------------------
def test_an_archive_from_before_the_index_is_backfilled(data_dir: Path) -> None:
    archive = Archive(data_dir)
    archive.append_messages([say(A, "we chose argon2 for password hashing", NOW)])
    archive.close()
    conn = sqlite3.connect(data_dir / "sylk.db")  # make it look like an older archive
    for trigger in ("ai", "ad", "au"):
        conn.execute(f"DROP TRIGGER transcript_fts_{trigger}")
    conn.execute("DROP TABLE transcript_fts")
    conn.commit()
    conn.close()
    archive = Archive(data_dir)
    try:
        hits = archive.read(
            lambda c: c.exec_driver_sql(
                "SELECT rowid FROM transcript_fts WHERE transcript_fts MATCH 'argon2'"
            ).all()
        )
        assert len(hits) == 1
        archive.append_messages([say(A, "argon2 parameters: m=64MiB", NOW)])
        assert archive.integrity_check() == "ok"
    finally:
        archive.close()


async def test_past_messages_are_searchable_across_sessions(
    chronicle: Chronicle, archive: Archive
) -> None:
    archive.append_messages(
        [
            say(A, "Should the rate limiter use a token bucket?", NOW - timedelta(days=3)),
            say(B, "The rate limiting middleware returns 429", NOW - timedelta(hours=2)),
            say(B, "unrelated chatter about lunch", NOW - timedelta(hours=1)),
        ]
    )
    hits = await chronicle.search_transcript("rate limiting")
    assert {h.session_name for h in hits} == {"auth-work", "cache-work"}
    assert all("**" in h.snippet for h in hits)  # the matching words are marked
    today = chronicle.time_range("today")
    assert [h.session_id for h in await chronicle.search_transcript("rate", time=today)] == [B]
    archive.delete_session(B)
    assert [h.session_id for h in await chronicle.search_transcript("rate")] == [A]


# -- briefings -------------------------------------------------------------------------
async def test_briefings_grow_by_tier_and_stay_bounded(chronicle: Chronicle) -> None:
    await chronicle.store(A, "task_state", "Implementing token refresh in auth/refresh.py")
    await chronicle.store(A, "decision", "Refresh tokens rotate on every use")
    await chronicle.store(A, "open_thread", "What happens when two tabs refresh at once?")
    await chronicle.record_failure(A, approach="sliding sessions", reason="broke SSO")
    await chronicle.record_file(A, "auth/refresh.py", "created", summary="refresh endpoint")
    await chronicle.record_file(A, "auth/models.py", "read")
    for n in range(200):
        await chronicle.store(A, "timeline", f"step {n}: " + "detail " * 30)
    shared = await chronicle.store(B, "pattern", "all endpoints return problem+json errors")
    await chronicle.promote(shared.id)

    micro = await build_briefing(chronicle, A, "micro")
    assert len(micro.text) <= BUDGET["micro"]
    assert "token refresh" in micro.text and "1 created" in micro.text
    assert "1 open thread" in micro.text and "sliding sessions" in micro.text

    standard = await build_briefing(chronicle, A, "standard")
    text = standard.text
    assert len(text) <= BUDGET["standard"] + 100
    assert text.index("Current task") < text.index("Open threads") < text.index("Decisions")
    assert "`auth/refresh.py`" in text and "problem+json" in text
    assert "step 1" not in text  # the timeline is for the full briefing

    full = await build_briefing(chronicle, A, "full")
    assert len(full.text) <= BUDGET["full"] + 100
    assert full.truncated and "more item(s) left out" in full.text
    assert full.counts["timeline"] == 200 and full.files == {"created": 1, "read": 1}

    summary = await build_summary(chronicle, A, "standard")
    assert summary["session_name"] == "auth-work" and summary["entries"] == 204


async def test_an_empty_session_says_so(chronicle: Chronicle) -> None:
    briefing = await build_briefing(chronicle, A, "standard")
    assert "Nothing has been recorded" in briefing.text
    assert (await build_briefing(chronicle, A, "micro")).text.endswith("no task recorded.")


# -- the offline answer ----------------------------------------------------------------
async def test_a_history_question_lists_what_matched(
    chronicle: Chronicle, archive: Archive
) -> None:
    decision = await chronicle.store(B, "decision", "The auth migration moves users to JWT")
    await chronicle.promote(decision.id)  # another session's decision is seen once promoted
    archive.append_messages(
        [say(B, "how risky is the auth migration for mobile clients?", NOW - timedelta(days=1))]
    )
    question = "how did we handle the auth migration"
    archive.append_messages([say(A, question, NOW)])  # the question itself is never an answer
    answer = await ask(chronicle, question, intent="HISTORICAL", subject="auth_migration")
    assert answer.startswith(f"**{FOUND}**")
    assert "1 chronicle entry, 1 message about" in answer
    assert "decision, promoted · session *cache-work* (`sess-b-0`)" in answer
    assert "**auth** **migration**" in answer  # the message snippet, words marked
    assert answer.count(question) == 0


async def test_nothing_found_says_so_and_suggests_what_to_try(chronicle: Chronicle) -> None:
    answer = await ask(
        chronicle, "what did we decide about kubernetes", subject="kubernetes",
        time_scope="last_week",
    )  # fmt: skip
    assert answer.startswith(f"**{NOTHING}**")
    assert "without the time limit" in answer and "configure a model" in answer


async def test_the_time_scope_limits_the_answer(chronicle: Chronicle, clock: FakeWall) -> None:
    clock.now = NOW - timedelta(days=10)
    await chronicle.store(A, "decision", "billing uses Stripe webhooks")
    clock.now = NOW - timedelta(hours=20)  # yesterday, 19:00
    await chronicle.store(A, "insight", "billing webhooks arrive out of order")
    clock.now = NOW
    answer = await ask(chronicle, "billing", subject="billing", time_scope="yesterday")
    assert "out of order" in answer and "Stripe" not in answer
    answer = await ask(chronicle, "billing", subject="billing", time_scope="next_full_moon")
    assert "Stripe" in answer and "did not recognise the time 'next_full_moon'" in answer


async def test_activity_lists_file_records(chronicle: Chronicle) -> None:
    await chronicle.record_file(B, "api/routes.py", "modified", summary="added /health")
    answer = await ask(chronicle, "what changed in the api recently", intent="ACTIVITY",
                       subject="api", time_scope="recently")  # fmt: skip
    assert "**Files**" in answer and "modified `api/routes.py`: added /health" in answer
    assert "from the last 7 days" in answer
    answer = await ask(chronicle, "what changed today?", intent="ACTIVITY", time_scope="today")
    assert answer.startswith(f"**{FOUND}**: 1 file record from today.")
    answer = await ask(chronicle, "what happened with billing today?", intent="ACTIVITY",
                       subject="billing", time_scope="today")  # fmt: skip
    assert 'Nothing about "billing"; all activity instead.' in answer
    assert "`api/routes.py`" in answer


async def test_resume_briefs_this_session_or_the_last_active_one(
    chronicle: Chronicle, archive: Archive
) -> None:
    nothing = await ask(chronicle, "where did we leave off", intent="RESUME")
    assert nothing.startswith(f"**{NOTHING}**")
    await chronicle.store(B, "task_state", "Half-way through the cache eviction rewrite")
    archive.append_messages([say(B, "next: benchmark LRU against LFU", NOW)])
    answer = await ask(chronicle, "where did we leave off", intent="RESUME", session_id=A)
    assert "where session *cache-work*" in answer and "cache eviction rewrite" in answer
    assert "benchmark LRU" in answer


async def test_answers_are_cached_and_dropped_when_the_topic_moves(
    chronicle: Chronicle,
) -> None:
    await chronicle.store(A, "decision", "Search uses SQLite FTS5")
    first = await ask(chronicle, "what did we decide about search", subject="search")
    again = await ask(chronicle, "search: what was decided?", subject="search")
    assert again == first
    stats = chronicle.cache.stats()["HISTORICAL"]
    assert (stats["hits"], stats["misses"]) == (1, 1)
    await chronicle.store(A, "decision", "Search results are paged by 20")
    fresh = await ask(chronicle, "what did we decide about search", subject="search")
    assert "paged by 20" in fresh
    assert chronicle.cache.stats()["HISTORICAL"]["invalidations"] == 1


async def test_earlier_archive_answers_are_not_found_again(
    chronicle: Chronicle, archive: Archive
) -> None:
    archive.append_messages(
        [
            say(A, "the deploy script needs a dry-run flag", NOW - timedelta(hours=3)),
            say(A, "Found: the deploy script ...", NOW - timedelta(hours=2),
                source="archivalist", answered_from="knowledge"),
        ]
    )  # fmt: skip
    answer = await ask(chronicle, "deploy script", subject="deploy_script")
    assert "dry-run flag" in answer and "Found: the deploy" not in answer


# -- what an offline answer leaves out, and how it ranks ---------------------------------
def notice(session: str, text: str, at: datetime) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id=session, source="sylk", target="user", type=MessageType.SYSTEM_NOTICE,
        payload={"text": text}, timestamp=at,
    )  # fmt: skip


def asked_archive(session: str, text: str, at: datetime) -> Message[dict[str, Any]]:
    """A question the Guide routed to the Archivalist, as the engine records it."""
    return say(session, text, at, route={"target": "archivalist", "intent": "OUTCOME"})


async def test_sylk_notices_and_questions_to_the_archive_are_not_history(
    chronicle: Chronicle, archive: Archive
) -> None:
    hour = timedelta(hours=1)
    archive.append_messages(
        [
            say(A, "add retries with backoff to fetch in app/http_client.py", NOW - 4 * hour),
            notice(A, "No language model is configured, so the architect cannot act on this "
                   "yet; your message is saved.", NOW - 4 * hour),
            asked_archive(A, "did the tests pass", NOW - 3 * hour),
            say(A, "What did we work on today?", NOW - 2 * hour),
            say(A, "what did we work on today", NOW),  # the question being answered
        ]
    )  # fmt: skip
    answer = await ask(chronicle, "what did we work on today", time_scope="today")
    assert answer.startswith(f"**{FOUND}**: 1 message from today.")
    assert "add retries with backoff" in answer
    assert "No language model" not in answer
    assert "did the tests pass" not in answer
    assert "work on today" not in answer.lower()


async def test_the_same_request_said_again_is_one_line_with_a_count(
    chronicle: Chronicle, archive: Archive
) -> None:
    hour = timedelta(hours=1)
    archive.append_messages(
        [
            say(A, "where is EngineSkills defined", NOW - 3 * hour),
            say(A, "Where is EngineSkills defined?", NOW - 2 * hour),
            say(A, "add retries to fetch", NOW - hour),
        ]
    )
    answer = await ask(chronicle, "what did we work on today", time_scope="today")
    assert answer.count("EngineSkills") == 1 and "(2 times)" in answer
    assert "add retries to fetch" in answer


async def test_a_topic_matched_only_in_part_says_so(chronicle: Chronicle, archive: Archive) -> None:
    archive.append_messages(
        [
            say(B, "the upload job failed with a timeout after 30 s", NOW - timedelta(days=2)),
            say(B, "we set a 10 second error budget for the retry loop", NOW - timedelta(days=1)),
        ]
    )  # fmt: skip
    question = "have we seen this timeout error before"
    answer = await ask(chronicle, question, intent="SIMILAR", subject="timeout_error")
    assert answer.startswith(
        f'**{FOUND}**: nothing on "timeout error"; 1 message mentions "timeout".'
    )
    assert "upload job" in answer
    assert "error budget" not in answer  # "error" alone says nothing about this timeout

    await chronicle.record_failure(
        A, approach="sync worker without a read deadline", reason="timeout error on slow disks"
    )
    answer = await ask(chronicle, "any timeout error like this", intent="SIMILAR",
                       subject="timeout_errors")  # fmt: skip
    assert answer.startswith(
        f'**{FOUND}**: 1 chronicle entry about "timeout errors"; 1 message mentions only "timeout".'
    )


async def test_records_with_more_of_the_topic_come_first(
    chronicle: Chronicle, archive: Archive
) -> None:
    archive.append_messages(
        [
            say(A, "token refresh now runs in a background task", NOW - timedelta(days=3)),
            say(A, "auth: the gateway does auth, auth headers and auth retries", NOW),
        ]
    )
    answer = await ask(chronicle, "auth token refresh", subject="auth_token_refresh")
    assert 'nothing on "auth token refresh"' in answer
    assert '1 message mentions "token refresh", 1 message mentions "auth"' in answer
    assert answer.index("background task") < answer.index("gateway does")


async def test_a_question_about_files_says_when_none_were_recorded(
    chronicle: Chronicle, archive: Archive
) -> None:
    archive.append_messages([say(A, "rename the config loader", NOW - timedelta(hours=1))])
    question = "what files did we change today"
    answer = await ask(chronicle, question, intent="ACTIVITY", time_scope="today")
    assert answer.startswith(f"**{FOUND}**: no file changes are recorded from today")
    assert "rename the config loader" in answer
    await chronicle.record_file(A, "app/config.py", "modified", summary="renamed the loader")
    answer = await ask(chronicle, question + "?", intent="ACTIVITY", time_scope="today")
    assert "modified `app/config.py`: renamed the loader" in answer
    assert "no file changes" not in answer


# -- "did the tests pass" ----------------------------------------------------------------
async def record_test_run(
    archive: Archive, at: datetime, *, stdout: str, exit_code: int, dry_run: bool = False
) -> None:
    """A tester.tests.run tool result, stored the way an agent turn stores it."""
    result: dict[str, Any] = (
        {"dry_run": True, "would_run": "python -m pytest -q"}
        if dry_run
        else {"command": "python -m pytest -q", "exit_code": exit_code, "stdout": stdout,
              "stderr": "", "duration_ms": 812.0, "passed": exit_code == 0}
    )  # fmt: skip
    envelope = {"op": "tester.tests.run", "ok": True, "result": result, "meta": {}}
    step = AgentStep(
        turn_id="turn-1", session_id=B, role="tester", step=1, kind="tool_result",
        data={"id": "call_1", "name": "tester__tests__run", "content": json.dumps(envelope),
              "is_error": False},
    )  # fmt: skip
    await archive.arecord_steps(
        [
            {
                "session_id": step.session_id, "turn_id": step.turn_id, "role": step.role,
                "step": step.step, "kind": step.kind, "at": at.isoformat(),
                "data": step.model_dump_json(include={"data"}),
            }
        ]
    )  # fmt: skip


async def test_did_the_tests_pass_reports_the_last_recorded_run(
    chronicle: Chronicle, archive: Archive
) -> None:
    await record_test_run(archive, NOW - timedelta(hours=3), stdout="41 passed in 2.10s\n",
                          exit_code=0)  # fmt: skip
    await record_test_run(
        archive, NOW - timedelta(hours=1), exit_code=1,
        stdout="..F\nFAILED tests/test_retry.py::test_fetch_times_out\n"
               "=== 1 failed, 41 passed in 2.31s ===\n",
    )  # fmt: skip
    await record_test_run(archive, NOW, stdout="", exit_code=0, dry_run=True)
    archive.append_messages([say(B, "run the tests", NOW - timedelta(hours=1))])
    answer = await ask(chronicle, "did the tests pass", intent="OUTCOME", subject="tests")
    assert answer.startswith(
        f"**{FOUND}**: the last test run **failed**: 1 failed, 41 passed in 2.31s "
        "(2025-03-12 14:00)."
    )
    runs = answer.split("**Test runs**")[1]
    assert runs.index("failed") < runs.index("41 passed in 2.10s")  # newest first
    assert runs.count("`python -m pytest -q`") == 2  # the dry run ran nothing

    resume = await ask(chronicle, "where are things at", intent="RESUME", session_id=B)
    assert "**Last test run** (2025-03-12 14:00): failed: 1 failed, 41 passed" in resume


async def test_a_test_summary_or_an_agent_report_answers_it_too(
    chronicle: Chronicle, archive: Archive, clock: FakeWall
) -> None:
    clock.now = NOW - timedelta(hours=2)
    await chronicle.store(A, "tester_summary", "Suite green: 212 passed, 3 skipped")
    clock.now = NOW
    archive.append_messages(
        [
            say(A, "make the failing tests pass", NOW - timedelta(hours=1)),
            say(A, "All 57 tests in tests/unit passed after the fix.", NOW - timedelta(minutes=30),
                source="tester"),
        ]
    )  # fmt: skip
    answer = await ask(chronicle, "did the tests pass?", intent="OUTCOME", subject="tests")
    assert answer.startswith(f"**{FOUND}**: tester said: All 57 tests in tests/unit passed")
    assert "Suite green: 212 passed" in answer
    assert "make the failing tests pass" not in answer  # a request, not a result


async def test_did_the_tests_pass_with_nothing_recorded_says_how_results_get_recorded(
    chronicle: Chronicle, archive: Archive
) -> None:
    archive.append_messages([say(A, "run the tests", NOW - timedelta(hours=1))])
    answer = await ask(chronicle, "did the tests pass", intent="OUTCOME", subject="tests",
                       time_scope="today")  # fmt: skip
    assert answer.startswith(f"**{NOTHING}**: no test run or test result is recorded from today.")
    assert "the Tester runs the suite" in answer and "without the time limit" in answer
