"""``sylk repl``: a line-mode front end on the same in-process engine as ``sylk run``,
for users who do not want a full screen.

At a terminal it reads lines with prompt-toolkit (``line_input``: history in the data
dir, Tab completion of `/` commands, session names and ``@agents`` from
``completion``, multi-line input, a toolbar saying the keys); from a pipe it reads
plain lines and prints plain output. ``loop`` sends each line to the engine and prints
the answer as it streams and each tool call in a line (``answers``), and asks the
engine's questions inline (``questions``). It imports no Textual.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from sylk_tui import paths

if TYPE_CHECKING:
    from backend.config.settings import SylkConfig
    from backend.engine import Engine

BuildEngine = Callable[[argparse.Namespace, "SylkConfig"], "Engine"]
AddCommon = Callable[..., None]


def add_parser(commands: argparse._SubParsersAction, common: AddCommon) -> None:  # type: ignore[type-arg]
    repl = commands.add_parser(
        "repl",
        help="a line-mode prompt over the engine (no full screen)",
        description="Type requests and /commands at a prompt; answers stream below it. "
        "Enter sends; a trailing \\ (or Esc then Enter) adds a line; Tab completes; "
        "ctrl+c stops an answer; ctrl+d or /quit leaves.",
    )
    common(repl, default=argparse.SUPPRESS)
    repl.add_argument("--session", metavar="NAME|ID", help="session to use (created if missing)")
    repl.add_argument("--provider", help="the provider for this repl's requests")
    repl.add_argument("--model", help="the model for this repl's requests")


def run(args: argparse.Namespace, build_engine: BuildEngine) -> int:
    from backend.config.settings import load_config

    settings = load_config(paths.config_file())
    return asyncio.run(_run(args, build_engine(args, settings)))


async def _run(args: argparse.Namespace, engine: Engine) -> int:
    from backend.errors import SylkError
    from sylk_tui.commands.run_output import run_session
    from sylk_tui.repl.line_input import HISTORY_FILE, PlainLines, PromptLines, open_history
    from sylk_tui.repl.loop import Repl

    try:
        session_id = await run_session(engine, getattr(args, "session", None))
        history = open_history(
            paths.data_dir(getattr(args, "data_dir", None)) / HISTORY_FILE, engine.redactor.text
        )
        names = lambda: [s.name for s in engine.list_sessions()]  # noqa: E731
        at_terminal = sys.stdin.isatty() and sys.stdout.isatty()
        lines = PromptLines(history, names) if at_terminal else PlainLines(history.store_string)
        return await Repl(engine, lines).run(session_id)
    except SylkError as exc:
        print(f"sylk: error: {engine.redactor.text(str(exc))}", file=sys.stderr)
        return 1
    finally:
        await engine.aclose()
