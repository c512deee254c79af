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
from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, TypeVar

from backend.knowledge.chronicle.briefing import build_briefing, when
from backend.knowledge.chronicle.evidence import (
    RecordedRun,
    archive_questions,
    recorded_test_runs,
    reported_results,
)
from backend.knowledge.chronicle.history_cache import HistoryIntent, cache_key, parse_intent
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
from backend.knowledge.chronicle.text import clip, search_terms, stem, words

if TYPE_CHECKING:
    from backend.knowledge.chronicle.chronicle import Chronicle

_T = TypeVar("_T")
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
# Words of a question that name what kind of record is wanted, not what it is about
# ("what files did we change", "the current status").
_FRAME_WORDS = frozenset({"file", "files", "current", "currently", "state", "stand", "things"})
# Heads too common to stand for a topic alone: "timeout error" is about the timeout.
_WEAK = frozenset(
    stem(w)
    for w in (
        *("error", "errors", "issue", "issues", "problem", "problems", "bug", "bugs"),
        *("failure", "failures", "exception", "exceptions", "warning", "warnings", "crash"),
    )
)
_TEST_WORDS = frozenset({"test", "pytest", "suite", "unittest"})
# What a test-result question may say besides "tests" and still be only about the last run.
_RUN_WORDS = _TEST_WORDS | frozenset(
    stem(w)
    for w in ("unit", "run", "runs", "pass", "passed", "fail", "failed", "green", "red", "ci")
)


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
    about = subject.replace("_", " ") if subject else _topic_of(text)
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


def _topic_of(text: str) -> str:
    """The question's content words, without the ones that only say what kind of record
    is wanted (its subject, when the Guide gave one, is used instead)."""
    return " ".join(t for t in search_terms(text) if t not in _FRAME_WORDS)


def _plain(text: str) -> str:
    return " ".join(words(text))


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
    return f"- {when(m.timestamp, tz)} · {where} · {m.source}: {clip(m.snippet, 200)}"


def _file_line(f: FileOp, tz: tzinfo, current: str) -> str:
    note = f": {clip(f.summary, 160)}" if f.summary else ""
    where = _session(f.session_name, f.session_id, current)
    return f"- {when(f.at, tz)} · {where} · {f.operation} `{f.path}`{note}"


def _run_line(r: RecordedRun, tz: tzinfo, current: str) -> str:
    where = _session(None, r.session_id, current)
    command = f" · `{r.command}`" if r.command else ""
    return f"- {when(r.at, tz)} · {where} · {_verdict(r)}{command} — {r.summary}".rstrip(" —")


def _verdict(run: RecordedRun) -> str:
    return {True: "passed", False: "failed", None: "did not finish"}[run.passed]


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


def _tally(entries: int, messages: int, files: int) -> str:
    """'1 chronicle entry, 2 messages': the kinds with none found are left out."""
    counts = [
        _count(n, one, many)
        for n, one, many in (
            (entries, "chronicle entry", "chronicle entries"),
            (messages, "message", "messages"),
            (files, "file record", "file records"),
        )
        if n
    ]
    return ", ".join(counts)


class _Topic:
    """The topic's words, and how much of it a record mentions.

    The full-text search asks for every word first and falls back to any one word,
    so a hit may carry only part of the topic: those are ranked below the hits
    that carry all of it, and a hit with only a weak word ("error") is left out.
    """

    def __init__(self, terms: list[str]) -> None:
        self.terms = terms
        self.label = " ".join(terms)
        strong = [t for t in terms if stem(t) not in _WEAK]
        self.strong = frozenset(strong or terms)

    def mentions(self, text: str) -> frozenset[str]:
        found = set(words(text))
        return frozenset(t for t in self.terms if any(_same_word(stem(t), w) for w in found))

    def whole(self, text: str) -> bool:
        # One word: the search matched it, with its own stemming; trust that.
        return len(self.terms) < 2 or len(self.mentions(text)) == len(self.terms)

    def rank(self, items: list[_T], text_of: Callable[[_T], str]) -> list[_T]:
        if len(self.terms) < 2:
            return items
        scored = [(self.mentions(text_of(i)), i) for i in items]
        kept = [(m, i) for m, i in scored if m & self.strong]
        kept.sort(key=lambda mi: (len(mi[0] & self.strong), len(mi[0])), reverse=True)
        return [i for _, i in kept]


def _same_word(root: str, word: str) -> bool:
    """``word`` is a form of the word whose crude stem is ``root``: "caching" ~ "cached",
    "policies" ~ "policy" (the index's own Porter stemmer agrees on these)."""
    if word.startswith(root):
        return True
    if len(word) < len(root) - 1 or len(root) < 4:
        return False
    shared = next(
        (i for i, (a, b) in enumerate(zip(root, word, strict=False)) if a != b),
        min(len(root), len(word)),
    )
    return shared >= min(len(root), len(word)) - 1


def _entry_text(e: Entry) -> str:
    return f"{e.title or ''} {e.content}"


def _file_text(f: FileOp) -> str:
    return f"{f.path} {f.summary or ''}"


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
    asked = _plain(question)
    hits = [h for h in hits if h.type != "SYSTEM_NOTICE" and _plain(h.text) != asked]
    earlier = await archive_questions(chronicle, [h.seq for h in hits if h.source == "user"])
    return _collapse([h for h in hits if h.seq not in earlier])[:limit]


def _collapse(hits: list[TranscriptHit]) -> list[TranscriptHit]:
    """One line for the same words said again in a session: the first shown, with a count."""
    kept: dict[tuple[str, str, str], list[TranscriptHit]] = {}
    for hit in hits:
        kept.setdefault((hit.session_id, hit.source, _plain(hit.text)), []).append(hit)
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
) -> tuple[str, bool]:
    terms = search_terms(about)
    stems = {stem(t) for t in terms}
    about_tests = kind is HistoryIntent.OUTCOME and bool(stems & _TEST_WORDS)
    if about_tests and stems <= _RUN_WORDS:
        return await _test_outcome(chronicle, text, time, time_scope, session_id), False
    categories: tuple[Category, ...] = ()
    if kind is HistoryIntent.OUTCOME:
        categories = tuple(sorted(OUTCOME_CATEGORIES | {Category.DECISION}))
    elif kind is HistoryIntent.SIMILAR:
        categories = _SIMILAR_CATEGORIES
    query = ChronicleQuery(search_text=about, categories=categories, time=time, limit=ITEMS)
    entries = await chronicle.query(session_id, query)
    messages = await _messages(chronicle, about, text, time=time)
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
    topic = _Topic(terms)
    entries = topic.rank(entries, _entry_text)
    messages = topic.rank(messages, lambda m: m.text)
    files = topic.rank(files, _file_text)
    scope = _scope_words(time_scope)
    if not (entries or messages or files):
        if about_tests:
            return await _test_outcome(chronicle, text, time, time_scope, session_id), False
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
        lines += ["", "**Chronicle**", *(_entry_line(e, tz, session_id) for e in entries)]
    if files:
        lines += ["", "**Files**", *(_file_line(f, tz, session_id) for f in files)]
    if messages:
        lines += ["", "**Conversation**", *(_message_line(m, tz, session_id) for m in messages)]
    return "\n".join(lines), _complete(entries)


def _headline(
    topic: _Topic,
    entries: list[Entry],
    messages: list[TranscriptHit],
    files: list[FileOp],
    scope: str,
) -> str:
    """What was found, saying so when records carry only part of the topic."""
    texts = (
        [_entry_text(e) for e in entries],
        [m.text for m in messages],
        [_file_text(f) for f in files],
    )
    whole = [sum(topic.whole(t) for t in kind) for kind in texts]
    about = f' about "{topic.label}"' if topic.terms else ""
    if sum(whole) == sum(len(kind) for kind in texts):
        return f"{_tally(*whole)}{about}{scope}"
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
        partial.append(f'{_tally(*n)} {verb} {"only " if any(whole) else ""}"{label}"')
    head = f"{_tally(*whole)}{about}{scope}" if any(whole) else f'nothing on "{topic.label}"{scope}'
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


async def _test_outcome(
    chronicle: Chronicle, text: str, time: TimeRange, time_scope: str | None, session_id: str
) -> str:
    """ "Did the tests pass": the test runs, test summaries and failures on record, and what
    agents said about a result, the newest first; or plainly that none was recorded."""
    scope = _scope_words(time_scope)
    runs = await recorded_test_runs(chronicle, time, limit=3)
    entries = await _test_entries(chronicle, session_id, time)
    asked = _plain(text)
    said = [m for m in await reported_results(chronicle, time, limit=3) if _plain(m.text) != asked]
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
        (r.at, f"the last test run **{_verdict(r)}**{_colon(r.summary)}") for r in runs[:1]
    ]
    latest += [
        (e.created_at, f"the latest {e.category.value} says{_colon(clip(_entry_text(e), 160))}")
        for e in entries[:1]
    ]
    latest += [(m.timestamp, f"{m.source} said{_colon(clip(m.text, 160))}") for m in said[:1]]
    at, what = max(latest, key=lambda pair: pair[0])
    lines = [f"**{FOUND}**: {what} ({when(at, tz)}){scope}."]
    if runs:
        lines += ["", "**Test runs**", *(_run_line(r, tz, session_id) for r in runs)]
    if entries:
        lines += ["", "**Chronicle**", *(_entry_line(e, tz, session_id) for e in entries)]
    if said:
        lines += ["", "**Conversation**", *(_message_line(m, tz, session_id) for m in said)]
    return "\n".join(lines)


def _colon(text: str) -> str:
    return f": {text.strip()}" if text.strip() else ""


async def _test_entries(chronicle: Chronicle, session_id: str, time: TimeRange) -> list[Entry]:
    """Test summaries, and failures or other results that mention tests, newest first."""
    summaries = ChronicleQuery(categories=(Category.TESTER_SUMMARY,), time=time, limit=3)
    others = tuple(sorted(OUTCOME_CATEGORIES - {Category.TESTER_SUMMARY}))
    mentions = ChronicleQuery(search_text="test", categories=others, time=time, limit=3)
    found = {e.id: e for q in (summaries, mentions) for e in await chronicle.query(session_id, q)}
    return sorted(found.values(), key=lambda e: e.created_at, reverse=True)[:4]


async def _resume(chronicle: Chronicle, text: str, session_id: str) -> tuple[str, list[str] | None]:
    """Where the session (or, if it has nothing yet, the last active one) left off, and
    the sessions that answer depends on (None: any session's first activity changes it)."""
    target = session_id
    briefing = await build_briefing(chronicle, target, "standard")
    recent = await _messages(chronicle, None, text, session_ids=(target,), limit=5)
    if not (briefing.counts or briefing.files or recent):
        other = await chronicle.latest_other_session(session_id)
        if other is None:
            return (
                f"**{NOTHING}**: no session has recorded any work yet.\n\n"
                "Try: start on a task; the chronicle fills as agents work."
            ), None
        target = other
        briefing = await build_briefing(chronicle, target, "standard")
        recent = await _messages(chronicle, None, text, session_ids=(target,), limit=5)
    names = await chronicle.session_names([target])
    where = _session(names.get(target), target, session_id)
    lines = [f"**{FOUND}**: where {where} left off.", "", briefing.text]
    runs = await recorded_test_runs(chronicle, session_ids=(target,), limit=1)
    if runs:
        run = runs[0]
        lines += ["", f"**Last test run** ({when(run.at, chronicle.tz)}): {_verdict(run)}"]
        lines[-1] += _colon(run.summary)
    if recent:
        tz = chronicle.tz
        lines += ["", "**Last messages**"]
        lines += [
            f"- {when(m.timestamp, tz)} · {m.source}: {clip(m.text, 200)}" for m in reversed(recent)
        ]
    # Falling back to another session: this session's first activity changes the answer.
    return "\n".join(lines), [target] if target == session_id else None
