"""Helpers for providers that produce their reply locally (offline, scripted)."""

from __future__ import annotations

import re
from collections.abc import Iterator

_CHUNK = re.compile(r"\S+\s*|\s+")


def chunks(text: str) -> Iterator[str]:
    """Split text the way a model streams it: a word (and its trailing space) at a time."""
    yield from _CHUNK.findall(text)
