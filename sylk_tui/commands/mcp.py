"""``sylk mcp serve``: Sylk as an MCP server, on stdio for IDEs and other agents, or over
HTTP for clients that connect to a port; ``sylk mcp token show|rotate`` for the bearer
tokens HTTP clients need beyond loopback (:mod:`backend.mcp.server.auth`).

The MCP SDK loads only when this command runs. SIGINT and SIGTERM stop the server
cleanly: the engine closes (archive, background tasks, child MCP servers) and the
exit status is 0, as when the client closes stdin; a second signal stops at once.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from backend.config.choices import DEFAULT_TOKEN, MODE_NAMES

if TYPE_CHECKING:
    from backend.config.settings import SylkConfig
    from backend.engine import Engine
    from backend.mcp.server.auth import TokenAuth

Common = Callable[..., None]

NO_AUTH = (
    "With --allow-remote (or [mcp_server] tokens configured) every HTTP request needs "
    "Authorization: Bearer <token> (`sylk mcp token show`); without, whoever can connect "
    "to the loopback port acts with this server's rights, as you."
)


def add_parser(commands: Any, common: Common) -> None:
    mcp = commands.add_parser("mcp", help="serve Sylk over the Model Context Protocol")
    common(mcp, default=argparse.SUPPRESS)
    verbs = mcp.add_subparsers(dest="mcp_verb", metavar="VERB", required=True)
    serve = verbs.add_parser(
        "serve",
        help="serve the gateway and the sessions on stdin/stdout until stdin closes, "
        "or over HTTP with --http",
        description="Serve Sylk's gateway, resources and prompts to one MCP client on "
        "stdin/stdout, or to any number over HTTP (--http, --sse), each a caller of its "
        f"own. SIGINT or SIGTERM stops it cleanly with exit status 0. {NO_AUTH}",
    )
    common(serve, default=argparse.SUPPRESS)
    serve.add_argument(
        "--allow-write", action="store_true", help="let the client run ops that change things"
    )
    serve.add_argument(
        "--approval",
        choices=MODE_NAMES,
        metavar="MODE",
        help="with --allow-write, what the client may do, as no one is there to ask: "
        "ask (edits and commands are refused), auto-edit (edits go ahead) or auto "
        "(sandboxed commands too); default: [approvals] mode; without --allow-write: "
        "read-only",
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
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST: "
        "127.0.0.1 unless given; port 0 picks a free one); each client is a fresh session "
        f"unless --session binds one. {NO_AUTH}",
    )
    transport.add_argument(
        "--sse",
        metavar="[HOST:]PORT",
        help="serve the legacy HTTP+SSE transport (GET /sse, POST /messages/) for older "
        "clients, as --http does",
    )
    serve.add_argument(
        "--session-idle",
        type=float,
        default=30 * 60.0,
        metavar="SECONDS",
        help="end an --http client's session after this long with no request in flight "
        "(default: 1800); its next request is answered 404 and the client initializes anew",
    )
    serve.add_argument(
        "--max-sessions",
        type=int,
        default=100,
        metavar="N",
        help="at most this many --http sessions at once (default: 100); another "
        "initialize is answered 503 until one ends or expires",
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --http/--sse listen on an address other than loopback; every request "
        "then needs a bearer token (made on first use: `sylk mcp token show`)",
    )
    token = verbs.add_parser(
        "token",
        help="show or rotate the bearer tokens HTTP clients of `sylk mcp serve` send",
        description="The tokens live in the data dir (mcp_tokens.json, mode 0600; a file "
        "others may read is refused). 'default' reaches whatever the server's flags allow; "
        "others are named under [mcp_server.tokens.NAME] with their scopes.",
    )
    common(token, default=argparse.SUPPRESS)
    token_verbs = token.add_subparsers(dest="token_verb", metavar="VERB", required=True)
    show = token_verbs.add_parser("show", help="print a token (made first if missing)")
    rotate = token_verbs.add_parser(
        "rotate",
        help="replace a token: a running server refuses the old one from its next request on",
    )
    for verb in (show, rotate):
        common(verb, default=argparse.SUPPRESS)
        verb.add_argument("name", nargs="?", default=DEFAULT_TOKEN, help="default: 'default'")


def _announcer(auth: TokenAuth | None) -> Callable[[str], None]:
    said = "bearer token required" if auth else "no authentication"

    def listening(url: str) -> None:
        print(
            f"sylk: serving MCP at {url} ({said}); stop with Ctrl-C or SIGTERM",
            file=sys.stderr,
            flush=True,
        )

    return listening


def _settings() -> SylkConfig:
    from backend.config.settings import load_config
    from sylk_tui import paths

    return load_config(paths.config_file())


def _token_auth(args: argparse.Namespace, settings: SylkConfig) -> TokenAuth:
    from backend.mcp.server.auth import TokenAuth
    from backend.mcp.server.auth.token_store import TokenStore
    from sylk_tui import paths

    return TokenAuth(
        TokenStore(paths.data_dir(getattr(args, "data_dir", None))), settings.mcp_server
    )


def _run_token(args: argparse.Namespace) -> int:
    # The store alone, not TokenAuth: that brings in the MCP SDK, most of this start-up.
    from backend.mcp.server.auth.token_store import TokenStore, UnknownTokenError
    from sylk_tui import paths

    store = TokenStore(paths.data_dir(getattr(args, "data_dir", None)))
    names = _settings().mcp_server.token_names()
    if args.name not in names:
        raise UnknownTokenError(args.name, names)
    if args.token_verb == "show":
        print(store.value(args.name))  # the one place a token is ever printed
        return 0
    store.rotate(args.name)
    print(
        f"sylk: rotated MCP token {args.name!r}; a running server refuses the old one from "
        "its next request on (`sylk mcp token show` prints the new one)",
        file=sys.stderr,
    )
    return 0


def run(args: argparse.Namespace, make_engine: Callable[[argparse.Namespace], Engine]) -> int:
    if args.mcp_verb == "token":
        return _run_token(args)
    from backend.mcp.server.engine_serving import serve_engine
    from backend.mcp.server.shutdown import StopSignals

    endpoint = limits = auth = None
    if args.http is not None or args.sse is not None:
        from backend.mcp.server.http_sessions import SessionLimits
        from backend.mcp.server.http_transport import parse_endpoint

        endpoint = parse_endpoint(
            args.http if args.http is not None else args.sse,
            sse=args.sse is not None,
            allow_remote=args.allow_remote,
        )
        limits = SessionLimits(args.session_idle, args.max_sessions)
        settings = _settings()
        if settings.mcp_server.requires_token(allow_remote=args.allow_remote):
            auth = _token_auth(args, settings)
            made = auth.prepare()  # a token file others may read fails here, before serving
            if made:
                print(
                    f"sylk: made MCP token(s) {', '.join(made)}; read with `sylk mcp token show`",
                    file=sys.stderr,
                )

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
                    http=endpoint,
                    limits=limits,
                    stop=signals.event,
                    on_listening=_announcer(auth),
                    auth=auth,
                )
            finally:
                await engine.aclose()
        return 0

    return asyncio.run(body())
