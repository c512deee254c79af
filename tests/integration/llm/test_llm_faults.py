"""Fault scripts over real HTTP: ModelClient + each adapter + its real SDK + the stub.

Every test counts the requests the stub saw, so stacked retries (the SDK's on
top of ours) would show up as extra requests.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest

from backend.llm.client import ModelClient
from backend.llm.errors import (
    CircuitOpenError,
    DeadlineExceededError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderRequestError,
    ProviderUnavailableError,
)
from backend.llm.provider import Provider
from backend.llm.resilience import BreakerRegistry, RetryPolicy
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ChatResult,
    RetryScheduled,
    StreamEvent,
    TextDelta,
    ToolCallCompleted,
)
from tests.integration.conftest import make_provider
from tests.stubs import (
    Drop,
    LLMStub,
    Reply,
    Stall,
    Status,
    StreamFault,
    StubToolCall,
    burst,
    text_reply,
    tool_reply,
)
from tests.support.clocks import FakeClock
from tests.support.polling import finishes, until
from tests.support.timers import FakeTimer


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def ask(deadline: float = 10.0) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage.user("hi")],
        options=ChatOptions(model="stub-model", deadline_s=deadline),
    )


def policy(attempts: int = 4) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_delay=0.01, max_delay=0.05, rng=random.Random(3))


class Call:
    """One ModelClient.run with everything it emitted."""

    def __init__(self, provider: Provider, attempts: int = 4, **kwargs: Any) -> None:
        self.sleep = RecordingSleep()
        self.events: list[StreamEvent] = []
        self.client = ModelClient(provider, policy=policy(attempts), sleep=self.sleep, **kwargs)

    async def run(self, request: ChatRequest | None = None) -> ChatResult:
        return await self.client.run(request or ask(), self.events.append)

    @property
    def retries(self) -> list[RetryScheduled]:
        return [e for e in self.events if isinstance(e, RetryScheduled)]

    @property
    def texts(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, TextDelta)]


def timed(provider: Provider) -> tuple[Call, FakeTimer]:
    """A call whose deadline runs on a :class:`FakeTimer` (and its clock): it never passes
    until the test fires it, however fast or slow the machine is."""
    timer = FakeTimer()
    return Call(provider, timer=timer, clock=timer.clock), timer


async def deadline_after(
    call: Call, timer: FakeTimer, ready: Callable[[], object], *, what: str
) -> ChatResult:
    """Run ``call``; once ``ready()`` holds, let its deadline pass; the call's outcome."""
    running = asyncio.create_task(call.run())
    try:
        await until(lambda: running.done() or ready(), what=what)
        if not running.done():
            timer.fire()
        return await finishes(running, what="the deadline to end the call")
    finally:
        running.cancel()


# -- HTTP status faults ---------------------------------------------------------------
async def test_429_retry_after_is_honoured(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(Status(429, retry_after=0.25), text_reply("ok"))
    call = Call(provider)
    result = await call.run()
    assert result.text == "ok"
    assert result.attempts == 2
    assert call.sleep.delays == [0.25]
    assert [(r.attempt, r.delay_s) for r in call.retries] == [(2, 0.25)]
    assert "429" in call.retries[0].error
    assert llm_stub.count(llm_path) == 2


async def test_429_waits_in_real_time_too(
    llm_stub: LLMStub, provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = asyncio.get_running_loop()
    timers: list[float] = []
    call_later = loop.call_later

    def spy(delay: float, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        timers.append(delay)
        return call_later(delay, *args, **kwargs)

    monkeypatch.setattr(loop, "call_later", spy)
    llm_stub.push(Status(429, retry_after=0.15), text_reply("ok"))
    result = await ModelClient(provider, policy=policy()).run(ask())
    assert result.attempts == 2
    assert 0.15 in timers  # without an injected sleep, the wait is a real timer on the loop


async def test_bursts_of_500_503_529_then_success(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(burst(500, 503, 529), text_reply("finally"))
    call = Call(provider, attempts=4)
    result = await call.run()
    assert (result.text, result.attempts) == ("finally", 4)
    assert len(call.retries) == 3
    assert llm_stub.count(llm_path) == 4


async def test_exactly_the_allowed_attempts_reach_the_server(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(burst(503, 503, 503, 503, 503))
    with pytest.raises(ProviderUnavailableError, match="after 3 attempts"):
        await Call(provider, attempts=3).run()
    assert llm_stub.count(llm_path) == 3
    assert llm_stub.pending == 2


async def test_auth_error_is_typed_helpful_and_not_retried(
    llm_stub: LLMStub, provider: Provider, llm_path: str, vendor: str
) -> None:
    llm_stub.push(Status(401, message="invalid x-api-key"), text_reply("never"))
    registry = BreakerRegistry(threshold=1, cooldown=60)
    with pytest.raises(ProviderAuthError) as info:
        await Call(provider, breakers=registry).run()
    assert f"{vendor.upper()}_API_KEY" in str(info.value)
    assert info.value.status == 401
    assert llm_stub.count(llm_path) == 1
    assert registry.get(vendor, "stub-model").state == "closed"


async def test_a_bad_request_is_not_retried(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(Status(400, message="unknown model"), text_reply("never"))
    with pytest.raises(ProviderRequestError, match="unknown model"):
        await Call(provider).run()
    assert llm_stub.count(llm_path) == 1


# -- connection faults ------------------------------------------------------------
async def test_connection_refused_is_typed_after_the_budget(vendor: str) -> None:
    provider = make_provider(vendor, LLMStub.unused_url())
    call = Call(provider, attempts=3)
    with pytest.raises(ProviderConnectionError, match="after 3 attempts") as info:
        await call.run()
    await provider.aclose()
    assert "cannot connect" in str(info.value)
    assert len(call.retries) == 2


async def test_a_server_that_hangs_up_without_answering(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(Drop(), Drop(rst=True), Drop())
    with pytest.raises(ProviderConnectionError, match="after 3 attempts"):
        await Call(provider, attempts=3).run()
    assert llm_stub.count(llm_path) == 3


async def test_a_reset_before_any_text_is_retried(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(
        Reply(text=["never ", "seen"], fault=StreamFault("reset", after_events=1)),
        text_reply("second ", "try"),
    )
    call = Call(provider)
    result = await call.run()
    assert (result.text, result.attempts, result.interrupted) == ("second try", 2, False)
    assert [e.text for e in call.events if isinstance(e, TextDelta)] == ["second ", "try"]
    assert llm_stub.count(llm_path) == 2


async def test_a_reset_after_text_began_interrupts_without_retry(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(
        Reply(text=["partial ", "answer ", "lost"], fault=StreamFault("reset", after_text=2)),
        text_reply("must not be requested"),
    )
    call = Call(provider)
    result = await call.run()
    assert result.interrupted
    assert result.stop_reason == "interrupted"
    assert result.text == "partial answer "
    assert result.tool_calls == []
    assert result.error
    assert call.retries == []
    assert llm_stub.count(llm_path) == 1


# -- stream error events ----------------------------------------------------------
async def test_an_error_event_after_200_before_text_is_retried(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(Reply(text=["x"], fault=StreamFault("error", after_events=1)), text_reply("ok"))
    call = Call(provider)
    result = await call.run()
    assert (result.text, result.attempts) == ("ok", 2)
    assert "Overloaded" in call.retries[0].error
    assert llm_stub.count(llm_path) == 2


async def test_an_error_event_after_text_interrupts(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(
        Reply(text=["a", "b"], fault=StreamFault("error", after_text=1)), text_reply("no")
    )
    result = await Call(provider).run()
    assert result.interrupted
    assert result.text == "a"
    assert "Overloaded" in (result.error or "")
    assert llm_stub.count(llm_path) == 1


async def test_an_invalid_request_error_event_is_not_retried(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    fault = StreamFault(
        "error", after_events=1, error_type="invalid_request_error", message="prompt too long"
    )
    llm_stub.push(Reply(text=["x"], fault=fault), text_reply("no"))
    with pytest.raises(ProviderRequestError, match="prompt too long"):
        await Call(provider).run()
    assert llm_stub.count(llm_path) == 1


# -- stalls and the deadline ------------------------------------------------------
@pytest.mark.parametrize(
    "stall",
    [Stall(), Reply(text=["x"], fault=StreamFault("stall", after_events=1))],
    ids=["no-headers", "after-first-event"],
)
async def test_a_stall_before_output_is_bounded_by_the_deadline(
    llm_stub: LLMStub, provider: Provider, stall: Any
) -> None:
    llm_stub.push(stall)  # it outlasts the test: only the deadline can end the call
    call, timer = timed(provider)
    # The deadline passes once the request is in: waiting for the headers or for the
    # next event, the client has no output yet either way.
    with pytest.raises(DeadlineExceededError, match="deadline"):
        await deadline_after(
            call, timer, lambda: llm_stub.count() >= 1, what="the request to reach the stub"
        )
    assert call.texts == []
    # The client hung up on the stalled response (a stall the stub ends is not counted).
    await until(lambda: llm_stub.aborted >= 1, what="the client to hang up")


async def test_a_stall_after_text_interrupts_at_the_deadline(
    llm_stub: LLMStub, provider: Provider
) -> None:
    llm_stub.push(Reply(text=["so far ", "never"], fault=StreamFault("stall", after_text=1)))
    call, timer = timed(provider)
    result = await deadline_after(call, timer, lambda: call.texts, what="the first chunk")
    assert result.interrupted
    assert result.text == "so far "
    assert "deadline" in (result.error or "")


async def test_a_trickling_stream_cannot_outlive_the_deadline(
    llm_stub: LLMStub, provider: Provider
) -> None:
    chunks = [f"{i} " for i in range(10_000)]  # minutes of trickle: only the deadline ends it
    llm_stub.push(Reply(text=chunks, delay_s=0.02))
    call, timer = timed(provider)
    result = await deadline_after(
        call, timer, lambda: len(call.texts) >= 3, what="the first three chunks"
    )
    assert result.interrupted
    assert "deadline" in (result.error or "")
    # What arrived is kept, in order, from the first chunk on; the rest never came.
    assert result.text.startswith("0 1 2 ")
    assert result.text == "".join(call.texts)
    assert "".join(chunks).startswith(result.text) and len(result.text) < len("".join(chunks))
    await until(lambda: llm_stub.aborted >= 1, what="the client to hang up")


# -- truncated tool calls -----------------------------------------------------------
WRITE = StubToolCall("write_file", {"path": "notes.txt", "content": "hello world"}, pieces=4)


@pytest.mark.parametrize("cut", ["end", "reset"])
async def test_a_tool_call_cut_mid_arguments_is_never_returned(
    llm_stub: LLMStub, provider: Provider, llm_path: str, cut: str
) -> None:
    llm_stub.push(tool_reply(WRITE, fault=StreamFault(cut, after_args=2)), text_reply("no"))
    call = Call(provider)
    result = await call.run()
    assert result.interrupted
    assert result.tool_calls == []
    assert not any(isinstance(e, ToolCallCompleted) for e in call.events)
    assert llm_stub.count(llm_path) == 1


async def test_finished_tool_arguments_that_do_not_parse_come_back_as_an_error(
    llm_stub: LLMStub, provider: Provider
) -> None:
    """The model finished the call but its JSON is broken: the call is returned with the
    problem recorded (the agent loop sends it back to the model), never run as ``{}``."""
    broken = StubToolCall("write_file", raw_arguments='{"path": "notes.txt", "content": ')
    llm_stub.push(tool_reply(broken))
    result = await Call(provider).run()
    assert not result.interrupted and result.stop_reason == "tool_use"
    [call] = result.tool_calls
    assert call.name == "write_file" and call.arguments == {}
    assert call.arguments_error is not None
    assert "not valid JSON" in call.arguments_error
    assert '{"path": "notes.txt", "content": ' in call.arguments_error


# -- circuit breaker ----------------------------------------------------------------
async def test_breaker_opens_rejects_locally_then_half_opens_with_one_probe(
    llm_stub: LLMStub, provider: Provider, llm_path: str, vendor: str
) -> None:
    clock = FakeClock()
    registry = BreakerRegistry(threshold=3, cooldown=30.0, clock=clock)
    llm_stub.push(burst(503, 503, 503))
    with pytest.raises(ProviderUnavailableError):
        await Call(provider, attempts=3, breakers=registry).run()
    assert registry.get(vendor, "stub-model").state == "open"
    assert llm_stub.count(llm_path) == 3

    for _ in range(3):  # rejected without touching the server
        with pytest.raises(CircuitOpenError):
            await Call(provider, breakers=registry).run()
    assert llm_stub.count(llm_path) == 3

    clock.now += 30.0  # cool-down over: one probe may go
    llm_stub.push(Reply(text=["probe ", "ok"], delay_s=0.05))
    probe = asyncio.create_task(Call(provider, breakers=registry).run())
    await asyncio.sleep(0)  # the probe has taken its permit
    with pytest.raises(CircuitOpenError, match="probe"):
        await Call(provider, breakers=registry).run()
    assert (await probe).text == "probe ok"
    assert llm_stub.count(llm_path) == 4
    assert registry.get(vendor, "stub-model").state == "closed"


async def test_a_failed_probe_reopens_the_breaker(
    llm_stub: LLMStub, provider: Provider, llm_path: str, vendor: str
) -> None:
    clock = FakeClock()
    registry = BreakerRegistry(threshold=1, cooldown=5.0, clock=clock)
    llm_stub.push(burst(529, 529))
    with pytest.raises(ProviderUnavailableError):
        await Call(provider, attempts=1, breakers=registry).run()
    clock.now += 5.0
    with pytest.raises(CircuitOpenError):  # the probe fails, the retry meets an open breaker
        await Call(provider, attempts=3, breakers=registry).run()
    assert registry.get(vendor, "stub-model").state == "open"
    assert llm_stub.count(llm_path) == 2


# -- cancellation -----------------------------------------------------------------
async def test_cancelling_a_streamed_call_is_prompt_and_closes_the_connection(
    llm_stub: LLMStub, provider: Provider
) -> None:
    llm_stub.push(Reply(text=["first ", "never"], fault=StreamFault("stall", after_text=1)))
    got_text = asyncio.Event()

    def on_event(event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            got_text.set()

    task = asyncio.create_task(ModelClient(provider).run(ask(deadline=30), on_event))
    await finishes(got_text.wait(), what="the first chunk")
    task.cancel()  # the stream is stalled: only the cancel can end the call now
    with pytest.raises(asyncio.CancelledError):
        await finishes(task, what="the cancel to end the call")
    await until(lambda: llm_stub.aborted >= 1, what="the client to close the connection")


async def test_no_key_at_all_is_an_auth_error_before_any_request(
    llm_stub: LLMStub, vendor: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))  # no profile on disk either
    if vendor == "anthropic":
        from backend.llm.anthropic_adapter import AnthropicProvider

        provider: Provider = AnthropicProvider(None, llm_stub.base_url)
    else:
        from backend.llm.openai_chat import OpenAIProvider

        provider = OpenAIProvider(None, llm_stub.openai_base_url)
    with pytest.raises(ProviderAuthError, match=f"{vendor.upper()}_API_KEY"):
        await Call(provider).run()
    await provider.aclose()
    assert llm_stub.count() == 0
