"""The scripted provider: plays turns from a JSON or YAML file.

Demos and tests of whole workflows run deterministically with it. Each call
to ``stream`` plays the next turn; a turn may check what it was asked
(``expect``), stream text, request tool calls, report usage or fail on purpose.

    turns:
      - expect: readme            # optional: case-insensitive substring of the last user text
        text: "Let me look."
        tool_calls: [{name: read_file, arguments: {path: README.md}}]
      - text: "It says hello."
        usage: {input_tokens: 40, output_tokens: 5}
      - error: {kind: unavailable, message: "overloaded"}
      - pause_s: 2                # optional: think this long before answering
        text: "Done."

Conversations that run at the same time (two engineer nodes of a plan, each its own
turn) would take turns from one list in whatever order the scheduler happens to
interleave them. ``threads`` keeps them apart: each thread is a named list of turns,
chosen for a call by a case-insensitive substring (``match``, the thread's name when
absent) of the conversation's request, the last user message that carries text (tool
results carry none; the history before it is the session's, shared by every node).
Turns play in order within their thread; the top-level ``turns`` are the fallback
thread for a request no thread matches. A request that matches two threads, or none
when there is no fallback, is a :class:`ScriptThreadError`.

    turns: [{text: "The Architect's plan..."}]          # everything else
    threads:
      e1: {match: "Task e1 of plan", turns: [{text: "Done e1."}]}
      e2: {match: "Task e2 of plan", turns: [{text: "Done e2."}]}
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from backend.errors import SylkError
from backend.llm.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderUnavailableError,
)
from backend.llm.streaming import chunks
from backend.llm.token_estimate import count_text
from backend.llm.types import (
    ChatRequest,
    StopReason,
    StreamEvent,
    StreamStopped,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolResultBlock,
    Usage,
    UsageReported,
)

FALLBACK = "turns"  # the top-level turns' name, as a thread


class ScriptError(SylkError):
    """The script file cannot be read or does not describe turns."""


class ScriptThreadError(ProviderRequestError, ScriptError):
    """A request matches no thread of the script (and there is no fallback) or two.

    A provider error, so the agent's turn ends with it as any failed model call does
    (never retried), and a script error, so callers can tell a script's mistake."""


class ScriptedCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ScriptedFault(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["unavailable", "rate_limit", "auth", "bad_request"]
    message: str = "scripted failure"


class ScriptedTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expect: str | None = None
    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    usage: Usage | None = None
    stop_reason: StopReason | None = None
    error: ScriptedFault | None = None
    # Seconds the model "thinks" before answering: a slow model in a demo, or a turn a
    # test stops (cancels, or kills the process) while it is under way.
    pause_s: float = Field(default=0.0, ge=0, le=3600)


class ScriptThread(BaseModel):
    """One conversation's turns, chosen by a substring of its request."""

    model_config = ConfigDict(extra="forbid")
    match: str | None = Field(default=None, min_length=1)
    turns: list[ScriptedTurn] = Field(min_length=1)


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turns: list[ScriptedTurn] = Field(default_factory=list)
    threads: dict[str, ScriptThread] = Field(default_factory=dict)
    chunk_delay_s: float = Field(default=0.0, ge=0, le=5)

    @model_validator(mode="after")
    def _has_turns(self) -> Script:
        if not self.turns and not self.threads:
            raise ValueError("a script needs turns (or threads of turns); it has none")
        if FALLBACK in self.threads:
            raise ValueError(f"{FALLBACK!r} names the top-level turns: name the thread otherwise")
        matches = [self.match_of(name).lower() for name in self.threads]
        if len(set(matches)) != len(matches):
            raise ValueError("two threads have the same match")
        return self

    def match_of(self, name: str) -> str:
        return self.threads[name].match or name


def load_script(path: Path) -> Script:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read script {path}: {exc.strerror}") from exc
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # yaml.YAMLError or json.JSONDecodeError
        raise ScriptError(f"script {path} does not parse: {exc}") from exc
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'script'}: {e['msg']}" for e in exc.errors()
        )
        raise ScriptError(f"script {path} is not a valid script: {problems}") from None


_FAULTS: dict[str, type[ProviderError]] = {
    "unavailable": ProviderUnavailableError,
    "rate_limit": ProviderRateLimitError,
    "auth": ProviderAuthError,
    "bad_request": ProviderRequestError,
}


def request_text(request: ChatRequest) -> str:
    """The conversation's request: its last user message that carries text."""
    for message in reversed(request.messages):
        if message.role == "user" and message.text:
            return message.text
    return ""


class ScriptedProvider:
    name = "scripted"

    def __init__(self, script: Script, *, source: str = "script") -> None:
        self._script = script
        self._source = source
        self._threads: dict[str, list[ScriptedTurn]] = {
            FALLBACK: script.turns,
            **{name: thread.turns for name, thread in script.threads.items()},
        }
        self._played: dict[str, int] = dict.fromkeys(self._threads, 0)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedProvider:
        return cls(load_script(path), source=str(path))

    @property
    def remaining(self) -> int:
        """Turns not played yet, every thread's together."""
        return sum(len(turns) - self._played[name] for name, turns in self._threads.items())

    @property
    def played(self) -> dict[str, int]:
        """How many turns each thread played (``turns``: the top-level ones)."""
        return dict(self._played)

    def _thread_for(self, asked: str) -> str:
        wanted = asked.lower()
        found = [n for n in self._script.threads if self._script.match_of(n).lower() in wanted]
        if len(found) > 1:
            raise ScriptThreadError(
                f"script {self._source}: the request matches threads {', '.join(found)}: "
                f"{asked[:80]!r}",
                provider=self.name,
                help_hint="make each thread's match specific to one conversation",
            )
        if found:
            return found[0]
        if self._script.turns:
            return FALLBACK
        raise ScriptThreadError(
            f"script {self._source}: the request matches no thread and the script has no "
            f"top-level turns: {asked[:80]!r}",
            provider=self.name,
            help_hint="add a thread whose match is in the request, or top-level turns",
        )

    def _next_turn(self, thread: str) -> tuple[ScriptedTurn, str]:
        turns, played = self._threads[thread], self._played[thread]
        where = f"script {self._source}" + ("" if thread == FALLBACK else f" thread {thread}")
        if played >= len(turns):
            raise ProviderRequestError(
                f"{where} has no turn {played + 1}: it holds {len(turns)}", provider=self.name
            )
        self._played[thread] = played + 1
        return turns[played], f"{where} turn {played + 1}"

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        thread = self._thread_for(request_text(request)) if self._script.threads else FALLBACK
        turn, label = self._next_turn(thread)
        number = self._played[thread]
        last = request.messages[-1] if request.messages else None
        asked = last.text if last is not None else ""
        if last is not None and not asked:  # a tool-result turn: match on the results
            asked = " ".join(b.content for b in last.content if isinstance(b, ToolResultBlock))
        if turn.expect is not None and turn.expect.lower() not in asked.lower():
            raise ProviderRequestError(
                f"{label} expected {turn.expect!r} in the request, got {asked[:80]!r}",
                provider=self.name,
            )
        if turn.pause_s:
            await asyncio.sleep(turn.pause_s)
        if turn.error is not None:
            raise _FAULTS[turn.error.kind](turn.error.message, provider=self.name)
        delay = self._script.chunk_delay_s
        for piece in chunks(turn.text):
            if delay:
                await asyncio.sleep(delay)
            yield TextDelta(text=piece)
        prefix = "call" if thread == FALLBACK else f"call_{thread}"
        for index, scripted in enumerate(turn.tool_calls):
            call = ToolCall(
                id=scripted.id or f"{prefix}_{number}_{index}",
                name=scripted.name,
                arguments=scripted.arguments,
            )
            yield ToolCallStarted(index=index, id=call.id, name=call.name)
            yield ToolCallArgsDelta(index=index, fragment=json.dumps(call.arguments))
            yield ToolCallCompleted(index=index, call=call)
        prompt = " ".join(m.text for m in request.messages)
        usage = turn.usage or Usage(
            input_tokens=count_text(prompt), output_tokens=count_text(turn.text)
        )
        yield UsageReported(usage=usage)
        reason: StopReason = turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")
        yield StreamStopped(reason=reason)

    async def aclose(self) -> None:
        return None
