"""The agent loop every role shares.

Build the prompt (pre-prompt hooks may amend it), call the model through the
retrying client, run the tool calls it asks for, feed the results back, and
stop on a final answer, the step limit, an interrupted stream, an error or a
cancellation. Each step is reported to a sink; the Engine publishes those as
events and commits them to the archive.

The outcome carries the turn's tool calls as :class:`~backend.agents.tool_actions.ToolAction`
records (op, key argument, result, diff, exit code, output tail), stored with the
answer so every front end can show them. A running command's output is relayed as
``tool_output`` steps (coalesced, see ``command_output``). An answer the user stopped
ends with ``(stopped)``; one the model cut at its output limit with ``(truncated)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from backend.agents.command_output import OutputRelay
from backend.agents.tool_actions import (
    ToolAction,
    add_output,
    begin_action,
    finish_action,
    stopped,
)
from backend.agents.tools import ToolExecutor, ToolOutcome
from backend.events import AgentStep, StepKind
from backend.llm.errors import ProviderError
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ChatResult,
    RetryScheduled,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolResultBlock,
    Usage,
)
from backend.messages import new_id

EventCallback = Callable[[StreamEvent], Awaitable[None] | None]
StopKind = Literal["final", "truncated", "interrupted", "step_limit", "cancelled", "error"]
STOPPED_MARK = "(stopped)"
TRUNCATED_MARK = "(truncated)"


class ChatClient(Protocol):
    async def run(
        self, request: ChatRequest, on_event: EventCallback | None = None
    ) -> ChatResult: ...


StepSink = Callable[[AgentStep], Awaitable[None]]
PrePromptHook = Callable[[ChatRequest], ChatRequest]
PostPromptHook = Callable[[ChatRequest, ChatResult], None]


class AgentOutcome(BaseModel):
    turn_id: str
    stop: StopKind
    text: str = ""
    usage: Usage = Field(default_factory=Usage)
    steps: int = 0
    error: str | None = None
    actions: list[ToolAction] = Field(default_factory=list)


class AgentLoop:
    def __init__(
        self,
        *,
        role: str,
        client: ChatClient,
        provider_name: str,
        options: ChatOptions,
        system: str | None = None,
        tools: ToolExecutor | None = None,
        max_steps: int = 8,
        pre_prompt_hooks: list[PrePromptHook] | None = None,
        post_prompt_hooks: list[PostPromptHook] | None = None,
    ) -> None:
        self.role = role
        self.client = client
        self.provider_name = provider_name
        self.options = options
        self.system = system
        self.tools = tools
        self.max_steps = max_steps
        self.pre_prompt_hooks = list(pre_prompt_hooks or [])
        self.post_prompt_hooks = list(post_prompt_hooks or [])

    def _request(self, messages: list[ChatMessage]) -> ChatRequest:
        request = ChatRequest(
            system=self.system,
            messages=list(messages),
            tools=self.tools.specs() if self.tools else [],
            options=self.options,
        )
        for hook in self.pre_prompt_hooks:
            request = hook(request)
        return request

    async def run(
        self, session_id: str, history: list[ChatMessage], sink: StepSink
    ) -> AgentOutcome:
        turn_id = new_id()
        state = _TurnState(turn_id, session_id, self.role, sink)
        messages = list(history)
        try:
            for _ in range(self.max_steps):
                state.step += 1
                await state.emit("model_call", model=self.options.model)
                request = self._request(messages)
                result = await self.client.run(request, state.on_event)
                for hook in self.post_prompt_hooks:
                    hook(request, result)
                state.usage = state.usage + result.usage
                await state.emit(
                    "usage",
                    provider=self.provider_name,
                    model=result.model,
                    usage=result.usage.model_dump(),
                    attempts=result.attempts,
                )
                state.add_text(result.text)
                if result.interrupted:
                    await state.emit("interrupted", text=result.text, error=result.error)
                    return state.outcome("interrupted", error=result.error)
                if result.stop_reason == "max_tokens":
                    # Cut at the output limit: a tool call may be cut too, so none runs.
                    return await state.end("truncated")
                messages.append(result.as_message())
                if not result.tool_calls:
                    await state.emit("final", text=state.text)
                    return state.outcome("final")
                messages.append(await self._run_tools(result.tool_calls, state))
            await state.emit("step_limit", limit=self.max_steps)
            return state.outcome("step_limit", error=f"stopped after {self.max_steps} steps")
        except asyncio.CancelledError:
            return await state.end("cancelled")
        except ProviderError as exc:
            await state.emit("error", error=str(exc), error_type=type(exc).__name__)
            return state.outcome("error", error=str(exc))

    async def _run_tools(self, calls: list[ToolCall], state: _TurnState) -> ChatMessage:
        results: list[ToolResultBlock] = []
        for call in calls:
            await state.emit("tool_call", id=call.id, name=call.name, arguments=call.arguments)
            state.begin(call)
            outcome = await self._run_tool(call, state)
            state.finish(call.id, outcome)
            await state.emit(
                "tool_result", id=call.id, name=call.name, content=outcome.content,
                is_error=outcome.is_error,
            )  # fmt: skip
            results.append(
                ToolResultBlock(
                    tool_call_id=call.id, content=outcome.content, is_error=outcome.is_error
                )
            )
        return ChatMessage(role="user", content=list(results))

    async def _run_tool(self, call: ToolCall, state: _TurnState) -> ToolOutcome:
        if self.tools is None:
            return ToolOutcome(content=f"no tools are available to {self.role}", is_error=True)

        async def relay_batch(batch: dict[str, Any]) -> None:
            state.output(call.id, batch["text"])  # a stopped command keeps what it printed
            await state.emit("tool_output", id=call.id, **batch)

        relay = OutputRelay(relay_batch)
        try:
            outcome = await self.tools.execute(call, on_output=relay)
        except BaseException:
            relay.discard()
            raise
        await relay.aclose()  # every batch of output is out before the result
        return outcome


class _TurnState:
    def __init__(self, turn_id: str, session_id: str, role: str, sink: StepSink) -> None:
        self.turn_id = turn_id
        self.session_id = session_id
        self.role = role
        self.sink = sink
        self.step = 0
        self.usage = Usage()
        self._texts: list[str] = []
        self._live = ""  # text streamed in the current step, for cancellation
        self._actions: dict[str, ToolAction] = {}  # by call id, in call order

    @property
    def text(self) -> str:
        parts = [*self._texts, self._live] if self._live else self._texts
        return "\n\n".join(p for p in parts if p)

    async def end(self, stop: StopKind) -> AgentOutcome:
        """End the turn with a step named for ``stop`` carrying the answer as stored."""
        outcome = self.outcome(stop)
        await self.emit(stop, text=outcome.text)
        return outcome

    def begin(self, call: ToolCall) -> None:
        self._actions[call.id] = begin_action(call.id, call.name, call.arguments, len(self.text))

    def output(self, call_id: str, text: str) -> None:
        self._actions[call_id] = add_output(self._actions[call_id], text)

    def finish(self, call_id: str, outcome: ToolOutcome) -> None:
        self._actions[call_id] = finish_action(
            self._actions[call_id], outcome.content, outcome.is_error
        )

    def add_text(self, text: str) -> None:
        self._live = ""
        if text:
            self._texts.append(text)

    async def emit(self, kind: StepKind, **data: Any) -> None:
        await self.sink(
            AgentStep(
                turn_id=self.turn_id,
                session_id=self.session_id,
                role=self.role,
                step=self.step,
                kind=kind,
                data=data,
            )
        )

    async def on_event(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._live += event.text
            await self.emit("text_delta", text=event.text)
        elif isinstance(event, RetryScheduled):
            await self.emit(
                "retry", attempt=event.attempt, delay_s=event.delay_s, error=event.error
            )

    def outcome(self, stop: StopKind, error: str | None = None) -> AgentOutcome:
        mark = {"cancelled": STOPPED_MARK, "truncated": TRUNCATED_MARK}.get(stop)
        text = self.text
        if mark is not None and (text or stop == "truncated"):
            text = f"{text}\n\n{mark}".lstrip()
        return AgentOutcome(
            turn_id=self.turn_id,
            stop=stop,
            text=text,
            usage=self.usage,
            steps=self.step,
            error=error,
            actions=[stopped(a) for a in self._actions.values()],
        )
