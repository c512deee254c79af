"""What each OpenAI-compatible server accepts and sends: its compatibility profile.

"OpenAI-compatible" servers differ in small ways that break a tool-using turn:
one refuses ``"content": null`` on an assistant tool-call message, one ignores
``tools`` unless ``tool_choice`` is sent, one silently drops
``max_completion_tokens`` (so the answer has no length limit at all), several
stream the model's reasoning in a field of their own. A :class:`ServerProfile`
records those facts for one server family, and :func:`request_options` turns
them into the keyword arguments of one ``chat.completions.create`` call.

Sources, per profile (read when these profiles were written):

- ``openai``: the Chat Completions API reference. ``content`` may be null when
  ``tool_calls`` is set; ``max_tokens`` is deprecated and refused by the
  reasoning models ("Unsupported parameter: 'max_tokens' ... Use
  'max_completion_tokens' instead"); ``stream_options.include_usage`` adds a
  final chunk with empty ``choices`` and the usage; ``parallel_tool_calls`` is
  accepted by the GPT models but refused by the o-series ("Unsupported
  parameter: 'parallel_tool_calls' is not supported with this model", o3-mini,
  o3, o4-mini), so it is never sent; ``/v1/models`` entries are ``owned_by``
  "openai", "system" or "openai-internal".
- ``llama-cpp-python``: its server 0.3.36 (``llama_cpp/server``,
  ``llama_chat_format.chatml_function_calling``). The assistant message's
  ``content`` is ``NotRequired[str]``, so null is a pydantic error answered
  with HTTP 500; the function-calling handlers use ``tools`` only when
  ``tool_choice`` is given, and only ``"auto"`` or a named function: any other
  string (``"required"``) fails an ``assert`` (HTTP 500 with an empty message,
  or an empty 200 stream); a tool call picked under ``"auto"`` cannot be
  streamed (``ValueError: Automatic streaming tool choice is not supported``,
  raised after the 200 and its headers are out: an empty stream), while the
  same request unstreamed returns it. The request model ignores unknown
  fields, so ``max_completion_tokens``, ``stream_options`` and
  ``parallel_tool_calls`` are silently dropped and no usage chunk is streamed
  (an unstreamed reply carries usage). ``/v1/models`` says ``owned_by: "me"``
  behind uvicorn.
- ``llama-cpp``: llama.cpp's own ``llama-server`` (``tools/server``):
  ``owned_by: "llamacpp"`` and a ``Server: llama.cpp`` header; ``""`` content
  is taken; ``max_tokens`` and ``max_completion_tokens`` are aliases of
  ``n_predict``; usage is streamed when ``include_usage`` is asked; reasoning
  arrives as ``delta.reasoning_content``; tool calls stream as indexed deltas
  with ``--jinja`` (llama.cpp pull request 12379, May 2025) and
  ``tool_choice`` takes ``"required"``; ``parallel_tool_calls`` is read
  (default: what the chat template supports).
- ``ollama``: ``openai/openai.go``. ``ChatCompletionRequest`` knows
  ``max_tokens`` but not ``max_completion_tokens``, ``tool_choice`` or
  ``parallel_tool_calls`` (Go's JSON decoder drops them silently); null content
  is accepted with tool calls; ``stream_options.include_usage`` is honoured;
  reasoning arrives as ``delta.reasoning``; ``/v1/models`` entries are
  ``owned_by`` the model's namespace, "library" for the official models.
- ``vllm``: the OpenAI-compatible server docs. ``max_completion_tokens``
  preferred (``max_tokens`` deprecated but accepted), ``include_usage``
  honoured, ``parallel_tool_calls`` accepted, ``tool_choice: "auto"`` needs
  ``--enable-auto-tool-choice`` (which tool calling needs anyway); reasoning as
  ``delta.reasoning`` (``reasoning_content`` before vLLM's rename, removed in
  2026); ``owned_by: "vllm"`` behind uvicorn.
- ``lm-studio``: the LM Studio OpenAI-compatibility docs and client projects
  built on them: ``max_tokens``, ``tool_choice`` forwarded, reasoning as
  ``reasoning_content``, ``/v1/models`` entries ``owned_by:
  "organization_owner"``. What it does with ``parallel_tool_calls`` and
  ``max_completion_tokens`` is not documented, so neither is sent.
- ``generic``: any other server, or a probe that failed: the choices every
  server above accepts (``""`` content, ``max_tokens``, ``tool_choice``);
  usage is read when it comes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

import openai

ProfileName = Literal[
    "openai", "llama-cpp", "llama-cpp-python", "ollama", "vllm", "lm-studio", "generic"
]
ProfileSetting = Literal[
    "auto", "openai", "llama-cpp", "llama-cpp-python", "ollama", "vllm", "lm-studio", "generic"
]
"""``[providers.NAME] profile``: a profile by name, or "auto" to ask the server."""

PROFILE_NAMES: tuple[ProfileName, ...] = get_args(ProfileName)

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Delta fields that carry reasoning text: llama.cpp, LM Studio and DeepSeek send
``reasoning_content``; Ollama, vLLM (since its rename) and OpenRouter ``reasoning``."""


@dataclass(frozen=True)
class ServerProfile:
    name: ProfileName
    null_content: bool
    """The assistant's tool-call message may carry ``"content": null``; else ``""``."""
    token_limit_field: Literal["max_tokens", "max_completion_tokens"]
    """The field the server reads the output limit from."""
    stream_usage: bool
    """Streams a usage chunk when ``stream_options.include_usage`` is asked."""
    tool_choice: bool
    """Reads ``tool_choice``; llama-cpp-python uses ``tools`` only with it."""
    parallel_tool_calls: bool
    """Accepts ``parallel_tool_calls``. Never sent: every server's default already allows
    parallel calls where the model makes them, and OpenAI's o-series refuse the field."""
    reasoning_field: str | None
    """The delta field its reasoning arrives in (both are read from every server)."""
    stream_tools: bool = True
    """Streams a reply when tools are offered; llama-cpp-python cannot stream a tool
    call, so a request with tools is sent to it unstreamed."""
    required_tool_choice: bool = True
    """Takes ``tool_choice: "required"``; llama-cpp-python takes only "auto" or a name."""


PROFILES: dict[ProfileName, ServerProfile] = {
    "openai": ServerProfile(
        "openai",
        null_content=True,
        token_limit_field="max_completion_tokens",
        stream_usage=True,
        tool_choice=True,
        parallel_tool_calls=False,  # the o-series refuse it
        reasoning_field=None,
    ),
    "llama-cpp": ServerProfile(
        "llama-cpp",
        null_content=False,
        token_limit_field="max_tokens",
        stream_usage=True,  # when include_usage is asked
        tool_choice=True,
        parallel_tool_calls=False,
        reasoning_field="reasoning_content",
    ),
    "llama-cpp-python": ServerProfile(
        "llama-cpp-python",
        null_content=False,
        token_limit_field="max_tokens",
        stream_usage=False,  # never streams one
        tool_choice=True,
        parallel_tool_calls=False,
        reasoning_field=None,
        stream_tools=False,  # a streamed tool call is an empty 200
        required_tool_choice=False,  # an assert fails
    ),
    "ollama": ServerProfile(
        "ollama",
        null_content=True,
        token_limit_field="max_tokens",
        stream_usage=True,
        tool_choice=False,
        parallel_tool_calls=False,
        reasoning_field="reasoning",
    ),
    "vllm": ServerProfile(
        "vllm",
        null_content=True,
        token_limit_field="max_completion_tokens",
        stream_usage=True,
        tool_choice=True,
        parallel_tool_calls=True,
        reasoning_field="reasoning",
    ),
    "lm-studio": ServerProfile(
        "lm-studio",
        null_content=False,
        token_limit_field="max_tokens",
        stream_usage=True,
        tool_choice=True,
        parallel_tool_calls=False,
        reasoning_field="reasoning_content",
    ),
    "generic": ServerProfile(
        "generic",
        null_content=False,
        token_limit_field="max_tokens",
        stream_usage=True,
        tool_choice=True,
        parallel_tool_calls=False,
        reasoning_field=None,
    ),
}


def is_openai_host(base_url: str | None) -> bool:
    """OpenAI's own API: no probe needed (None is the SDK's default, api.openai.com)."""
    return base_url is None or "api.openai.com" in base_url


def request_options(
    profile: ServerProfile, *, limit: int | None, stream: bool = True
) -> dict[str, Any]:
    """The profile-dependent keyword arguments of ``chat.completions.create``
    (``tool_choice`` aside: see the adapter).

    ``openai.omit`` leaves a field out of the body entirely, so a server that
    would refuse it (or silently drop it) never sees it. ``stream_options`` goes
    to every server that is streamed to (those that know it honour it, the
    others ignore it) and to none that is not: OpenAI refuses it without
    ``stream``.
    """
    omit = openai.omit
    limit_field = profile.token_limit_field
    return {
        "max_tokens": limit if limit_field == "max_tokens" else omit,
        "max_completion_tokens": limit if limit_field == "max_completion_tokens" else omit,
        "stream_options": {"include_usage": True} if stream else omit,
    }
