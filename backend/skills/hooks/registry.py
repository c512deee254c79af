"""Hooks around model calls and tool calls, run in priority order per agent.

Four kinds: pre/post prompt (synchronous, because the agent loop's hooks are
plain callables) and pre/post tool (sync or async). An agent's pre-prompt hooks
run once, at the start of its turn (:meth:`HookRegistry.context_hook`): what they
add to ``PromptData.context`` (the session's brief, notes broadcast to the agent)
travels as the turn's context block on its request message. They never change the
system prompt or the tools, which stay byte-identical across an agent's requests
so the provider's prompt cache hits. Priorities follow the seed: first=0,
early=25, normal=50, late=75, last=100; equal priorities run in registration
order. A hook registered with ``agents=None`` runs for every agent.

A pre-tool hook may rewrite ``data.args`` / ``data.params`` or reject the call
by raising :class:`Rejection` (the gateway then returns ACCESS_DENIED or
VALIDATION_ERROR and the handler never runs). Post-tool hooks see the result
or the error and may add ``data.warnings`` or ``data.annotations``.
The seed's concrete hooks live in :mod:`backend.skills.hooks.builtin`.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any

from pydantic import BaseModel

from backend.llm.types import ChatRequest, TextBlock
from backend.skills.envelopes import ErrorCode, ErrorInfo, FieldError, SkillError
from backend.skills.models import Skill, SkillContext, SkillResult


class HookPriority(IntEnum):
    FIRST = 0
    EARLY = 25
    NORMAL = 50
    LATE = 75
    LAST = 100


class HookKind(StrEnum):
    PRE_PROMPT = "pre_prompt"
    POST_PROMPT = "post_prompt"
    PRE_TOOL = "pre_tool"
    POST_TOOL = "post_tool"


class Rejection(SkillError):
    """Raised by a pre-tool hook to stop a call before its handler runs."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        field_errors: list[FieldError] | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        merged = dict(details or {})
        if field_errors:
            merged["field_errors"] = [e.model_dump() for e in field_errors]
        super().__init__(code, message, details=merged)


@dataclass
class PromptData:
    """What prompt hooks see: the request, and for post hooks the result."""

    agent: str
    session_id: str
    request: ChatRequest
    skip_llm: bool = False  # set by e.g. a cache hit; the caller decides what to do
    cached_result: Any = None
    result: Any = None  # post-prompt: whatever the model call produced
    extra: dict[str, Any] = field(default_factory=dict)
    # Pre-prompt: sections of the turn's context block (dynamic, so never the system).
    context: list[str] = field(default_factory=list)

    @property
    def input(self) -> str:
        """The text of the last user message that carries text (not tool results)."""
        for message in reversed(self.request.messages):
            if message.role == "user" and any(isinstance(b, TextBlock) for b in message.content):
                return message.text
        return ""


@dataclass
class ToolCallData:
    """What tool hooks see. ``params`` is set once the args validated."""

    skill: Skill
    ctx: SkillContext
    args: dict[str, Any]
    dry_run: bool = False
    params: BaseModel | None = None
    result: SkillResult | None = None  # post-tool, on success
    error: ErrorInfo | None = None  # post-tool, on failure
    latency_ms: float = 0.0
    warnings: list[str] = field(default_factory=list)
    annotations: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


# The annotation an approval gate leaves on a call; the gateway moves it to meta.approval.
APPROVAL_NOTE = "approval"

PromptHookFn = Callable[[PromptData], PromptData | None]
ToolHookFn = Callable[[ToolCallData], ToolCallData | Awaitable[ToolCallData | None] | None]


@dataclass(frozen=True)
class Hook:
    name: str
    kind: HookKind
    fn: Callable[..., Any]
    priority: int = HookPriority.NORMAL
    agents: frozenset[str] | None = None  # None: every agent
    seq: int = 0

    def applies_to(self, agent: str) -> bool:
        return self.agents is None or agent in self.agents


class HookRegistry:
    def __init__(self) -> None:
        self._hooks: dict[str, Hook] = {}
        self._seq = itertools.count()

    def add(
        self,
        kind: HookKind,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        priority: int = HookPriority.NORMAL,
        agents: Iterable[str] | None = None,
    ) -> Hook:
        hook = Hook(
            name=name or str(getattr(fn, "__name__", "hook")),
            kind=kind,
            fn=fn,
            priority=int(priority),
            agents=frozenset(agents) if agents is not None else None,
            seq=next(self._seq),
        )
        if hook.name in self._hooks:
            raise ValueError(f"a hook named {hook.name!r} is already registered")
        self._hooks[hook.name] = hook
        return hook

    def install(self, hook: Hook) -> Hook:
        """Add a prepared hook (from :mod:`hooks_builtin`) unless one of its name exists."""
        if hook.name not in self._hooks:
            self._hooks[hook.name] = Hook(
                hook.name, hook.kind, hook.fn, hook.priority, hook.agents, next(self._seq)
            )
        return self._hooks[hook.name]

    def remove(self, name: str) -> bool:
        return self._hooks.pop(name, None) is not None

    def __contains__(self, name: object) -> bool:
        return name in self._hooks

    def for_agent(self, kind: HookKind, agent: str) -> list[Hook]:
        hooks = [h for h in self._hooks.values() if h.kind is kind and h.applies_to(agent)]
        return sorted(hooks, key=lambda h: (h.priority, h.seq))

    # -- running ------------------------------------------------------------------------
    def run_prompt(self, kind: HookKind, data: PromptData) -> PromptData:
        for hook in self.for_agent(kind, data.agent):
            data = hook.fn(data) or data
        return data

    def run_pre_prompt(self, data: PromptData) -> PromptData:
        return self.run_prompt(HookKind.PRE_PROMPT, data)

    def run_post_prompt(self, data: PromptData) -> PromptData:
        return self.run_prompt(HookKind.POST_PROMPT, data)

    async def run_tool(self, kind: HookKind, data: ToolCallData) -> ToolCallData:
        """Run tool hooks in order; a :class:`Rejection` from a pre hook propagates."""
        for hook in self.for_agent(kind, data.ctx.agent):
            out = hook.fn(data)
            if inspect.isawaitable(out):
                out = await out
            data = out or data
        return data

    async def run_pre_tool(self, data: ToolCallData) -> ToolCallData:
        return await self.run_tool(HookKind.PRE_TOOL, data)

    async def run_post_tool(self, data: ToolCallData) -> ToolCallData:
        """Post hooks observe; one failing is recorded as a warning, never raised."""
        for hook in self.for_agent(HookKind.POST_TOOL, data.ctx.agent):
            try:
                out = hook.fn(data)
                if inspect.isawaitable(out):
                    out = await out
                data = out or data
            except Exception as exc:
                data.warnings.append(f"post-tool hook {hook.name} failed: {exc}")
        return data

    def context_hook(self, agent: str, session_id: str) -> Callable[[ChatRequest], str]:
        """This agent's pre-prompt hooks as the agent loop's turn-context hook: the
        sections they add to ``PromptData.context``, joined, for the turn's request."""

        def run(request: ChatRequest) -> str:
            data = self.run_pre_prompt(PromptData(agent, session_id, request))
            return "\n\n".join(section for section in data.context if section)

        return run

    def post_loop_hook(self, agent: str, session_id: str) -> Callable[[ChatRequest, Any], None]:
        """Adapt this agent's post-prompt hooks: they see the request and the model's result."""

        def run(request: ChatRequest, result: Any) -> None:
            self.run_post_prompt(PromptData(agent, session_id, request, result=result))

        return run
