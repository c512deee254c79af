"""The Guide's skills and the ``session.*`` ops, wired to callables the engine supplies.

The Guide's router, status and the session manager exist elsewhere in Sylk
(``backend/guide``, ``backend/sessions``, ``backend/engine``); this module
does not import them. The engine passes callables in :class:`GuideWiring`; an
op whose callable is missing fails honestly (not wired), never with made-up data.
``guide.help.show`` is served here, from the registry itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from backend.skills.builtin.declare import (
    CONTEXTUAL,
    CORE,
    WRITE,
    AnyCallable,
    Params,
    SessionScoped,
    TextParams,
    Unbuilt,
    calling,
    declare,
)
from backend.skills.models import Handler, Skill, SkillContext, SkillTier
from backend.skills.registry import Registry

AGENT = "guide"
UNWIRED = "which the engine has not wired into the skill registry yet"


@dataclass(frozen=True)
class GuideWiring:
    """Engine callables (sync or async) behind the Guide and session ops."""

    route: AnyCallable | None = None  # (input, target) -> decision
    classify: AnyCallable | None = None  # (input) -> classification
    status: AnyCallable | None = None  # () -> status
    broadcast: AnyCallable | None = None  # (message, agents) -> delivery report
    list_sessions: AnyCallable | None = None  # (include_closed) -> sessions
    switch_session: AnyCallable | None = None  # (ref) -> session
    session_context: AnyCallable | None = None  # (session_id) -> context
    task: AnyCallable | None = None  # (pipeline_id, action, message) -> pipeline reply


class TaskParams(Params):
    pipeline_id: str = Field(min_length=1, description="pipeline id or its number")
    action: Literal[
        "prompt", "query", "interrupt", "ignore_inspector", "ignore_tester", "handoff",
        "handoff_stop",
    ]  # fmt: skip
    message: str | None = Field(default=None, description="for prompt and query")


class RouteParams(Params):
    input: str = Field(min_length=1, description="the message to route")
    target: str | None = Field(default=None, description="explicit target agent")
    intent: Literal["recall", "store", "check", "declare", "complete"] | None = None


class HelpParams(Params):
    topic: str | None = Field(default=None, description="an agent or domain name")


class BroadcastParams(Params):
    message: str = Field(min_length=1)
    agents: list[str] = Field(default_factory=list, description="empty: every agent")


class ListSessionsParams(Params):
    include_closed: bool = False


class SwitchParams(Params):
    ref: str = Field(min_length=1, description="session id, id prefix, name or index")


def _wired(fn: AnyCallable | None, provider: str, *fields: str) -> Handler | Unbuilt:
    if fn is None:
        return Unbuilt(provider, UNWIRED)
    return calling(fn, *fields)


def _help(registry: Registry) -> Handler:
    async def show(ctx: SkillContext, p: HelpParams) -> dict[str, Any]:
        skills = list(registry)
        if p.topic:
            skills = [s for s in skills if p.topic in (s.agent, s.domain)]
            return {
                "topic": p.topic,
                "ops": [{"op": s.op, "summary": s.one_line(), "tier": s.tier.value}
                        for s in skills if s.searchable],
            }  # fmt: skip
        agents: dict[str, list[str]] = {}
        for skill in skills:
            if skill.tier is SkillTier.CORE:
                agents.setdefault(skill.agent, []).append(skill.op)
        return {
            "agents": agents,
            "how": "search(query) finds any op; describe(op) explains it; execute(op, args) "
            "runs it",
        }

    return show


def guide_skills(registry: Registry, wiring: GuideWiring | None = None) -> list[Skill]:
    w = wiring or GuideWiring()
    router = "the Guide router (backend/guide)"
    sessions = "the engine's session manager (backend/sessions)"
    return [
        declare(
            "guide.help.show", AGENT,
            "Provide help about available agents, commands and ops.",
            HelpParams, _help(registry), tier=CORE, entry_point=True,
            tags=("help", "commands", "agents", "what can", "how"),
            examples=[("what can the agents do", {}), ("ops of the librarian",
                                                      {"topic": "librarian"})],
        ),
        declare(
            "guide.route.message", AGENT, "Route a message to the appropriate agent.",
            RouteParams, _wired(w.route, router, "input", "target"),
            tier=CORE, tags=("route", "send", "forward", "dispatch"),
            examples=[("route a codebase question", {"input": "where is the auth middleware?"})],
        ),
        declare(
            "guide.intent.classify", AGENT, "Classify user intent without routing.",
            TextParams, _wired(w.classify, router, "text"),
            tier=CORE, tags=("classify", "intent", "analyze", "understand"),
            examples=[("classify a request", {"text": "what did we decide about caching?"})],
        ),
        declare(
            "guide.system.status", AGENT,
            "Get current system status: sessions, model, token use, routing, agents' health.",
            SessionScoped,
            _wired(w.status, "the engine status report", "session_id"),
            tier=CORE, tags=("status", "health", "agents", "system"),
            examples=[("system status", {})],
        ),
        declare(
            "guide.message.broadcast", AGENT, "Broadcast a message to several agents.",
            BroadcastParams,
            _wired(w.broadcast, "the Guide bus", "message", "agents"),
            tier=CONTEXTUAL, kind=WRITE,
            triggers=(r"\bbroadcast", r"\bnotify", r"\bannounce"),
            tags=("broadcast", "notify all", "announce"),
            examples=[("tell every agent to pause", {"message": "pause work"})],
        ),
        declare(
            "guide.task.interact", AGENT,
            "Send a message to a running pipeline's engineer (prompt, query), pause it "
            "(interrupt) or skip its inspector or tester loop, as /task does.",
            TaskParams,
            _wired(w.task, "the pipeline manager (backend/pipelines)",
                   "pipeline_id", "action", "message"),
            tier=CONTEXTUAL, kind=WRITE, triggers=(r"/task\b", r"\bpipeline"),
            tags=("task", "pipeline", "steer", "interrupt"),
            examples=[("tell pipeline 1 to focus on errors",
                       {"pipeline_id": "1", "action": "prompt",
                        "message": "Focus on error handling first"})],
        ),
        declare(
            "session.list", AGENT, "List all available sessions with their state.",
            ListSessionsParams,
            _wired(w.list_sessions, sessions, "include_closed"),
            tier=CONTEXTUAL, triggers=(r"\bsessions?\b", r"\blist\b"), entry_point=True,
            tags=("sessions", "list", "show sessions"),
            examples=[("list sessions", {}), ("include closed ones", {"include_closed": True})],
        ),
        declare(
            "session.switch", AGENT, "Switch the foreground to a different session.",
            SwitchParams, _wired(w.switch_session, sessions, "ref"),
            tier=CONTEXTUAL, kind=WRITE,
            triggers=(r"\bswitch\b", r"\bsession\b", r"change context"),
            tags=("switch", "session", "change context"),
            examples=[("switch to session 2", {"ref": "2"})],
        ),
        declare(
            "session.context.get", AGENT,
            "Get your session's private context: task, steps, files touched, blockers.",
            SessionScoped,
            _wired(w.session_context, sessions, "session_id"),
            tags=("session", "context", "state", "files", "progress"),
            examples=[("my session's context", {})],
            notes=("session_id defaults to your own; other sessions are refused",),
        ),
    ]  # fmt: skip
