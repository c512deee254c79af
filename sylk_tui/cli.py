"""The ``sylk`` command: the TUI by default, and scriptable session commands.

Every command runs on the same Engine and data dir as the TUI. Errors the user
can cause are printed as one line on stderr with a non-zero exit, never as a
traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from pydantic import ValidationError

from backend.engine import Engine, EngineConfig
from backend.errors import SylkError
from sylk_tui import export, paths

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _common(parser: argparse.ArgumentParser, *, default: object) -> None:
    parser.add_argument(
        "--data-dir",
        default=default,
        metavar="DIR",
        help="where the archive lives (default: $SYLK_DATA_DIR or the user data dir)",
    )
    parser.add_argument(
        "--workspace",
        default=default,
        metavar="DIR",
        help="the directory agents work in (default: the current directory)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sylk", description="Run many coding-agent sessions at once, from one terminal."
    )
    _common(parser, default=None)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    sessions = commands.add_parser("sessions", help="list, create and export sessions")
    _common(sessions, default=argparse.SUPPRESS)
    verbs = sessions.add_subparsers(dest="verb", metavar="VERB", required=True)

    listing = verbs.add_parser("list", help="list sessions")
    _common(listing, default=argparse.SUPPRESS)
    listing.add_argument("--json", action="store_true", help="print JSON")

    new = verbs.add_parser("new", help="create a session")
    _common(new, default=argparse.SUPPRESS)
    new.add_argument("name", metavar="NAME")

    exp = verbs.add_parser("export", help="export a session's transcript")
    _common(exp, default=argparse.SUPPRESS)
    exp.add_argument("ref", metavar="ID", help="session id, unique id prefix, name or number")
    exp.add_argument("--format", choices=["md", "json"], default="md")
    exp.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    return parser


def _engine(args: argparse.Namespace) -> Engine:
    config = EngineConfig(
        data_dir=paths.data_dir(args.data_dir), workspace=paths.workspace(args.workspace)
    )
    return Engine(config)


async def _with_engine(args: argparse.Namespace, body: Callable[[Engine], Awaitable[int]]) -> int:
    engine = _engine(args)
    try:
        return await body(engine)
    finally:
        await engine.aclose()


def _cmd_list(args: argparse.Namespace) -> int:
    async def body(engine: Engine) -> int:
        sessions = engine.list_sessions()
        active = engine.active_session()
        if args.json:
            counts = engine.transcript_counts()
            rows = [
                {
                    "number": n,
                    "id": s.id,
                    "name": s.name,
                    "state": s.state.value,
                    "active": active is not None and s.id == active.id,
                    "created_at": s.created_at.isoformat(),
                    "last_active_at": s.last_active_at.isoformat(),
                    "messages": counts.get(s.id, 0),
                    "workspace": s.workspace,
                }
                for n, s in enumerate(sessions, 1)
            ]
            print(json.dumps(rows, indent=2))
        else:
            print(engine.describe_sessions())
        return EXIT_OK

    return asyncio.run(_with_engine(args, body))


def _cmd_new(args: argparse.Namespace) -> int:
    async def body(engine: Engine) -> int:
        session = await engine.create_session(args.name, activate=False)
        print(f"{session.id}\t{session.name}")
        return EXIT_OK

    return asyncio.run(_with_engine(args, body))


def _cmd_export(args: argparse.Namespace) -> int:
    async def body(engine: Engine) -> tuple[str, str]:
        session = engine.get_session(args.ref)
        return session.name, export.render(
            session, await engine.transcript(session.id), args.format
        )

    async def run() -> tuple[str, str]:
        engine = _engine(args)
        try:
            return await body(engine)
        finally:
            await engine.aclose()

    name, text = asyncio.run(run())
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"exported {name!r} to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _run_tui(args: argparse.Namespace) -> int:
    from sylk_tui.app import SylkApp  # Textual loads only when the TUI runs.

    SylkApp(_engine(args)).run()
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "list": _cmd_list,
        "new": _cmd_new,
        "export": _cmd_export,
    }
    try:
        if args.command == "sessions":
            return handlers[args.verb](args)
        return _run_tui(args)
    except SylkError as exc:
        print(f"sylk: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        print(f"sylk: error: {problems}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"sylk: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
