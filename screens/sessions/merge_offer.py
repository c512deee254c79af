"""Completing a session that works on its own branch offers to merge it back.

``MergeOfferScreen`` is a ``ModalScreen[str | None]``: ``f`` fast-forward, ``m`` a merge
commit, ``s`` squash (each dismisses with that ``/session merge`` mode), ``l`` or Escape
later (None: the branch is kept). "Later" has the focus, so a stray Enter merges nothing.

``MergeOffers`` is the app's side: on a session's ``complete`` it asks (for a session
with a worktree of its own), sends the answer as ``/session merge MODE ID`` (the engine
merges, or refuses with a typed error naming each conflicting file, never resolving
one), and shows the engine's reply as a notification too; the reply is in the
transcript already.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from screens.state.intents import SendLine

if TYPE_CHECKING:  # the engine's models load after the first frame
    from backend.messages import Message as EngineMessage
    from backend.sessions.models import Session

MERGE_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("ff", "Fast-forward", "f"),
    ("merge", "Merge commit", "m"),
    ("squash", "Squash", "s"),
)
"""(``/session merge`` mode, button label, key)."""


class MergeOfferScreen(ModalScreen[str | None]):
    """Asks how to merge ``name``'s ``branch`` into ``base``; returns the mode or None."""

    CSS = """
    MergeOfferScreen {
        align: center middle;
        background: $background 60%;
    }
    #merge-dialog {
        width: 72;
        max-width: 100%;
        height: auto;
        padding: 1 2;
        border: thick $primary;
        background: $panel;
    }
    #merge-question { text-style: bold; color: $text; width: 1fr; }
    #merge-detail { color: $text-muted; margin-top: 1; width: 1fr; }
    #merge-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    #merge-buttons Button { margin-left: 1; min-width: 8; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(key, f"answer('{mode}')", label, id=f"merge.{mode}", tooltip=f"{label}.")
            for mode, label, key in MERGE_CHOICES
        ),
        Binding("l", "answer(None)", "Later", id="merge.later", tooltip="Keep the branch."),
        Binding(
            "escape",
            "answer(None)",
            "Later",
            id="merge.cancel",
            tooltip="Close this question; the branch is kept, nothing merges.",
        ),
    ]

    def __init__(self, name: str, branch: str, base: str) -> None:
        super().__init__()
        self.session_name, self.branch, self.base = name, branch, base

    def compose(self) -> ComposeResult:
        with Vertical(id="merge-dialog"):
            yield Label(
                f"Merge {self.session_name!r} back into {self.base}?",
                id="merge-question",
                markup=False,
            )
            yield Label(
                f"Its work is on the branch {self.branch}. A conflict stops the merge "
                "and is listed file by file; nothing is resolved for you. Later keeps "
                "the branch (/session merge when ready).",
                id="merge-detail",
                markup=False,
            )
            with Horizontal(id="merge-buttons"):
                for mode, label, key in MERGE_CHOICES:
                    yield Button(f"{label} ({key})", id=f"merge-{mode}", variant="primary")
                yield Button("Later (l)", id="merge-later", variant="default")

    def on_mount(self) -> None:
        self.query_one("#merge-later", Button).focus()

    def action_answer(self, mode: str | None) -> None:
        self.dismiss(mode)

    @on(Button.Pressed)
    def _pressed(self, pressed: Button.Pressed) -> None:
        pressed.stop()
        mode = (pressed.button.id or "").removeprefix("merge-")
        self.dismiss(mode if mode in {m for m, _, _ in MERGE_CHOICES} else None)


def offered_branch(session: Session) -> tuple[str, str] | None:
    """(branch, base) of a session working on its own branch, else None."""
    info = session.metadata.get("worktree")
    if not isinstance(info, dict) or not info.get("branch") or not info.get("base"):
        return None
    return str(info["branch"]), str(info["base"])


class OfferHost(Protocol):
    """What the offer needs of the app."""

    def push_screen(self, screen: Any, callback: Any = ..., /) -> Any: ...
    def post_message(self, message: Message) -> bool: ...
    def notify(self, message: str, *, severity: Any = ..., markup: bool = ...) -> None: ...


class MergeOffers:
    """The app's offers: asked on ``completed``, the engine's reply shown on ``heard``."""

    def __init__(self, app: OfferHost) -> None:
        self._app = app
        self._waiting: set[str] = set()  # sessions whose /session merge reply is due

    def completed(self, session: Session) -> bool:
        """A session just completed: ask, if it has a branch of its own (True: asked)."""
        found = offered_branch(session)
        if found is None:
            return False
        branch, base = found

        def answered(mode: str | None) -> None:
            if mode is None:
                text = f"{session.name!r}: its work stays on {branch} (/session merge when ready)"
                self._app.notify(text, markup=False)
                return
            self._waiting.add(session.id)
            self._app.post_message(SendLine(session.id, f"/session merge {mode} {session.id}"))

        self._app.push_screen(MergeOfferScreen(session.name, branch, base), answered)
        return True

    def heard(self, message: EngineMessage[dict[str, Any]]) -> None:
        """A transcript message: the reply to a merge this offer sent, shown at once."""
        if message.session_id not in self._waiting or message.source != "sylk":
            return
        self._waiting.discard(message.session_id)
        failed = bool(message.payload.get("error"))
        text = str(message.payload.get("text", ""))
        self._app.notify(text, severity="error" if failed else "information", markup=False)
