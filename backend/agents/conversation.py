"""The conversation an agent's model sees, built from a session's transcript."""

from __future__ import annotations

from typing import Any

from backend.guide.routing.decision import AGENT_TARGETS, Target
from backend.guide.routing.dsl import is_dsl
from backend.llm.types import ChatMessage
from backend.messages import Message, MessageType

HISTORY_LIMIT = 40


def _is_request(message: Message[dict[str, Any]], text: str) -> bool:
    """A user line that went to an agent (not a command, not a prose session command)."""
    route = message.payload.get("route")
    if isinstance(route, dict) and "target" in route:
        try:
            return Target(route["target"]) in AGENT_TARGETS
        except ValueError:
            return False
    return not is_dsl(text)


def conversation(transcript: list[Message[dict[str, Any]]], current: str) -> list[ChatMessage]:
    """Earlier requests and answers, then ``current``; roles alternate, a user speaks first."""
    pairs: list[tuple[str, str]] = []

    def add(role: str, text: str) -> None:
        if pairs and pairs[-1][0] == role:  # vendors want roles to alternate
            pairs[-1] = (role, f"{pairs[-1][1]}\n\n{text}")
        else:
            pairs.append((role, text))

    for message in transcript[-HISTORY_LIMIT:]:
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
