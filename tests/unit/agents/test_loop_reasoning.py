"""The agent loop keeps a model's reasoning apart from its answer (issue 14).

The client here plays recorded stream events and results, the way the retrying
``ModelClient`` calls back; the loop, its steps and its outcome are the real ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from backend.agents.conversation import conversation
from backend.agents.loop import REASONING_LIMIT, AgentLoop, AgentOutcome, EventCallback
from backend.agents.tools import OutputSink, ToolOutcome
from backend.events import STREAMED_STEPS, AgentStep
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ChatResult,
    ReasoningDelta,
    RetryScheduled,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolSpec,
)
from backend.messages import Message, MessageType

Call = tuple[Sequence[StreamEvent], ChatResult]


class PlayedClient:
    """Answers each request with the next recorded call: its events, then its result."""

    def __init__(self, *calls: Call) -> None:
        self.calls = list(calls)
        self.requests: list[ChatRequest] = []

    async def run(self, request: ChatRequest, on_event: EventCallback | None = None) -> ChatResult:
        self.requests.append(request)
        events, result = self.calls.pop(0)
        for event in events:
            if on_event is not None:
                await on_event(event)  # type: ignore[misc]  # the loop's callback is async
        return result


class Echo:
    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name="echo", description="Echo.", input_schema={"type": "object"})]

    async def execute(self, call: ToolCall, on_output: OutputSink | None = None) -> ToolOutcome:
        return ToolOutcome(content="echoed")


def result(text: str = "", calls: list[ToolCall] | None = None) -> ChatResult:
    stop = "tool_use" if calls else "end_turn"
    return ChatResult(provider="p", model="m", text=text, tool_calls=calls or [], stop_reason=stop)


async def run(client: PlayedClient) -> tuple[AgentOutcome, list[AgentStep]]:
    steps: list[AgentStep] = []

    async def sink(step: AgentStep) -> None:
        steps.append(step)

    loop = AgentLoop(
        role="architect",
        client=client,
        provider_name="p",
        options=ChatOptions(model="m"),
        tools=Echo(),
    )
    outcome = await loop.run("s1", [ChatMessage.user("why?")], sink)
    return outcome, steps


async def test_reasoning_is_relayed_as_streamed_steps_and_kept_apart_from_the_text() -> None:
    call = ToolCall(id="c1", name="echo", arguments={})
    client = PlayedClient(
        ([ReasoningDelta(text="First I "), ReasoningDelta(text="look.")], result(calls=[call])),
        (
            [ReasoningDelta(text="Now I know."), TextDelta(text="It is "), TextDelta(text="42.")],
            result("It is 42."),
        ),
    )
    outcome, steps = await run(client)

    assert outcome.stop == "final"
    assert outcome.text == "It is 42."
    assert outcome.reasoning == "First I look.\n\nNow I know."
    relayed = [s.data["text"] for s in steps if s.kind == "reasoning_delta"]
    assert relayed == ["First I ", "look.", "Now I know."]
    assert "reasoning_delta" in STREAMED_STEPS  # published, never stored piecemeal
    final = next(s for s in steps if s.kind == "final")
    assert "look" not in final.data["text"]
    # The second request carries the assistant's tool call, and none of its reasoning.
    assert "look" not in client.requests[1].model_dump_json()


async def test_each_calls_reasoning_is_bounded_to_its_end() -> None:
    long = "x" * (REASONING_LIMIT * 3) + "THE END"
    pieces = [ReasoningDelta(text=long[i : i + 100]) for i in range(0, len(long), 100)]
    outcome, steps = await run(PlayedClient((pieces, result("ok"))))

    reasoning = outcome.reasoning
    assert len(reasoning) == REASONING_LIMIT
    assert reasoning.startswith("…") and reasoning.endswith("THE END")
    assert sum(len(s.data["text"]) for s in steps if s.kind == "reasoning_delta") == len(long)


async def test_a_retried_attempts_reasoning_is_not_kept_twice() -> None:
    events: list[StreamEvent] = [
        ReasoningDelta(text="half a thought"),
        RetryScheduled(attempt=1, delay_s=0.0, error="overloaded"),
        ReasoningDelta(text="a whole thought"),
        TextDelta(text="done"),
    ]
    outcome, _ = await run(PlayedClient((events, result("done"))))
    assert outcome.reasoning == "a whole thought"


async def test_a_turn_without_reasoning_has_none() -> None:
    outcome, steps = await run(PlayedClient(([TextDelta(text="hi")], result("hi"))))
    assert outcome.reasoning == ""
    assert not [s for s in steps if s.kind == "reasoning_delta"]


def test_the_next_turns_model_reads_the_answer_never_its_reasoning() -> None:
    asked = Message[dict[str, object]](
        session_id="s1", source="user", target="architect", type=MessageType.USER_INPUT,
        payload={"text": "why?"},
    )  # fmt: skip
    answer = Message[dict[str, object]](
        session_id="s1", source="architect", target="user", type=MessageType.AGENT_REPLY,
        payload={"text": "It is 42.", "reasoning": "SECRET-THOUGHT: count the towels"},
    )  # fmt: skip
    history = conversation([asked, answer], "and then?")
    sent = "".join(m.model_dump_json() for m in history)
    assert "It is 42." in sent
    assert "SECRET-THOUGHT" not in sent
