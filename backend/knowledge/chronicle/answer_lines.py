"""How an answer from the archive writes what it found, one line per record.

Each chronicle entry, message, file record and test run is a line with its time,
its session ("this session" for the asker's own) and what it says; the headline
tallies the kinds found and says over which time. :data:`FOUND` and
:data:`NOTHING` label an answer as coming from the archive without a model.
"""

from __future__ import annotations

from datetime import tzinfo

from backend.knowledge.chronicle.briefing import when
from backend.knowledge.chronicle.evidence import RecordedRun
from backend.knowledge.chronicle.models import Entry, FileOp, TranscriptHit
from backend.knowledge.chronicle.text import clip

FOUND = "Found in the archive (no model used)"
NOTHING = "Nothing found in the archive (no model used)"


def session_label(name: str | None, session_id: str, current: str) -> str:
    if session_id == current:
        return "this session"
    return f"session *{name}* (`{session_id[:8]}`)" if name else f"session `{session_id[:8]}`"


def entry_line(e: Entry, tz: tzinfo, current: str) -> str:
    head = f"**{clip(e.title, 80)}**: " if e.title and not e.content.startswith(e.title) else ""
    mark = ", promoted" if e.promoted else ""
    where = session_label(e.session_name, e.session_id, current)
    return (
        f"- {when(e.created_at, tz)} · {e.category.value}{mark} · {where} — "
        f"{head}{clip(e.content, 280)}"
    )


def message_line(m: TranscriptHit, tz: tzinfo, current: str) -> str:
    where = session_label(m.session_name, m.session_id, current)
    return f"- {when(m.timestamp, tz)} · {where} · {m.source}: {clip(m.snippet, 200)}"


def file_line(f: FileOp, tz: tzinfo, current: str) -> str:
    note = f": {clip(f.summary, 160)}" if f.summary else ""
    where = session_label(f.session_name, f.session_id, current)
    return f"- {when(f.at, tz)} · {where} · {f.operation} `{f.path}`{note}"


def run_line(r: RecordedRun, tz: tzinfo, current: str) -> str:
    where = session_label(None, r.session_id, current)
    command = f" · `{r.command}`" if r.command else ""
    return f"- {when(r.at, tz)} · {where} · {verdict(r)}{command} — {r.summary}".rstrip(" —")


def verdict(run: RecordedRun) -> str:
    return {True: "passed", False: "failed", None: "did not finish"}[run.passed]


def scope_words(time_scope: str | None) -> str:
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


def tally(entries: int, messages: int, files: int) -> str:
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


def colon(text: str) -> str:
    return f": {text.strip()}" if text.strip() else ""
