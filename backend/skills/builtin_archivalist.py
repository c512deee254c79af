"""The Archivalist's skills: the chronicle of what was done, across sessions."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from backend.skills.builtin_base import (
    CONTEXTUAL,
    CORE,
    SPECIALISED,
    WRITE,
    Params,
    SessionScoped,
    declare,
)
from backend.skills.hooks_builtin import CROSS_SESSION_TAG
from backend.skills.models import Policy, Skill

CHRONICLE = "the Archivalist's chronicle (historical memory across sessions)"
Category = Literal[
    "decision", "insight", "pattern", "failure", "task_state", "timeline", "user_voice",
    "hypothesis", "open_thread", "general",
]  # fmt: skip


class StoreParams(SessionScoped):
    content: str = Field(min_length=1)
    category: Category
    title: str | None = None


class QueryParams(SessionScoped):
    search_text: str | None = None
    categories: list[Category] = Field(default_factory=list)
    limit: int = Field(default=20, ge=1, le=200)


class CrossSessionParams(Params):
    search_text: str | None = None
    session_ids: list[str] = Field(default_factory=list, description="empty: every session")
    exclude_current: bool = True
    limit: int = Field(default=20, ge=1, le=200)


class BriefingParams(SessionScoped):
    tier: Literal["micro", "standard", "full"] = "standard"


class RecordFileParams(SessionScoped):
    path: str
    operation: Literal["read", "modified", "created"]
    summary: str | None = None
    changes: list[str] = Field(default_factory=list)


class RecordPatternParams(SessionScoped):
    category: str
    name: str
    pattern: str
    example: str | None = None


class RecordFailureParams(SessionScoped):
    approach: str
    reason: str
    context: str | None = None
    resolution: str | None = None


class PromoteParams(Params):
    pattern_id: str


class EntriesParams(SessionScoped):
    entry_ids: list[str] = Field(default_factory=list)


def _arch(op: str, desc: str, params: Any, **kw: Any) -> Any:
    return declare(op, "archivalist", desc, params, provider=CHRONICLE, **kw)


def archivalist_skills(chronicle: Any | None = None) -> list[Skill]:
    """Without a ``chronicle`` service the ops are declared but answer not-available."""
    return [
        _arch("archivalist.chronicle.query", "Query the chronicle for stored decisions, "
              "insights, patterns and failures of this session.", QueryParams, tier=CORE,
              tags=("query", "find", "recall", "retrieve", "history", "remember", "what did"),
              examples=[("what did we decide about caching",
                         {"search_text": "caching", "categories": ["decision"]})]),
        _arch("archivalist.chronicle.store", "Store information in the chronicle.",
              StoreParams, tier=CORE, kind=WRITE,
              tags=("store", "save", "record", "remember", "log"),
              examples=[("record a decision", {"content": "use SQLite WAL",
                                               "category": "decision"})],
              policy=Policy(do=["store decisions with their reason"],
                            dont=["store secrets or whole files"])),
        _arch("archivalist.memory.briefing", "Get a briefing of the current session's state.",
              BriefingParams, tier=CORE,
              tags=("briefing", "status", "context", "state", "progress", "current"),
              examples=[("short briefing", {"tier": "micro"})]),
        _arch("archivalist.chronicle.cross_session_query", "Query historical data from other "
              "sessions: past work, earlier decisions.", CrossSessionParams, tier=CONTEXTUAL,
              triggers=(r"other session", r"\bpast\b", r"\bhistorical", r"\bprevious"),
              scopes=("history.cross_session",),
              tags=("other sessions", "past work", "historical", "before", CROSS_SESSION_TAG),
              examples=[("how did other sessions handle auth", {"search_text": "auth"})]),
        _arch("archivalist.pattern.promote", "Promote a session-local pattern to global.",
              PromoteParams, tier=CONTEXTUAL, kind=WRITE,
              triggers=(r"\bpromote", r"\bglobal\b", r"share pattern"),
              tags=("promote", "global", "share"), examples=[("promote", {"pattern_id": "p1"})]),
        _arch("archivalist.session.summary", "Generate a summary of a session's work.",
              BriefingParams, tier=CONTEXTUAL, triggers=(r"\bsummari[sz]e", r"\bsummary"),
              tags=("summarize session", "session summary"), examples=[("summary", {})]),
        _arch("archivalist.analysis.extract_facts", "Extract structured facts from entries.",
              EntriesParams, tier=SPECIALISED, tags=("extract facts", "analyze entries"),
              examples=[("facts from two entries", {"entry_ids": ["e1", "e2"]})]),
        _arch("archivalist.concurrency.resolve_conflict", "Resolve conflicts between "
              "concurrent writes to the chronicle.", EntriesParams, tier=SPECIALISED,
              kind=WRITE, destructive=True, tags=("conflict", "resolve", "merge"),
              examples=[("resolve two entries", {"entry_ids": ["e1", "e2"]})]),
        _arch("archivalist.file.record", "Record a file operation in the chronicle.",
              RecordFileParams, kind=WRITE, searchable=False, tags=("file", "record"),
              examples=[("record an edit", {"path": "a.py", "operation": "modified"})]),
        _arch("archivalist.pattern.record", "Record a coding pattern.", RecordPatternParams,
              kind=WRITE, tags=("pattern", "convention", "record"),
              examples=[("record naming", {"category": "naming", "name": "snake",
                                           "pattern": "snake_case functions"})]),
        _arch("archivalist.failure.record", "Record a failure and optionally its resolution.",
              RecordFailureParams, kind=WRITE, tags=("failure", "error", "record", "lesson"),
              examples=[("record a dead end", {"approach": "threads", "reason": "GIL"})]),
    ]  # fmt: skip
