"""What a screen asks the app to do: app-wide messages that bubble up to the app.

Screens own their keys and actions; an action that needs the engine posts one of
these, and the app carries it out once, whichever screen asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual.message import Message

SessionVerb = Literal[
    "switch", "next", "previous", "suspend", "resume", "complete", "stop", "delete", "rename"
]
"""``switch``: show the session and bring it to the front (a finished one is only
shown); ``next``/``previous``: switch to the session after/before it in the list;
``stop``: stop the answer being written in it; ``delete``: remove it from the archive
(asked for after the user confirmed); ``rename``: call it ``name``."""


@dataclass
class SessionAction(Message):
    """Do ``kind`` to the session ``session_id``.

    ``None`` is the session on screen when the app gets to it: keys pressed in
    quick succession (alt+down, alt+down, alt+s) then act on one after another,
    each on where the one before left the screen.
    """

    kind: SessionVerb
    session_id: str | None = None
    name: str | None = None
    """The new name, for ``rename``."""


@dataclass
class LoadOlder(Message):
    """Read the messages of ``session_id`` before ``first_id`` (``shown`` are on screen):
    the transcript was scrolled to the top of what was read."""

    session_id: str
    first_id: str
    shown: int


@dataclass
class NewSession(Message):
    """Create a session and switch to it (``name`` ``None``: Sylk picks one)."""

    name: str | None


@dataclass
class SendLine(Message):
    """Send a line typed in the composer to the session ``session_id``."""

    session_id: str
    text: str


@dataclass
class AnswerQuestion(Message):
    """Answer the pending question ``question_id`` with ``value`` (an answer string of
    the question's kind; ``None`` declines). A question no longer pending is left alone."""

    question_id: str
    value: str | None
