"""The seed's hooks, as :class:`~backend.skills.hooks.registry.Hook` values to install.

Pre-prompt: session context injection (first; into the turn's context block,
never the system prompt), route cache lookup (early, Guide). Post-prompt: route
cache store (normal, Guide). Pre-tool: permission check (first), parameter
validation (early), session scoping (normal).
Post-tool: file tracking (normal), result logging (late).

The gateway installs the three pre-tool hooks itself (see
:func:`core_tool_hooks`); the others need something from the engine (a
session-context provider, a cache, a logger, a file-record callback) and are
installed by whoever wires them.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from backend.redaction import REDACTED, Redactor
from backend.sessions.ownership import SessionReach
from backend.skills.envelopes import ErrorCode, FieldError
from backend.skills.hooks.registry import (
    Hook,
    HookKind,
    HookPriority,
    PromptData,
    Rejection,
    ToolCallData,
)
from backend.skills.models import OpKind
from backend.skills.registry import Registry
from backend.skills.session_scope import CROSS_SESSION_SCOPE, CROSS_SESSION_TAG, may_read

_SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|authorization)", re.I)
_LOG_VALUE_MAX = 200


def _closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``name`` was most likely meant as (case-insensitive), if any is close."""
    by_lower = {c.lower(): c for c in candidates}
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[found[0]] if found else None


def _param_names(params: type[BaseModel]) -> list[str]:
    names = []
    for name, info in params.model_fields.items():
        names.append(name)
        if isinstance(info.alias, str) and info.alias != name:
            names.append(info.alias)
    return names


def field_errors(
    exc: ValidationError,
    params: type[BaseModel] | None = None,
    args: Mapping[str, Any] | None = None,
) -> list[FieldError]:
    """One entry per failed field; given ``params`` (and ``args``), a top-level unknown or
    missing argument also gets the parameter name the caller most likely meant."""
    valid = _param_names(params) if params is not None else []
    given = [str(k) for k in args] if args is not None else []
    unknown = [k for k in given if k not in valid]
    unfilled = [v for v in valid if v not in given]
    out = []
    for e in exc.errors():
        loc = e["loc"]
        name = str(loc[0]) if len(loc) == 1 else ""
        error = FieldError(
            field=".".join(str(p) for p in loc) or "(args)", message=e["msg"], type=e["type"]
        )
        if name and valid and e["type"] == "extra_forbidden":
            meant = _closest(name, unfilled) or _closest(name, valid)
            if meant:
                error.did_you_mean = meant
                error.message = f"unknown argument {name!r}; did you mean {meant!r}?"
            else:
                error.message = f"unknown argument {name!r}; valid: {', '.join(valid)}"
        elif name and e["type"] == "missing":
            sent = _closest(name, unknown)
            if sent:
                error.did_you_mean = name
                error.message = f"missing {name!r}; you sent {sent!r}: did you mean {name!r}?"
        out.append(error)
    return out


def validation_message(op: str, errors: Sequence[FieldError]) -> str:
    """The error envelope's message: what failed, with any argument name suggestions."""
    hints: list[str] = []
    suggested: set[str] = set()
    # An unknown argument's hint says it all; a missing one's repeats it, so it goes last.
    for error in sorted(errors, key=lambda e: e.type != "extra_forbidden"):
        if error.did_you_mean and error.did_you_mean not in suggested:
            suggested.add(error.did_you_mean)
            hints.append(error.message)
    base = f"invalid arguments for {op}"
    return f"{base}: {'; '.join(hints)}" if hints else base


# -- pre-prompt / post-prompt ---------------------------------------------------------
def session_context_injection(
    provider: Callable[[str], str | None], *, agents: Iterable[str] | None = None
) -> Hook:
    """Add the session's context (text from ``provider(session_id)``) to the turn's
    context block; the system prompt stays fixed so the provider's prefix cache hits."""

    def inject(data: PromptData) -> PromptData:
        context = provider(data.session_id)
        if context:
            data.context.append(f"## Session context\n{context}")
        return data

    return Hook(
        "session_context_injection",
        HookKind.PRE_PROMPT,
        inject,
        HookPriority.FIRST,
        frozenset(agents) if agents is not None else None,
    )


class RouteCacheLike(Protocol):
    """Anything with ``get(text)`` and ``put(text, value)``, e.g. the Guide's RouteCache."""

    def get(self, text: str) -> Any: ...

    def put(self, text: str, value: Any) -> Any: ...


def route_cache_hooks(
    cache: RouteCacheLike, *, agents: Iterable[str] = ("guide",)
) -> tuple[Hook, Hook]:
    """Lookup before the model call (a hit sets ``skip_llm``), store after a model result."""
    only = frozenset(agents)

    def lookup(data: PromptData) -> PromptData:
        text = data.input
        if text:
            cached = cache.get(text)
            if cached is not None:
                data.skip_llm = True
                data.cached_result = cached
        return data

    def store(data: PromptData) -> PromptData:
        if not data.skip_llm and data.result is not None and data.input:
            cache.put(data.input, data.result)
        return data

    return (
        Hook("route_cache_lookup", HookKind.PRE_PROMPT, lookup, HookPriority.EARLY, only),
        Hook("route_cache_store", HookKind.POST_PROMPT, store, HookPriority.NORMAL, only),
    )


# -- pre-tool -------------------------------------------------------------------------
def permission_check(registry: Registry) -> Hook:
    def check(data: ToolCallData) -> None:
        if not registry.allowed(data.skill.op, data.ctx):
            lacking = registry.missing(data.skill.op, data.ctx)
            raise Rejection(
                ErrorCode.ACCESS_DENIED,
                f"{data.ctx.agent} may not run {data.skill.op}: lacks {', '.join(lacking)}",
                details={"missing": lacking},
            )

    return Hook("permission_check", HookKind.PRE_TOOL, check, HookPriority.FIRST)


def parameter_validation() -> Hook:
    def validate(data: ToolCallData) -> None:
        try:
            data.params = data.skill.params.model_validate(data.args)
        except ValidationError as exc:
            errors = field_errors(exc, data.skill.params, data.args)
            raise Rejection(
                ErrorCode.VALIDATION_ERROR,
                validation_message(data.skill.op, errors),
                field_errors=errors,
            ) from None

    return Hook("parameter_validation", HookKind.PRE_TOOL, validate, HookPriority.EARLY)


def session_scoping() -> Hook:
    """Stamp the caller's session into ``session_id`` params; refuse other sessions' ids
    unless the op is tagged cross-session and the caller holds the cross-session scope."""

    def scope(data: ToolCallData) -> None:
        fields = data.skill.params.model_fields
        own = data.ctx.session_id
        crossing = CROSS_SESSION_TAG in data.skill.tags and CROSS_SESSION_SCOPE in data.ctx.scopes
        refused = f"{data.skill.op} may only act on the caller's session"
        if crossing:  # the scope is held: what it cannot reach is another user's
            refused = f"{data.skill.op}: that session is another user's; its history is private"
        elif CROSS_SESSION_TAG in data.skill.tags:
            refused += f" (other sessions need the {CROSS_SESSION_SCOPE} scope)"
        if "session_id" in fields:
            given = data.args.get("session_id")
            if given in (None, ""):
                data.args["session_id"] = own
                if data.params is not None:
                    data.params = data.params.model_copy(update={"session_id": own})
            elif not own.startswith(given) and not (crossing and may_read(data.ctx, given)):
                raise Rejection(
                    ErrorCode.ACCESS_DENIED,
                    refused,
                    details={"reason": "cross_session", "session_id": given},
                )
        others = [s for s in data.args.get("session_ids") or [] if s != own]
        if (
            "session_ids" in fields
            and others
            and not (crossing and all(may_read(data.ctx, s) for s in others))
        ):
            raise Rejection(
                ErrorCode.ACCESS_DENIED,
                refused,
                details={"reason": "cross_session", "session_ids": others},
            )

    return Hook("session_scoping", HookKind.PRE_TOOL, scope, HookPriority.NORMAL)


def caller_reach(reach: SessionReach) -> Hook:
    """Give a call the engine's team reach when its context brings none (an agent's), so
    the cross-session scope stops at the user's own sessions (``session_scope.may_read``)."""

    def stamp(data: ToolCallData) -> None:
        if data.ctx.reach is None:
            data.ctx = dataclasses.replace(data.ctx, reach=reach)

    return Hook("caller_reach", HookKind.PRE_TOOL, stamp, HookPriority.FIRST)


def core_tool_hooks(registry: Registry) -> list[Hook]:
    return [permission_check(registry), parameter_validation(), session_scoping()]


# -- post-tool ------------------------------------------------------------------------
def _loggable(value: Any, redactor: Redactor | None) -> Any:
    if isinstance(value, dict):
        return {
            k: REDACTED if _SECRET_KEY.search(str(k)) else _loggable(v, redactor)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_loggable(v, redactor) for v in value]
    if isinstance(value, str):
        text = redactor.text(value) if redactor else value
        return text if len(text) <= _LOG_VALUE_MAX else f"{text[:_LOG_VALUE_MAX]}…"
    return value


def result_logging(
    logger: logging.Logger | None = None, *, redactor: Redactor | None = None
) -> Hook:
    """Log every call with its latency; secrets never reach the log."""
    log = logger or logging.getLogger("sylk.skills")

    def record(data: ToolCallData) -> None:
        code = data.error.code.value if data.error else "-"
        args = _loggable(data.args, redactor)
        log.info(
            "skill op=%s agent=%s session=%s ok=%s code=%s dry_run=%s latency_ms=%.2f args=%s",
            data.skill.op, data.ctx.agent, data.ctx.session_id, data.ok, code,
            data.dry_run, data.latency_ms, args,
        )  # fmt: skip

    return Hook("result_logging", HookKind.POST_TOOL, record, HookPriority.LATE)


@dataclass(frozen=True)
class FileTouch:
    session_id: str
    agent: str
    op: str
    path: str  # workspace-relative
    operation: str  # "created" | "modified"


def touched_paths(data: ToolCallData) -> list[tuple[str, str]]:
    """(path, operation) pairs a successful write reported, or its ``path`` param."""
    result = data.result.result if data.result else None
    found: list[tuple[str, str]] = []
    if isinstance(result, dict):
        operation = "created" if result.get("created") else "modified"
        if isinstance(result.get("path"), str):
            found.append((result["path"], operation))
        for path in result.get("paths") or []:
            found.append((str(path), "modified"))
    if (
        not found
        and data.params is not None
        and isinstance(getattr(data.params, "path", None), str)
    ):
        found.append((data.params.path, "modified"))  # type: ignore[attr-defined]
    return found


def file_tracking(record: Callable[[FileTouch], None]) -> Hook:
    """Report every path a write op touched (dry runs excluded) to ``record``."""

    def track(data: ToolCallData) -> None:
        if not data.ok or data.dry_run or data.skill.kind is not OpKind.WRITE:
            return
        for path, operation in touched_paths(data):
            record(FileTouch(data.ctx.session_id, data.ctx.agent, data.skill.op, path, operation))

    return Hook("file_tracking", HookKind.POST_TOOL, track, HookPriority.NORMAL)
