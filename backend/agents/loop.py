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

The model's reasoning (``ReasoningDelta``: a Responses API summary, a local server's
``reasoning_content``) is relayed as ``reasoning_delta`` steps and kept apart from the
answer: the outcome's ``reasoning`` holds the last :data:`REASONING_LIMIT` characters of
each model call's, joined for the turn. It is never in ``text``, so the next turn's
model never reads it as what the assistant said.

A tool call whose arguments did not parse (``ToolCall.arguments_error``) is not run:
the model gets the problem back as that call's result and may correct itself, once
per turn; a model reply with malformed arguments after that ends the turn (stop
``error``), keeping what was answered so far. Small local models do this now and
then; a stronger model rarely does.
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
    NO_TOOL,
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ChatResult,
    ReasoningDelta,
    RetryScheduled,
    StreamEvent,
    TextBlock,
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
EMPTY_ANSWER = (
    "the model ended its turn without an answer (no text and no tool call); "
    "try again, or use a stronger model"
)
MALFORMED_ARGUMENTS = "MalformedToolArguments"  # the error step's error_type
REASONING_LIMIT = 4096  # characters of reasoning kept per model call (its end)


class ChatClient(Protocol):
    async def run(
        self, request: ChatRequest, on_event: EventCallback | None = None
    ) -> ChatResult: ...


StepSink = Callable[[AgentStep], Awaitable[None]]
PrePromptHook = Callable[[ChatRequest], ChatRequest]
# Run once when a turn starts; the non-empty texts form the turn's context block.
ContextHook = Callable[[ChatRequest], str]
CONTEXT_HEADER = "# Context for this request (from Sylk, not typed by the user)"
PostPromptHook = Callable[[ChatRequest, ChatResult], None]
# Awaited before each model call (the budget check, which may wait for the user):
# None goes on; a text ends the turn with it as the error, the call never made.
BeforeCall = Callable[[], Awaitable[str | None]]
HELD_BEFORE_CALL = "BudgetStopped"  # the error step's error_type when it ends a turn


class AgentOutcome(BaseModel):
    turn_id: str
    stop: StopKind
    text: str = ""
    usage: Usage = Field(default_factory=Usage)
    steps: int = 0
    error: str | None = None
    actions: list[ToolAction] = Field(default_factory=list)
    reasoning: str = ""
    """What the model reasoned (bounded), shown apart from ``text`` and never sent back."""


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
        context_hooks: list[ContextHook] | None = None,
        before_call: BeforeCall | None = None,
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
        self.context_hooks = list(context_hooks or [])
        self.before_call = before_call

    def _request(self, messages: list[ChatMessage], *, text_only: bool = False) -> ChatRequest:
        tools = self.tools.specs() if self.tools else []
        request = ChatRequest(
            system=self.system,
            messages=list(messages),
            tools=tools,
            options=self.options,
            tool_choice=NO_TOOL if text_only and tools else None,
        )
        for hook in self.pre_prompt_hooks:
            request = hook(request)
        return request

    def _with_context(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """The turn's dynamic context (session brief, notes, ready ops) as a text block
        after the request on its user message, worked out once per turn: the system
        prompt and the tools stay the same bytes, and so does every message already
        sent, so each request of the turn extends the previous one's cached prefix."""
        if not self.context_hooks or not messages or messages[-1].role != "user":
            return messages
        request = ChatRequest(system=self.system, messages=messages, options=self.options)
        parts = [text for hook in self.context_hooks if (text := hook(request))]
        if not parts:
            return messages
        block = TextBlock(text="\n\n".join([CONTEXT_HEADER, *parts]))
        last = messages[-1]
        return [*messages[:-1], last.model_copy(update={"content": [*last.content, block]})]

    async def run(
        self, session_id: str, history: list[ChatMessage], sink: StepSink
    ) -> AgentOutcome:
        turn_id = new_id()
        state = _TurnState(turn_id, session_id, self.role, sink)
        messages = self._with_context(list(history))
        try:
            for _ in range(self.max_steps):
                state.step += 1
                if self.before_call is not None and (held := await self.before_call()):
                    await state.emit("error", error=held, error_type=HELD_BEFORE_CALL)
                    return state.outcome("error", error=held)
                await state.emit("model_call", model=self.options.model)
                request = self._request(messages, text_only=state.asked_for_text)
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
                    limit = request.options.max_tokens  # as sent, after the hooks
                    return await state.end("truncated", error=_truncated(limit))
                if not result.tool_calls and not state.text and not state.acted:
                    # Nothing said, nothing done: llama-cpp-python with tools offered can
                    # only call one. Ask once for text alone, then say so; never store it.
                    if request.tools and not state.asked_for_text:
                        state.asked_for_text = True
                        continue
                    await state.emit("error", error=EMPTY_ANSWER, error_type="EmptyAnswer")
                    return state.outcome("error", error=EMPTY_ANSWER)
                messages.append(result.as_message())
                if not result.tool_calls:
                    await state.emit("final", text=state.text)
                    return state.outcome("final")
                malformed = [c for c in result.tool_calls if c.arguments_error]
                if malformed and state.malformed_answered:
                    error = _malformed_twice(malformed[0])
                    await state.emit("error", error=error, error_type=MALFORMED_ARGUMENTS)
                    return state.outcome("error", error=error)
                state.malformed_answered = state.malformed_answered or bool(malformed)
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
            extra = {"arguments_error": call.arguments_error} if call.arguments_error else {}
            await state.emit(
                "tool_call", id=call.id, name=call.name, arguments=call.arguments, **extra
            )
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
        if call.arguments_error:
            return ToolOutcome(content=_malformed_reply(call), is_error=True)
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
        self.malformed_answered = False  # a malformed tool call was sent back this turn
        self.asked_for_text = False  # an empty reply was asked again with no tool allowed
        self._texts: list[str] = []
        self._live = ""  # text streamed in the current step, for cancellation
        self._reasoned: list[str] = []  # each finished model call's reasoning (its end)
        self._thinking = ""  # the current model call's reasoning so far (its end)
        self._actions: dict[str, ToolAction] = {}  # by call id, in call order

    @property
    def text(self) -> str:
        parts = [*self._texts, self._live] if self._live else self._texts
        return "\n\n".join(p for p in parts if p)

    async def end(self, stop: StopKind, error: str | None = None) -> AgentOutcome:
        """End the turn with a step named for ``stop`` carrying the answer as stored."""
        outcome = self.outcome(stop, error=error)
        await self.emit(stop, text=outcome.text, **({"error": error} if error else {}))
        return outcome

    def begin(self, call: ToolCall) -> None:
        self._actions[call.id] = begin_action(call.id, call.name, call.arguments, len(self.text))

    def output(self, call_id: str, text: str) -> None:
        self._actions[call_id] = add_output(self._actions[call_id], text)

    def finish(self, call_id: str, outcome: ToolOutcome) -> None:
        self._actions[call_id] = finish_action(
            self._actions[call_id], outcome.content, outcome.is_error
        )

    @property
    def reasoning(self) -> str:
        parts = [*self._reasoned, self._thinking]
        return "\n\n".join(p.strip() for p in parts if p.strip())

    def add_text(self, text: str) -> None:
        self._live = ""
        if text:
            self._texts.append(text)
        if self._thinking:
            self._reasoned.append(self._thinking)
            self._thinking = ""

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
        elif isinstance(event, ReasoningDelta):
            if event.text:
                self._thinking = _bounded(self._thinking + event.text)
                await self.emit("reasoning_delta", text=event.text)
        elif isinstance(event, RetryScheduled):
            self._thinking = ""  # reasoning does not count as output: the attempt is redone
            await self.emit(
                "retry", attempt=event.attempt, delay_s=event.delay_s, error=event.error
            )

    @property
    def acted(self) -> bool:
        """Whether the turn called any tool."""
        return bool(self._actions)

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
            reasoning=self.reasoning,
        )


def _bounded(reasoning: str) -> str:
    """The end of one call's reasoning, at most :data:`REASONING_LIMIT` characters."""
    if len(reasoning) <= REASONING_LIMIT:
        return reasoning
    return "…" + reasoning[-(REASONING_LIMIT - 1) :]


def _truncated(max_tokens: int) -> str:
    return (
        f"answer truncated at the model's output limit (max_tokens {max_tokens}); "
        "ask for a shorter answer, or for it in parts"
    )


def _malformed_reply(call: ToolCall) -> str:
    """What the model reads instead of the result of a call it garbled."""
    return (
        f"The call to {call.name} was not run: {call.arguments_error}. "
        f"Call {call.name} again with its arguments as one JSON object that matches "
        "its input schema."
    )


def _malformed_twice(call: ToolCall) -> str:
    return (
        f"the model sent malformed tool-call arguments twice (tool {call.name}: "
        f"{call.arguments_error}); try again or use a stronger model"
    )
