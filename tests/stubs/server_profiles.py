"""The LLM stub playing a real OpenAI-compatible server's quirks.

``LLMStub(profile=...)`` holds a :class:`ServerPlay`: how that server family
answers ``GET /v1/models`` (its ``owned_by`` and ``Server`` header, which the
adapter's auto-detection reads), which requests it refuses, whether it streams
a usage chunk, whether it uses ``tools`` without ``tool_choice``, and the field
its reasoning arrives in. The facts and their sources are in
``backend/llm/openai_chat/profiles.py``.

Where a real server silently *drops* a field it does not know (llama-cpp-python
and Ollama ignore ``max_completion_tokens``, so the answer has no length limit),
the stub *refuses* it with HTTP 400: a request that would lose its meaning on
the real server fails a test here instead of passing unnoticed.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Literal

from tests.stubs.llm_script import EventKind, Reply, llama_cpp_rejection, openai_events, sse

StubProfile = Literal["openai", "llama-cpp", "llama-cpp-python", "ollama", "vllm", "lm-studio"]
"""``llama-cpp`` is llama.cpp's ``llama-server``; ``llama-cpp-python`` the Python server
of the issue's report (both detect as the ``llama-cpp`` profile)."""

STUB_PROFILES: tuple[StubProfile, ...] = (
    "openai",
    "llama-cpp",
    "llama-cpp-python",
    "ollama",
    "vllm",
    "lm-studio",
)


@dataclass(frozen=True)
class _Quirks:
    owned_by: str
    server: str | None  # the Server header
    refuses: tuple[str, ...]  # request fields answered with 400
    usage_chunk: bool  # streams usage when include_usage is asked
    needs_tool_choice: bool  # ignores tools without tool_choice
    null_content_500: bool  # llama-cpp-python's pydantic error
    reasoning_field: str | None
    model_id: str


_QUIRKS: dict[StubProfile, _Quirks] = {
    "openai": _Quirks(
        "system", None, ("max_tokens", "parallel_tool_calls"), True, False, False, None, "o4-mini"
    ),
    "llama-cpp": _Quirks(
        "llamacpp", "llama.cpp", (), True, False, False, "reasoning_content", "qwen3-0.6b.gguf"
    ),
    "llama-cpp-python": _Quirks(
        "me",
        "uvicorn",
        ("max_completion_tokens", "parallel_tool_calls"),
        False,
        True,
        True,
        None,
        "gemma-3-270m",
    ),
    "ollama": _Quirks(
        "library",
        None,
        ("max_completion_tokens", "parallel_tool_calls"),
        True,
        False,
        False,
        "reasoning",
        "qwen3:0.6b",
    ),
    "vllm": _Quirks("vllm", "uvicorn", (), True, False, False, "reasoning", "Qwen/Qwen3-0.6B"),
    "lm-studio": _Quirks(
        "organization_owner",
        None,
        ("max_completion_tokens", "parallel_tool_calls"),
        True,
        False,
        False,
        "reasoning_content",
        "qwen/qwen3-4b",
    ),
}


@dataclass
class ServerPlay:
    """One server family's behaviour on the OpenAI routes; ``name=None`` is the polite stub."""

    name: StubProfile | None = None
    reasoning: str | None = None
    """Streamed before the answer in the server's reasoning field (profiles that have one)."""
    probes: int = 0
    """``GET /v1/models`` requests answered (kept out of the stub's request record)."""
    tools_ignored: int = 0
    """Requests whose tools the server ignored (no ``tool_choice``)."""

    @classmethod
    def of(cls, profile: StubProfile | None, *, llama_cpp: bool = False) -> ServerPlay:
        return cls(profile or ("llama-cpp-python" if llama_cpp else None))

    @property
    def _quirks(self) -> _Quirks | None:
        return _QUIRKS[self.name] if self.name is not None else None

    @property
    def headers(self) -> dict[str, str]:
        quirks = self._quirks
        return {"server": quirks.server} if quirks is not None and quirks.server else {}

    def models(self) -> tuple[int, dict[str, Any]]:
        """The answer to ``GET /v1/models``: 404 from the polite stub, as before profiles."""
        self.probes += 1
        quirks = self._quirks
        if quirks is None:
            return 404, {"error": {"message": "stub: no route GET /v1/models"}}
        entry = {
            "id": quirks.model_id,
            "object": "model",
            "created": 0,
            "owned_by": quirks.owned_by,
        }
        return 200, {"object": "list", "data": [entry]}

    def refusal(self, body: object) -> tuple[int, dict[str, Any]] | None:
        """The error the server answers this request with, or None."""
        quirks = self._quirks
        if quirks is None or not isinstance(body, dict):
            return None
        if quirks.null_content_500 and (rejection := llama_cpp_rejection(body)):
            return 500, rejection
        for name in quirks.refuses:
            if name in body:
                message = (
                    f"stub ({self.name}): {name!r} is not supported by this server "
                    f"(the real one refuses or silently ignores it)"
                )
                error = {"message": message, "type": "invalid_request_error", "param": name,
                         "code": "unsupported_parameter"}  # fmt: skip
                return 400, {"error": error}
        return None

    def events(
        self, reply: Reply, model: str, body: dict[str, Any]
    ) -> list[tuple[EventKind, bytes]]:
        """The stream's chunks for ``reply`` as this server sends them."""
        usage_asked = bool((body.get("stream_options") or {}).get("include_usage"))
        quirks = self._quirks
        if quirks is None:
            return openai_events(reply, model, usage_asked)
        if quirks.needs_tool_choice and body.get("tools") and not body.get("tool_choice"):
            self.tools_ignored += 1
            text = reply.text or ["I have no tool to call."]
            reply = dataclasses.replace(reply, tool_calls=[], text=text, stop_reason="stop")
        events = openai_events(reply, model, usage_asked and quirks.usage_chunk)
        if quirks.reasoning_field is None or not self.reasoning:
            return events
        created = int(time.time())
        thinking: list[tuple[EventKind, bytes]] = [
            ("meta", _chunk(model, created, {quirks.reasoning_field: piece, "content": None}))
            for piece in _pieces(self.reasoning)
        ]
        return events[:1] + thinking + events[1:]


def _chunk(model: str, created: int, delta: dict[str, Any]) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": None}
    return sse({"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": created,
                "model": model, "choices": [choice]})  # fmt: skip


def _pieces(text: str, size: int = 12) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]
