"""The conversation an agent's model sees, built from a session's transcript.

How much of it the model sees is decided by the context meter (``backend.memory``):
each role checkpoints and compacts at its thresholds, the compacted turns replaced by a
preface (the task verbatim and the summary). ``HISTORY_LIMIT`` only bounds how much of
the transcript is read for a turn, a safety net far above what a window holds in turns.
"""

from __future__ import annotations

from typing import Any

from backend.guide.routing.decision import AGENT_TARGETS, Target
from backend.guide.routing.dsl import is_dsl
from backend.llm.types import ChatMessage
from backend.messages import Message, MessageType

HISTORY_LIMIT = 400
# The window's start moves in steps of this many messages, not one per turn: a start
# that slides every turn changes the first message of every request, so the provider's
# prompt cache (a prefix cache) would miss everything after the tools and system.
HISTORY_STEP = 200


class HistoryWindow:
    """Where each session's history window starts, kept steady between turns.

    The window starts at an anchored message and grows turn by turn; once the anchor
    falls out of the latest ``limit`` messages, it jumps ahead so that the last
    ``limit - step`` remain, and the window grows again from there. Anchors live in
    memory: after a restart the first turn anchors afresh.
    """

    def __init__(self, limit: int = HISTORY_LIMIT, step: int = HISTORY_STEP) -> None:
        if not 0 < step < limit:
            raise ValueError(f"the history step ({step}) must be between 1 and {limit - 1}")
        self.limit = limit
        self.step = step
        self._anchors: dict[str, str] = {}  # session id -> id of the first message kept

    def cut(
        self, session_id: str, recent: list[Message[dict[str, Any]]]
    ) -> list[Message[dict[str, Any]]]:
        """What to show of ``recent``: the session's latest ``limit`` messages, in order."""
        recent = recent[-self.limit :]
        if not recent:
            return recent
        ids = [m.id for m in recent]
        anchor = self._anchors.get(session_id)
        if anchor in ids:
            start = ids.index(anchor)
        elif anchor is None and len(recent) < self.limit:
            start = 0  # the whole of a short transcript
        else:  # the anchor slid out (or a long transcript met for the first time)
            start = len(recent) - (self.limit - self.step)
        self._anchors[session_id] = ids[start]
        return recent[start:]


def _is_request(message: Message[dict[str, Any]], text: str) -> bool:
    """A user line that went to an agent (not a command, not a prose session command)."""
    route = message.payload.get("route")
    if isinstance(route, dict) and "target" in route:
        try:
            return Target(route["target"]) in AGENT_TARGETS
        except ValueError:
            return False
    return not is_dsl(text)


def conversation(
    transcript: list[Message[dict[str, Any]]], current: str, preface: str | None = None
) -> list[ChatMessage]:
    """Earlier requests and answers, then ``current``; roles alternate, a user speaks first.

    ``preface`` (a compaction's task and summary) opens the conversation as the user's."""
    pairs: list[tuple[str, str]] = [("user", preface)] if preface else []

    def add(role: str, text: str) -> None:
        if pairs and pairs[-1][0] == role:  # vendors want roles to alternate
            pairs[-1] = (role, f"{pairs[-1][1]}\n\n{text}")
        else:
            pairs.append((role, text))

    for message in transcript:
        text = message.payload.get("text")
        if not isinstance(text, str) or not text:
            continue
        if message.type is MessageType.USER_INPUT and _is_request(message, text):
            route = message.payload.get("route")
            sent = route.get("text") if isinstance(route, dict) else None
            add("user", sent if isinstance(sent, str) and sent else text)
        elif message.type is MessageType.AGENT_REPLY:
            add("assistant", text)
    add("user", current)
    while pairs and pairs[0][0] != "user":
        pairs.pop(0)
    return [
        ChatMessage.user(text) if role == "user" else ChatMessage.assistant(text)
        for role, text in pairs
    ]
