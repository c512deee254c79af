"""A small gateway over a list of skills, until ``backend.skills``' Gateway lands.

It satisfies :class:`~backend.mcp.ports.GatewayPort` plainly: word-match
search over searchable skills, describe at three detail levels, execute with
parameter validation and the BuildOS envelope (``ok``/``result`` or
``ok``/``error`` with a help pointer), batch as executes in order. The real
gateway replaces it in ``sylk mcp serve`` (see ``sylk_tui/mcp_cli.py``); the
two session ops below are worth keeping as skills either way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend.errors import SylkError
from backend.knowledge.archive import Archive
from backend.mcp.ports import DetailLevel
from backend.mcp.session_resources import session_summary
from backend.skills.models import OpKind, Skill, SkillContext, SkillResult


def _envelope_error(op: str, code: str, message: str) -> dict[str, Any]:
    return {"op": op, "ok": False, "error": {"code": code, "message": message, "help_path": op}}


class InterimGateway:
    def __init__(self, skills: Iterable[Skill]) -> None:
        self.skills = {skill.op: skill for skill in skills}

    async def search(self, ctx: SkillContext, query: str, *, limit: int = 10) -> dict[str, Any]:
        words = query.casefold().split()
        scored = []
        for skill in self.skills.values():
            if not skill.searchable:
                continue
            haystack = " ".join([skill.op, skill.description, *skill.tags]).casefold()
            score = sum(word in haystack for word in words)
            if score:
                scored.append((-score, skill.op, skill))
        hits = [
            {"op": s.op, "summary": s.one_line(), "kind": s.kind.value}
            for _score, _op, s in sorted(scored)[:limit]
        ]
        return {"query": query, "results": hits}

    async def describe(
        self, ctx: SkillContext, op: str, *, detail: DetailLevel = "schema"
    ) -> dict[str, Any]:
        skill = self.skills.get(op)
        if skill is None:
            return _envelope_error(op, "NOT_FOUND", f"no op {op!r}; search for one")
        doc: dict[str, Any] = {"op": op, "summary": skill.one_line(), "kind": skill.kind.value}
        if detail != "summary":
            doc["description"] = skill.description
            doc["params"] = skill.input_schema()
        if detail == "full":
            doc["examples"] = [e.model_dump() for e in skill.examples]
            doc["notes"] = list(skill.notes)
            doc["policy"] = skill.policy.model_dump() if skill.policy else None
        return doc

    async def execute(
        self, ctx: SkillContext, op: str, args: dict[str, Any], *, dry_run: bool = False
    ) -> dict[str, Any]:
        skill = self.skills.get(op)
        if skill is None:
            return _envelope_error(op, "NOT_FOUND", f"no op {op!r}; search for one")
        if skill.kind is OpKind.WRITE and not ctx.can_write:
            return _envelope_error(op, "PERMISSION_DENIED", f"{op!r} writes; this caller reads")
        try:
            params = skill.params.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'args'}: {e['msg']}"
                for e in exc.errors(include_input=False)
            )
            return _envelope_error(op, "VALIDATION_ERROR", problems)
        if dry_run:
            return {"op": op, "ok": True, "dry_run": True, "result": params.model_dump()}
        try:
            outcome = await skill.handler(ctx, params)
        except SylkError as exc:
            return _envelope_error(op, type(exc).__name__, str(exc))
        if not isinstance(outcome, SkillResult):
            outcome = SkillResult(result=outcome)
        guidance = [*skill.guidance, *outcome.guidance]
        return {
            "op": op,
            "ok": True,
            "result": outcome.result,
            "guidance": [g.model_dump() for g in guidance],
            "warnings": outcome.warnings,
        }

    async def batch(self, ctx: SkillContext, calls: list[dict[str, Any]]) -> dict[str, Any]:
        results = [
            await self.execute(
                ctx,
                str(call["op"]),
                dict(call.get("args") or {}),
                dry_run=bool(call.get("dry_run")),
            )
            for call in calls
        ]
        return {"ok": all(r["ok"] for r in results), "results": results}


class _NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TranscriptParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session: str = Field(min_length=1, description="session id, or a unique prefix of it")
    limit: int | None = Field(default=None, ge=1, description="only the last N messages")


def session_skills(archive: Archive) -> list[Skill]:
    """``sessions.list`` and ``sessions.transcript``, read fresh from the archive."""

    async def list_sessions(_ctx: SkillContext, _params: _NoParams) -> SkillResult:
        counts = await asyncio.to_thread(archive.transcript_counts)
        sessions = await asyncio.to_thread(archive.load_sessions)
        rows = [session_summary(s, counts.get(s.id, 0)) for s in sessions]
        return SkillResult(result={"sessions": rows})

    async def transcript(_ctx: SkillContext, params: TranscriptParams) -> SkillResult:
        sessions = await asyncio.to_thread(archive.load_sessions)
        matches = [s for s in sessions if s.id.startswith(params.session)]
        if len(matches) != 1:
            found = "no session matches" if not matches else f"{len(matches)} sessions match"
            raise SylkError(f"{found} {params.session!r}", help_hint="run sessions.list")
        messages = await archive.aload_transcript(matches[0].id, limit=params.limit)
        return SkillResult(result={"messages": [m.model_dump(mode="json") for m in messages]})

    return [
        Skill(
            op="sessions.list",
            agent="archivalist",
            description="List every Sylk session with its state, workspace and message count.",
            params=_NoParams,
            handler=list_sessions,
            tags=("sessions", "history"),
        ),
        Skill(
            op="sessions.transcript",
            agent="archivalist",
            description="Read the messages of one session, oldest first.",
            params=TranscriptParams,
            handler=transcript,
            tags=("sessions", "history", "transcript"),
        ),
    ]
