"""The gateway as the agent loop's :class:`~backend.agents.tools.ToolExecutor`.

Tool budget. A model never sees more than six tools: the four gateway verbs
(``search``, ``describe``, ``execute``, ``batch``) plus ``op_slots`` (at most
2) of the agent's CORE ops as direct tools, in registration order (the builtin
registrations list each agent's most-used core op first). Only ops the caller
may run and that are actually available are pinned (a skill with
``available=False`` never is).

A stable prefix. The tool list is the first thing a provider's prompt cache keys
on, so it never moves with the conversation: the same agent in the same session
gets byte-identical tools on every request of a turn and on every turn (schemas
serialised with sorted keys). Contextual and specialised ops the tracker loads as
the conversation moves are not pinned; :meth:`GatewayToolExecutor.context_note`
names them (and the core ops without a slot) in the turn's context block, which
travels on the turn's request message, after the cached prefix. Each is one
``execute`` away.

Tool names. An op becomes a tool named with ``.`` replaced by ``__``
(``engineer.file.read`` -> ``engineer__file__read``), which matches
``^[A-Za-z0-9_-]{1,64}$``; a longer name is cut and given a hash suffix.
Direct op tools for write ops accept two extra optional arguments,
``dry_run`` and ``idempotency_key``, which are taken off before validation.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend.agents.tools import OutputSink, ToolOutcome
from backend.llm.types import ChatRequest, TextBlock, ToolCall, ToolSpec
from backend.skills.call_flags import COMMAND_OUTPUT_KEY
from backend.skills.envelopes import Envelope, ErrorCode, failure, new_trace_id
from backend.skills.gateway.gateway import Gateway
from backend.skills.gateway.verbs import (
    CHAIN_HELP,
    MAX_BATCH,
    DescribeArgs,
    ExecuteArgs,
    SearchArgs,
    call_verb,
)
from backend.skills.hooks.builtin import field_errors
from backend.skills.models import OpKind, Skill, SkillContext, SkillTier

MAX_INITIAL_TOOLS = 6
VERBS = ("search", "describe", "execute", "batch")
_INVALID = re.compile(r"[^A-Za-z0-9_-]")
_RESERVED = ("dry_run", "idempotency_key")


def tool_name(op: str) -> str:
    name = _INVALID.sub("_", op.replace(".", "__"))
    if len(name) <= 64:
        return name
    digest = hashlib.sha1(op.encode()).hexdigest()[:8]
    return f"{name[:55]}_{digest}"


class _Batch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    calls: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_BATCH,
        description="items: {verb: 'search'|'describe'|'execute', op?, args?, dry_run?, "
        "idempotency_key?, level?, query?, domain?, limit?}",
    )
    chain: bool = Field(default=False, description=CHAIN_HELP)


_VERB_SPECS: dict[str, tuple[type[BaseModel], str]] = {
    "search": (SearchArgs, "Find ops by meaning. Returns ranked ops with one-line summaries."),
    "describe": (
        DescribeArgs,
        "Help for an op (level summary|schema|full) or, for a prefix, every op in that group.",
    ),
    "execute": (
        ExecuteArgs,
        "Run an op with args. Returns {ok, result, guidance, meta} or {ok:false, error}. "
        "Guidance names the next ops to use.",
    ),
    "batch": (
        _Batch,
        "Several search/describe/execute calls: at once (default), or in order as a chain "
        "where a step may use an earlier step's result and the first error stops it.",
    ),
}


class GatewayToolExecutor:
    def __init__(
        self,
        gateway: Gateway,
        ctx: SkillContext,
        agent: str | None = None,
        *,
        op_slots: int = MAX_INITIAL_TOOLS - len(VERBS),
    ) -> None:
        if agent is not None and agent != ctx.agent:
            ctx = dataclasses.replace(ctx, agent=agent)
        self.gateway = gateway
        self.ctx = ctx
        self.agent = ctx.agent
        self.op_slots = max(0, min(op_slots, MAX_INITIAL_TOOLS - len(VERBS)))
        self._turns_seen = 0

    # -- what the model sees ------------------------------------------------------------
    def _pinnable(self, op: str) -> bool:
        skill = self.gateway.registry.get(op)
        return skill is not None and skill.available and self.gateway.registry.allowed(op, self.ctx)

    def core_ops(self) -> list[str]:
        """The agent's available CORE ops the caller may run, in registration order."""
        registry = self.gateway.registry
        return [
            s.op
            for s in registry.list(agent=self.agent, tier=SkillTier.CORE)
            if self._pinnable(s.op)
        ]

    def loaded_ops(self) -> list[str]:
        """Loaded contextual/specialised ops the caller may run, most recently used first."""
        tracker = self.gateway.tracker
        if tracker is None:
            return []
        ops = reversed(tracker.loaded(self.ctx.session_id, self.agent))
        return [op for op in ops if self._pinnable(op)]

    def pinned_ops(self) -> list[str]:
        """The ops offered as direct tools: the first ``op_slots`` core ops, never loaded ones
        (a tool list that followed the conversation would miss the provider's cache)."""
        return self.core_ops()[: self.op_slots]

    def unpinned_note(self) -> str:
        """One line naming the ready ops that got no tool slot (loaded first), or ""."""
        pinned = set(self.pinned_ops())
        ready = dict.fromkeys([*self.loaded_ops(), *self.core_ops()])
        rest = [op for op in ready if op not in pinned]
        if not rest:
            return ""
        return "Also ready through `execute`: " + ", ".join(f"`{op}`" for op in rest) + "."

    def _op_tools(self) -> dict[str, str]:
        return {tool_name(op): op for op in self.pinned_ops()}

    def specs(self) -> list[ToolSpec]:
        specs = list(_verb_specs())
        for name, op in self._op_tools().items():
            skill = self.gateway.registry.require(op)
            specs.append(
                ToolSpec(name=name, description=_describe(skill), input_schema=_schema(skill))
            )
        return specs

    # -- conversation -------------------------------------------------------------------
    def observe(self, text: str) -> tuple[set[str], set[str]]:
        """One conversation turn: load/unload contextual ops; (loaded, unloaded)."""
        if self.gateway.tracker is None:
            return set(), set()
        return self.gateway.tracker.observe(self.ctx.session_id, self.agent, text)

    def _observe_new_turns(self, request: ChatRequest) -> None:
        turns = [
            m.text
            for m in request.messages
            if m.role == "user" and any(isinstance(b, TextBlock) for b in m.content)
        ]
        if len(turns) < self._turns_seen:  # history was trimmed: the last turn is new
            self._turns_seen = max(0, len(turns) - 1)
        for text in turns[self._turns_seen :]:
            self.observe(text)
        self._turns_seen = len(turns)

    def context_note(self, request: ChatRequest) -> str:
        """A turn-context hook for the agent loop: observe the new user turns (loading the
        ops they call for), then name the ready ops without a tool slot."""
        self._observe_new_turns(request)
        return self.unpinned_note()

    def prompt_hook(self, request: ChatRequest) -> ChatRequest:
        """A pre-prompt hook for the agent loop: observe new user turns; the fixed tools."""
        self._observe_new_turns(request)
        return request.model_copy(update={"tools": self.specs()})

    # -- calls --------------------------------------------------------------------------
    async def execute(self, call: ToolCall, on_output: OutputSink | None = None) -> ToolOutcome:
        ctx = self.ctx
        if on_output is not None:  # this call's commands report their output as they run
            ctx = dataclasses.replace(ctx, extra={**ctx.extra, COMMAND_OUTPUT_KEY: on_output})
        envelope = await self.dispatch(call.name, dict(call.arguments), ctx)
        return ToolOutcome(content=envelope.to_json(), is_error=not envelope.ok)

    async def dispatch(
        self, name: str, arguments: dict[str, Any], ctx: SkillContext | None = None
    ) -> Envelope:
        ctx = ctx or self.ctx
        if name in _VERB_SPECS:
            model = _VERB_SPECS[name][0]
            try:
                parsed = model.model_validate(arguments)
            except ValidationError as exc:
                return failure(
                    name, ErrorCode.VALIDATION_ERROR, f"invalid arguments for {name}",
                    trace_id=self.ctx.trace_id or new_trace_id(), help_path=name,
                    details={"field_errors": [e.model_dump() for e in field_errors(exc)]},
                )  # fmt: skip
            return await self._verb(parsed, ctx)
        op = self._op_tools().get(name)
        if op is None:
            op = (
                name.replace("__", ".")
                if name.replace("__", ".") in self.gateway.registry
                else None
            )
        if op is None:
            known = [*VERBS, *self._op_tools()]
            return failure(
                name, ErrorCode.NOT_FOUND, f"no tool named {name!r}",
                trace_id=self.ctx.trace_id or new_trace_id(), help_path="search",
                suggestions=self.gateway.suggestions(name, self.ctx) or known,
            )  # fmt: skip
        fields = self.gateway.registry.require(op).params.model_fields
        dry_run = None if "dry_run" in fields else arguments.pop("dry_run", None)
        key = None if "idempotency_key" in fields else arguments.pop("idempotency_key", None)
        return await self.gateway.execute(ctx, op, arguments, dry_run=dry_run, idempotency_key=key)

    async def _verb(self, parsed: BaseModel, ctx: SkillContext) -> Envelope:
        if isinstance(parsed, _Batch):
            return await self.gateway.batch(ctx, parsed.calls, chain=parsed.chain)
        if isinstance(parsed, DescribeArgs | ExecuteArgs):
            parsed = parsed.model_copy(update={"op": self._op_name(parsed.op)})
        assert isinstance(parsed, SearchArgs | DescribeArgs | ExecuteArgs)
        return await call_verb(self.gateway, ctx, parsed)

    def _op_name(self, op: str) -> str:
        """Accept a tool-style name (``a__b__c``) where an op name is expected."""
        op = op.strip()
        if op not in self.gateway.registry and "__" in op:
            dotted = op.replace("__", ".")
            if dotted in self.gateway.registry:
                return dotted
        return op


@functools.cache
def _verb_specs() -> tuple[ToolSpec, ...]:
    return tuple(
        ToolSpec(name=verb, description=desc, input_schema=stable_schema(model.model_json_schema()))
        for verb, (model, desc) in _VERB_SPECS.items()
    )


def _describe(skill: Skill) -> str:
    text = skill.description
    if skill.destructive:
        text += " Destructive: runs as a dry run unless dry_run is false."
    return text[:1024]


def stable_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every object's keys sorted, so it serialises to the same bytes
    however it was built (a provider's prompt cache compares bytes)."""
    stable: dict[str, Any] = json.loads(json.dumps(schema, sort_keys=True))
    return stable


def _schema(skill: Skill) -> dict[str, Any]:
    schema = skill.input_schema()
    if skill.kind is OpKind.WRITE:
        props = dict(schema.get("properties", {}))
        if not any(r in props for r in _RESERVED):
            props["dry_run"] = {"type": "boolean", "description": "preview only"}
            props["idempotency_key"] = {"type": "string", "description": "retry-safe writes"}
            schema = {**schema, "properties": props}
    return stable_schema(schema)
