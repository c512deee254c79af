"""Cheaper imports for the one-shot commands (``sylk run``, ``sylk mcp serve``, ``sylk
sessions ...``): most of their start-up is importing the engine and the MCP SDK, about
a thousand pydantic models and as many classes and functions more.

Two costs there buy nothing for a command that answers and exits:

- The cyclic garbage collector runs dozens of full passes over the growing heap while
  the modules load, and finds nothing to free (modules, classes and functions live as
  long as the process). :func:`engine_imports` pauses it while they load, then moves
  what was loaded to the permanent generation (``gc.freeze``), so later passes skip it.
- Pydantic builds every model's validator when the class is made, even for the models
  this run never validates (most ops' parameters, every protocol version of the MCP
  SDK but the one spoken). :func:`defer_model_builds` makes each build wait for the
  model's first use, as ``ConfigDict(defer_build=True)`` would on every model; a model
  that declares its own ``defer_build`` keeps it. The setting is pydantic's default
  table, not a public API: when that table is not where this version of pydantic keeps
  it, nothing changes and models build as before.

Neither changes what a command does, only when the work happens. :func:`preload` is
called by ``sylk_tui.cli.main`` for a real ``sylk`` process only (``main()`` without
arguments), never when a test calls ``main([...])`` in its own process, and never for
the TUI (its engine loads after the first frame).
"""

from __future__ import annotations

import argparse
import gc
import importlib
from collections.abc import Iterator
from contextlib import contextmanager

ENGINE = ("sylk_tui.commands.engine_runs", "backend.engine")
MCP_SERVER = ("sylk_tui.commands.mcp", "backend.mcp.server.engine_serving", *ENGINE)
ENGINE_VERBS = frozenset({"list", "new"})


def defer_model_builds() -> bool:
    """Every pydantic model made from now on in this process builds its validator on
    first use. True when the setting took; False when pydantic keeps it elsewhere."""
    try:
        from pydantic._internal import _config
    except ImportError:  # pragma: no cover - a pydantic without that module
        return False
    defaults = getattr(_config, "config_defaults", None)
    if not isinstance(defaults, dict) or "defer_build" not in defaults:
        return False  # pragma: no cover - another pydantic layout: build as before
    defaults["defer_build"] = True
    return True


@contextmanager
def engine_imports() -> Iterator[None]:
    """Load modules with the collector paused and model builds deferred; afterwards
    freeze what was loaded out of the collector's way and resume it as it was."""
    defer_model_builds()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def modules_for(args: argparse.Namespace) -> tuple[str, ...]:
    """What the command ``args`` names imports before its first answer (none for the
    TUI and for the commands that need no engine)."""
    command = getattr(args, "command", None)
    if command in ("run", "route"):
        return ENGINE
    if command == "sessions" and getattr(args, "verb", None) in ENGINE_VERBS:
        return ENGINE
    if command == "mcp" and getattr(args, "mcp_verb", None) == "serve":
        return MCP_SERVER
    return ()


def preload(args: argparse.Namespace) -> None:
    """Import what the command needs the cheap way (:func:`engine_imports`), before it
    runs; the command's own imports then find the modules loaded."""
    modules = modules_for(args)
    if not modules:
        return
    with engine_imports():
        for name in modules:
            importlib.import_module(name)
