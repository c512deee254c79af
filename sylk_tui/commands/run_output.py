"""What ``sylk run`` prints beyond the plain case: a streamed answer with keys redacted
even when a key arrives split between pieces, and the honest end of a run whose answer
could not be saved.

When the archive cannot be written (the disk is full, the database or its file system
is read-only), the answer is still the user's: it is printed (if it was not streamed
already), followed by a warning on stderr that it was not saved, naming the file and
what to do, and the run exits with :data:`EXIT_NOT_SAVED`, which scripts can tell from
other failures.

A turn that did not end with a plain final answer is said on stderr
(:func:`turn_exit`): cut at the model's output limit (:data:`EXIT_TRUNCATED`), ended
by an error, stopped; and tokens the server did not report, counted locally, are
said as estimated.

What the model reasoned streams to stderr (:class:`ThoughtStream`): every line marked
``│``, dimmed at a terminal, escape sequences dropped; stdout carries the answer alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from backend.agents.tool_actions import ToolAction, begin_action, finish_action, terminal_text
from backend.config.settings import SylkConfig, load_config
from backend.errors import ArchiveWriteError, SessionNotFoundError
from backend.events import AgentStep, StepKind
from backend.messages import MessageType
from backend.redaction import Redactor, StreamRedactor
from sylk_tui import paths
from sylk_tui.commands.exit_codes import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_NOT_SAVED,
    EXIT_TRUNCATED,
)

if TYPE_CHECKING:  # the engine's modules load when a command needs an engine
    from backend.engine import Engine


STREAMED_TEXT: frozenset[StepKind] = frozenset({"text_delta", "reasoning_delta"})
TOOL_STEPS: frozenset[StepKind] = frozenset({"tool_call", "tool_result"})
THOUGHT_MARK = "│ "
DIM, UNDIM = "\x1b[2m", "\x1b[22m"


class ThoughtStream:
    """Prints the model's reasoning on stderr as it streams: redacted across pieces,
    escape sequences dropped (it is the model's, not Sylk's, text), every line marked
    with :data:`THOUGHT_MARK`, and dimmed when stderr is a terminal (``NO_COLOR`` unset)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out
        self._stream = StreamRedactor(Redactor())
        self.at_line_start = True

    def use(self, redactor: Redactor) -> None:
        self._stream = StreamRedactor(redactor)

    @property
    def _file(self) -> TextIO:
        return self._out if self._out is not None else sys.stderr

    def piece(self, text: str, *, fresh_line: bool = False) -> None:
        """Print ``text``; ``fresh_line``: the terminal's line holds something else."""
        self._print(self._stream.feed(text), fresh_line)

    def _print(self, text: str, fresh_line: bool) -> None:
        shown = terminal_text(text)
        if not shown:
            return
        out: list[str] = ["\n"] if fresh_line else []
        for n, line in enumerate(shown.split("\n")):
            if n:
                out.append("\n")
                self.at_line_start = True
            if line:
                out.append(THOUGHT_MARK + line if self.at_line_start else line)
                self.at_line_start = False
        dim = self._file.isatty() and not os.environ.get("NO_COLOR")
        said = "".join(out)
        print(f"{DIM}{said}{UNDIM}" if dim else said, end="", file=self._file, flush=True)

    def close_line(self) -> None:
        """End the reasoning's line, so what is printed next starts on its own."""
        self._print(self._stream.flush(), False)
        if not self.at_line_start:
            print(file=self._file, flush=True)
            self.at_line_start = True


class AnswerStream:
    """Prints streamed pieces of an answer, redacted across piece boundaries, and its
    reasoning on stderr (:class:`ThoughtStream`)."""

    def __init__(self) -> None:
        self._stream = StreamRedactor(Redactor())
        self.thoughts = ThoughtStream()
        self._thinking = False  # reasoning was printed since the answer's last piece
        self.printed = False
        self.at_line_start = True  # what was printed last ended its line
        self._role: str | None = None  # the agent the request was routed to
        self._turn: str | None = None  # its turn, once it called its model
        self._ended = False
        self._calls = 0  # model calls of the request's turn so far
        self._actions: dict[str, ToolAction] = {}  # its tool calls still running, by id
        self._redactor = Redactor()

    def routed_to(self, role: object) -> None:
        if isinstance(role, str) and self._role is None:
            self._role = role

    def wants(self, step: AgentStep) -> bool:
        """Whether ``step`` belongs to the request's own turn: only that one streams.

        A plan's tasks run other agents' turns, several at once and after the request's
        turn has ended; their text interleaved would be unreadable (they show as progress).
        """
        if self._ended:
            return False
        ours = self._role is None or step.role == self._role
        if self._turn is None and step.kind == "model_call" and ours:
            self._turn = step.turn_id
        return step.turn_id == self._turn

    def use(self, redactor: Redactor) -> None:
        self._stream = StreamRedactor(redactor)
        self.thoughts.use(redactor)
        self._redactor = redactor

    def model_call(self) -> None:
        """The turn calls its model again: what it says next starts a paragraph of its own,
        as the stored answer has it."""
        self._calls += 1
        if self._calls > 1 and self.printed:
            self.piece("\n" if self.at_line_start else "\n\n")

    def tool_step(self, step: AgentStep) -> None:
        """A tool call of the turn, said in one line on stderr when its result comes:
        ``  ↳ engineer.file.edit app.py · ok``."""
        data = step.data
        call_id, name = str(data.get("id", "")), str(data.get("name", ""))
        if step.kind == "tool_call":
            arguments = data.get("arguments")
            args = arguments if isinstance(arguments, dict) else {}
            self._actions[call_id] = begin_action(call_id, name, args)
            return
        begun = self._actions.pop(call_id, None) or begin_action(call_id, name, {})
        action = finish_action(begun, str(data.get("content", "")), bool(data.get("is_error")))
        if not self.at_line_start:  # the answer's unfinished line ends first
            self.piece("\n")
        line = f"  ↳ {action.op} {action.title}".rstrip() + f" · {action.marker}"
        said = self._redactor.text(terminal_text(line))
        print(said, file=sys.stderr, flush=True)

    def streamed(self, step: AgentStep) -> None:
        """A streamed piece of the turn (one of :data:`STREAMED_TEXT`) printed where it goes."""
        text = str(step.data.get("text", ""))
        if step.kind == "reasoning_delta":
            # After an answer's unfinished line, the reasoning starts on a line of its own.
            self.thoughts.piece(text, fresh_line=not (self.at_line_start or self._thinking))
            self._thinking = True
        else:
            self.piece(text)

    def piece(self, text: str) -> None:
        if text:
            self.thoughts.close_line()
            self._thinking = False
        shown = self._stream.feed(text)
        if shown:
            print(shown, end="", flush=True)
            self.printed = True
            self.at_line_start = shown.endswith("\n")

    def end(self) -> None:
        self._ended = True
        self.thoughts.close_line()
        self.piece("")
        rest = self._stream.flush()
        if rest:
            print(rest, end="", flush=True)
            self.printed = True


@contextmanager
def json_stdout() -> Iterator[TextIO]:
    """For ``sylk run --json``: yields the real stdout, for the JSON lines alone, and sends
    whatever else would be printed there to stderr meanwhile, so stdout stays pipeable
    into ``jq`` whatever a command or a plan's summary prints."""
    real = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield real
    finally:
        sys.stdout = real


def run_settings(args: argparse.Namespace) -> SylkConfig:
    """The settings of this run: the config file and the environment, and ``--script``
    (the scripted provider's turns; the provider, unless ``--provider`` names another)."""
    env = dict(os.environ)
    if getattr(args, "script", None):
        env["SYLK_SCRIPT"] = str(Path(args.script).expanduser().resolve())
        if not getattr(args, "provider", None):
            args.provider = "scripted"
    return load_config(paths.config_file(), env)


def report_not_saved(
    error: ArchiveWriteError,
    redactor: Redactor,
    *,
    streamed: bool,
    as_json: bool,
    json_out: TextIO | None = None,
) -> int:
    """Print what was answered but not stored, and say so; returns the exit status.
    ``json_out``: where ``--json`` lines go (:func:`json_stdout`)."""
    answers = [m for m in error.unsaved if m.type is not MessageType.USER_INPUT]
    for message in answers:
        if as_json:
            print(
                json.dumps({"kind": "message.unsaved", "message": message.model_dump(mode="json")}),
                file=json_out or sys.stdout,
                flush=True,
            )
        elif not streamed:
            print(redactor.text(str(message.payload.get("text", ""))))
    if streamed and not as_json:
        print()
    said = redactor.text(str(error))
    if answers or streamed:
        print(f"sylk: warning: the answer above was NOT saved: {said}", file=sys.stderr)
    else:
        print(f"sylk: error: nothing was saved: {said}", file=sys.stderr)
    return EXIT_NOT_SAVED


APPROVAL_REFUSALS = ("approval_required", "read_only", "deny_rule")


def approval_refusal(content: object) -> str | None:
    """The approval policy's refusal in a tool result, said on stderr: the model reads
    it too, but the person running the script decides what to allow."""
    try:
        envelope = json.loads(content) if isinstance(content, str) else None
    except ValueError:
        return None
    error = envelope.get("error") if isinstance(envelope, dict) else None
    if not isinstance(error, dict):
        return None
    details = error.get("details")
    if not isinstance(details, dict) or details.get("reason") not in APPROVAL_REFUSALS:
        return None
    return str(error.get("message", "")) or None


async def run_session(engine: Engine, name: str | None) -> str:
    """The session a run speaks in: the active one, or NAME (created if missing)."""
    if name is None:
        return (await engine.ensure_session()).id
    try:
        session = engine.get_session(name)
    except SessionNotFoundError:
        return (await engine.create_session(name)).id
    return (await engine.switch_session(session.id)).id


def turn_exit(payload: dict[str, object]) -> int:
    """Say on stderr how an agent's turn ended when it was not a plain final answer,
    and what its tokens were when they are estimated; returns the exit status."""
    usage = payload.get("usage")
    if isinstance(usage, dict) and usage.get("estimated"):
        print(f"sylk: {estimated_tokens(usage)}", file=sys.stderr)
    stop, error = payload.get("stop"), payload.get("error")
    if stop in ("final", None):
        return 0
    if stop == "truncated":
        said = error or "answer truncated at the model's output limit"
        print(f"sylk: {said}", file=sys.stderr)
        return EXIT_TRUNCATED
    print(f"sylk: turn ended early: {stop}", file=sys.stderr)
    if error:
        print(f"sylk: error: {error}", file=sys.stderr)
    return EXIT_INTERRUPTED if stop == "cancelled" else EXIT_ERROR


def estimated_tokens(usage: dict[str, object]) -> str:
    """``~1,234 in · ~56 out tokens (estimated: ...)`` for a turn's usage."""
    counts = [usage.get(key) for key in ("input_tokens", "output_tokens")]
    shown_in, shown_out = (f"~{c:,}" if isinstance(c, int) else "?" for c in counts)
    return f"{shown_in} in · {shown_out} out tokens (estimated: the server reported no usage)"
