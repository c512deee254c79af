"""The formats a session exports to (``sylk sessions export --format``, ``/export``).

No imports beyond typing: the command line offers them before any engine module loads.
"""

from __future__ import annotations

from typing import Literal, get_args

SessionFormat = Literal["md", "json", "html", "svg"]
FORMATS: tuple[str, ...] = get_args(SessionFormat)
