"""The environment a test gives ``load_config(..., env=...)``, and the one the conftest sets.

``tests/conftest.py`` puts :data:`QUIET_ENV` in every test's process environment, but a
test that passes its own ``env`` dict to ``load_config`` leaves the process environment
behind: its engine then warmed the semantic search model on a thread (seconds of CPU per
engine, minutes over the suite on two cores; in a TUI test it made ``pilot.pause()`` slow
enough to miss a 150 ms streaming window) and searched differently once it was ready.
:func:`engine_env` is that dict with the quiet settings in it; a test that exercises the
semantic stage on purpose says so (``engine_env(SYLK_SEMANTIC="auto")``). A
``SylkConfig`` built in code reads no environment at all: :func:`quiet_config`.

Named ``engine_env``, not ``test_env``: pytest would collect a ``test_*`` function
imported into a test module as a test.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.config.settings import SearchSettings, SylkConfig

QUIET_ENV: Mapping[str, str] = {"SYLK_SEMANTIC": "off"}
"""What every test's configuration carries unless it says otherwise: skill search stays
lexical, so no model warms in the background and results never change halfway."""


def engine_env(base: Mapping[str, str] | None = None, /, **extra: str) -> dict[str, str]:
    """:data:`QUIET_ENV`, then ``base``, then ``extra`` (later wins), as a new dict."""
    return {**QUIET_ENV, **(base or {}), **extra}


def quiet_config(**fields: Any) -> SylkConfig:
    """``SylkConfig(**fields)`` with skill search lexical unless ``fields`` say otherwise."""
    return SylkConfig(**{"search": SearchSettings(semantic="off"), **fields})


__all__ = ["QUIET_ENV", "engine_env", "quiet_config"]
