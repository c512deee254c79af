"""The rest of the seed's hooks ("LLM Hooks": the execution flow and the per-agent lists).

Each is a :class:`Hook` factory taking the sink or provider that does the work, so the
hook itself stays a quick, synchronous look at the call (the engine's
``backend.engine.seed_hook_work`` writes what they record off the call):

- ``history_injection`` (pre-prompt, normal): the session's latest actions, as
  ``state_update`` noted them, in the turn's context block.
- ``cross_session_query_handler`` (pre-prompt, early, Archivalist): the query's scope,
  ``all_sessions`` when the request asks about other sessions, else the session's id
  (``data.extra["query_scope"]``); the ``session_scoping`` pre-tool hook still decides
  whether the Archivalist may read them.
- ``response_logging`` (post-prompt, normal): every model response logged, redacted.
- ``pattern_extraction`` (post-prompt, late): a response's ``Pattern: NAME - TEXT`` lines
  recorded as the session's patterns.
- ``file_operation_tracking`` (pre-tool, first, Engineer): every file op the Engineer
  starts (path and op), before it runs; the post-tool ``file_tracking`` records writes
  once they succeed.
- ``state_update`` (post-tool, late): the session's current step, from the call's outcome.
- ``pattern_promotion_check`` (post-tool, normal, Archivalist): a recorded pattern used in
  two sessions or more is promoted to every session.

:data:`SEED_HOOKS` lists every hook the seed names, with where it is built, so the hook
list (:func:`seed_hook_rows`) shows each one and whether this registry has it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from backend.redaction import Redactor
from backend.skills.hooks.registry import (
    Hook,
    HookKind,
    HookPriority,
    HookRegistry,
    PromptData,
    ToolCallData,
)

FILE_OP_PREFIX = "engineer.file."
PATTERN_RECORD_OP = "archivalist.pattern.record"
PROMOTE_AT_SESSIONS = 2  # a pattern used in this many sessions is worth every session's
_PATTERN_LINE = re.compile(
    r"^\s*[-*]?\s*pattern:\s*(?P<name>[^-—:\n]{2,80})\s*[-—:]\s*(?P<text>.+)$", re.I | re.M
)
_CROSS_SESSION = re.compile(
    r"\b(other|all|previous|earlier|past)\s+sessions?\b|\bacross sessions\b", re.I
)


@dataclass(frozen=True)
class FileOperation:
    session_id: str
    agent: str
    op: str
    path: str


@dataclass(frozen=True)
class ExtractedPattern:
    session_id: str
    agent: str
    name: str
    pattern: str


@dataclass(frozen=True)
class StepDone:
    session_id: str
    agent: str
    op: str
    ok: bool
    detail: str  # the error code, or "" on success


def history_injection(recent: Callable[[str], list[str]]) -> Hook:
    """Inject ``recent(session_id)``: what was done lately in the session, newest last."""

    def inject(data: PromptData) -> PromptData:
        lines = recent(data.session_id)
        if lines:
            data.context.append("## Recent in this session\n" + "\n".join(f"- {x}" for x in lines))
        return data

    return Hook("history_injection", HookKind.PRE_PROMPT, inject, HookPriority.NORMAL)


def cross_session_query_handler() -> Hook:
    """The Archivalist's query scope for this request."""

    def scope(data: PromptData) -> PromptData:
        crossing = bool(_CROSS_SESSION.search(data.input))
        data.extra["query_scope"] = "all_sessions" if crossing else data.session_id
        if crossing:
            data.context.append(
                "## Query scope\nThe request is about other sessions: query with "
                "cross_session (entries of sessions you may not read are refused)."
            )
        return data

    return Hook(
        "cross_session_query_handler", HookKind.PRE_PROMPT, scope, HookPriority.EARLY,
        frozenset({"archivalist"}),
    )  # fmt: skip


def response_logging(
    logger: logging.Logger | None = None, *, redactor: Redactor | None = None
) -> Hook:
    """Log each model response: who, which model, how it stopped, tokens, a redacted head."""
    log = logger or logging.getLogger("sylk.responses")

    def record(data: PromptData) -> None:
        result: Any = data.result
        if result is None:
            return
        text = str(getattr(result, "text", "") or "")
        head = redactor.text(text[:200]) if redactor is not None else text[:200]
        usage = getattr(result, "usage", None)
        log.info(
            "response agent=%s session=%s model=%s stop=%s tool_calls=%d input_tokens=%s "
            "output_tokens=%s text=%r",
            data.agent, data.session_id, getattr(result, "model", "?"),
            getattr(result, "stop_reason", "?"), len(getattr(result, "tool_calls", []) or []),
            getattr(usage, "input_tokens", 0), getattr(usage, "output_tokens", 0), head,
        )  # fmt: skip

    return Hook("response_logging", HookKind.POST_PROMPT, record, HookPriority.NORMAL)


def extract_patterns(text: str) -> list[tuple[str, str]]:
    """(name, pattern) for each ``Pattern: NAME - TEXT`` line of ``text``."""
    return [(m["name"].strip(), m["text"].strip()) for m in _PATTERN_LINE.finditer(text)]


def pattern_extraction(record: Callable[[ExtractedPattern], None]) -> Hook:
    """Patterns a response states explicitly, for the session's learning."""

    def extract(data: PromptData) -> None:
        text = str(getattr(data.result, "text", "") or "")
        for name, pattern in extract_patterns(text):
            record(ExtractedPattern(data.session_id, data.agent, name, pattern))

    return Hook("pattern_extraction", HookKind.POST_PROMPT, extract, HookPriority.LATE)


def file_operation_tracking(record: Callable[[FileOperation], None]) -> Hook:
    """Every file op the Engineer starts, with its path, before it runs."""

    def track(data: ToolCallData) -> None:
        path = data.args.get("path")
        if (
            data.dry_run
            or not data.skill.op.startswith(FILE_OP_PREFIX)
            or not isinstance(path, str)
        ):
            return
        record(FileOperation(data.ctx.session_id, data.ctx.agent, data.skill.op, path))

    return Hook(
        "file_operation_tracking", HookKind.PRE_TOOL, track, HookPriority.FIRST,
        frozenset({"engineer"}),
    )  # fmt: skip


def state_update(record: Callable[[StepDone], None]) -> Hook:
    """The session's current step: what the last call did and whether it worked."""

    def update(data: ToolCallData) -> None:
        if data.dry_run:
            return
        detail = data.error.code.value if data.error is not None else ""
        record(StepDone(data.ctx.session_id, data.ctx.agent, data.skill.op, data.ok, detail))

    return Hook("state_update", HookKind.POST_TOOL, update, HookPriority.LATE)


def pattern_promotion_check(promote: Callable[[str, str], None]) -> Hook:
    """``promote(entry_id, reason)`` for a recorded pattern used in enough sessions that
    the chronicle's own count (uses) did not promote yet."""

    def check(data: ToolCallData) -> ToolCallData:
        if not data.ok or data.skill.op != PATTERN_RECORD_OP or data.result is None:
            return data
        result = data.result.result if isinstance(data.result.result, dict) else {}
        sessions = int(result.get("sessions") or 0)
        entry = result.get("entry")
        entry = entry if isinstance(entry, dict) else {}
        due = not result.get("promoted_now") and sessions >= PROMOTE_AT_SESSIONS
        if due and isinstance(entry.get("id"), str):
            promote(entry["id"], f"used in {sessions} sessions")
        data.annotations["pattern_promotion"] = {"sessions": sessions, "promoted": due}
        return data

    return Hook(
        "pattern_promotion_check", HookKind.POST_TOOL, check, HookPriority.NORMAL,
        frozenset({"archivalist"}),
    )  # fmt: skip


# -- the hook list --------------------------------------------------------------------
SEED_HOOKS: tuple[tuple[str, HookKind, str], ...] = (
    ("session_context_injection", HookKind.PRE_PROMPT, "builtin"),
    ("route_cache_lookup", HookKind.PRE_PROMPT, "builtin (Guide)"),
    ("cross_session_query_handler", HookKind.PRE_PROMPT, "seed_hooks (Archivalist)"),
    ("history_injection", HookKind.PRE_PROMPT, "seed_hooks"),
    ("token_budget_check", HookKind.PRE_PROMPT, "budgets"),
    ("route_cache_store", HookKind.POST_PROMPT, "builtin (Guide)"),
    ("response_logging", HookKind.POST_PROMPT, "seed_hooks"),
    ("pattern_extraction", HookKind.POST_PROMPT, "seed_hooks"),
    ("file_operation_tracking", HookKind.PRE_TOOL, "seed_hooks (Engineer)"),
    ("permission_check", HookKind.PRE_TOOL, "builtin"),
    ("parameter_validation", HookKind.PRE_TOOL, "builtin"),
    ("session_scoping", HookKind.PRE_TOOL, "builtin"),
    ("result_logging", HookKind.POST_TOOL, "builtin"),
    ("file_tracking", HookKind.POST_TOOL, "builtin"),
    ("consultation_logging", HookKind.POST_TOOL, "agents (Engineer)"),
    ("pattern_promotion_check", HookKind.POST_TOOL, "seed_hooks (Archivalist)"),
    ("state_update", HookKind.POST_TOOL, "seed_hooks"),
)
"""Every hook the seed names: (name, kind, where it is built). ``token_accounting`` is
the usage rows every model call writes (``backend.agents.turns``), not a hook;
``entry_session_tagging`` is ``session_scoping`` (see ``backend.skills.hooks.agents``)."""


def seed_hook_rows(hooks: HookRegistry) -> list[dict[str, Any]]:
    """The hook list: each seed hook, its kind, where it is built, whether installed."""
    return [
        {"name": name, "kind": kind.value, "built_in": where, "installed": name in hooks}
        for name, kind, where in SEED_HOOKS
    ]
