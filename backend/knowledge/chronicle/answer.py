"""Answering a history question from the archive alone, with no model configured.

When the Guide routes a question to the Archivalist and no model is set up,
:func:`answer_history` searches the chronicle, the file records and the full
text of past conversations, and lists what matched, each with its session,
time and category, labelled as found in the archive without a model. Chronicle
entries are the asking session's own plus every session's promoted ones (the
seed's isolation rules: an unpromoted decision stays with its session). Answers
go through the intent-aware history cache, keyed by the asking session and what
it may see.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from backend.knowledge.chronicle.answer_lines import (
    FOUND,
    NOTHING,
    colon,
    entry_line,
    file_line,
    message_line,
    scope_words,
    session_label,
    tally,
    verdict,
)
from backend.knowledge.chronicle.answer_tests import RUN_WORDS, TEST_WORDS, outcome_of_tests
from backend.knowledge.chronicle.briefing import build_briefing, when
from backend.knowledge.chronicle.evidence import archive_questions, recorded_test_runs
from backend.knowledge.chronicle.history_cache import (
    DEFAULT_VISIBILITY,
    HistoryIntent,
    cache_key,
    parse_intent,
)
from backend.knowledge.chronicle.models import (
    ALL_TIME,
    OUTCOME_CATEGORIES,
    Category,
    ChronicleQuery,
    ChronicleValidationError,
    Entry,
    FileOp,
    TimeRange,
    TranscriptHit,
)
from backend.knowledge.chronicle.text import clip, plain, search_terms, stem, words
from backend.knowledge.chronicle.topic import Topic, entry_text, file_text

if TYPE_CHECKING:
    from backend.knowledge.chronicle.chronicle import Chronicle

ITEMS = 8  # per kind of record: an answer to read, not a dump
_SIMILAR_CATEGORIES = (
    Category.FAILURE,
    Category.PATTERN,
    Category.INSIGHT,
    Category.DECISION,
    Category.HYPOTHESIS,
)
_FINAL_STATUSES = {"done", "complete", "completed", "passed", "failed", "succeeded", "merged"}
# Words of a question that name what kind of record is wanted, not what it is about
# ("what files did we change", "the current status").
_FRAME_WORDS = frozenset({"file", "files", "current", "currently", "state", "stand", "things"})


async def answer_history(
    chronicle: Chronicle,
    *,
    text: str,
    intent: str | None,
    subject: str | None,
    time_scope: str | None,
    session_id: str,
    reach: tuple[str, ...] | None = None,
) -> str:
    """A markdown answer to ``text`` from the archive (the offline Archivalist).

    ``reach``: the sessions whose transcripts, files and test runs the answer may
    draw on; None for every session (the user asking), ``(session_id,)`` for a
    caller without the cross-session scope. Chronicle entries are always those the
    session may see (its own and promoted ones).

    ``intent``, ``subject`` and ``time_scope`` are the Guide's routing metadata
    (HISTORICAL, ACTIVITY, OUTCOME, SIMILAR, RESUME or GENERAL; a snake_case
    subject; today, yesterday, last_week, recently, last_3_days, ...). An
    unknown time scope is ignored and the answer says so.
    """
    kind = parse_intent(intent)
    notes: list[str] = []
    time = TimeRange()
    if time_scope:
        try:
            time = chronicle.time_range(time_scope)
        except ChronicleValidationError:
            notes.append(f"_I did not recognise the time {time_scope!r}, so I searched all time._")
            time_scope = None
    about = subject.replace("_", " ") if subject else _topic_of(text)
    sees = DEFAULT_VISIBILITY if reach is None else f"{DEFAULT_VISIBILITY}|{','.join(reach)}"
    key = cache_key(
        kind, session_id=session_id, subject=subject, text=text, time_scope=time_scope, sees=sees
    )
    cached = chronicle.cache.get(kind, key, text=about)
    if isinstance(cached, str):
        return cached
    sessions: list[str] | None = None  # what the answer drew on; None: every session
    complete = True
    if kind is HistoryIntent.RESUME:
        answer, sessions = await _resume(chronicle, text, session_id, reach)
    else:
        answer, complete = await _search(
            chronicle, kind, text, about, time, time_scope, session_id, reach
        )
    answer = chronicle.redactor.text("\n".join([answer, *notes]).strip())
    chronicle.cache.put(
        kind,
        key,
        answer,
        session_id=session_id,
        sessions=sessions,
        about=search_terms(about),
        complete=complete,
    )
    return answer


def _topic_of(text: str) -> str:
    """The question's content words, without the ones that only say what kind of record
    is wanted (its subject, when the Guide gave one, is used instead)."""
    return " ".join(t for t in search_terms(text) if t not in _FRAME_WORDS)


async def _messages(
    chronicle: Chronicle,
    about: str | None,
    question: str,
    *,
    time: TimeRange = ALL_TIME,
    session_ids: tuple[str, ...] = (),
    limit: int = ITEMS,
) -> list[TranscriptHit]:
    """Past messages about ``about``, without Sylk's own notices, the question being
    answered (or a repeat of it), and earlier questions put to the archive: those are
    what the user asked, not what happened."""
    hits = await chronicle.search_transcript(
        about, session_ids=session_ids, time=time, exclude_text=question, limit=limit * 3
    )
    asked = plain(question)
    hits = [h for h in hits if h.type != "SYSTEM_NOTICE" and plain(h.text) != asked]
    earlier = await archive_questions(chronicle, [h.seq for h in hits if h.source == "user"])
    return _collapse([h for h in hits if h.seq not in earlier])[:limit]


def _collapse(hits: list[TranscriptHit]) -> list[TranscriptHit]:
    """One line for the same words said again in a session: the first shown, with a count."""
    kept: dict[tuple[str, str, str], list[TranscriptHit]] = {}
    for hit in hits:
        kept.setdefault((hit.session_id, hit.source, plain(hit.text)), []).append(hit)
    out = []
    for same in kept.values():
        first = same[0]
        if len(same) > 1:
            first = dataclasses.replace(first, snippet=f"{first.snippet} ({len(same)} times)")
        out.append(first)
    return out


async def _search(  # noqa: PLR0917 - one call site, every argument a different thing
    chronicle: Chronicle,
    kind: HistoryIntent,
    text: str,
    about: str,
    time: TimeRange,
    time_scope: str | None,
    session_id: str,
    reach: tuple[str, ...] | None,
) -> tuple[str, bool]:
    terms = search_terms(about)
    within = reach or ()  # () searches every session
    stems = {stem(t) for t in terms}
    about_tests = kind is HistoryIntent.OUTCOME and bool(stems & TEST_WORDS)
    if about_tests and stems <= RUN_WORDS:
        return await outcome_of_tests(
            chronicle, text, time, time_scope, session_id, reach=reach
        ), False
    categories: tuple[Category, ...] = ()
    if kind is HistoryIntent.OUTCOME:
        categories = tuple(sorted(OUTCOME_CATEGORIES | {Category.DECISION}))
    elif kind is HistoryIntent.SIMILAR:
        categories = _SIMILAR_CATEGORIES
    query = ChronicleQuery(search_text=about, categories=categories, time=time, limit=ITEMS)
    entries = await chronicle.query(session_id, query)
    messages = await _messages(chronicle, about, text, time=time, session_ids=within)
    files: list[FileOp] = []
    widened = ""
    if kind is HistoryIntent.ACTIVITY:
        files = await chronicle.files(within, time, about=terms, limit=ITEMS * 2)
        if terms and not (entries or messages or files):  # nothing on it: all the activity
            wide = ChronicleQuery(time=time, limit=ITEMS)
            entries = await chronicle.query(session_id, wide)
            files = await chronicle.files(within, time, limit=ITEMS * 2)
            if entries or files:
                widened, terms = f' Nothing about "{" ".join(terms)}"; all activity instead.', []
    topic = Topic(terms)
    entries = topic.rank(entries, entry_text)
    messages = topic.rank(messages, lambda m: m.text)
    files = topic.rank(files, file_text)
    scope = scope_words(time_scope)
    if not (entries or messages or files):
        if about_tests:
            return (
                await outcome_of_tests(chronicle, text, time, time_scope, session_id, reach=reach),
                False,
            )
        label = f' about "{topic.label}"' if terms else ""
        return _nothing(label, scope, bool(terms)), False
    headline = _headline(topic, entries, messages, files, scope)
    if kind is HistoryIntent.ACTIVITY and not files and {"file", "files"} & set(words(text)):
        headline = (
            f"no file changes are recorded{scope} (agents record the files they create or "
            f"edit); {headline}"
        )
    lines = [f"**{FOUND}**: {headline}.{widened}"]
    tz = chronicle.tz
    if entries:
        lines += ["", "**Chronicle**", *(entry_line(e, tz, session_id) for e in entries)]
    if files:
        lines += ["", "**Files**", *(file_line(f, tz, session_id) for f in files)]
    if messages:
        lines += ["", "**Conversation**", *(message_line(m, tz, session_id) for m in messages)]
    return "\n".join(lines), _complete(entries)


def _headline(
    topic: Topic,
    entries: list[Entry],
    messages: list[TranscriptHit],
    files: list[FileOp],
    scope: str,
) -> str:
    """What was found, saying so when records carry only part of the topic."""
    texts = (
        [entry_text(e) for e in entries],
        [m.text for m in messages],
        [file_text(f) for f in files],
    )
    whole = [sum(topic.whole(t) for t in kind) for kind in texts]
    about = f' about "{topic.label}"' if topic.terms else ""
    if sum(whole) == sum(len(kind) for kind in texts):
        return f"{tally(*whole)}{about}{scope}"
    # Partial hits grouped by the part of the topic they carry, the largest part first.
    parts: dict[frozenset[str], list[int]] = {}
    for k, kind in enumerate(texts):
        for t in kind:
            if not topic.whole(t):
                parts.setdefault(topic.mentions(t) & topic.strong, [0, 0, 0])[k] += 1
    partial = []
    for part, n in sorted(parts.items(), key=lambda pn: len(pn[0]), reverse=True):
        verb = "mentions" if sum(n) == 1 else "mention"
        label = " ".join(t for t in topic.terms if t in part)
        partial.append(f'{tally(*n)} {verb} {"only " if any(whole) else ""}"{label}"')
    head = f"{tally(*whole)}{about}{scope}" if any(whole) else f'nothing on "{topic.label}"{scope}'
    return f"{head}; {', '.join(partial)}"


def _complete(entries: list[Entry]) -> bool:
    """Whether the newest result says the work is over (an OUTCOME answer may then live long)."""
    for entry in sorted(entries, key=lambda e: e.created_at, reverse=True):
        if entry.category in OUTCOME_CATEGORIES:
            status = str(entry.data.get("status", "")).lower()
            return status in _FINAL_STATUSES or entry.category is not Category.TASK_STATE
    return False


def _nothing(topic: str, scope: str, had_terms: bool) -> str:
    tips = []
    if scope:
        tips.append(f"ask again without the time limit ({scope.strip()}): older work is left out")
    if had_terms:
        tips.append("use other words: a file, function or feature name from that time")
    else:
        tips.append("name what you are looking for: a feature, file or decision")
    tips += [
        "decisions, failures and patterns are found only if they were recorded "
        "(the Archivalist's chronicle.store, failure.record and pattern.record)",
        "configure a model to have the Archivalist search and answer in its own words",
    ]
    return "\n".join([f"**{NOTHING}**{topic}{scope}.", "", "Try:", *(f"- {t}" for t in tips)])


async def _resume(
    chronicle: Chronicle, text: str, session_id: str, reach: tuple[str, ...] | None
) -> tuple[str, list[str] | None]:
    """Where the session (or, if it has nothing yet and ``reach`` allows, the last active
    one) left off, and the sessions that answer depends on (None: any session's first
    activity changes it)."""
    target = session_id
    briefing = await build_briefing(chronicle, target, "standard")
    recent = await _messages(chronicle, None, text, session_ids=(target,), limit=5)
    if not (briefing.counts or briefing.files or recent):
        others = None if reach is None else tuple(s for s in reach if s != session_id)
        if others == ():  # other sessions are private to this caller
            return (
                f"**{NOTHING}**: this session has recorded no work yet.\n\n"
                "Try: start on a task; the chronicle fills as agents work."
            ), [session_id]
        other = await chronicle.latest_other_session(session_id)
        if others is not None and other not in others:  # a teammate's: the caller's latest
            latest = await _messages(chronicle, None, text, session_ids=others, limit=1)
            other = latest[0].session_id if latest else None
        if other is None:
            return (
                f"**{NOTHING}**: no session has recorded any work yet.\n\n"
                "Try: start on a task; the chronicle fills as agents work."
            ), None
        target = other
        briefing = await build_briefing(chronicle, target, "standard")
        recent = await _messages(chronicle, None, text, session_ids=(target,), limit=5)
    names = await chronicle.session_names([target])
    where = session_label(names.get(target), target, session_id)
    lines = [f"**{FOUND}**: where {where} left off.", "", briefing.text]
    runs = await recorded_test_runs(chronicle, session_ids=(target,), limit=1)
    if runs:
        run = runs[0]
        lines += ["", f"**Last test run** ({when(run.at, chronicle.tz)}): {verdict(run)}"]
        lines[-1] += colon(run.summary)
    if recent:
        tz = chronicle.tz
        lines += ["", "**Last messages**"]
        lines += [
            f"- {when(m.timestamp, tz)} · {m.source}: {clip(m.text, 200)}" for m in reversed(recent)
        ]
    # Falling back to another session: this session's first activity changes the answer.
    return "\n".join(lines), [target] if target == session_id else None
