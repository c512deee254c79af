"""Answering "did the tests pass" from the archive, with no model configured.

The test runs, test summaries and failures on record, and what agents said about
a result, the newest first; or plainly that none was recorded and how results
come to be recorded. :data:`TEST_WORDS` and :data:`RUN_WORDS` tell a question
that is only about the last test run.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from backend.knowledge.chronicle.answer_lines import (
    FOUND,
    NOTHING,
    colon,
    entry_line,
    message_line,
    run_line,
    scope_words,
    verdict,
)
from backend.knowledge.chronicle.briefing import when
from backend.knowledge.chronicle.evidence import recorded_test_runs, reported_results
from backend.knowledge.chronicle.models import (
    OUTCOME_CATEGORIES,
    Category,
    ChronicleQuery,
    Entry,
    TimeRange,
)
from backend.knowledge.chronicle.text import clip, plain, stem
from backend.knowledge.chronicle.topic import entry_text

if TYPE_CHECKING:
    from backend.knowledge.chronicle.chronicle import Chronicle

TEST_WORDS = frozenset({"test", "pytest", "suite", "unittest"})
# What a test-result question may say besides "tests" and still be only about the last run.
RUN_WORDS = TEST_WORDS | frozenset(
    stem(w)
    for w in ("unit", "run", "runs", "pass", "passed", "fail", "failed", "green", "red", "ci")
)


async def outcome_of_tests(
    chronicle: Chronicle,
    text: str,
    time: TimeRange,
    time_scope: str | None,
    session_id: str,
    *,
    reach: tuple[str, ...] | None = None,
) -> str:
    """ "Did the tests pass": the test runs, test summaries and failures on record, and what
    agents said about a result, the newest first; or plainly that none was recorded."""
    scope = scope_words(time_scope)
    within = reach or ()  # () reads every session
    runs = await recorded_test_runs(chronicle, time, session_ids=within, limit=3)
    entries = await _test_entries(chronicle, session_id, time)
    asked = plain(text)
    reported = await reported_results(chronicle, time, session_ids=within, limit=3)
    said = [m for m in reported if plain(m.text) != asked]
    if not (runs or entries or said):
        tips = [
            "Results are recorded when the Tester runs the suite (with a model configured, ask "
            '"run the tests") or when an agent files a test summary or failure in the '
            "chronicle; tests run in your own terminal are not recorded."
        ]
        if scope:
            tips.append(f"Ask again without the time limit ({scope.strip()}) for older runs.")
        head = f"**{NOTHING}**: no test run or test result is recorded{scope}."
        return "\n\n".join([head, *tips])
    tz = chronicle.tz
    latest: list[tuple[datetime, str]] = [
        (r.at, f"the last test run **{verdict(r)}**{colon(r.summary)}") for r in runs[:1]
    ]
    latest += [
        (e.created_at, f"the latest {e.category.value} says{colon(clip(entry_text(e), 160))}")
        for e in entries[:1]
    ]
    latest += [(m.timestamp, f"{m.source} said{colon(clip(m.text, 160))}") for m in said[:1]]
    at, what = max(latest, key=lambda pair: pair[0])
    lines = [f"**{FOUND}**: {what} ({when(at, tz)}){scope}."]
    if runs:
        lines += ["", "**Test runs**", *(run_line(r, tz, session_id) for r in runs)]
    if entries:
        lines += ["", "**Chronicle**", *(entry_line(e, tz, session_id) for e in entries)]
    if said:
        lines += ["", "**Conversation**", *(message_line(m, tz, session_id) for m in said)]
    return "\n".join(lines)


async def _test_entries(chronicle: Chronicle, session_id: str, time: TimeRange) -> list[Entry]:
    """Test summaries, and failures or other results that mention tests, newest first."""
    summaries = ChronicleQuery(categories=(Category.TESTER_SUMMARY,), time=time, limit=3)
    others = tuple(sorted(OUTCOME_CATEGORIES - {Category.TESTER_SUMMARY}))
    mentions = ChronicleQuery(search_text="test", categories=others, time=time, limit=3)
    found = {e.id: e for q in (summaries, mentions) for e in await chronicle.query(session_id, q)}
    return sorted(found.values(), key=lambda e: e.created_at, reverse=True)[:4]
