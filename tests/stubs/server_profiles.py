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

llama-cpp-python cannot stream a tool call: asked to stream with ``tool_choice:
"auto"``, its handler raises once the model picks a tool, after the 200 and its
headers are out, so the body is empty (no chunk, no ``[DONE]``); any other
string choice (``"required"``) fails an ``assert``: an empty 200 streamed, HTTP
500 with an empty message unstreamed. The stub does the same. (Its real handler
also cannot write text while tools are offered; the stub does, as a server with
a tool-aware chat template would, so a turn can end.)
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Literal

from tests.stubs.llm_script import (
    EventKind,
    Reply,
    llama_cpp_rejection,
    openai_events,
    sse,
    whole_reply,
)

StubProfile = Literal["openai", "llama-cpp", "llama-cpp-python", "ollama", "vllm", "lm-studio"]
"""``llama-cpp`` is llama.cpp's ``llama-server``; ``llama-cpp-python`` the Python server
of the issue's report (each detects as the profile of its name)."""

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
    streams_tool_calls: bool = True  # False: a streamed tool call is an empty 200


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
        streams_tool_calls=False,
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
    empty_streams: int = 0
    """Streams answered with an empty 200 (a tool call it cannot stream)."""

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
        if _asserts(quirks, body) and not body.get("stream"):
            error = {"message": "", "type": "internal_server_error", "param": None, "code": None}
            return 500, {"error": error}  # str(AssertionError()) is empty
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
        reply = self._as_heard(reply, body)
        auto = body.get("tools") and body.get("tool_choice") == "auto"
        if _asserts(quirks, body) or (not quirks.streams_tool_calls and auto and reply.tool_calls):
            self.empty_streams += 1
            return []  # the handler raised after the headers: no chunk, no [DONE]
        events = openai_events(reply, model, usage_asked and quirks.usage_chunk)
        if quirks.reasoning_field is None or not self.reasoning:
            return events
        created = int(time.time())
        thinking: list[tuple[EventKind, bytes]] = [
            ("meta", _chunk(model, created, {quirks.reasoning_field: piece, "content": None}))
            for piece in _pieces(self.reasoning)
        ]
        return events[:1] + thinking + events[1:]

    def whole(self, reply: Reply, model: str, body: dict[str, Any]) -> dict[str, Any]:
        """The unstreamed reply's JSON as this server sends it (reasoning in its field)."""
        quirks = self._quirks
        if quirks is None:
            return whole_reply("openai", reply, model)
        payload = whole_reply("openai", self._as_heard(reply, body), model)
        if quirks.reasoning_field is not None and self.reasoning:
            payload["choices"][0]["message"][quirks.reasoning_field] = self.reasoning
        return payload

    def _as_heard(self, reply: Reply, body: dict[str, Any]) -> Reply:
        """``reply`` as the server makes it from ``body``: without tool calls when it
        ignores tools sent without ``tool_choice``."""
        quirks = self._quirks
        if quirks is None or not quirks.needs_tool_choice:
            return reply
        if not body.get("tools") or body.get("tool_choice"):
            return reply
        self.tools_ignored += 1
        text = reply.text or ["I have no tool to call."]
        return dataclasses.replace(reply, tool_calls=[], text=text, stop_reason="stop")


def _asserts(quirks: _Quirks, body: dict[str, Any]) -> bool:
    """llama-cpp-python's handler takes only "auto", "none" or a named function with
    tools; any other string choice fails its ``assert``."""
    choice = body.get("tool_choice")
    return (
        not quirks.streams_tool_calls
        and bool(body.get("tools"))
        and isinstance(choice, str)
        and choice not in ("auto", "none")
    )


def _chunk(model: str, created: int, delta: dict[str, Any]) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": None}
    return sse({"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": created,
                "model": model, "choices": [choice]})  # fmt: skip


def _pieces(text: str, size: int = 12) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]
