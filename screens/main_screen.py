"""The main screen: sessions on the left, the transcript of one in the middle,
the composer below it and the keys in the footer.

The screen lays widgets out, declares the session keys and describes the
session on screen; what the keys do is up to the app (``app.*`` actions).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, tzinfo
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from backend.sessions.models import Session, SessionState
from widgets.composer import Composer
from widgets.session_list import SessionList
from widgets.transcript import Transcript

# Terminals (and tmux) send alt+digit as ESC + digit, which Textual reads as
# the character macOS types for option+digit; bind both spellings. The
# composer leaves these characters to the bindings (paste still types them).
OPTION_DIGIT_KEYS = (
    "inverted_exclamation_mark",
    "trade_mark_sign",
    "pound_sign",
    "cent_sign",
    "infinity",
    "section_sign",
    "pilcrow_sign",
    "bullet",
    "ª",
)


def _jump_bindings() -> list[BindingType]:
    bindings: list[BindingType] = []
    for n, option_key in enumerate(OPTION_DIGIT_KEYS, 1):
        bindings.append(
            Binding(
                f"alt+{n},{option_key}",
                f"app.jump({n})",
                "Jump",
                show=n == 1,
                key_display="alt+1…9" if n == 1 else None,
                id=f"session.jump-{n}",
                tooltip=f"Switch to session {n} of the list.",
                priority=True,
            )
        )
    return bindings


def _placeholder(session: Session | None) -> str:
    if session is None:
        return ""
    if session.state is SessionState.ACTIVE:
        return f"Message {session.name}  (/help lists the commands)"
    if session.state in (SessionState.SUSPENDED, SessionState.CREATED):
        return f"{session.name} is {session.state.value}: alt+r resumes it; /commands still work"
    return f"{session.name} is {session.state.value} (read only); /session new starts another"


class MainScreen(Screen[None]):
    CSS_PATH = Path(__file__).with_name("main_screen.tcss")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+n",
            "app.new_session",
            "New",
            id="session.new",
            tooltip="Create a session (you are asked for a name) and switch to it.",
            priority=True,
        ),
        Binding(
            "alt+down,ctrl+pagedown",
            "app.next_session",
            "Next",
            key_display="alt+↓",
            id="session.next",
            tooltip="Switch to the next session in the list.",
            priority=True,
        ),
        Binding(
            "alt+up,ctrl+pageup",
            "app.previous_session",
            "Prev",
            key_display="alt+↑",
            id="session.previous",
            tooltip="Switch to the previous session in the list.",
            priority=True,
        ),
        *_jump_bindings(),
        Binding(
            "alt+s",
            "app.suspend_session",
            "Suspend",
            id="session.suspend",
            tooltip="Suspend the session on screen; its transcript and context are kept.",
            priority=True,
        ),
        Binding(
            "alt+r",
            "app.resume_session",
            "Resume",
            id="session.resume",
            tooltip="Bring the suspended session on screen back to the front.",
            priority=True,
        ),
        Binding(
            "alt+c",
            "app.complete_session",
            "Complete",
            id="session.complete",
            tooltip="Mark the session on screen as done; it stays readable.",
            priority=True,
        ),
        Binding(
            "pageup",
            "scroll_transcript(-1)",
            "Scroll up",
            show=False,
            id="transcript.page-up",
            tooltip="Scroll the transcript up a page.",
        ),
        Binding(
            "pagedown",
            "scroll_transcript(1)",
            "Scroll down",
            show=False,
            id="transcript.page-down",
            tooltip="Scroll the transcript down a page.",
        ),
        Binding(
            "escape",
            "app.interrupt",
            "Stop",
            show=False,
            id="session.interrupt",
            tooltip="Stop the answer being written; otherwise back to the composer.",
        ),
    ]

    def __init__(self, *, clock: Callable[[], datetime], tz: tzinfo | None = None) -> None:
        super().__init__()
        self._clock = clock
        self._tz = tz

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield SessionList(id="session-list", clock=self._clock)
            with Vertical(id="conversation"):
                yield Transcript(id="transcript", tz=self._tz)
                yield Composer(id="composer", reserved_keys=OPTION_DIGIT_KEYS)
        yield Footer()

    def on_mount(self) -> None:
        self.session_list.border_title = "Sessions"
        self.composer.focus()

    @property
    def session_list(self) -> SessionList:
        return self.query_one("#session-list", SessionList)

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    @property
    def composer(self) -> Composer:
        return self.query_one("#composer", Composer)

    def describe(
        self,
        session: Session | None,
        number: int | None,
        *,
        working: str | None = None,
        index: str | None = None,
    ) -> None:
        """Title the transcript with the session on screen and hint what typing does."""
        transcript = self.transcript
        if session is None:
            transcript.border_title = ""
            transcript.border_subtitle = ""
        else:
            prefix = f"{number} · " if number is not None else ""
            transcript.border_title = f"{prefix}{session.name}"
            state = session.state.value if not index else f"{session.state.value} · {index}"
            transcript.border_subtitle = f"{working} is answering · esc stops" if working else state
        self.composer.placeholder = _placeholder(session)
        count = len(self.session_list.sessions)
        subtitle = f"{count} in all" if count else ""
        if self.session_list.border_subtitle != subtitle:  # setting it repaints the list
            self.session_list.border_subtitle = subtitle

    def action_scroll_transcript(self, direction: int) -> None:
        if direction < 0:
            self.transcript.scroll_page_up(animate=False)
        else:
            self.transcript.scroll_page_down(animate=False)
