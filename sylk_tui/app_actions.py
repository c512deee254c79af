"""The app's own actions, which need no engine: help, themes, keys and the TUI's commands.

``SylkApp`` is built on :class:`FrontActions`; the palette, the keys and the composer's
``/help`` and ``/theme`` reach these as ``app.help``, ``app.theme(NAME)`` and
``app.next_theme``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from textual import on
from textual.actions import SkipAction
from textual.app import App
from textual.dom import DOMNode
from textual.events import Mount
from textual.theme import Theme

from screens.local_commands import local_action, unknown_command
from sylk_tui.keymap import KeymapEntryError, binding_ids, unknown_ids_warning, usable_keymap
from sylk_tui.themes import ThemeChoice, UnknownThemeError, next_theme
from themes import DEFAULT_THEME, THEMES, register_themes
from widgets.composer import Composer


class FrontActions(App[None]):
    """Help, theme and keymap actions of the Sylk app, and the ``/`` lines it answers itself."""

    _keymap: dict[str, str]
    _keymap_errors: list[KeymapEntryError]
    theme_choice: ThemeChoice

    def setup_front(self, keymap: Mapping[str, object] | None, theme_file: Path | None) -> None:
        """Register the themes, put on the one chosen last time, apply the usable keys."""
        register_themes(self)
        self.theme_choice = ThemeChoice(theme_file)
        self.theme = self.theme_choice.load(self.available_themes, DEFAULT_THEME)
        self._keymap, self._keymap_errors = usable_keymap(keymap or {})
        if self._keymap:
            self.set_keymap(self._keymap)

    @on(Mount)
    def _follow_theme_changes(self, _mounted: Mount) -> None:
        # Whichever way the theme changes (a key, /theme, the palette's own theme
        # picker), the choice is kept for the next start.
        self.theme_changed_signal.subscribe(self, self._theme_changed)

    def _check_keymap(self) -> None:
        """Name each ``[keys]`` entry that cannot apply (the others do): a bad one, or
        an id no binding carries. Called once the main screen is up."""
        problems = [str(error) for error in self._keymap_errors]
        if self._keymap:
            from screens.help import screen_classes  # every screen: only with a keymap

            nodes: list[type[DOMNode]] = [type(self), *screen_classes()]
            for screen in self.screen_stack:
                nodes += [type(node) for node in screen.walk_children(with_self=True)]
            warning = unknown_ids_warning(self._keymap, binding_ids(nodes))
            if warning:
                problems.append(warning)
        for problem in problems:
            self.notify(problem, severity="warning", markup=False, timeout=12)

    def _theme_changed(self, theme: Theme) -> None:
        try:
            self.theme_choice.save(theme.name)
        except OSError as error:
            self.notify(f"Could not keep the theme: {error}", severity="warning", markup=False)

    # -- actions ---------------------------------------------------------------------
    def action_help(self) -> None:
        """Every key and command (F1, ``?`` in an empty composer, ``/help``)."""
        from screens.help import HelpScreen  # loads when first opened

        if isinstance(self.screen, HelpScreen):
            return
        classes: list[type[DOMNode]] = [type(self)]
        for screen in self.screen_stack:
            classes += [type(node) for node in screen.walk_children(with_self=True)]
        self.push_screen(HelpScreen(classes, self._keymap))

    def action_help_unless_typing(self) -> None:
        """``?``: the help screen, unless the focused box holds text (then ``?`` is typed).

        The composer decides for itself, in its own queue: keys typed just before the
        ``?`` (a paste without bracketed paste, ``tmux send-keys``) may not have reached
        it yet when this priority binding runs, so its text would still read empty.
        """
        focused = self.focused
        if isinstance(focused, Composer):
            raise SkipAction()
        typed = getattr(focused, "text", None) or getattr(focused, "value", None)
        if typed:
            raise SkipAction()
        self.action_help()

    def action_theme(self, name: str = "") -> None:
        """``/theme NAME`` (without a name: the next of Sylk's themes)."""
        if not name:
            self.action_next_theme()
            return
        if name not in self.available_themes:
            error = UnknownThemeError(name, [theme.name for theme in THEMES])
            self.notify(str(error), severity="error", markup=False)
            return
        self.theme = name

    def action_next_theme(self) -> None:
        self.theme = next_theme(self.theme, tuple(theme.name for theme in THEMES))
        self.notify(f"Theme: {self.theme}", markup=False, timeout=3)

    def answer_locally(self, text: str) -> bool | None:
        """A ``/`` line the TUI answers itself: True done, False refused (the line is kept
        to edit: an unknown command, with the one likely meant); None: for the engine."""
        action = local_action(text)
        if action is not None:
            self.call_later(self.run_action, action)
            return True
        error = unknown_command(text)
        if error is not None:
            self.notify(str(error), severity="error", markup=False)
            return False
        return None
