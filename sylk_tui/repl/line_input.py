"""Where the repl's lines come from: prompt-toolkit at a terminal, plain lines otherwise.

Both read one request at a time (``read``: ``None`` at the end of input) and one
answer to a question (``ask``), and both may be cancelled while waiting without losing
what was typed: the plain reader reads stdin in a thread of its own into a queue; the
prompt keeps its unfinished text for the next prompt. A line ending in ``\\`` goes on
on the next line (both readers); at a terminal Esc then Enter adds a line too.

The history file (:func:`open_history`) is private to the user (0600, created so,
never through a link) and never holds a configured key: lines are redacted before
they are written.
"""

from __future__ import annotations

import asyncio
import errno
import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from backend.errors import ErrorKind, SylkError
from sylk_tui.repl.completion import complete

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

HISTORY_FILE = "repl_history"
CONTINUES = "\\"
TOOLBAR = " Enter sends · \\ or Esc+Enter: new line · Tab completes · ^C stops · ^D quits "
"""Under 80 columns, so a narrow terminal shows it whole."""


class HistoryFileError(SylkError):
    """The history file cannot be opened as a private file of the user's (a link in its
    place, a folder, no permission): said, and nothing is written anywhere else."""

    error_kind = ErrorKind.INVALID

    def __init__(self, path: Path, cause: OSError) -> None:
        why = "it is a link" if cause.errno == errno.ELOOP else (cause.strerror or str(cause))
        super().__init__(
            f"cannot use {path} as the repl's history: {why}",
            help_hint="remove or move it, or run with another --data-dir",
        )


class LineSource(Protocol):
    async def read(self, prompt: str) -> str | None: ...

    async def ask(self, prompt: str) -> str | None: ...

    def close(self) -> None: ...


def join_continued(lines: list[str]) -> str:
    """A request typed over several lines: each trailing ``\\`` becomes a line break."""
    return "\n".join(line.removesuffix(CONTINUES) for line in lines)


class PlainLines:
    """Lines from a stdin that is not a terminal (a pipe, a file): no prompt is drawn."""

    def __init__(self, history_store: Callable[[str], None] | None = None) -> None:
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._store = history_store
        self._reader = threading.Thread(target=self._pump, name="repl-stdin", daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        for line in sys.stdin:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, line.rstrip("\r\n"))
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)

    async def _line(self) -> str | None:
        line = await self._queue.get()
        if line is None:
            self._queue.put_nowait(None)  # the end stays the end for every later read
        return line

    async def read(self, prompt: str) -> str | None:
        lines: list[str] = []
        while True:
            line = await self._line()
            if line is None:
                return join_continued(lines) if lines else None
            lines.append(line)
            if not line.endswith(CONTINUES):
                break
        text = join_continued(lines)
        if self._store is not None and text.strip():
            self._store(text)
        return text

    async def ask(self, prompt: str) -> str | None:
        print(prompt, end="", flush=True)
        answer = await self._line()
        print(answer if answer is not None else "", flush=True)  # the transcript reads whole
        return answer

    def close(self) -> None:
        """Nothing to stop: the reader thread ends with stdin, and is a daemon."""


class PromptLines:
    """prompt-toolkit at a terminal: history, completion, multi-line, a toolbar."""

    def __init__(self, history: FileHistory, session_names: Callable[[], Iterable[str]]) -> None:
        from prompt_toolkit import PromptSession

        self._session: PromptSession[str] = _request_prompt(history, session_names)
        self._answers: PromptSession[str] = PromptSession()
        self._unfinished = ""  # what was typed when a question interrupted the prompt

    async def read(self, prompt: str) -> str | None:
        from prompt_toolkit.patch_stdout import patch_stdout

        typed, self._unfinished = self._unfinished, ""
        try:
            with patch_stdout(raw=True):  # a plan's progress prints above the prompt
                return await self._session.prompt_async(prompt, default=typed)
        except EOFError:
            return None
        except KeyboardInterrupt:
            return ""  # ctrl+c at the prompt drops the line, as a shell does
        except asyncio.CancelledError:
            self._unfinished = self._session.default_buffer.text
            raise

    async def ask(self, prompt: str) -> str | None:
        try:
            return await self._answers.prompt_async(prompt)
        except (EOFError, KeyboardInterrupt):
            return None

    def close(self) -> None:
        """Nothing held open: the history file is appended to line by line."""


def _request_prompt(
    history: FileHistory, session_names: Callable[[], Iterable[str]]
) -> PromptSession[str]:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import CompleteEvent, Completer, Completion
    from prompt_toolkit.document import Document
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    class CommandCompleter(Completer):
        def get_completions(self, document: Document, complete_event: CompleteEvent):  # type: ignore[no-untyped-def]
            before = document.text_before_cursor
            start, offers = complete(before, session_names())
            for offer in offers:
                yield Completion(offer.text, start - len(before), display_meta=offer.meta)

    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _new_line(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("enter")
    def _send_or_continue(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.is_cursor_at_the_end and buffer.text.endswith(CONTINUES):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
            return
        buffer.validate_and_handle()

    def typing_a_command_or_mention() -> bool:
        """Offers pop up by themselves only for `/` and `@`; Tab offers the rest."""
        return session.default_buffer.text.lstrip().startswith(("/", "@"))

    session: PromptSession[str] = PromptSession(
        history=history,
        completer=CommandCompleter(),
        complete_while_typing=Condition(typing_a_command_or_mention),
        key_bindings=keys,
        bottom_toolbar=TOOLBAR,
        multiline=False,
        prompt_continuation=lambda width, _line, _wrap: "." * (width - 1) + " ",
    )
    return session


def open_history(path: Path, redact: Callable[[str], str]) -> FileHistory:
    """The repl's history, in a file only the user may read (created 0600, made 0600
    if it was looser, refused if it is a link); lines are redacted as they are written."""
    from prompt_toolkit.history import FileHistory

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        try:
            os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
    except OSError as exc:
        raise HistoryFileError(path, exc) from None

    class RedactedHistory(FileHistory):
        def store_string(self, string: str) -> None:
            super().store_string(redact(string))

    return RedactedHistory(str(path))
