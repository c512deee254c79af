"""The user's ``[keys]`` (or ``[keymap]``): which entries the TUI can use, and why not the others.

The config file keeps the table as it was written; each entry is checked here, so one
bad entry is named in a warning at start while every good one still applies. Textual
ignores an entry whose id no binding carries, so a typo would silently leave the key as
it was: such ids are named too, with the id that was likely meant.
"""

from __future__ import annotations

import difflib
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from textual.binding import Binding
from textual.dom import DOMNode
from textual.keys import KEY_NAME_REPLACEMENTS, Keys

from backend.errors import ErrorKind, SylkError

BINDING_ID = re.compile(r"^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$")
MODIFIERS = frozenset({"ctrl", "alt", "shift", "super", "meta", "hyper"})
_KEY_NAMES = frozenset(key.value for key in Keys) | frozenset(KEY_NAME_REPLACEMENTS.values())


class KeymapEntryError(SylkError):
    """One ``[keys]`` entry cannot be used; the rest of the table still applies."""

    error_kind = ErrorKind.INVALID

    def __init__(self, binding_id: str, problem: str) -> None:
        super().__init__(
            f"[keys] {binding_id!r}: {problem}",
            help_hint="ids are room.action (see F1); keys as Textual names them, e.g. alt+j,f5",
            details={"reason": "bad_keymap_entry", "id": binding_id},
        )
        self.binding_id = binding_id


def is_key_name(key: str) -> bool:
    """Whether Textual can ever report ``key``: modifiers then one key (``ctrl+shift+f5``)."""
    *modifiers, name = key.lower().split("+")
    if not name or any(m not in MODIFIERS for m in modifiers):
        return False
    if len(name) == 1 or name in _KEY_NAMES or re.fullmatch(r"f([1-9]|1[0-9]|2[0-4])", name):
        return True
    try:  # a character's Unicode name: question_mark, pound_sign
        unicodedata.lookup(name.replace("_", " "))
    except KeyError:
        return False
    return True


def _entry_problem(binding_id: str, keys: object) -> str | None:
    if not BINDING_ID.match(binding_id):
        return "not a binding id (room.action, e.g. session.next)"
    if not isinstance(keys, str) or not keys.strip():
        return f"the keys must be a string such as 'alt+j,f5', not {keys!r}"
    bad = [key for key in keys.split(",") if not is_key_name(key.strip())]
    if bad:
        return f"no such key: {', '.join(repr(key.strip()) for key in bad)}"
    return None


def usable_keymap(raw: Mapping[str, object]) -> tuple[dict[str, str], list[KeymapEntryError]]:
    """The entries Textual can apply (keys normalised), and an error for each other one."""
    usable: dict[str, str] = {}
    errors: list[KeymapEntryError] = []
    for binding_id, keys in raw.items():
        problem = _entry_problem(binding_id, keys)
        if problem is not None:
            errors.append(KeymapEntryError(binding_id, problem))
        else:
            usable[binding_id] = ",".join(key.strip() for key in str(keys).split(","))
    return usable, errors


def binding_ids(classes: Iterable[type[DOMNode]]) -> set[str]:
    """Every binding id declared by these classes (and their bases)."""
    ids: set[str] = set()
    for cls in classes:
        for klass in cls.__mro__:
            for binding in vars(klass).get("BINDINGS", []):
                if isinstance(binding, Binding) and binding.id:
                    ids.add(binding.id)
    return ids


def unknown_ids_warning(keymap: Mapping[str, object], known: set[str]) -> str | None:
    unknown = sorted(set(keymap) - known)
    if not unknown:
        return None
    named = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(known), n=1)
        named.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return f"[keymap] names no binding: {', '.join(named)}. F1 lists every key's id."


def keymap_table(config_file: Path | None) -> dict[str, Any]:
    """The config file's ``[keymap]`` (or ``[keys]``) table as written, read with tomllib
    and no settings model, so the TUI's first frame waits for nothing more. A file that
    does not parse gives no keys here; the settings check after the first frame says
    what is wrong with it."""
    if config_file is None:
        return {}
    try:
        with config_file.open("rb") as handle:
            raw = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}
    for name in ("keymap", "keys"):  # as the settings model reads it: keymap first
        table = raw.get(name)
        if isinstance(table, dict):
            return table
    return {}
