"""What the chronicle holds and how it is asked: categories, entries, queries, time scopes.

The chronicle is the Archivalist's record of what was done. Its categories are
the seed's ten entry kinds plus the categories under which each agent files its
checkpoint or compaction summary. Errors are :class:`SylkError` subclasses with an error
kind, so a skill handler can let them through and the caller sees a typed envelope.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from typing import Any

from backend.errors import ErrorKind, SylkError


class Category(StrEnum):
    DECISION = "decision"
    INSIGHT = "insight"
    PATTERN = "pattern"
    FAILURE = "failure"
    TASK_STATE = "task_state"
    TIMELINE = "timeline"
    USER_VOICE = "user_voice"
    HYPOTHESIS = "hypothesis"
    OPEN_THREAD = "open_thread"
    GENERAL = "general"
    # Checkpoint and compaction summaries, one category per agent (seed, memory management).
    LIBRARIAN_CHECKPOINT = "librarian_checkpoint"
    GUIDE_CHECKPOINT = "guide_checkpoint"
    ACADEMIC_RESEARCH_PAPER = "academic_research_paper"
    ARCHITECT_WORKFLOW = "architect_workflow"
    INSPECTOR_FINDINGS = "inspector_findings"
    TESTER_SUMMARY = "tester_summary"
    PIPELINE_HANDOFF = "pipeline_handoff"


CHECKPOINT_CATEGORIES = frozenset(
    {
        Category.LIBRARIAN_CHECKPOINT,
        Category.GUIDE_CHECKPOINT,
        Category.ACADEMIC_RESEARCH_PAPER,
        Category.ARCHITECT_WORKFLOW,
        Category.INSPECTOR_FINDINGS,
        Category.TESTER_SUMMARY,
        Category.PIPELINE_HANDOFF,
    }
)
# What a successful session hands to every other session (seed: "Patterns/decisions
# promoted to global Archivalist" when a session completes).
PROMOTED_ON_COMPLETION = frozenset({Category.DECISION, Category.PATTERN})
# Categories that carry a result: storing one means an outcome was updated.
OUTCOME_CATEGORIES = frozenset(
    {
        Category.TASK_STATE,
        Category.FAILURE,
        Category.TESTER_SUMMARY,
        Category.INSPECTOR_FINDINGS,
        Category.ARCHITECT_WORKFLOW,
        Category.PIPELINE_HANDOFF,
    }
)
FILE_OPERATIONS = ("read", "modified", "created")
MAX_CONTENT_CHARS = 20_000  # the chronicle records what was done, not whole files
MAX_LIMIT = 500


# -- errors -----------------------------------------------------------------------------
class ChronicleValidationError(SylkError):
    """Bad input to the chronicle (unknown category, empty content, bad time range)."""

    error_kind = ErrorKind.INVALID

    def __init__(self, field_name: str, message: str, **details: Any) -> None:
        super().__init__(
            message,
            details={"field_errors": [{"field": field_name, "message": message}], **details},
        )


class EntryNotFoundError(SylkError):
    """No chronicle entry has the given id."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, entry_id: str) -> None:
        super().__init__(
            f"no chronicle entry has id {entry_id!r}",
            details={"entry_id": entry_id},
            help_path="archivalist.chronicle.query",
        )
        self.entry_id = entry_id


def parse_category(value: str | Category) -> Category:
    try:
        return Category(str(value).strip().lower())
    except ValueError:
        known = ", ".join(c.value for c in Category)
        raise ChronicleValidationError(
            "category", f"unknown category {value!r}; known: {known}", known=known
        ) from None


def parse_categories(values: Iterable[str | Category]) -> list[Category]:
    """``all`` (the seed's query default) means no category filter."""
    wanted = [v for v in values if str(v).strip().lower() != "all"]
    return list(dict.fromkeys(parse_category(v) for v in wanted))


# -- records ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    id: str
    session_id: str
    category: Category
    content: str
    created_at: datetime
    title: str | None = None
    agent: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    promoted: bool = False
    promoted_at: datetime | None = None
    promoted_reason: str | None = None
    session_name: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "session_name": self.session_name,
            "category": self.category.value,
            "title": self.title,
            "content": self.content,
            "agent": self.agent,
            "data": self.data,
            "created_at": self.created_at.isoformat(),
            "promoted": self.promoted,
            "promoted_at": self.promoted_at.isoformat() if self.promoted_at else None,
            "promoted_reason": self.promoted_reason,
        }


@dataclass(frozen=True)
class FileOp:
    session_id: str
    path: str
    operation: str
    at: datetime
    summary: str | None = None
    changes: tuple[str, ...] = ()
    agent: str | None = None
    session_name: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "session_name": self.session_name,
            "path": self.path,
            "operation": self.operation,
            "summary": self.summary,
            "changes": list(self.changes),
            "agent": self.agent,
            "at": self.at.isoformat(),
        }


@dataclass(frozen=True)
class TranscriptHit:
    """One past message that matched a search, with the matching words marked."""

    seq: int
    session_id: str
    source: str
    type: str
    timestamp: datetime
    text: str
    snippet: str
    session_name: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "session_name": self.session_name,
            "source": self.source,
            "type": self.type,
            "timestamp": self.timestamp.isoformat(),
            "snippet": self.snippet,
        }


# -- time -------------------------------------------------------------------------------
@dataclass(frozen=True)
class TimeRange:
    since: datetime | None = None
    until: datetime | None = None

    def __post_init__(self) -> None:
        for name in ("since", "until"):
            value = getattr(self, name)
            if value is not None and value.tzinfo is None:
                raise ChronicleValidationError(name, f"{name} must carry a timezone (use UTC)")
        if self.since and self.until and self.since > self.until:
            raise ChronicleValidationError(
                "since",
                f"time range is empty: since {self.since.isoformat()} is after "
                f"until {self.until.isoformat()}",
            )

    @property
    def bounded(self) -> bool:
        return self.since is not None or self.until is not None


ALL_TIME = TimeRange()


def iso(value: datetime) -> str:
    """The archive's time format: UTC, always with microseconds, so text order is time order."""
    return value.astimezone(UTC).isoformat(timespec="microseconds")


_UNIT_DAYS = {"hour": 1 / 24, "day": 1, "week": 7, "month": 30, "quarter": 91, "year": 365}
_LAST_N = re.compile(r"^(?:last|past)_(\d{1,4})_(hour|day|week|month|quarter|year)s?$")
_LAST = re.compile(r"^(?:last|past|previous)_(hour|day|week|month|quarter|year|sprint)$")
_THIS = re.compile(r"^this_(week|month|quarter|year|sprint)$")
RECENT_DAYS = 7  # the seed: "recently" means the last seven days


def _midnight(now: datetime, tz: tzinfo) -> datetime:
    local = now.astimezone(tz)
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def resolve_time_scope(scope: str, now: datetime, tz: tzinfo = UTC) -> TimeRange:
    """The time range a Guide time scope names, relative to ``now`` in the user's zone ``tz``.

    Understood: today, yesterday, recently (7 days), last_week / last_month / ...
    (a rolling window of that length), last_N_days (and hours, weeks, months,
    years), this_week / this_month / this_year (calendar periods so far).
    Raises :class:`ChronicleValidationError` for anything else.
    """
    key = scope.strip().lower().replace(" ", "_").replace("-", "_")
    day = _midnight(now, tz)
    if key == "today":
        return TimeRange(since=day)
    if key == "yesterday":
        return TimeRange(since=day - timedelta(days=1), until=day)
    if key in ("recently", "recent", "lately"):
        return TimeRange(since=now - timedelta(days=RECENT_DAYS))
    if m := _LAST_N.match(key):
        return TimeRange(since=now - timedelta(days=int(m.group(1)) * _UNIT_DAYS[m.group(2)]))
    if m := _LAST.match(key):
        unit = "week" if m.group(1) == "sprint" else m.group(1)
        return TimeRange(since=now - timedelta(days=_UNIT_DAYS[unit]))
    if m := _THIS.match(key):
        unit = m.group(1)
        if unit in ("week", "sprint"):
            return TimeRange(since=day - timedelta(days=day.weekday()))
        if unit == "month":
            return TimeRange(since=day.replace(day=1))
        if unit == "quarter":
            return TimeRange(since=day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1))
        return TimeRange(since=day.replace(month=1, day=1))
    raise ChronicleValidationError(
        "time_scope",
        f"unknown time scope {scope!r}; try today, yesterday, recently, last_week, "
        "last_month, last_3_days or this_week",
    )


# -- queries ----------------------------------------------------------------------------
@dataclass(frozen=True)
class ChronicleQuery:
    """The seed's ``ArchiveQuery``: what to find and whose entries may be seen.

    Visibility: by default a session sees its own entries and the promoted
    entries of every other session; ``current_only`` narrows that to its own,
    ``cross_session`` widens it to every session. ``session_ids`` and
    ``exclude_sessions`` then filter what is visible. ``reader_user`` (a shared
    archive): another user's unpromoted entries are never visible.
    """

    search_text: str | None = None
    categories: Sequence[Category | str] = ()
    session_ids: Sequence[str] = ()
    exclude_sessions: Sequence[str] = ()
    time: TimeRange = ALL_TIME
    current_only: bool = False
    cross_session: bool = False
    promoted_only: bool = False
    limit: int = 20
    reader_user: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ChronicleValidationError("limit", f"limit must be 1..{MAX_LIMIT}")
        object.__setattr__(self, "categories", tuple(parse_categories(self.categories)))
        if self.current_only and self.cross_session:
            raise ChronicleValidationError(
                "cross_session", "current_only and cross_session contradict each other"
            )
