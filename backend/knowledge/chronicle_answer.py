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

from datetime import tzinfo
from typing import TYPE_CHECKING

from backend.knowledge.chronicle_briefing import build_briefing, when
from backend.knowledge.chronicle_models import (
    OUTCOME_CATEGORIES,
    Category,
    ChronicleQuery,
    ChronicleValidationError,
    Entry,
    FileOp,
    TimeRange,
    TranscriptHit,
)
from backend.knowledge.chronicle_text import clip, search_terms
from backend.knowledge.history_cache import HistoryIntent, cache_key, parse_intent

if TYPE_CHECKING:
    from backend.knowledge.chronicle import Chronicle

FOUND = "Found in the archive (no model used)"
NOTHING = "Nothing found in the archive (no model used)"
ITEMS = 8  # per kind of record: an answer to read, not a dump
_SIMILAR_CATEGORIES = (
    Category.FAILURE,
    Category.PATTERN,
    Category.INSIGHT,
    Category.DECISION,
    Category.HYPOTHESIS,
)
_FINAL_STATUSES = {"done", "complete", "completed", "passed", "failed", "succeeded", "merged"}


async def answer_history(
    chronicle: Chronicle,
    *,
    text: str,
    intent: str | None,
    subject: str | None,
    time_scope: str | None,
    session_id: str,
) -> str:
    """A markdown answer to ``text`` from the archive (the offline Archivalist).

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
    about = subject.replace("_", " ") if subject else text
    key = cache_key(kind, session_id=session_id, subject=subject, text=text, time_scope=time_scope)
    cached = chronicle.cache.get(kind, key, text=about)
    if isinstance(cached, str):
        return cached
    sessions: list[str] | None = None  # what the answer drew on; None: every session
    complete = True
    if kind is HistoryIntent.RESUME:
        answer, sessions = await _resume(chronicle, text, session_id)
    else:
        answer, complete = await _search(chronicle, kind, text, about, time, time_scope, session_id)
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


def _session(name: str | None, session_id: str, current: str) -> str:
    if session_id == current:
        return "this session"
    return f"session *{name}* (`{session_id[:8]}`)" if name else f"session `{session_id[:8]}`"


def _entry_line(e: Entry, tz: tzinfo, current: str) -> str:
    head = f"**{clip(e.title, 80)}**: " if e.title and not e.content.startswith(e.title) else ""
    mark = ", promoted" if e.promoted else ""
    where = _session(e.session_name, e.session_id, current)
    return (
        f"- {when(e.created_at, tz)} · {e.category.value}{mark} · {where} — "
        f"{head}{clip(e.content, 280)}"
    )


def _message_line(m: TranscriptHit, tz: tzinfo, current: str) -> str:
    where = _session(m.session_name, m.session_id, current)
    return f"- {when(m.timestamp, tz)} · {where} · {m.source}: {clip(m.snippet, 280)}"


def _file_line(f: FileOp, tz: tzinfo, current: str) -> str:
    note = f": {clip(f.summary, 160)}" if f.summary else ""
    where = _session(f.session_name, f.session_id, current)
    return f"- {when(f.at, tz)} · {where} · {f.operation} `{f.path}`{note}"


def _scope_words(time_scope: str | None) -> str:
    """' from yesterday', ' from the last 7 days', ' from this week'."""
    if not time_scope:
        return ""
    scope = time_scope.strip().lower()
    if scope in ("recently", "recent", "lately"):
        return " from the last 7 days"
    words = scope.replace("_", " ")
    return f" from the {words}" if scope.startswith(("last_", "past_")) else f" from {words}"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


async def _search(  # noqa: PLR0917 - one call site, every argument a different thing
    chronicle: Chronicle,
    kind: HistoryIntent,
    text: str,
    about: str,
    time: TimeRange,
    time_scope: str | None,
    session_id: str,
) -> tuple[str, bool]:
    terms = search_terms(about)
    categories: tuple[Category, ...] = ()
    if kind is HistoryIntent.OUTCOME:
        categories = tuple(sorted(OUTCOME_CATEGORIES | {Category.DECISION}))
    elif kind is HistoryIntent.SIMILAR:
        categories = _SIMILAR_CATEGORIES
    query = ChronicleQuery(search_text=about, categories=categories, time=time, limit=ITEMS)
    entries = await chronicle.query(session_id, query)
    messages = await chronicle.search_transcript(about, time=time, exclude_text=text, limit=ITEMS)
    files: list[FileOp] = []
    widened = ""
    if kind is HistoryIntent.ACTIVITY:
        files = await chronicle.files((), time, about=terms, limit=ITEMS * 2)
        if terms and not (entries or messages or files):  # nothing on it: all the activity
            wide = ChronicleQuery(time=time, limit=ITEMS)
            entries = await chronicle.query(session_id, wide)
            files = await chronicle.files((), time, limit=ITEMS * 2)
            if entries or files:
                widened, terms = f' Nothing about "{" ".join(terms)}"; all activity instead.', []
    tz = chronicle.tz
    topic = f' about "{" ".join(terms)}"' if terms else ""
    scope = _scope_words(time_scope)
    if not (entries or messages or files):
        return _nothing(topic, scope, bool(terms)), False
    counts = [
        _count(len(items), one, many)
        for items, one, many in (
            (entries, "chronicle entry", "chronicle entries"),
            (messages, "message", "messages"),
            (files, "file record", "file records"),
        )
        if items
    ]
    lines = [f"**{FOUND}**: {', '.join(counts)}{topic}{scope}.{widened}"]
    if entries:
        lines += ["", "**Chronicle**", *(_entry_line(e, tz, session_id) for e in entries)]
    if files:
        lines += ["", "**Files**", *(_file_line(f, tz, session_id) for f in files)]
    if messages:
        lines += ["", "**Conversation**", *(_message_line(m, tz, session_id) for m in messages)]
    return "\n".join(lines), _complete(entries)


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


async def _resume(chronicle: Chronicle, text: str, session_id: str) -> tuple[str, list[str] | None]:
    """Where the session (or, if it has nothing yet, the last active one) left off, and
    the sessions that answer depends on (None: any session's first activity changes it)."""
    target = session_id
    briefing = await build_briefing(chronicle, target, "standard")
    recent = await chronicle.search_transcript(
        None, session_ids=[target], exclude_text=text, limit=5
    )
    if not (briefing.counts or briefing.files or recent):
        other = await chronicle.latest_other_session(session_id)
        if other is None:
            return (
                f"**{NOTHING}**: no session has recorded any work yet.\n\n"
                "Try: start on a task; the chronicle fills as agents work."
            ), None
        target = other
        briefing = await build_briefing(chronicle, target, "standard")
        recent = await chronicle.search_transcript(None, session_ids=[target], limit=5)
    names = await chronicle.session_names([target])
    where = _session(names.get(target), target, session_id)
    lines = [f"**{FOUND}**: where {where} left off.", "", briefing.text]
    if recent:
        tz = chronicle.tz
        lines += ["", "**Last messages**"]
        lines += [
            f"- {when(m.timestamp, tz)} · {m.source}: {clip(m.text, 200)}" for m in reversed(recent)
        ]
    # Falling back to another session: this session's first activity changes the answer.
    return "\n".join(lines), [target] if target == session_id else None
