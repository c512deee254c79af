"""The retrying model client: the one place retries, deadlines and breakers live.

An adapter makes exactly one attempt per ``stream`` call. :class:`ModelClient`
turns attempts into a call:

* It retries a retryable error only while no output (text or a tool-call
  delta) has been forwarded for this call, emitting :class:`RetryScheduled`
  before each wait. Once output has been shown, a failure ends the call with
  an *interrupted* result: the partial text is kept and no tool call is
  returned, so no tool can run on half-received arguments.
* ``request.options.deadline_s`` bounds the whole call: every attempt, every
  wait, and each step of a stream that trickles. Running out before output
  raises :class:`DeadlineExceededError`; after output it interrupts the result.
  The deadline reads time from ``clock`` and strikes through ``timer`` (by
  default the running loop's ``call_later``), so a test can fire it at will.
* The provider+model circuit breaker is asked before every attempt.
* Cancelling the caller's task propagates at once and closes the stream.
* An attempt that produced a result but reported no usage (local servers often
  send none) gets a local count (``token_estimate``) marked ``estimated``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from backend.llm.errors import (
    CircuitOpenError,
    DeadlineExceededError,
    ProviderError,
    ProviderStreamError,
)
from backend.llm.provider import Provider
from backend.llm.resilience import BreakerRegistry, CircuitBreaker, Permit, RetryPolicy
from backend.llm.token_estimate import count_reply, count_request
from backend.llm.types import (
    ChatRequest,
    ChatResult,
    RetryScheduled,
    StopReason,
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

EventCallback = Callable[[StreamEvent], Awaitable[None] | None]
Sleep = Callable[[float], Awaitable[None]]


class TimerHandle(Protocol):
    """What arming a :data:`Timer` returns: it can be disarmed (``asyncio.TimerHandle``)."""

    def cancel(self) -> None: ...


Timer = Callable[[float, Callable[[], None]], TimerHandle]
"""Arms a callback to run once, ``delay`` seconds from now, on the running loop's thread."""


def loop_timer(delay: float, callback: Callable[[], None]) -> TimerHandle:
    """The default :data:`Timer`: the running event loop's ``call_later``."""
    return asyncio.get_running_loop().call_later(delay, callback)


class _Attempt:
    """What one attempt produced so far."""

    __slots__ = ("arguments", "calls", "output_started", "started", "stop", "text", "usage")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.started: set[int] = set()
        self.calls: dict[int, ToolCall] = {}
        self.arguments: dict[int, list[str]] = {}  # streamed argument text, per call
        self.usage = Usage()
        self.stop: StopReason | None = None
        self.output_started = False

    def usage_or_estimate(self, request: ChatRequest) -> Usage:
        """The usage the server reported, or a local count when it reported none."""
        if not self.usage.empty:
            return self.usage
        arguments = {i: "".join(parts) for i, parts in self.arguments.items()}
        for index, call in self.calls.items():  # a call whose arguments came whole
            arguments.setdefault(index, json.dumps(call.arguments))
        return Usage(
            input_tokens=count_request(request),
            output_tokens=count_reply("".join(self.text), arguments.values()),
            estimated=True,
        )

    def apply(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            if event.text:
                self.text.append(event.text)
                self.output_started = True
        elif isinstance(event, ToolCallArgsDelta):
            self.arguments.setdefault(event.index, []).append(event.fragment)
            self.output_started = True
        elif isinstance(event, ToolCallStarted):
            self.started.add(event.index)
            self.output_started = True
        elif isinstance(event, ToolCallCompleted):
            self.started.add(event.index)
            self.calls[event.index] = event.call
        elif isinstance(event, UsageReported):
            self.usage = self.usage + event.usage
        elif isinstance(event, StreamStopped):
            self.stop = event.reason


class _StreamDeadline:
    """The deadline over one attempt's stream: one timer, not one per event.

    When it fires while the task waits for the next event, it cancels the task
    (as ``asyncio.timeout`` does, which costs a timer per event); while an event
    callback runs it only marks the deadline as passed, so callbacks are never
    cancelled half-way.
    """

    __slots__ = ("_cancelled", "_cancelling", "_handle", "_task", "fired", "waiting")

    def __init__(self, delay: float, timer: Timer = loop_timer) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._cancelling = task.cancelling()
        self._cancelled = False
        self.fired = False
        self.waiting = False
        self._handle = timer(delay, self._fire)

    def _fire(self) -> None:
        self.fired = True
        if self.waiting:
            self._cancelled = True
            self._task.cancel()

    def absorb(self) -> bool:
        """After a CancelledError: True if it was ours alone (then it is undone)."""
        if not self._cancelled:
            return False
        self._cancelled = False
        return self._task.uncancel() <= self._cancelling

    def close(self) -> None:
        self._handle.cancel()


class ModelClient:
    def __init__(
        self,
        provider: Provider,
        *,
        policy: RetryPolicy | None = None,
        breakers: BreakerRegistry | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        timer: Timer = loop_timer,
    ) -> None:
        self.provider = provider
        self.policy = policy or RetryPolicy()
        self.breakers = breakers
        self._sleep = sleep
        self._clock = clock
        self._timer = timer

    async def run(self, request: ChatRequest, on_event: EventCallback | None = None) -> ChatResult:
        model = request.options.model
        deadline = self._clock() + request.options.deadline_s
        breaker = self.breakers.get(self.provider.name, model) if self.breakers else None
        usage = Usage()
        previous_delay: float | None = None
        last_error: ProviderError | None = None
        attempt = 0
        while True:
            attempt += 1
            permit = self._admit(breaker, last_error, attempt - 1)
            state = _Attempt()
            try:
                await self._attempt(request, state, deadline, on_event)
            except ProviderError as exc:
                _settle(breaker, permit, exc)
                error: ProviderError = exc
            except BaseException:  # cancellation, or the callback failed: no verdict
                if breaker is not None:
                    breaker.record_neutral(permit)
                raise
            else:
                if breaker is not None:
                    breaker.record_success(permit)
                return self._result(
                    request, state, usage + state.usage_or_estimate(request), attempt
                )
            if state.output_started:
                usage = usage + state.usage_or_estimate(request)
                return self._interrupted(request, state, usage, attempt, error)
            usage = usage + state.usage
            if not error.retryable or attempt >= self.policy.max_attempts:
                raise _with_attempts(error, attempt)
            delay = self.policy.delay(
                attempt,
                previous=previous_delay,
                retry_after=error.retry_after,
                remaining=deadline - self._clock(),
            )
            if delay is None:
                raise DeadlineExceededError(
                    f"{self.provider.name}/{model}: no time left in the "
                    f"{request.options.deadline_s:g}s deadline to retry after "
                    f"{attempt} attempt{'s' if attempt > 1 else ''} (last error: {error.message})",
                    provider=self.provider.name,
                    status=error.status,
                    retry_after=error.retry_after,
                    help_hint=error.help_hint or None,
                ) from error
            await _emit(
                on_event, RetryScheduled(attempt=attempt + 1, delay_s=delay, error=str(error))
            )
            await self._sleep(delay)
            previous_delay = delay
            last_error = error

    def _admit(
        self, breaker: CircuitBreaker | None, last_error: ProviderError | None, made: int
    ) -> Permit:
        if breaker is None:
            return Permit()
        try:
            return breaker.acquire()
        except CircuitOpenError as exc:
            if last_error is not None:
                plural = "s" if made > 1 else ""
                exc.message += f" (after {made} attempt{plural}; last error: {last_error.message})"
                exc.args = (exc.message,)
            raise

    async def _attempt(
        self,
        request: ChatRequest,
        state: _Attempt,
        deadline: float,
        on_event: EventCallback | None,
    ) -> None:
        remaining = deadline - self._clock()
        if remaining <= 0:
            raise self._deadline_error(request)
        stream: AsyncIterator[StreamEvent] = self.provider.stream(request)
        guard = _StreamDeadline(remaining, self._timer)
        try:
            while True:
                if guard.fired:  # it passed while a callback ran
                    raise self._deadline_error(request)
                guard.waiting = True
                try:
                    event = await anext(stream)
                except StopAsyncIteration:
                    break
                except asyncio.CancelledError:
                    if guard.absorb():
                        raise self._deadline_error(request) from None
                    raise
                finally:
                    guard.waiting = False
                state.apply(event)
                if on_event is not None:
                    await _emit(on_event, event)
        finally:
            guard.close()
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        if state.stop is None:
            raise ProviderStreamError(
                f"{self.provider.name}: the stream ended without a stop reason",
                provider=self.provider.name,
            )

    def _deadline_error(self, request: ChatRequest) -> DeadlineExceededError:
        opts = request.options
        return DeadlineExceededError(
            f"{self.provider.name}/{opts.model}: no complete reply within the "
            f"{opts.deadline_s:g}s deadline",
            provider=self.provider.name,
            help_hint="the provider is slow or stalled; try again or raise the deadline",
        )

    def _result(
        self, request: ChatRequest, state: _Attempt, usage: Usage, attempts: int
    ) -> ChatResult:
        unfinished = state.started - state.calls.keys()
        if unfinished:
            # Never hand back part of a set of tool calls.
            return ChatResult(
                provider=self.provider.name,
                model=request.options.model,
                text="".join(state.text),
                usage=usage,
                stop_reason="interrupted",
                interrupted=True,
                attempts=attempts,
                error=f"{len(unfinished)} tool call(s) never received complete arguments",
            )
        return ChatResult(
            provider=self.provider.name,
            model=request.options.model,
            text="".join(state.text),
            tool_calls=[state.calls[i] for i in sorted(state.calls)],
            usage=usage,
            stop_reason=state.stop or "end_turn",
            attempts=attempts,
        )

    def _interrupted(
        self,
        request: ChatRequest,
        state: _Attempt,
        usage: Usage,
        attempts: int,
        error: ProviderError,
    ) -> ChatResult:
        return ChatResult(
            provider=self.provider.name,
            model=request.options.model,
            text="".join(state.text),
            usage=usage,
            stop_reason="interrupted",
            interrupted=True,
            attempts=attempts,
            error=str(error),
        )


async def _emit(on_event: EventCallback | None, event: StreamEvent) -> None:
    if on_event is None:
        return
    pending = on_event(event)
    if pending is not None:
        await pending


def _settle(breaker: CircuitBreaker | None, permit: Permit, error: ProviderError) -> None:
    if breaker is None:
        return
    # A stalled attempt says as much about the provider's health as a 503 does.
    if error.retryable or isinstance(error, DeadlineExceededError):
        breaker.record_failure(permit)
    else:
        breaker.record_neutral(permit)


def _with_attempts(error: ProviderError, attempts: int) -> ProviderError:
    error.message = f"{error.message} (after {attempts} attempt{'s' if attempts > 1 else ''})"
    error.args = (error.message,)
    return error
