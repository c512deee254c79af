"""The composer: where the user types requests and /commands, one or many lines.

Enter sends; ctrl+j (any terminal) or shift+enter (where the terminal tells them apart)
starts a new line, and a paste keeps every line. It grows with its text up to
``MAX_LINES`` and then scrolls. ↑ on its first line and ↓ on its last walk the
session's history; Tab completes (``widgets.composer.completion``) and shows a small
menu when there is more than one way on. Each session keeps its own half-typed draft.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from time import monotonic
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Offset
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import Location

from widgets.composer.completion import Completion, CompletionSources, complete
from widgets.composer.history import ComposerHistory
from widgets.composer.menu import CompletionMenu

MAX_LINES = 10
"""Lines of text shown before the composer scrolls."""
BLINK_REST_SECONDS = 5.0
"""Idle this long, the cursor stops blinking (shown steady): an idle app repaints nothing."""


class Composer(TextArea):
    """A TextArea that sends on Enter and remembers what was sent.

    Enter posts ``Composer.Submitted``; the composer keeps its text until
    ``accepted`` says the line was recorded, so a refused line is never lost.
    """

    DEFAULT_CSS = f"""
    Composer {{
        height: auto;
        min-height: 3;
        max-height: {MAX_LINES + 2};
        border: tall $border-blurred;
        background: $surface;
        padding: 0 1;
        &:focus {{ border: tall $border; background-tint: $foreground 5%; }}
        & > .text-area--placeholder {{ color: $text-disabled; }}
    }}
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "send",
            "Send",
            show=False,
            id="composer.send",
            tooltip="Send what is typed (with the completion menu open: take the offer).",
            priority=True,  # before the TextArea would take enter as a new line
        ),
        Binding(
            "ctrl+j,shift+enter",
            "newline",
            "New line",
            show=False,
            key_display="ctrl+j",
            id="composer.newline",
            tooltip="Start a new line (shift+enter too, where the terminal tells it from enter).",
            priority=True,
        ),
        Binding(
            "tab",
            "complete",
            "Complete",
            show=False,
            id="composer.complete",
            tooltip="Complete the /command, @agent, session name or path being typed.",
        ),
        Binding(
            "escape",
            "close_menu",
            "Close",
            show=False,
            id="composer.close-menu",
            tooltip="Close the completion menu.",
        ),
    ]

    @dataclass
    class Submitted(Message):
        """Enter was pressed on a composer holding ``text``."""

        composer: Composer
        text: str

        @property
        def control(self) -> Composer:
            return self.composer

    def __init__(
        self,
        *,
        reserved_keys: Iterable[str] = (),
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(
            id=id,
            classes=classes,
            soft_wrap=True,
            tab_behavior="focus",
            highlight_cursor_line=False,
        )
        self.reserved_keys = frozenset(reserved_keys)
        """Printable keys left to the screen's bindings instead of being typed."""
        self.sources = CompletionSources()
        """Where session names and the workspace come from (the screen sets it)."""
        self.sent_history = ComposerHistory()
        """The lines sent, per session (``history`` is the TextArea's undo)."""
        self.session_id: str | None = None
        self._drafts: dict[str, tuple[str, Location]] = {}
        self._menu: CompletionMenu | None = None
        self._completion: Completion | None = None
        self._completion_row = 0
        self._last_key = monotonic()

    def on_mount(self) -> None:
        self.set_interval(BLINK_REST_SECONDS, self._rest_cursor, name="composer-blink-rest")

    def _rest_cursor(self) -> None:
        if self.has_focus and monotonic() - self._last_key >= BLINK_REST_SECONDS:
            self._pause_blink(visible=True)  # the next key or focus blinks again

    # -- the text ----------------------------------------------------------------------
    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        """Replace the text and put the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        return key not in self.reserved_keys and super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        self._last_key = monotonic()
        if event.key == "question_mark" and not self.text:  # ? in an empty composer: help
            event.prevent_default()
            event.stop()
            await self.run_action("app.help")
            return
        before = self.text
        await super()._on_key(event)
        if self.menu_open and self.text != before:  # the menu narrows (or closes) as you type
            self._offer(False)

    # Enter and ctrl+j are priority bindings, run by the app as the key arrives, while the
    # keys typed just before it may still wait in this widget's queue (a fast typist, or
    # "abc<enter>" in one read): act from the queue, after them.
    def action_send(self) -> None:
        self.call_later(self._send)

    def _send(self) -> None:
        if not self._take_offer():
            self.post_message(self.Submitted(self, self.text))

    def action_newline(self) -> None:
        self.call_later(self.insert, "\n")

    async def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()
        self._last_key = monotonic()
        if self.read_only:
            return
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        self.replace(text, *self.selection)
        self.focus()

    def accepted(self, text: str, session_id: str | None = None) -> None:
        """``text`` was recorded in ``session_id`` (default: the one on screen): remember
        it, and clear the composer (or that session's draft) if it still holds it."""
        session = session_id or self.session_id
        if session is not None:
            self.sent_history.add(session, text)
        if session is None or session == self.session_id:
            if self.text == text:
                self.clear()
                self._close_menu()
        elif self._drafts.get(session, ("", (0, 0)))[0] == text:
            del self._drafts[session]

    # -- one draft and one history per session ---------------------------------------------
    def show_session(self, session_id: str, sent: Iterable[str] | None = None) -> None:
        """Keep the draft typed for the session left and bring back ``session_id``'s.
        ``sent``: the lines its transcript shows the user typed (the history's start)."""
        if sent is not None:
            self.sent_history.seed(session_id, sent)
        if session_id == self.session_id:
            return
        if self.session_id is not None:
            if self.text:
                self._drafts[self.session_id] = (self.text, self.cursor_location)
            else:
                self._drafts.pop(self.session_id, None)
        first = self.session_id is None  # typed before any session showed: it is this one's
        self.session_id = session_id
        self.sent_history.begin(session_id)
        self._close_menu()
        text, cursor = self._drafts.pop(session_id, ("", (0, 0)))
        if not first:
            self.load_text(text)
            self.move_cursor(cursor)

    def draft(self, session_id: str) -> str:
        """What is typed for ``session_id`` (on screen or kept aside)."""
        if session_id == self.session_id:
            return self.text
        return self._drafts.get(session_id, ("", (0, 0)))[0]

    def action_cursor_up(self, select: bool = False) -> None:
        if self._menu is not None and self._menu.is_open and not select:
            self._menu.move(-1)
        elif not select and self._on_edge(first=True):
            self._recall(-1)
        else:
            super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if self._menu is not None and self._menu.is_open and not select:
            self._menu.move(1)
        elif not select and self._on_edge(first=False):
            self._recall(1)
        else:
            super().action_cursor_down(select)

    def _on_edge(self, *, first: bool) -> bool:
        location = self.cursor_location
        navigator = self.navigator
        if first:
            return navigator.is_first_document_line(location) and navigator.is_first_wrapped_line(
                location
            )
        return navigator.is_last_document_line(location) and navigator.is_last_wrapped_line(
            location
        )

    def _recall(self, step: int) -> None:
        text = self.sent_history.step(self.text, step)
        if text is not None:
            self.value = text

    # -- completion ----------------------------------------------------------------------
    @property
    def menu_open(self) -> bool:
        return self._menu is not None and self._menu.is_open

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_menu":
            return self.menu_open  # else Esc goes on to the screen (stop an answer)
        return super().check_action(action, parameters)

    def action_complete(self) -> None:
        if not self._take_offer() and not self._offer(True):
            self.screen.focus_next()

    def action_close_menu(self) -> None:
        self._close_menu()

    def _offer(self, extend: bool) -> bool:
        """Complete the word at the cursor: fill in what all offers share (``extend``), and
        list them when more than one is left. False when there is nothing to offer."""
        row, column = self.cursor_location
        before = self.document[row][:column]
        found = complete(before, first_line=row == 0, sources=self.sources)
        if found is None:
            self._close_menu()
            return False
        self._completion = found
        self._completion_row = row
        if extend:
            shared = found.common_prefix()
            if len(shared) > found.end - found.start:
                self._replace_word(found, shared)
                found = Completion(found.start, found.start + len(shared), found.offers)
                self._completion = found
            if len(found.offers) == 1:
                self._close_menu()
                return True
        self._show_menu(found)
        return True

    def _take_offer(self) -> bool:
        """Put the highlighted offer in place of the word; False when no menu is open."""
        offer = self._menu.chosen if self._menu is not None else None
        found = self._completion
        if offer is None or found is None:
            return False
        if self.cursor_location != (self._completion_row, found.end):
            self._offer(False)  # the cursor moved since: offer for where it is now
            return True
        self._replace_word(found, offer.text)
        self._close_menu()
        return True

    def _replace_word(self, found: Completion, text: str) -> None:
        row, _ = self.cursor_location
        self.replace(text, (row, found.start), (row, found.end))

    def _show_menu(self, found: Completion) -> None:
        menu = self._menu
        if menu is None:
            menu = self._menu = CompletionMenu()
            self.screen.mount(menu)
        x = self.content_region.x + found.start - self.scroll_offset.x
        menu.show_offers(found.offers, Offset(max(0, x - 2), self.region.y))  # just above

    def _close_menu(self) -> None:
        self._completion = None
        if self._menu is not None and self._menu.display:
            self._menu.close()
