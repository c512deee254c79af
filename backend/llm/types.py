"""The internal, vendor-neutral model of a chat turn.

Adapters translate Anthropic's and OpenAI's formats to and from these types;
everything above the adapters (the retrying client, the agent loop, the UI)
sees only these.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


_EXCERPT = 120  # characters of a malformed arguments text kept in the error


# -- content ---------------------------------------------------------------------
class TextBlock(_Model):
    type: Literal["text"] = "text"
    text: str


class ToolCall(_Model):
    """A complete tool call.

    When the model's arguments did not parse as a JSON object, the call still
    completes (so the turn can tell the model and let it try again, see
    ``backend.agents.loop``) with ``arguments`` empty and ``arguments_error``
    saying what was wrong, with an excerpt of the raw text. Such a call never runs.
    """

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    arguments_error: str | None = None

    @classmethod
    def from_raw(
        cls, call_id: str, name: str, raw: str, empty: dict[str, Any] | None = None
    ) -> ToolCall:
        """The call for the arguments text ``raw`` as the model streamed it; ``empty``
        stands for blank text. Text that is not a JSON object is recorded, not raised."""
        if not raw.strip():
            return cls(id=call_id, name=name, arguments=dict(empty or {}))
        try:
            arguments = json.loads(raw)
        except ValueError as exc:  # JSONDecodeError, and a number too large to read
            problem = f"its arguments are not valid JSON ({exc})"
        else:
            if isinstance(arguments, dict):
                return cls(id=call_id, name=name, arguments=arguments)
            problem = f"its arguments are a JSON {type(arguments).__name__}, not an object"
        excerpt = raw if len(raw) <= _EXCERPT else raw[: _EXCERPT - 1] + "…"
        return cls(id=call_id, name=name, arguments_error=f"{problem}: {excerpt}")


class ToolUseBlock(_Model):
    type: Literal["tool_use"] = "tool_use"
    call: ToolCall


class ToolResultBlock(_Model):
    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    content: str
    is_error: bool = False


ContentBlock = Annotated[TextBlock | ToolUseBlock | ToolResultBlock, Field(discriminator="type")]


class ChatMessage(_Model):
    role: Literal["user", "assistant"]
    content: list[ContentBlock]

    @classmethod
    def user(cls, text: str) -> ChatMessage:
        return cls(role="user", content=[TextBlock(text=text)])

    @classmethod
    def assistant(cls, text: str = "", calls: list[ToolCall] | None = None) -> ChatMessage:
        blocks: list[ContentBlock] = [TextBlock(text=text)] if text else []
        blocks.extend(ToolUseBlock(call=c) for c in calls or [])
        return cls(role="assistant", content=blocks)

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


class ToolSpec(_Model):
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


DEFAULT_MAX_TOKENS = 4096
"""The output limit sent when the config sets none."""


class ChatOptions(_Model):
    model: str = Field(min_length=1)
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    # Overall deadline for one call, retries and a trickling stream included.
    deadline_s: float = Field(default=120.0, gt=0)
    # Names the requests that share a prompt prefix (an agent in a session), for a
    # provider that routes on it to the machine holding that prefix's cache (OpenAI's
    # prompt_cache_key).
    cache_key: str | None = Field(default=None, max_length=64)


NO_TOOL = "none"
"""``ChatRequest.tool_choice`` for a reply that must be text (every vendor's "none")."""


class ChatRequest(_Model):
    system: str | None = None
    messages: list[ChatMessage]
    tools: list[ToolSpec] = Field(default_factory=list)
    options: ChatOptions
    # The name of a tool in ``tools`` the model must call (OpenAI's tool_choice naming a
    # function, Anthropic's {"type": "tool"}); NO_TOOL: it may call none this time (the
    # tools stay listed); None: the provider's own tool_choice.
    tool_choice: str | None = None


# -- usage -----------------------------------------------------------------------
class Usage(_Model):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # Counted locally (``backend.llm.token_estimate``) because the server reported
    # none; a sum with any estimated part is estimated.
    estimated: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            estimated=self.estimated or other.estimated,
        )

    @property
    def empty(self) -> bool:
        """No token counted at all: the server sent no usage (or only zeros)."""
        return not (
            self.input_tokens
            or self.output_tokens
            or self.cache_read_tokens
            or self.cache_write_tokens
        )


StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "interrupted", "cancelled", "error"
]


# -- stream events ---------------------------------------------------------------
class TextDelta(_Model):
    kind: Literal["text_delta"] = "text_delta"
    text: str


class ReasoningDelta(_Model):
    """A piece of the model's reasoning (summary): never part of the answer text."""

    kind: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


class ToolCallStarted(_Model):
    kind: Literal["tool_call_started"] = "tool_call_started"
    index: int
    id: str
    name: str


class ToolCallArgsDelta(_Model):
    kind: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    fragment: str


class ToolCallCompleted(_Model):
    kind: Literal["tool_call"] = "tool_call"
    index: int
    call: ToolCall


class UsageReported(_Model):
    kind: Literal["usage"] = "usage"
    usage: Usage


class StreamStopped(_Model):
    kind: Literal["stop"] = "stop"
    reason: StopReason


class RetryScheduled(_Model):
    """Emitted by the retrying client, never by an adapter."""

    kind: Literal["retry"] = "retry"
    attempt: int
    delay_s: float
    error: str


StreamEvent = Annotated[
    TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallArgsDelta
    | ToolCallCompleted
    | UsageReported
    | StreamStopped
    | RetryScheduled,
    Field(discriminator="kind"),
]


class ChatResult(_Model):
    """The outcome of one model call, however it ended."""

    provider: str
    model: str
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = "end_turn"
    # The stream was cut after output began: text is partial, no tool may run.
    interrupted: bool = False
    attempts: int = 1
    error: str | None = None

    def as_message(self) -> ChatMessage:
        return ChatMessage.assistant(self.text, self.tool_calls)
