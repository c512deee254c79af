"""The Archivalist's skills: the chronicle of what was done, across sessions.

Given a :class:`~backend.knowledge.chronicle.chronicle.Chronicle`, every op but two runs
on it; ``analysis.extract_facts`` (facts found by patterns in a text, entries or a
transcript range) and ``concurrency.resolve_conflict`` (decisions on one subject that
disagree, and the resolution the caller chooses) get their handlers from an engine
(:mod:`backend.team.agent_ops.knowledge_ops`). Without a chronicle all ops are declared and answer
not-available.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import AwareDatetime, Field

from backend.knowledge.chronicle.briefing import build_briefing, build_summary
from backend.knowledge.chronicle.models import (
    ChronicleQuery,
    ChronicleValidationError,
    Entry,
    EntryNotFoundError,
    TimeRange,
)
from backend.skills.builtin.declare import (
    CONTEXTUAL,
    CORE,
    SPECIALISED,
    WRITE,
    Params,
    SessionScoped,
    declare,
)
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import Guidance, Handler, Policy, Skill, SkillContext, SkillResult
from backend.skills.session_scope import CROSS_SESSION_SCOPE, CROSS_SESSION_TAG, may_read
from backend.workspace.files import Workspace

if TYPE_CHECKING:
    from backend.knowledge.chronicle.chronicle import Chronicle

CHRONICLE = "the Archivalist's chronicle (historical memory across sessions)"
CROSS_SCOPE = CROSS_SESSION_SCOPE
Category = Literal[
    "decision", "insight", "pattern", "failure", "task_state", "timeline", "user_voice",
    "hypothesis", "open_thread", "general",
    "librarian_checkpoint", "guide_checkpoint", "academic_research_paper",
    "architect_workflow", "inspector_findings", "tester_summary", "pipeline_handoff",
]  # fmt: skip
QueryCategory = Literal[
    "all", "decision", "insight", "pattern", "failure", "task_state", "timeline", "user_voice",
    "hypothesis", "open_thread", "general",
    "librarian_checkpoint", "guide_checkpoint", "academic_research_paper",
    "architect_workflow", "inspector_findings", "tester_summary", "pipeline_handoff",
]  # fmt: skip


class StoreParams(SessionScoped):
    content: str = Field(min_length=1)
    category: Category
    title: str | None = None
    data: dict[str, Any] = Field(default_factory=dict, description="structured details")


class _Filters(Params):
    search_text: str | None = None
    categories: list[QueryCategory] = Field(default_factory=list)
    time_scope: str | None = Field(
        default=None, description="today, yesterday, recently, last_week, last_3_days, ..."
    )
    since: AwareDatetime | None = None
    until: AwareDatetime | None = None
    promoted_only: bool = False
    limit: int = Field(default=20, ge=1, le=200)


class QueryParams(_Filters, SessionScoped):
    current_only: bool = Field(default=False, description="leave out other sessions' entries")
    cross_session: bool = Field(default=False, description="every session's entries")


class CrossSessionParams(_Filters):
    session_ids: list[str] = Field(default_factory=list, description="empty: every session")
    exclude_current: bool = True


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
    pattern_id: str = Field(description="the id of the entry (pattern or decision) to promote")
    reason: str | None = None


class ExtractFactsParams(SessionScoped):
    text: str | None = Field(default=None, description="a text to read")
    entry_ids: list[str] = Field(default_factory=list, description="chronicle entries to read")
    transcript_from: int | None = Field(
        default=None, ge=0, description="first transcript message to read (0-based)"
    )
    transcript_to: int | None = Field(default=None, ge=0, description="last one, inclusive")
    store: bool = Field(default=False, description="store decisions and constraints found")


class ResolveConflictParams(SessionScoped):
    subject: str | None = Field(default=None, description="the decisions' title; empty: all")
    keep_entry_id: str | None = Field(
        default=None, description="the decision that stands; empty: only list the conflicts"
    )
    reason: str | None = None


def _time(p: _Filters, chronicle: Chronicle) -> TimeRange:
    if p.time_scope and (p.since or p.until):
        raise ChronicleValidationError("time_scope", "give either time_scope or since/until")
    if p.time_scope:
        return chronicle.time_range(p.time_scope)
    return TimeRange(since=p.since, until=p.until)


def _entries(found: list[Entry], **extra: Any) -> dict[str, Any]:
    return {"entries": [e.as_dict() for e in found], "count": len(found), **extra}


def _readable(ctx: SkillContext, found: list[Entry]) -> list[Entry]:
    """Promoted entries, and the unpromoted ones of sessions the caller may read: on a
    shared archive another user's private entries never leave the store."""
    return [e for e in found if e.promoted or may_read(ctx, e.session_id)]


def _reader(ctx: SkillContext) -> str | None:
    """The caller's user on a shared archive: its query leaves out a teammate's private
    entries in SQL, before the limit (after it, fewer than ``limit`` would come back)."""
    return None if ctx.reach is None else ctx.reach.user


def _handlers(chronicle: Chronicle) -> dict[str, Handler]:
    """One handler per op, closed over ``chronicle``."""

    async def query(ctx: SkillContext, p: QueryParams) -> dict[str, Any]:
        if p.cross_session and CROSS_SCOPE not in ctx.scopes:
            raise SkillError(
                ErrorCode.ACCESS_DENIED,
                "reading every session's entries needs the history.cross_session scope",
                details={"reason": "cross_session"},
            )
        sid = p.session_id or ctx.session_id
        q = ChronicleQuery(
            search_text=p.search_text,
            categories=p.categories,
            time=_time(p, chronicle),
            current_only=p.current_only,
            cross_session=p.cross_session,
            promoted_only=p.promoted_only,
            limit=p.limit,
            reader_user=_reader(ctx),
        )
        scope = (
            "this session" if p.current_only
            else "every session" if p.cross_session
            else "this session and promoted entries of other sessions"
        )  # fmt: skip
        return _entries(_readable(ctx, await chronicle.query(sid, q)), scope=scope)

    async def cross_session(ctx: SkillContext, p: CrossSessionParams) -> dict[str, Any]:
        q = ChronicleQuery(
            search_text=p.search_text,
            categories=p.categories,
            session_ids=p.session_ids,
            exclude_sessions=[ctx.session_id] if p.exclude_current else [],
            time=_time(p, chronicle),
            cross_session=True,
            promoted_only=p.promoted_only,
            limit=p.limit,
            reader_user=_reader(ctx),
        )
        return _entries(_readable(ctx, await chronicle.query(ctx.session_id, q)))

    async def store(ctx: SkillContext, p: StoreParams) -> SkillResult:
        entry = await chronicle.store(
            p.session_id or ctx.session_id,
            p.category,
            p.content,
            title=p.title,
            agent=ctx.agent,
            data=p.data,
        )
        guidance = []
        if entry.category.value in ("pattern", "decision"):
            guidance.append(
                Guidance(
                    op="archivalist.pattern.promote",
                    prose="Promote it if every session should know it",
                    args={"pattern_id": entry.id},
                )
            )
        return SkillResult(result={"entry": entry.as_dict()}, guidance=guidance)

    async def briefing(ctx: SkillContext, p: BriefingParams) -> dict[str, Any]:
        found = await build_briefing(chronicle, p.session_id or ctx.session_id, p.tier)
        return found.as_dict()

    async def summary(ctx: SkillContext, p: BriefingParams) -> dict[str, Any]:
        return await build_summary(chronicle, p.session_id or ctx.session_id, p.tier)

    async def promote(ctx: SkillContext, p: PromoteParams) -> dict[str, Any]:
        entry = await chronicle.get(p.pattern_id)
        if not (entry.promoted or may_read(ctx, entry.session_id)):
            raise EntryNotFoundError(p.pattern_id)  # never confirm another session's entry
        who = (
            "validated and approved by the inspector"
            if ctx.agent == "inspector"
            else (f"promoted explicitly by the {ctx.agent}")
        )
        entry, changed = await chronicle.promote(p.pattern_id, reason=p.reason or who)
        return {"entry": entry.as_dict(), "already_promoted": not changed}

    async def record_file(ctx: SkillContext, p: RecordFileParams) -> dict[str, Any]:
        ws = Workspace(ctx.workspace, protected=ctx.confinement.protected)
        path = ws.relative(ws.resolve(p.path))  # outside the workspace: ACCESS_DENIED
        op = await chronicle.record_file(
            p.session_id or ctx.session_id,
            path,
            p.operation,
            summary=p.summary,
            changes=p.changes,
            agent=ctx.agent,
        )
        return {"file": op.as_dict()}

    async def record_pattern(ctx: SkillContext, p: RecordPatternParams) -> dict[str, Any]:
        rec = await chronicle.record_pattern(
            p.session_id or ctx.session_id,
            category=p.category,
            name=p.name,
            pattern=p.pattern,
            example=p.example,
            agent=ctx.agent,
        )
        return {
            "entry": rec.entry.as_dict(),
            "uses": rec.uses,
            "sessions": rec.sessions,
            "promoted_now": rec.promoted_now,
            "promote_after": chronicle.promote_after,
        }

    async def record_failure(ctx: SkillContext, p: RecordFailureParams) -> dict[str, Any]:
        entry = await chronicle.record_failure(
            p.session_id or ctx.session_id,
            approach=p.approach,
            reason=p.reason,
            context=p.context,
            resolution=p.resolution,
            agent=ctx.agent,
        )
        return {"entry": entry.as_dict()}

    return {
        "query": query,
        "cross_session": cross_session,
        "store": store,
        "briefing": briefing,
        "summary": summary,
        "promote": promote,
        "record_file": record_file,
        "record_pattern": record_pattern,
        "record_failure": record_failure,
    }


def _arch(op: str, desc: str, params: Any, handler: Handler | None, **kw: Any) -> Skill:
    return declare(op, "archivalist", desc, params, handler, provider=CHRONICLE, **kw)


def archivalist_skills(chronicle: Chronicle | None = None) -> list[Skill]:
    """Without a ``chronicle`` service the ops are declared but answer not-available."""
    h: dict[str, Handler | None] = dict.fromkeys(
        ("query", "cross_session", "store", "briefing", "summary", "promote", "record_file",
         "record_pattern", "record_failure"),
    )  # fmt: skip
    if chronicle is not None:
        h.update(_handlers(chronicle))
    return [
        _arch("archivalist.chronicle.query", "Query the chronicle for stored decisions, "
              "insights, patterns and failures of this session (and promoted entries of "
              "others).", QueryParams, h["query"], tier=CORE, entry_point=True,
              tags=("query", "find", "recall", "retrieve", "history", "remember", "what did"),
              examples=[("what did we decide about caching",
                         {"search_text": "caching", "categories": ["decision"]}),
                        ("failures from yesterday",
                         {"categories": ["failure"], "time_scope": "yesterday"})]),
        _arch("archivalist.chronicle.store", "Store information in the chronicle.",
              StoreParams, h["store"], tier=CORE, kind=WRITE,
              tags=("store", "save", "record", "remember", "log"),
              examples=[("record a decision", {"content": "use SQLite WAL",
                                               "category": "decision"})],
              policy=Policy(do=["store decisions with their reason"],
                            dont=["store secrets or whole files"])),
        _arch("archivalist.memory.briefing", "Get a briefing of the current session's state.",
              BriefingParams, h["briefing"], tier=CORE,
              tags=("briefing", "status", "context", "state", "progress", "current"),
              examples=[("short briefing", {"tier": "micro"})]),
        _arch("archivalist.chronicle.cross_session_query", "Query historical data from other "
              "sessions: past work, earlier decisions.", CrossSessionParams,
              h["cross_session"], tier=CONTEXTUAL,
              triggers=(r"other session", r"\bpast\b", r"\bhistorical", r"\bprevious"),
              scopes=(CROSS_SCOPE,),
              tags=("other sessions", "past work", "historical", "before", CROSS_SESSION_TAG),
              examples=[("how did other sessions handle auth", {"search_text": "auth"})]),
        _arch("archivalist.pattern.promote", "Promote a session-local pattern or decision to "
              "global, so every session sees it.", PromoteParams, h["promote"],
              tier=CONTEXTUAL, kind=WRITE,
              triggers=(r"\bpromote", r"\bglobal\b", r"share pattern"),
              tags=("promote", "global", "share"), examples=[("promote", {"pattern_id": "p1"})]),
        _arch("archivalist.session.summary", "Generate a summary of a session's work.",
              BriefingParams, h["summary"], tier=CONTEXTUAL,
              triggers=(r"\bsummari[sz]e", r"\bsummary"),
              tags=("summarize session", "session summary"), examples=[("summary", {})]),
        _arch("archivalist.analysis.extract_facts", "Extract facts (decisions, constraints, "
              "file mentions, commands) from a text, chronicle entries or a transcript range; "
              "optionally store them.", ExtractFactsParams, None, tier=SPECIALISED,
              tags=("extract facts", "analyze entries", "decisions", "constraints"),
              examples=[("facts from a note", {"text": "We decided to use SQLite. Tests "
                                               "must pass: run `pytest -q`."}),
                        ("facts from the transcript", {"transcript_from": 0})]),
        _arch("archivalist.concurrency.resolve_conflict", "Find decisions on one subject that "
              "disagree, and record which one stands (the caller chooses; never silently).",
              ResolveConflictParams, None, tier=SPECIALISED, kind=WRITE,
              tags=("conflict", "resolve", "disagree", "contradicting decisions"),
              examples=[("list conflicting decisions", {}),
                        ("keep one", {"subject": "storage", "keep_entry_id": "ent_1",
                                      "reason": "the user chose it"})]),
        _arch("archivalist.file.record", "Record a file operation in the chronicle.",
              RecordFileParams, h["record_file"], kind=WRITE, searchable=False,
              tags=("file", "record"),
              examples=[("record an edit", {"path": "a.py", "operation": "modified"})]),
        _arch("archivalist.pattern.record", "Record a coding pattern; recorded often enough, "
              "it is promoted to every session.", RecordPatternParams, h["record_pattern"],
              kind=WRITE, tags=("pattern", "convention", "record"),
              examples=[("record naming", {"category": "naming", "name": "snake",
                                           "pattern": "snake_case functions"})]),
        _arch("archivalist.failure.record", "Record a failure and optionally its resolution.",
              RecordFailureParams, h["record_failure"], kind=WRITE,
              tags=("failure", "error", "record", "lesson"),
              examples=[("record a dead end", {"approach": "threads", "reason": "GIL"})]),
    ]  # fmt: skip
