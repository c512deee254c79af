"""The agent loop every role shares.

Build the prompt (pre-prompt hooks may amend it), call the model through the
retrying client, run the tool calls it asks for, feed the results back, and
stop on a final answer, the step limit, an interrupted stream, an error or a
cancellation. Each step is reported to a sink; the Engine publishes those as
events and commits them to the archive.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

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
StopKind = Literal["final", "interrupted", "step_limit", "cancelled", "error"]


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
                messages.append(result.as_message())
                if not result.tool_calls:
                    await state.emit("final", text=state.text)
                    return state.outcome("final")
                messages.append(await self._run_tools(result.tool_calls, state))
            await state.emit("step_limit", limit=self.max_steps)
            return state.outcome("step_limit", error=f"stopped after {self.max_steps} steps")
        except asyncio.CancelledError:
            await state.emit("cancelled", text=state.text)
            return state.outcome("cancelled")
        except ProviderError as exc:
            await state.emit("error", error=str(exc), error_type=type(exc).__name__)
            return state.outcome("error", error=str(exc))

    async def _run_tools(self, calls: list[ToolCall], state: _TurnState) -> ChatMessage:
        results: list[ToolResultBlock] = []
        for call in calls:
            await state.emit("tool_call", id=call.id, name=call.name, arguments=call.arguments)
            if self.tools is None:
                outcome = ToolOutcome(
                    content=f"no tools are available to {self.role}", is_error=True
                )
            else:
                outcome = await self.tools.execute(call)
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

    @property
    def text(self) -> str:
        parts = [*self._texts, self._live] if self._live else self._texts
        return "\n\n".join(p for p in parts if p)

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
        return AgentOutcome(
            turn_id=self.turn_id,
            stop=stop,
            text=self.text,
            usage=self.usage,
            steps=self.step,
            error=error,
        )
