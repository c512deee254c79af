"""``sylk sessions undo ID`` and ``sylk sessions diff ID``: /undo and /diff from a shell.

They act on the session's checkpoints as the TUI's commands do (the same engine
verbs, the same data dir), for scripts and for a session that is not on screen.
A refusal (a file changed since the turn, nothing to undo, a turn still running)
is an error line and exit status 1, and nothing is changed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backend.engine import Engine

Common = Callable[..., None]
MakeEngine = Callable[[argparse.Namespace], "Engine"]


def add_parsers(verbs: Any, common: Common) -> None:
    undo = verbs.add_parser("undo", help="revert the files the session's last agent turn changed")
    common(undo, default=argparse.SUPPRESS)
    undo.add_argument("ref", metavar="ID", help="session id, unique id prefix, name or number")
    diff = verbs.add_parser("diff", help="what the session changed in its workspace")
    common(diff, default=argparse.SUPPRESS)
    diff.add_argument("ref", metavar="ID", help="session id, unique id prefix, name or number")
    diff.add_argument("--json", action="store_true", help="print the files and the patch as JSON")


def run(args: argparse.Namespace, make_engine: MakeEngine) -> int:
    from backend.checkpoints.answers import diff_text, undo_text

    async def body() -> str:
        engine = make_engine(args)
        try:
            session = engine.get_session(args.ref)
            if args.verb == "undo":
                return undo_text(await engine.undo(session.id))
            diff = await engine.session_diff(session.id)
            if args.json:
                return json.dumps(dataclasses.asdict(diff), indent=2)
            return diff_text(diff)
        finally:
            await engine.aclose()

    print(asyncio.run(body()))
    return 0
