"""What the repl prints of one request: the answer as it streams, the model's reasoning
as ``sylk run`` prints it (on stderr, each line marked ``│``, dimmed at a terminal),
each tool call in one line, and how the request ended.

Only the request's own turn streams (the first turn of the agent it was routed to):
a plan's tasks run other agents' turns, several at once, and show as one-line progress
instead. Everything printed is the model's or a tool's text, so it is untrusted:
configured keys are redacted (also when one arrives split between pieces) and escape
sequences dropped before it reaches the terminal. Output goes to whatever
``sys.stdout`` is at the time, so the prompt may redirect it while it is drawn.
"""

from __future__ import annotations

import sys
from typing import Any

from backend.agents.tool_actions import ToolAction, begin_action, finish_action, terminal_text
from backend.events import AgentStep, AgentStepEvent, EngineEvent, MessageAppended
from backend.messages import Message, MessageType
from backend.redaction import Redactor, StreamRedactor
from sylk_tui.commands.run_output import ThoughtStream


def say(text: str = "", *, end: str = "\n") -> None:
    print(text, end=end, file=sys.stdout, flush=True)


class TurnPrinter:
    """Prints one request's answer as its events come; :meth:`finish` ends it."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._stream = StreamRedactor(redactor)
        self._role: str | None = None  # the agent the request was routed to
        self._turn: str | None = None  # its turn, once it called its model
        self._calls = 0
        self._actions: dict[str, ToolAction] = {}
        self.printed = False
        self.at_line_start = True
        self._ended = False
        self._thoughts = ThoughtStream()  # the model's reasoning: on stderr, each line "│ "
        self._thoughts.use(redactor)
        self._thinking = False

    def event(self, event: EngineEvent) -> None:
        if self._ended:
            return
        if isinstance(event, MessageAppended) and event.message.type is MessageType.USER_INPUT:
            route = event.message.payload.get("route")
            if isinstance(route, dict) and self._role is None:
                target = route.get("target")
                self._role = target if isinstance(target, str) else None
            return
        if isinstance(event, AgentStepEvent) and self._ours(event.step):
            self._step(event.step)

    def _ours(self, step: AgentStep) -> bool:
        mine = self._role is None or step.role == self._role
        if self._turn is None and step.kind == "model_call" and mine:
            self._turn = step.turn_id
        return step.turn_id == self._turn

    def _step(self, step: AgentStep) -> None:
        data = step.data
        if step.kind == "text_delta":
            self._piece(str(data.get("text", "")))
        elif step.kind == "reasoning_delta":
            fresh = not (self.at_line_start or self._thinking)
            self._thoughts.piece(str(data.get("text", "")), fresh_line=fresh)
            self._thinking = True
        elif step.kind == "model_call":
            self._calls += 1
            if self._calls > 1 and self.printed:  # a new model call: a new paragraph
                self._piece("\n" if self.at_line_start else "\n\n")
        elif step.kind == "tool_call":
            arguments = data.get("arguments")
            call_id = str(data.get("id", ""))
            args = arguments if isinstance(arguments, dict) else {}
            self._actions[call_id] = begin_action(call_id, str(data.get("name", "")), args)
        elif step.kind == "tool_result":
            self._tool_line(data)

    def _tool_line(self, data: dict[str, Any]) -> None:
        call_id = str(data.get("id", ""))
        begun = self._actions.pop(call_id, None) or begin_action(
            call_id, str(data.get("name", "")), {}
        )
        action = finish_action(begun, str(data.get("content", "")), bool(data.get("is_error")))
        self.end_line()
        line = f"  ↳ {action.op} {action.title}".rstrip() + f" · {action.marker}"
        say(self._redactor.text(terminal_text(line)))

    def _piece(self, text: str) -> None:
        if text and self._thinking:
            self._thoughts.close_line()
            self._thinking = False
        shown = terminal_text(self._stream.feed(text))
        if shown:
            say(shown, end="")
            self.printed = True
            self.at_line_start = shown.endswith("\n")

    def end_line(self) -> None:
        """End the answer's unfinished line, so what is printed next starts its own."""
        self._thoughts.close_line()
        self._thinking = False
        rest = terminal_text(self._stream.flush())
        if rest:
            say(rest, end="")
            self.printed, self.at_line_start = True, rest.endswith("\n")
        if not self.at_line_start:
            say()
            self.at_line_start = True

    def finish(self, reply: Message[dict[str, Any]] | None) -> None:
        """The request's end: what was not streamed, and how the turn ended if not well."""
        self.end_line()
        self._ended = True
        if reply is None:
            return
        payload = reply.payload
        text = self._redactor.text(terminal_text(str(payload.get("text", ""))))
        if reply.type is MessageType.AGENT_REPLY:
            if not self.printed and text:
                say(text)  # answered from the index, chronicle or library, or not streamed
            ending = turn_ending(payload)
            if ending:
                say(ending)
        elif payload.get("error"):
            say(f"error: {text}")
        elif text:
            say(text)


def turn_ending(payload: dict[str, Any]) -> str:
    """``(stopped)``, ``(truncated)`` or the error a turn ended with; "" for a plain end."""
    stop, error = payload.get("stop"), payload.get("error")
    if stop in ("final", None) and not error:
        return ""
    if stop == "cancelled":
        return "(stopped)"
    if stop == "truncated":
        return f"(truncated) {error or ''}".rstrip()
    return f"error: the turn ended early ({stop}): {error or 'no reason given'}"
