"""The retrying client counts what an attempt's server did not (issue 14, defect 5): the
request in, the reply out (its text and each call's arguments), marked estimated; usage
a server did report is left as it is."""

from __future__ import annotations

from backend.llm.client import ModelClient
from backend.llm.errors import ProviderStreamError, ProviderUnavailableError
from backend.llm.resilience import RetryPolicy
from backend.llm.token_estimate import count_reply, count_request
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    StreamStopped,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
    UsageReported,
)
from tests.unit.llm.test_llm_client import FakeProvider, Sleeps, Step

REQUEST = ChatRequest(
    system="You are terse.",
    messages=[ChatMessage.user("what does the README of this project say about tokens?")],
    options=ChatOptions(model="m"),
)
ARGS = '{"path": "README.md"}'


def _client(provider: FakeProvider) -> ModelClient:
    policy = RetryPolicy(max_attempts=3, base_delay=0.1, max_delay=1.0, jitter="none")
    return ModelClient(provider, policy=policy, sleep=Sleeps())


CALL = ToolCall(id="c1", name="read_file", arguments={"path": "README.md"})


def _tool_call(*, usage: Usage | None = None) -> list[Step]:
    steps: list[Step] = [
        TextDelta(text="Let me read it."),
        ToolCallStarted(index=0, id="c1", name="read_file"),
        ToolCallArgsDelta(index=0, fragment=ARGS[:9]),
        ToolCallArgsDelta(index=0, fragment=ARGS[9:]),
        ToolCallCompleted(index=0, call=CALL),
    ]
    if usage is not None:
        steps.append(UsageReported(usage=usage))
    return [*steps, StreamStopped(reason="tool_use")]


async def test_an_attempt_without_usage_is_counted_locally() -> None:
    result = await _client(FakeProvider(_tool_call())).run(REQUEST)
    assert result.usage == Usage(
        input_tokens=count_request(REQUEST),
        output_tokens=count_reply("Let me read it.", [ARGS]),
        estimated=True,
    )


async def test_reported_usage_is_kept_and_zeros_count_as_none() -> None:
    reported = Usage(input_tokens=30, output_tokens=9, cache_read_tokens=4)
    result = await _client(FakeProvider(_tool_call(usage=reported))).run(REQUEST)
    assert result.usage == reported
    zeros = await _client(FakeProvider(_tool_call(usage=Usage()))).run(REQUEST)
    assert zeros.usage.estimated and zeros.usage.input_tokens == count_request(REQUEST)


async def test_a_failed_attempt_before_output_adds_no_estimate() -> None:
    refused = ProviderUnavailableError("503", provider="fake", status=503)
    provider = FakeProvider([refused], _tool_call())
    result = await _client(provider).run(REQUEST)
    assert result.attempts == 2
    assert result.usage.input_tokens == count_request(REQUEST)  # one request counted, not two


async def test_an_interrupted_answer_counts_what_arrived() -> None:
    cut = ProviderStreamError("connection reset", provider="fake")
    provider = FakeProvider([TextDelta(text="The first half of"), cut])
    result = await _client(provider).run(REQUEST)
    assert result.interrupted
    assert result.usage.estimated
    assert result.usage.output_tokens == count_reply("The first half of", [])
