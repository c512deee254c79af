"""The user's ``[keymap]``: which of its binding ids the TUI does not have.

Textual ignores a keymap entry whose id no binding carries, so a typo would
silently leave the key as it was; the app names such ids in a warning instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from textual.binding import Binding
from textual.dom import DOMNode


def binding_ids(classes: Iterable[type[DOMNode]]) -> set[str]:
    """Every binding id declared by these classes (and their bases)."""
    ids: set[str] = set()
    for cls in classes:
        for klass in cls.__mro__:
            for binding in vars(klass).get("BINDINGS", []):
                if isinstance(binding, Binding) and binding.id:
                    ids.add(binding.id)
    return ids


def unknown_ids_warning(keymap: Mapping[str, str], known: set[str]) -> str | None:
    unknown = sorted(set(keymap) - known)
    if not unknown:
        return None
    named = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(known), n=1)
        named.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return f"[keymap] names no binding: {', '.join(named)}. A key's id is in its tooltip."
