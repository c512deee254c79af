"""ModelClient over a fake provider: retries, output gating, deadlines, breaker, cancel."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any, Literal

import pytest

from backend.llm.client import ModelClient, _StreamDeadline
from backend.llm.errors import (
    CircuitOpenError,
    DeadlineExceededError,
    ProviderAuthError,
    ProviderStreamError,
    ProviderUnavailableError,
)
from backend.llm.resilience import BreakerRegistry, RetryPolicy
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    RetryScheduled,
    StreamEvent,
    StreamStopped,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
    UsageReported,
)
from tests.support.polling import finishes, until
from tests.support.timers import FakeTimer

# A float sleeps that long; an Event holds the stream until it is set (never, for a stall).
Step = StreamEvent | BaseException | float | asyncio.Event


class Stall(asyncio.Event):
    """Never set: a stream that reaches it holds there; ``reached`` tells the test it did."""

    def __init__(self) -> None:
        super().__init__()
        self.reached = False

    async def wait(self) -> Literal[True]:
        self.reached = True
        return await super().wait()


class FakeProvider:
    name = "fake"

    def __init__(self, *scripts: Iterable[Step]) -> None:
        self.scripts = list(scripts)
        self.calls = 0
        self.closed = 0

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        script = self.scripts.pop(0)
        try:
            for step in script:
                if isinstance(step, BaseException):
                    raise step
                if isinstance(step, float):
                    await asyncio.sleep(step)
                    continue
                if isinstance(step, asyncio.Event):
                    await step.wait()
                    continue
                yield step
        finally:
            self.closed += 1

    async def aclose(self) -> None:
        return None


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def request(deadline: float = 30.0) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage.user("hi")], options=ChatOptions(model="m", deadline_s=deadline)
    )


def reply(*texts: str, usage: Usage | None = None) -> list[Step]:
    steps: list[Step] = [TextDelta(text=t) for t in texts]
    steps += [UsageReported(usage=usage or Usage(input_tokens=3, output_tokens=2))]
    return [*steps, StreamStopped(reason="end_turn")]


def unavailable(retry_after: float | None = None) -> ProviderUnavailableError:
    return ProviderUnavailableError("503", provider="fake", status=503, retry_after=retry_after)


def client(provider: FakeProvider, **kwargs: Any) -> tuple[ModelClient, Sleeps]:
    sleeps = Sleeps()
    kwargs.setdefault(
        "policy", RetryPolicy(max_attempts=4, base_delay=0.1, max_delay=1.0, jitter="none")
    )
    return ModelClient(provider, sleep=sleeps, **kwargs), sleeps


def timed_client(provider: FakeProvider, **kwargs: Any) -> tuple[ModelClient, FakeTimer]:
    """A client whose deadline runs on a FakeTimer (and its clock): it passes on ``fire()``."""
    timer = FakeTimer()
    model_client, _ = client(provider, timer=timer, clock=timer.clock, **kwargs)
    return model_client, timer


async def test_a_clean_stream_becomes_a_result() -> None:
    call = ToolCall(id="c1", name="read_file", arguments={"path": "a"})
    provider = FakeProvider(
        [
            TextDelta(text="Let me "),
            TextDelta(text="look."),
            ToolCallStarted(index=0, id="c1", name="read_file"),
            ToolCallArgsDelta(index=0, fragment='{"path": "a"}'),
            ToolCallCompleted(index=0, call=call),
            UsageReported(usage=Usage(input_tokens=10, output_tokens=4, cache_read_tokens=2)),
            StreamStopped(reason="tool_use"),
        ]
    )
    seen: list[StreamEvent] = []
    model_client, _ = client(provider)
    result = await model_client.run(request(), seen.append)
    assert result.text == "Let me look."
    assert result.tool_calls == [call]
    assert result.usage == Usage(input_tokens=10, output_tokens=4, cache_read_tokens=2)
    assert (result.stop_reason, result.attempts, result.interrupted) == ("tool_use", 1, False)
    assert len(seen) == 7
    assert provider.closed == 1


async def test_retryable_errors_before_output_are_retried_with_notice() -> None:
    provider = FakeProvider([unavailable()], [unavailable()], reply("ok"))
    seen: list[StreamEvent] = []

    async def on_event(event: StreamEvent) -> None:  # async callbacks are awaited
        seen.append(event)

    model_client, sleeps = client(provider)
    result = await model_client.run(request(), on_event)
    assert result.text == "ok"
    assert result.attempts == 3
    assert sleeps.delays == [0.1, 0.2]
    retries = [e for e in seen if isinstance(e, RetryScheduled)]
    assert [(r.attempt, r.delay_s) for r in retries] == [(2, 0.1), (3, 0.2)]
    assert "503" in retries[0].error
    assert provider.closed == 3


async def test_exhausted_retries_raise_the_typed_error_with_the_count() -> None:
    provider = FakeProvider(*[[unavailable()] for _ in range(6)])
    model_client, sleeps = client(provider)
    with pytest.raises(ProviderUnavailableError, match="after 4 attempts"):
        await model_client.run(request())
    assert provider.calls == 4
    assert len(sleeps.delays) == 3


async def test_non_retryable_errors_are_raised_at_once() -> None:
    provider = FakeProvider([ProviderAuthError("401", provider="fake", status=401)])
    model_client, sleeps = client(provider)
    with pytest.raises(ProviderAuthError, match="after 1 attempt"):
        await model_client.run(request())
    assert provider.calls == 1
    assert sleeps.delays == []


async def test_retry_after_is_passed_to_sleep() -> None:
    provider = FakeProvider([unavailable(retry_after=2.5)], reply("ok"))
    model_client, sleeps = client(provider)
    assert (await model_client.run(request())).attempts == 2
    assert sleeps.delays == [2.5]


async def test_a_retry_after_beyond_the_deadline_gives_up_without_sleeping() -> None:
    provider = FakeProvider([unavailable(retry_after=60.0)], reply("ok"))
    model_client, sleeps = client(provider)
    with pytest.raises(DeadlineExceededError, match="no time left"):
        await model_client.run(request(deadline=5.0))
    assert sleeps.delays == []
    assert provider.calls == 1


async def test_a_failure_after_output_interrupts_instead_of_retrying() -> None:
    call = ToolCall(id="c0", name="ls", arguments={})
    provider = FakeProvider(
        [
            TextDelta(text="Half an "),
            ToolCallStarted(index=0, id="c0", name="ls"),
            ToolCallCompleted(index=0, call=call),
            ToolCallStarted(index=1, id="c1", name="read_file"),
            ToolCallArgsDelta(index=1, fragment='{"pa'),
            ProviderStreamError("reset", provider="fake"),
        ],
        reply("never"),
    )
    model_client, sleeps = client(provider)
    result = await model_client.run(request())
    assert result.interrupted
    assert result.stop_reason == "interrupted"
    assert result.text == "Half an "
    assert result.tool_calls == []  # not even the complete one: no partial sets of tools
    assert result.error is not None and "reset" in result.error
    assert provider.calls == 1
    assert sleeps.delays == []


async def test_a_stream_that_ends_without_a_stop_is_retried() -> None:
    provider = FakeProvider([UsageReported(usage=Usage(input_tokens=1))], reply("ok"))
    model_client, _ = client(provider)
    result = await model_client.run(request())
    assert result.attempts == 2
    assert result.usage == Usage(input_tokens=4, output_tokens=2)  # summed over attempts


async def test_a_tool_call_that_never_completed_is_never_returned() -> None:
    provider = FakeProvider(
        [
            ToolCallStarted(index=0, id="c0", name="write_file"),
            ToolCallArgsDelta(index=0, fragment='{"path": "x", "con'),
            StreamStopped(reason="tool_use"),
        ]
    )
    model_client, _ = client(provider)
    result = await model_client.run(request())
    assert result.interrupted
    assert result.tool_calls == []


async def test_the_deadline_holds_against_a_stall_before_output() -> None:
    stall = Stall()  # only the deadline can end this call
    provider = FakeProvider([UsageReported(usage=Usage()), stall])
    model_client, timer = timed_client(provider)
    running = asyncio.create_task(model_client.run(request(deadline=0.2)))
    await until(lambda: stall.reached, what="the stream to stall")
    timer.fire()
    with pytest.raises(DeadlineExceededError, match=r"0\.2s deadline"):
        await finishes(running, what="the deadline")
    assert timer.delays == [pytest.approx(0.2)]  # one timer for the whole stream
    assert provider.closed == 1
    assert provider.calls == 1  # no time left to retry


def trickle() -> Iterator[Step]:
    """An endless stream of text, one chunk at a time with a pause before each but the first."""
    n = 0
    while True:
        n += 1
        yield TextDelta(text=f"{n},")
        yield 0.01


async def test_the_deadline_holds_against_a_trickle_after_output() -> None:
    provider = FakeProvider(trickle())  # it never stops: only the deadline can end this call
    seen: list[str] = []
    model_client, timer = timed_client(provider)
    running = asyncio.create_task(
        model_client.run(
            request(deadline=0.3),
            lambda e: seen.append(e.text) if isinstance(e, TextDelta) else None,
        )
    )
    await until(lambda: len(seen) >= 3, what="three chunks of the trickle")
    timer.fire()
    result = await finishes(running, what="the deadline to cut the trickle")
    assert result.interrupted
    assert "deadline" in (result.error or "")
    # Every chunk that arrived before the deadline is kept, in order.
    assert len(seen) >= 3
    assert result.text == "".join(seen) == "".join(f"{n}," for n in range(1, len(seen) + 1))
    assert provider.closed == 1


async def test_cancellation_propagates_promptly_and_closes_the_stream() -> None:
    stall = asyncio.Event()  # never set: only the cancel can end this call
    provider = FakeProvider([TextDelta(text="a"), stall, *reply("b")])
    registry = BreakerRegistry(threshold=1, cooldown=0.0)
    model_client, _ = client(provider, breakers=registry)
    got_text = asyncio.Event()
    task = asyncio.create_task(model_client.run(request(), lambda e: got_text.set()))
    await finishes(got_text.wait(), what="the first chunk")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await finishes(task, what="the cancel to end the stalled call")
    assert provider.closed == 1
    assert registry.get("fake", "m").state == "closed"  # cancelling is no failure


async def test_a_failing_callback_propagates_and_closes_the_stream() -> None:
    provider = FakeProvider(reply("a", "b"))

    def explode(event: StreamEvent) -> None:
        raise RuntimeError("ui went away")

    model_client, _ = client(provider)
    with pytest.raises(RuntimeError, match="ui went away"):
        await model_client.run(request(), explode)
    assert provider.closed == 1


async def test_an_open_breaker_refuses_without_calling_the_provider() -> None:
    provider = FakeProvider(*[[unavailable()] for _ in range(3)])
    registry = BreakerRegistry(threshold=2, cooldown=60.0)
    policy = RetryPolicy(max_attempts=2, base_delay=0.01, rng=random.Random(1))
    model_client, _ = client(provider, breakers=registry, policy=policy)
    with pytest.raises(ProviderUnavailableError):
        await model_client.run(request())
    assert registry.get("fake", "m").state == "open"
    with pytest.raises(CircuitOpenError):
        await model_client.run(request())
    assert provider.calls == 2


async def test_the_breaker_opening_mid_call_stops_the_retries() -> None:
    provider = FakeProvider(*[[unavailable()] for _ in range(5)])
    registry = BreakerRegistry(threshold=2, cooldown=60.0)
    model_client, _ = client(provider, breakers=registry)
    with pytest.raises(CircuitOpenError, match="after 2 attempts"):
        await model_client.run(request())
    assert provider.calls == 2


async def test_auth_errors_do_not_open_the_breaker() -> None:
    provider = FakeProvider(*[[ProviderAuthError("401", provider="fake")] for _ in range(4)])
    registry = BreakerRegistry(threshold=2, cooldown=60.0)
    model_client, _ = client(provider, breakers=registry)
    for _ in range(4):
        with pytest.raises(ProviderAuthError):
            await model_client.run(request())
    assert registry.get("fake", "m").state == "closed"
    assert provider.calls == 4


async def test_the_deadline_never_cancels_a_callback_half_way() -> None:
    provider = FakeProvider(reply("a", "b", "c"))
    finished: list[str] = []
    model_client, timer = timed_client(provider)

    async def slow_callback(event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            timer.fire()  # the deadline passes while this callback runs...
            await asyncio.sleep(0)  # ...so a cancel would land in this await
            finished.append(event.text)

    result = await finishes(
        model_client.run(request(deadline=0.1), slow_callback), what="the deadline"
    )
    assert finished == ["a"]  # it ran to its end; the deadline struck before the next event
    assert result.interrupted
    assert result.text == "a"
    assert provider.closed == 1


@pytest.mark.parametrize("outside_cancel", [False, True])
async def test_only_the_deadline_own_cancel_is_absorbed(outside_cancel: bool) -> None:
    timer = FakeTimer()

    async def waiting_for_an_event() -> str:
        guard = _StreamDeadline(30.0, timer)
        guard.waiting = True
        task = asyncio.current_task()
        assert task is not None
        if outside_cancel:
            task.cancel()  # the caller cancels in the same instant the deadline passes
        timer.fire()
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            if guard.absorb():
                return "deadline"
            raise
        finally:
            guard.close()
        return "not cancelled"

    task = asyncio.create_task(waiting_for_an_event())
    if outside_cancel:
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        assert await task == "deadline"
        assert task.cancelling() == 0
