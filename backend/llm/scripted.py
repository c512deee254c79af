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
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend.errors import SylkError
from backend.llm.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderUnavailableError,
)
from backend.llm.streaming import chunks, estimate_tokens
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


class ScriptError(SylkError):
    """The script file cannot be read or does not describe turns."""


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


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turns: list[ScriptedTurn] = Field(min_length=1)
    chunk_delay_s: float = Field(default=0.0, ge=0, le=5)


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
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ScriptError(f"script {path} is not a valid script: {problems}") from None


_FAULTS: dict[str, type[ProviderError]] = {
    "unavailable": ProviderUnavailableError,
    "rate_limit": ProviderRateLimitError,
    "auth": ProviderAuthError,
    "bad_request": ProviderRequestError,
}


class ScriptedProvider:
    name = "scripted"

    def __init__(self, script: Script, *, source: str = "script") -> None:
        self._script = script
        self._source = source
        self._next = 0

    @classmethod
    def from_file(cls, path: Path) -> ScriptedProvider:
        return cls(load_script(path), source=str(path))

    @property
    def remaining(self) -> int:
        return len(self._script.turns) - self._next

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        if self._next >= len(self._script.turns):
            raise ProviderRequestError(
                f"script {self._source} has no turn {self._next + 1}: "
                f"it holds {len(self._script.turns)}",
                provider=self.name,
            )
        turn = self._script.turns[self._next]
        self._next += 1
        last = request.messages[-1] if request.messages else None
        asked = last.text if last is not None else ""
        if last is not None and not asked:  # a tool-result turn: match on the results
            asked = " ".join(b.content for b in last.content if isinstance(b, ToolResultBlock))
        if turn.expect is not None and turn.expect.lower() not in asked.lower():
            raise ProviderRequestError(
                f"script {self._source} turn {self._next} expected {turn.expect!r} "
                f"in the request, got {asked[:80]!r}",
                provider=self.name,
            )
        if turn.error is not None:
            raise _FAULTS[turn.error.kind](turn.error.message, provider=self.name)
        delay = self._script.chunk_delay_s
        for piece in chunks(turn.text):
            if delay:
                await asyncio.sleep(delay)
            yield TextDelta(text=piece)
        for index, scripted in enumerate(turn.tool_calls):
            call = ToolCall(
                id=scripted.id or f"call_{self._next}_{index}",
                name=scripted.name,
                arguments=scripted.arguments,
            )
            yield ToolCallStarted(index=index, id=call.id, name=call.name)
            yield ToolCallArgsDelta(index=index, fragment=json.dumps(call.arguments))
            yield ToolCallCompleted(index=index, call=call)
        prompt = " ".join(m.text for m in request.messages)
        usage = turn.usage or Usage(
            input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(turn.text)
        )
        yield UsageReported(usage=usage)
        reason: StopReason = turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")
        yield StreamStopped(reason=reason)

    async def aclose(self) -> None:
        return None
