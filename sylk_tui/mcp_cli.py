"""``sylk mcp serve``: Sylk as an MCP server on stdio, for IDEs and other agents.

The MCP SDK loads only when this command runs. SIGINT and SIGTERM stop the server
cleanly: the engine closes (archive, background tasks, child MCP servers) and the
exit status is 0, as when the client closes stdin; a second signal stops at once.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import Any

from backend.engine import Engine

Common = Callable[..., None]


def add_parser(commands: Any, common: Common) -> None:
    mcp = commands.add_parser("mcp", help="serve Sylk over the Model Context Protocol")
    common(mcp, default=argparse.SUPPRESS)
    verbs = mcp.add_subparsers(dest="mcp_verb", metavar="VERB", required=True)
    serve = verbs.add_parser(
        "serve", help="serve the gateway and the sessions on stdin/stdout until stdin closes"
    )
    common(serve, default=argparse.SUPPRESS)
    serve.add_argument(
        "--allow-write", action="store_true", help="let the client run ops that change things"
    )
    serve.add_argument(
        "--session",
        metavar="ID|NAME",
        help="act within this existing session: its workspace and its private chronicle "
        "(default: a fresh session of the client's own)",
    )
    serve.add_argument(
        "--cross-session",
        action="store_true",
        help="let the client read every session's history, not only its own and promoted entries",
    )


def run(args: argparse.Namespace, make_engine: Callable[[argparse.Namespace], Engine]) -> int:
    from backend.mcp.server import serve_engine
    from backend.mcp.shutdown import StopSignals

    async def body() -> int:
        # Installed before the engine opens, so a signal during startup or while the
        # engine closes is a stop like any other.
        with StopSignals() as signals:
            engine = make_engine(args)
            try:
                await serve_engine(
                    engine,
                    can_write=args.allow_write,
                    session=args.session,
                    cross_session=args.cross_session,
                    stop=signals.event,
                )
            finally:
                await engine.aclose()
        return 0

    return asyncio.run(body())
