"""The theme the user chose, kept across restarts in a small file of the data dir.

A file rather than the archive: the theme must be known before the first frame,
which is drawn before the engine (and its archive) is built.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from backend.errors import ErrorKind, SylkError

THEME_FILE = "tui-theme.json"
"""Where in the data dir the chosen theme's name is kept."""


class UnknownThemeError(SylkError):
    """``/theme NAME`` names no theme; says which one was likely meant."""

    error_kind = ErrorKind.INVALID

    def __init__(self, name: str, known: Iterable[str]) -> None:
        names = sorted(known)
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
        guess = f"; did you mean {close[0]}?" if close else ""
        super().__init__(
            f"no theme named {name!r}{guess}",
            help_hint="themes: " + ", ".join(names),
            details={"reason": "unknown_theme", "theme": name},
        )


class ThemeChoice:
    """Reads and writes the chosen theme's name; ``path`` None keeps nothing (tests)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def load(self, known: Iterable[str], default: str) -> str:
        """The theme chosen last time if it still exists, else ``default``."""
        if self.path is None:
            return default
        try:
            name = json.loads(self.path.read_text(encoding="utf-8")).get("theme")
        except (OSError, ValueError, AttributeError):
            return default  # none kept yet, or unreadable: the default, never a crash
        return name if isinstance(name, str) and name in set(known) else default

    def save(self, name: str) -> None:
        """Keep ``name`` (written whole, then renamed, private to the user)."""
        if self.path is None:
            return
        temporary = self.path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump({"theme": name}, out)
        os.replace(temporary, self.path)


def next_theme(current: str, cycle: tuple[str, ...]) -> str:
    """The theme after ``current`` in ``cycle`` (the first when it is not in it)."""
    if current not in cycle:
        return cycle[0]
    return cycle[(cycle.index(current) + 1) % len(cycle)]
