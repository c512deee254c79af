"""The seed's per-agent hooks that record what agents do for the Archivalist.

Engineer, post-tool: ``consultation_logging`` notes every consult of another
agent (``engineer.consult.*``) on the session's timeline, so "what did the
engineer ask the Librarian?" has an answer later. The Archivalist's own
``entry_session_tagging`` needs no hook here: the pre-tool ``session_scoping``
hook already stamps the caller's session into every entry an op stores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend.skills.hooks.registry import Hook, HookKind, HookPriority, ToolCallData

CONSULT_PREFIX = "engineer.consult."


@dataclass(frozen=True)
class Consultation:
    session_id: str
    agent: str  # who asked
    consulted: str  # librarian, archivalist, academic
    question: str
    answered: bool


def consultation_logging(record: Callable[[Consultation], None]) -> Hook:
    """Report each successful consult (question, and whether the store had an answer)."""

    def log(data: ToolCallData) -> None:
        if not data.ok or not data.skill.op.startswith(CONSULT_PREFIX) or data.result is None:
            return
        result = data.result.result if isinstance(data.result.result, dict) else {}
        record(
            Consultation(
                session_id=data.ctx.session_id,
                agent=data.ctx.agent,
                consulted=data.skill.op.removeprefix(CONSULT_PREFIX),
                question=str(result.get("question", "")),
                answered=bool(result.get("answered")),
            )
        )

    return Hook(
        "consultation_logging",
        HookKind.POST_TOOL,
        log,
        HookPriority.NORMAL,
        frozenset({"engineer"}),
    )


__all__ = ["CONSULT_PREFIX", "Consultation", "consultation_logging"]
