"""Running one agent turn for a session: choose the model, loop, record.

Streamed text and command output are published as they arrive and never stored
piecemeal (the final step and the tool result hold them); every other step, and
each call's token usage and cost, is committed to the archive once (retries
happen inside the client, so they add no rows).
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.agents.gateway_tools import GatewayToolExecutor
from backend.agents.loop import AgentLoop, AgentOutcome
from backend.agents.session_models import effective_choice
from backend.archive.store import Archive
from backend.checkpoints.service import Checkpoints
from backend.checkpoints.task_ledger import TASK_TAG
from backend.clock import utc_now
from backend.config.settings import SylkConfig
from backend.errors import ArchiveWriteError
from backend.events import STREAMED_STEPS, AgentStep, AgentStepEvent, EngineNotice, EventStream
from backend.llm.accounting import cost_usd
from backend.llm.provider import Provider
from backend.llm.selection import ModelChoice, build_provider
from backend.llm.types import (
    DEFAULT_MAX_TOKENS,
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ChatResult,
    Usage,
)
from backend.memory.ledger import ContextLedger
from backend.memory.summaries import SummaryCall
from backend.redaction import Redactor
from backend.sessions.models import Session
from backend.skills.builtin.catalog import agent_context
from backend.skills.call_flags import TURN_KEY
from backend.skills.gateway.gateway import Gateway
from backend.workspace.confinement import Confinement

if TYPE_CHECKING:
    from backend.llm.client import ModelClient

SYSTEM_PROMPTS: dict[str, str] = {
    "architect": (
        "You are the Architect in Sylk, a multi-agent coding assistant. You are the "
        "user's primary interface: answer their questions about the code and plan "
        "changes. Inspect the workspace before you make claims about it: `search` finds "
        "skills (e.g. 'read a file'), `execute` runs one. To plan a change, write the plan "
        "as a task DAG document and submit it with `architect.plan.create` (`plan`); the "
        "user reviews it. Be concise."
    ),
}
DEFAULT_PROMPT = (
    "You are the {role} in Sylk, a multi-agent coding assistant. Your tools are a gateway: "
    "`search` finds skills, `describe` explains one, `execute` runs one, `batch` runs "
    "several. Be concise."
)

log = logging.getLogger("sylk.agents")
# (session id, pipeline id or None) -> None to call the model, else why not (budgets).
BeforeModelCall = Callable[[str, str | None], Awaitable[str | None]]


def session_brief(session: Session) -> str:
    """What an agent is told of its session: where it works and what it is after."""
    ctx = session.context
    lines = [f"Session: {session.name}. Workspace root: {session.workspace}."]
    if ctx.current_objective:
        lines.append(f"Current objective: {ctx.current_objective}.")
    if ctx.blockers:
        lines.append("Blockers: " + "; ".join(ctx.blockers))
    touched = [*ctx.created_files, *ctx.modified_files]
    if touched:
        shown = ", ".join(touched[-8:])
        more = f" (and {len(touched) - 8} more)" if len(touched) > 8 else ""
        lines.append(f"Files changed in this session: {shown}{more}.")
    return "\n".join(lines)


def prompt_cache_key(session_id: str, role: str) -> str:
    """One key per agent in a session (its requests share their prompt prefix), opaque
    so the provider is not told Sylk's ids."""
    return "sylk-" + hashlib.sha256(f"{session_id}:{role}".encode()).hexdigest()[:32]


class TurnRunner:
    def __init__(
        self,
        *,
        settings: SylkConfig,
        archive: Archive,
        events: EventStream,
        redactor: Redactor,
        gateway: Gateway,
        provider_override: str | None = None,
        model_override: str | None = None,
        confine: Callable[[Path], Confinement] = lambda _: Confinement(),
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self.settings = settings
        self._archive = archive
        self._events = events
        self.gateway = gateway
        self._redactor = redactor
        self._provider_override = provider_override
        self._model_override = model_override
        self._confine = confine  # what a session's workspace keeps from its agents
        self._unrecorded_turns: set[str] = set()  # turns told the archive refused a step
        self._checkpoints = checkpoints  # a turn that changes files leaves one
        self._providers: dict[str, Provider] = {}
        self._clients: dict[str, ModelClient] = {}
        self.before_model_call: BeforeModelCall | None = None  # set by the engine
        # Each agent's context per session: its calls' usage, read by the context meter.
        self.context = ContextLedger()

    def choice(self, role: str, session: Session | None = None) -> ModelChoice:
        """The run's flags, else ``session``'s own choice (``/model``), else the config's."""
        return effective_choice(
            self.settings,
            role,
            session,
            run_provider=self._provider_override,
            run_model=self._model_override,
        )

    def client(self, name: str) -> ModelClient:
        # The client (and through it the vendor SDKs) loads on the first model
        # call, so offline use and the session CLI start fast.
        from backend.llm.client import ModelClient
        from backend.llm.resilience import BreakerRegistry, RetryPolicy

        if not self._clients:
            retry = self.settings.retry
            self._policy = RetryPolicy(
                max_attempts=retry.max_attempts,
                base_delay=retry.base_delay_s,
                max_delay=retry.max_delay_s,
            )
            self._breakers = BreakerRegistry(
                threshold=retry.breaker_threshold, cooldown=retry.breaker_cooldown_s
            )
        if name not in self._clients:
            provider = build_provider(self.settings, name)
            self._providers[name] = provider
            self._clients[name] = ModelClient(
                provider, policy=self._policy, breakers=self._breakers
            )
        return self._clients[name]

    def server_profiles(self) -> dict[str, str]:
        """Each OpenAI-compatible provider called so far: the server profile it uses."""
        found: dict[str, str] = {}
        for name, provider in self._providers.items():
            chat = getattr(provider, "chat", provider)  # the Chat/Responses router's Chat side
            profile = getattr(chat, "profile", None)
            if profile is not None:
                how = "detected" if self.settings.provider(name).profile == "auto" else "set"
                found[name] = f"{profile.name} ({how})"
        return found

    def summary_call(self, session_id: str, role: str, choice: ModelChoice) -> SummaryCall | None:
        """One bounded call of ``role``'s model for its checkpoint, its usage recorded like
        a turn's (agent ``role``); None when the role has no model (offline)."""
        if choice.offline:
            return None
        client = self.client(choice.provider)

        async def call(request: ChatRequest) -> ChatResult:
            check = self.before_model_call  # the budget holds a summary call as any other
            if check is not None and (held := await check(session_id, TASK_TAG.get())):
                return ChatResult(provider=choice.provider, model=choice.model, error=held)
            result = await client.run(request)
            row = {
                "session_id": session_id,
                "turn_id": f"memory-{uuid.uuid4().hex[:16]}",
                "agent": role,
                "provider": choice.provider,
                "model": result.model or choice.model,
                **result.usage.model_dump(),
                "cost_usd": cost_usd(self.settings.price(choice.model), result.usage),
                "at": utc_now().isoformat(),
                "pipeline_id": TASK_TAG.get(),
            }
            try:
                await self._archive.arecord_usage([row])
            except ArchiveWriteError as exc:
                log.warning("the usage of a checkpoint call was not recorded: %s", exc)
            return result

        return call

    async def aclose(self) -> None:
        await self.context.aclose()  # checkpoints still being written, before the clients go
        for provider in self._providers.values():
            await provider.aclose()
        self._providers.clear()
        self._clients.clear()

    async def run(
        self, session: Session, role: str, history: list[ChatMessage], choice: ModelChoice
    ) -> AgentOutcome:
        # The model sees the gateway verbs and a couple of the role's core skills
        # (six tools at most) and reaches every other skill through them.
        stage = self.gateway.index.embedding
        if stage is not None:
            stage.start_warming()  # ready by the time the model first searches, mostly
        workspace = Path(session.workspace)
        context = agent_context(
            role,
            session.id,
            workspace,
            confinement=self._confine(workspace),
            extra={TURN_KEY: uuid.uuid4().hex},  # the turn's calls share it (call_flags)
        )
        tools = GatewayToolExecutor(self.gateway, context, agent=role)
        loop = AgentLoop(
            role=role,
            client=self.client(choice.provider),
            provider_name=choice.provider,
            options=ChatOptions(
                model=choice.model,
                deadline_s=self.settings.retry.deadline_s,
                cache_key=prompt_cache_key(session.id, role),
                max_tokens=choice.max_tokens or DEFAULT_MAX_TOKENS,
            ),
            system=SYSTEM_PROMPTS.get(role, DEFAULT_PROMPT.format(role=role)),
            tools=tools,
            # The system prompt and the tools are the same bytes on every request of the
            # role, so the provider's prefix cache hits; what changes (the session brief
            # from the registry's pre-prompt hooks, broadcast notes, the ops the
            # conversation loaded) is the turn's context block, on its request message.
            context_hooks=[self.gateway.hooks.context_hook(role, session.id), tools.context_note],
            pre_prompt_hooks=[tools.prompt_hook],
            post_prompt_hooks=[self.gateway.hooks.post_loop_hook(role, session.id)],
            before_call=(
                partial(self.before_model_call, session.id, TASK_TAG.get())
                if self.before_model_call is not None
                else None
            ),
        )
        if self._checkpoints is None or not context.can_write:
            return await loop.run(session.id, history, self._record)
        async with self._checkpoints.turn(session.id, role, workspace) as checkpoint:
            outcome = await loop.run(session.id, history, self._record)
            checkpoint.turn_id = outcome.turn_id
        return outcome

    async def _record(self, step: AgentStep) -> None:
        step = step.model_copy(update={"data": self._redactor.data(step.data)})
        if step.kind == "usage":  # the newest count of what the agent's window holds
            usage = Usage.model_validate(step.data["usage"])
            self.context.note_usage(step.session_id, step.role, usage)
        if step.kind not in STREAMED_STEPS:
            now = utc_now().isoformat()
            try:
                await self._archive.arecord_steps([_step_row(step, now)])
                if step.kind == "usage":
                    await self._archive.arecord_usage([self._usage_row(step, now)])
            except ArchiveWriteError as exc:
                # A full disk or read-only archive does not stop the turn half-way (its
                # edits would be done and its answer lost): the turn finishes, and storing
                # its answer then fails the same way, so the front end says it was not saved.
                self._unrecorded(step, exc)
        self._events.publish(AgentStepEvent(session_id=step.session_id, step=step))

    def _unrecorded(self, step: AgentStep, exc: ArchiveWriteError) -> None:
        if step.turn_id in self._unrecorded_turns:
            return
        self._unrecorded_turns.add(step.turn_id)
        log.warning("steps of turn %s not recorded: %s", step.turn_id, exc)
        text = f"The {step.role}'s steps are not being saved: {exc}"
        self._events.publish(EngineNotice(session_id=step.session_id, level="error", text=text))

    def _usage_row(self, step: AgentStep, at: str) -> dict[str, Any]:
        usage = Usage.model_validate(step.data["usage"])
        model = str(step.data["model"])
        return {
            "session_id": step.session_id,
            "turn_id": step.turn_id,
            "agent": step.role,
            "provider": str(step.data["provider"]),
            "model": model,
            **usage.model_dump(),
            "cost_usd": cost_usd(self.settings.price(model), usage),
            "at": at,
            "pipeline_id": TASK_TAG.get(),  # the plan task's pipeline the call worked for
        }


def _step_row(step: AgentStep, at: str) -> dict[str, Any]:
    return {
        "session_id": step.session_id,
        "turn_id": step.turn_id,
        "role": step.role,
        "step": step.step,
        "kind": step.kind,
        "at": at,
        "data": step.model_dump_json(include={"data"}),
    }
