"""The Archivalist's chronicle: what was done, in the archive's SQLite file.

Every write is tagged with the session that made it; a session reads its own
entries and the promoted entries of every other session (the seed's isolation
rules). Promotion happens when a user (or the Inspector) promotes an entry,
when a session completes successfully (its decisions and patterns), and when
the same pattern has been recorded ``promote_after`` times. Secrets are
redacted before anything is stored, and every write tells the history cache
what it made stale.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from sqlalchemy import Connection

from backend.archive.store import Archive
from backend.clock import utc_now
from backend.knowledge.chronicle import store
from backend.knowledge.chronicle.history_cache import HistoryCache
from backend.knowledge.chronicle.models import (
    ALL_TIME,
    FILE_OPERATIONS,
    MAX_CONTENT_CHARS,
    OUTCOME_CATEGORIES,
    PROMOTED_ON_COMPLETION,
    Category,
    ChronicleQuery,
    ChronicleValidationError,
    Entry,
    EntryNotFoundError,
    FileOp,
    TimeRange,
    TranscriptHit,
    parse_category,
    resolve_time_scope,
)
from backend.knowledge.chronicle.text import fts_match, search_terms, words
from backend.redaction import Redactor

PROMOTE_AFTER = 3  # the seed: "Pattern is used successfully N times"


@dataclass(frozen=True)
class PatternRecord:
    entry: Entry
    uses: int  # how many times this pattern (category + name) has been recorded
    sessions: int  # in how many sessions
    promoted_now: bool  # this record crossed the threshold


def _required(field_name: str, value: str | None) -> str:
    text = (value or "").strip()
    if not text:
        raise ChronicleValidationError(field_name, f"{field_name} must not be empty")
    if len(text) > MAX_CONTENT_CHARS:
        raise ChronicleValidationError(
            field_name,
            f"{field_name} is {len(text)} characters; the chronicle keeps at most "
            f"{MAX_CONTENT_CHARS}: record what was done and why, not whole files",
        )
    return text


def _optional(value: str | None) -> str | None:
    text = (value or "").strip()
    return text or None


def _local_zone() -> tzinfo:
    return datetime.now().astimezone().tzinfo or UTC


def pattern_key(category: str, name: str) -> str:
    """``Error handling``/``Result type`` and ``error_handling``/``result-type`` are one pattern."""
    return f"{'_'.join(words(category))}/{'_'.join(words(name))}"


class Chronicle:
    def __init__(
        self,
        archive: Archive,
        *,
        redactor: Redactor | None = None,
        clock: Callable[[], datetime] = utc_now,
        cache: HistoryCache | None = None,
        promote_after: int = PROMOTE_AFTER,
        tz: tzinfo | None = None,
    ) -> None:
        if promote_after < 1:
            raise ValueError("promote_after must be at least 1")
        self.archive = archive
        self.redactor = redactor or Redactor()
        self.clock = clock
        self.cache = cache if cache is not None else HistoryCache(clock)
        self.promote_after = promote_after
        # "today" and "yesterday" are the user's days, not UTC's.
        self.tz: tzinfo = tz if tz is not None else _local_zone()

    def now(self) -> datetime:
        return self.clock()

    def time_range(self, time_scope: str) -> TimeRange:
        return resolve_time_scope(time_scope, self.now(), self.tz)

    def note_activity(self, session_id: str) -> None:
        """Something happened in ``session_id`` (a reply, an edit): drop what it made stale."""
        self.cache.note_activity(session_id)

    # -- entries -----------------------------------------------------------------------
    def _new_entry(
        self,
        session_id: str,
        category: str | Category,
        content: str,
        *,
        title: str | None,
        agent: str | None,
        data: dict[str, Any] | None,
    ) -> Entry:
        if not session_id.strip():
            raise ChronicleValidationError("session_id", "session_id must not be empty")
        red = self.redactor
        return Entry(
            id=f"ent_{uuid.uuid4().hex[:16]}",
            session_id=session_id,
            category=parse_category(category),
            content=red.text(_required("content", content)),
            title=red.text(t) if (t := _optional(title)) else None,
            agent=_optional(agent),
            data=red.data(dict(data or {})),
            created_at=self.now(),
        )

    async def _insert(self, entry: Entry, key: str | None = None) -> Entry:
        await self.archive.awrite(lambda conn: store.insert_entry(conn, entry, key))
        self.cache.note_entry(
            entry.session_id,
            f"{entry.title or ''} {entry.content}",
            outcome=entry.category in OUTCOME_CATEGORIES,
        )
        return entry

    async def store(
        self,
        session_id: str,
        category: str | Category,
        content: str,
        *,
        title: str | None = None,
        agent: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> Entry:
        """Record one entry in ``session_id`` (session-local until promoted)."""
        entry = self._new_entry(session_id, category, content, title=title, agent=agent, data=data)
        return await self._insert(entry)

    async def get(self, entry_id: str) -> Entry:
        found = await self.archive.aread(lambda conn: store.get_entry(conn, entry_id))
        if found is None:
            raise EntryNotFoundError(entry_id)
        return found

    async def query(self, session_id: str, query: ChronicleQuery) -> list[Entry]:
        """Entries ``session_id`` may see; text search falls back from all words to any."""
        terms = search_terms(query.search_text)

        def run(conn: Connection) -> list[Entry]:
            found = store.select_entries(conn, query, session_id, fts_match(terms))
            if not found and len(terms) > 1:
                found = store.select_entries(
                    conn, query, session_id, fts_match(terms, any_term=True)
                )
            return found

        return await self.archive.aread(run)

    # -- promotion ---------------------------------------------------------------------
    async def promote(
        self, entry_id: str, *, reason: str = "promoted explicitly"
    ) -> tuple[Entry, bool]:
        """Make an entry global (readable from every session). Returns the entry and
        whether this call promoted it (False: it already was; the first reason stays)."""
        at = self.now()
        changed = await self.archive.awrite(
            lambda conn: store.promote(conn, entry_id, reason=reason, at=at)
        )
        entry = await self.get(entry_id)
        if changed:
            self.cache.note_entry(entry.session_id, f"{entry.title or ''} {entry.content}")
        return entry, bool(changed)

    async def complete_session(self, session_id: str) -> list[str]:
        """A session completed successfully: promote its decisions and patterns (the
        seed's promotion on completion). Returns the ids promoted."""
        at = self.now()
        kinds = sorted(PROMOTED_ON_COMPLETION)
        ids: list[str] = await self.archive.awrite(
            lambda conn: store.promote_categories(
                conn, session_id, kinds, reason="session completed successfully", at=at
            )
        )
        if ids:
            self.cache.clear()  # many topics at once: start afresh
        return ids

    # -- structured records ------------------------------------------------------------
    async def record_pattern(
        self,
        session_id: str,
        *,
        category: str,
        name: str,
        pattern: str,
        example: str | None = None,
        agent: str | None = None,
    ) -> PatternRecord:
        """Record a coding pattern; its ``promote_after``-th record promotes it."""
        name, category = _required("name", name), _required("category", category)
        body = _required("pattern", pattern)
        content = f"{name} ({category}): {body}"
        if example := _optional(example):
            content = f"{content}\nExample: {example}"
        entry = self._new_entry(
            session_id,
            Category.PATTERN,
            content,
            title=name,
            agent=agent,
            data={"pattern_category": category, "name": name, "pattern": body, "example": example},
        )
        key = pattern_key(category, name)
        at = self.now()

        def write(conn: Connection) -> tuple[int, int, bool]:
            store.insert_entry(conn, entry, key)
            uses, sessions, promoted = store.pattern_uses(conn, key)
            if uses >= self.promote_after and not promoted:
                reason = f"pattern recorded {uses} times in {sessions} session(s)"
                store.promote(conn, entry.id, reason=reason, at=at)
                return uses, sessions, True
            return uses, sessions, False

        uses, sessions, promoted_now = await self.archive.awrite(write)
        self.cache.note_entry(session_id, content)
        saved = await self.get(entry.id) if promoted_now else entry
        return PatternRecord(saved, uses, sessions, promoted_now)

    async def record_failure(
        self,
        session_id: str,
        *,
        approach: str,
        reason: str,
        context: str | None = None,
        resolution: str | None = None,
        agent: str | None = None,
    ) -> Entry:
        approach, why = _required("approach", approach), _required("reason", reason)
        lines = [f"Tried: {approach}", f"Failed because: {why}"]
        if context := _optional(context):
            lines.append(f"Context: {context}")
        if resolution := _optional(resolution):
            lines.append(f"Resolved by: {resolution}")
        data = {"approach": approach, "reason": why, "context": context, "resolution": resolution}
        entry = self._new_entry(
            session_id,
            Category.FAILURE,
            "\n".join(lines),
            title=approach,
            agent=agent,
            data={**data, "resolved": resolution is not None},
        )
        return await self._insert(entry)

    # -- files -------------------------------------------------------------------------
    async def record_file(
        self,
        session_id: str,
        path: str,
        operation: str,
        *,
        summary: str | None = None,
        changes: Sequence[str] = (),
        agent: str | None = None,
    ) -> FileOp:
        """Record that ``session_id`` read, modified or created ``path`` (workspace-relative)."""
        if operation not in FILE_OPERATIONS:
            raise ChronicleValidationError(
                "operation", f"operation must be one of {', '.join(FILE_OPERATIONS)}"
            )
        if not session_id.strip():
            raise ChronicleValidationError("session_id", "session_id must not be empty")
        red = self.redactor
        op = FileOp(
            session_id=session_id,
            path=red.text(_required("path", path)),
            operation=operation,
            at=self.now(),
            summary=red.text(s) if (s := _optional(summary)) else None,
            changes=tuple(red.text(c) for c in changes if c.strip()),
            agent=_optional(agent),
        )
        await self.archive.awrite(lambda conn: store.insert_file(conn, op))
        if operation != "read":
            self.cache.note_activity(session_id)
        return op

    async def files(
        self,
        session_ids: Sequence[str] = (),
        time: TimeRange = ALL_TIME,
        *,
        about: Sequence[str] = (),
        limit: int = 50,
    ) -> list[FileOp]:
        return await self.archive.aread(
            lambda conn: store.select_files(conn, session_ids, time, path_terms=about, limit=limit)
        )

    # -- the conversation --------------------------------------------------------------
    async def search_transcript(
        self,
        text: str | None,
        *,
        session_ids: Sequence[str] = (),
        time: TimeRange = ALL_TIME,
        exclude_text: str | None = None,
        limit: int = 10,
    ) -> list[TranscriptHit]:
        """Past messages about ``text`` in any session (or ``session_ids``), best first."""
        terms = search_terms(text)

        def run(conn: Connection) -> list[TranscriptHit]:
            def find(match: str | None) -> list[TranscriptHit]:
                return store.search_transcript(
                    conn,
                    match,
                    session_ids=session_ids,
                    time=time,
                    exclude_text=exclude_text,
                    limit=limit,
                )

            found = find(fts_match(terms))
            if not found and len(terms) > 1:
                found = find(fts_match(terms, any_term=True))
            return found

        return await self.archive.aread(run)

    async def latest_other_session(self, session_id: str) -> str | None:
        return await self.archive.aread(lambda c: store.latest_active_session(c, session_id))

    async def session_names(self, ids: Sequence[str]) -> dict[str, str]:
        return await self.archive.aread(lambda conn: store.session_names(conn, ids))

    async def category_counts(self, session_id: str) -> dict[str, int]:
        return await self.archive.aread(lambda conn: store.category_counts(conn, session_id))


__all__ = ["Chronicle", "PatternRecord", "pattern_key"]
