"""What ``sylk run`` prints beyond the plain case: a streamed answer with keys redacted
even when a key arrives split between pieces, and the honest end of a run whose answer
could not be saved.

When the archive cannot be written (the disk is full, the database or its file system
is read-only), the answer is still the user's: it is printed (if it was not streamed
already), followed by a warning on stderr that it was not saved, naming the file and
what to do, and the run exits with :data:`EXIT_NOT_SAVED`, which scripts can tell from
other failures.
"""

from __future__ import annotations

import json
import sys

from backend.errors import ArchiveWriteError
from backend.messages import MessageType
from backend.redaction import Redactor, StreamRedactor

EXIT_NOT_SAVED = 4
EXIT_CODES = """exit status:
  0    the request was answered (and saved)
  1    an error (a bad session name, a provider failure, ...)
  2    bad arguments or settings
  3    no model is configured: the offline answer was printed
  4    the archive could not be written (a full disk, a read-only data dir): an
       answer printed was not saved
  130  interrupted"""


class AnswerStream:
    """Prints streamed pieces of an answer, redacted across piece boundaries."""

    def __init__(self) -> None:
        self._stream = StreamRedactor(Redactor())
        self.printed = False

    def use(self, redactor: Redactor) -> None:
        self._stream = StreamRedactor(redactor)

    def piece(self, text: str) -> None:
        shown = self._stream.feed(text)
        if shown:
            print(shown, end="", flush=True)
            self.printed = True

    def end(self) -> None:
        self.piece("")
        rest = self._stream.flush()
        if rest:
            print(rest, end="", flush=True)
            self.printed = True


def report_not_saved(
    error: ArchiveWriteError, redactor: Redactor, *, streamed: bool, as_json: bool
) -> int:
    """Print what was answered but not stored, and say so; returns the exit status."""
    answers = [m for m in error.unsaved if m.type is not MessageType.USER_INPUT]
    for message in answers:
        if as_json:
            print(
                json.dumps({"kind": "message.unsaved", "message": message.model_dump(mode="json")})
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
