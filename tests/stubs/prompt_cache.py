"""Prompt caching in the model-API stub, the way the vendors document it.

Off unless a test or benchmark sets ``LLMStub.prompt_cache = PromptCache()``; then
every scripted :class:`~tests.stubs.llm_script.Reply` has its input usage worked out
from the request itself (the reply's own output tokens are kept).

Tokens are counted as the stub likes: ``ceil(chars / 4)`` of the compact JSON of
each part as the client sent it (key order kept, so a schema re-serialised in
another order misses, as it would on the real service).

Anthropic (Messages API, explicit caching):

* the prompt is rendered in the order tools -> system -> messages; every tool,
  system block and message content block is one block (a string system prompt is
  one block); a message's role belongs to its first block;
* a block carrying ``cache_control`` is a breakpoint; more than 4 is a 400
  ``invalid_request_error``, like the real API;
* a read: at each breakpoint the service looks back over at most 20 block
  boundaries (the breakpoint's own included) for a cached prefix; the longest hit
  is read (``cache_read_input_tokens``) and its time to live refreshed;
* a write: the prefix at each breakpoint longer than what was read is written on
  first sight, if it reaches the model's minimum (1024 tokens; 2048 for Haiku
  models), and lives ``ttl_s`` (5 minutes) from its last use;
  ``cache_creation_input_tokens`` counts the tokens from the read up to the
  furthest breakpoint written; ``input_tokens`` is the rest.

OpenAI (Chat Completions and Responses, automatic caching): the prompt is the
compact JSON of the tools, then (Responses) the instructions, then each message or
input item. The longest prefix seen before, counted in 128-token steps from 1024
tokens, is read; it is reported as ``cached_tokens`` inside the prompt tokens. Every
step of every request is remembered for ``ttl_s``. ``prompt_cache_key`` only routes
requests on the real service, so the stub ignores it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.stubs.llm_script import Reply, StubUsage, Vendor

CHARS_PER_TOKEN = 4
TTL_S = 300.0
MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
ANTHROPIC_MIN_TOKENS = 1024
HAIKU_MIN_TOKENS = 2048
OPENAI_MIN_TOKENS = 1024
OPENAI_STEP_TOKENS = 128


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _without_marker(block: Any) -> Any:
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _has_marker(block: Any) -> bool:
    return isinstance(block, dict) and block.get("cache_control") is not None


class PromptCache:
    """The cache one stub server keeps, shared by all its requests (thread-safe)."""

    def __init__(self, *, ttl_s: float = TTL_S, clock: Callable[[], float] = time.monotonic):
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._anthropic: dict[str, float] = {}  # prefix hash -> expiry
        self._openai: dict[str, float] = {}

    # -- what the stub calls ----------------------------------------------------------
    def refusal(self, vendor: Vendor, body: object) -> str | None:
        """Why the real API would refuse ``body`` for its cache markers, or None."""
        if vendor != "anthropic" or not isinstance(body, dict):
            return None
        marked = sum(1 for block in _anthropic_blocks(body) if _has_marker(block[1]))
        if marked > MAX_BREAKPOINTS:
            return (
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {marked}."
            )
        return None

    def priced(self, vendor: Vendor, body: object, reply: Reply) -> Reply:
        """``reply`` with its input usage as the cache makes it for ``body``."""
        if not isinstance(body, dict):
            return reply
        usage = self.anthropic(body) if vendor == "anthropic" else self.openai(vendor, body)
        usage.output_tokens = reply.usage.output_tokens
        return dataclasses.replace(reply, usage=usage)

    # -- Anthropic ---------------------------------------------------------------------
    def anthropic(self, body: dict[str, Any]) -> StubUsage:
        digest = hashlib.sha256()
        total = 0
        ends: list[tuple[str, int, bool]] = []  # per block: prefix hash, tokens so far, marked
        for role, block in _anthropic_blocks(body):
            text = role + _compact(_without_marker(block))
            digest.update(text.encode())
            total += tokens(text)
            ends.append((digest.copy().hexdigest(), total, _has_marker(block)))
        haiku = "haiku" in str(body.get("model", ""))
        minimum = HAIKU_MIN_TOKENS if haiku else ANTHROPIC_MIN_TOKENS
        now = self._clock()
        with self._lock:
            read, hit = 0, ""
            for n, (_, _, marked) in enumerate(ends):
                if not marked:
                    continue
                for key, upto, _ in reversed(ends[max(0, n - LOOKBACK_BLOCKS + 1) : n + 1]):
                    if self._anthropic.get(key, 0.0) > now:
                        if upto > read:
                            read, hit = upto, key
                        break
            if read:
                self._anthropic[hit] = now + self.ttl_s
            written = read
            for key, upto, marked in ends:
                if marked and upto > read and upto >= minimum:
                    self._anthropic[key] = now + self.ttl_s
                    written = max(written, upto)
        return StubUsage(
            input_tokens=total - written,
            cache_read_tokens=read,
            cache_write_tokens=written - read,
        )

    # -- OpenAI -----------------------------------------------------------------------
    def openai(self, vendor: Vendor, body: dict[str, Any]) -> StubUsage:
        text = prompt_text(vendor, body)
        total = tokens(text)
        digest = hashlib.sha256()
        steps: list[tuple[str, int]] = []
        done = 0
        for upto in range(OPENAI_MIN_TOKENS, total + 1, OPENAI_STEP_TOKENS):
            digest.update(text[done * CHARS_PER_TOKEN : upto * CHARS_PER_TOKEN].encode())
            done = upto
            steps.append((digest.copy().hexdigest(), upto))
        now = self._clock()
        with self._lock:
            cached = 0
            for key, upto in steps:
                if self._openai.get(key, 0.0) <= now:
                    break
                cached = upto
            for key, _ in steps:
                self._openai[key] = now + self.ttl_s
        return StubUsage(input_tokens=total - cached, cache_read_tokens=cached)


def prompt_text(vendor: Vendor, body: dict[str, Any]) -> str:
    """The prompt as the cache compares it (Anthropic: its blocks without the markers)."""
    if vendor == "anthropic":
        return "".join(role + _compact(_without_marker(b)) for role, b in _anthropic_blocks(body))
    parts: list[Any] = [body.get("tools") or []]
    if vendor == "responses":
        parts.append(body.get("instructions") or "")
        items = body.get("input")
        parts.extend(items if isinstance(items, list) else [items])
    else:
        parts.extend(body.get("messages") or [])
    return "".join(_compact(part) for part in parts)


def _common_start(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share (bisected on slices)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def seen_before_share(texts: list[str]) -> float:
    """The ceiling of any prefix cache over these prompts, in order: the share of all
    their characters that repeat the start of an earlier prompt."""
    seen = 0
    for n, text in enumerate(texts):
        seen += max((_common_start(text, t) for t in texts[:n]), default=0)
    total = sum(len(t) for t in texts)
    return seen / total if total else 0.0


def _anthropic_blocks(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The request's blocks in the order the prompt is rendered: tools, system, messages."""
    blocks: list[tuple[str, Any]] = [("tool", t) for t in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str) and system:
        blocks.append(("system", {"type": "text", "text": system}))
    elif isinstance(system, list):
        blocks.extend(("system", b) for b in system)
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        role = str(message.get("role"))
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for n, block in enumerate(content if isinstance(content, list) else []):
            blocks.append((role if n == 0 else "", block))
    return blocks
