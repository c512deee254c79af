"""``sylk sessions list|export|import``: the archive's sessions from a shell.

``list`` shows each session's workspace (home as ``~``) beside its state and phase;
``export ID --format md|json|html|svg [-o FILE]`` writes the whole session with no
secret in it (:mod:`sylk_tui.export`); ``import FILE [--new-id]`` reads a JSON export
back into the configured archive (``database_url``, else the data dir's file). A bad
file or a conflict is one error line and a non-zero exit; nothing is written then.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sylk_tui import paths
from sylk_tui.commands import team_sessions
from sylk_tui.export.formats import FORMATS, SessionFormat

if TYPE_CHECKING:
    from backend.engine import Engine
    from backend.sessions.models import Session

Common = Callable[..., None]
MakeEngine = Callable[[argparse.Namespace], "Engine"]


def add_parsers(verbs: Any, common: Common) -> None:
    listing = verbs.add_parser("list", help="list sessions with their workspaces")
    common(listing, default=argparse.SUPPRESS)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument(
        "--team", action="store_true",
        help="every session of a shared archive, with its owner (user@host): names and states",
    )  # fmt: skip

    exp = verbs.add_parser("export", help="export a session (transcript, plans, usage)")
    common(exp, default=argparse.SUPPRESS)
    exp.add_argument("ref", metavar="ID", help="session id, unique id prefix, name or number")
    exp.add_argument(
        "--format", choices=FORMATS, default="md",
        help="md: the transcript; json: the whole session, for import; html: a page; "
        "svg: the transcript as a terminal shows it",
    )  # fmt: skip
    exp.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")

    imp = verbs.add_parser("import", help="import a session exported as JSON")
    common(imp, default=argparse.SUPPRESS)
    imp.add_argument(
        "file", metavar="FILE", help="a file written by `sessions export --format json`"
    )
    imp.add_argument(
        "--new-id", action="store_true",
        help="import as a copy with new ids (when this data dir already holds the session)",
    )  # fmt: skip


def shown_path(path: str, home: str | None = None) -> str:
    """``path`` with the user's home as ``~``."""
    home = home if home is not None else os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def listing_lines(
    sessions: Sequence[Session], active_id: str | None, counts: dict[str, int]
) -> list[str]:
    """One line per session: number, id, state, phase, messages, name, workspace."""
    if not sessions:
        return ["no sessions"]
    width = min(24, max(len(s.name) for s in sessions))
    lines = [f"    #  {'id':<8}  {'state':<9}  {'phase':<10}  {'msgs':>5}  "
             f"{'name':<{width}}  workspace"]  # fmt: skip
    for n, s in enumerate(sessions, 1):
        mark = "*" if s.id == active_id else " "
        lines.append(
            f"{mark}{n:>4}  {s.short_id}  {s.state.value:<9}  {s.phase.value:<10}  "
            f"{counts.get(s.id, 0):>5}  {s.name:<{width}}  {shown_path(s.workspace)}"
        )
    return lines


async def list_sessions(engine: Engine, as_json: bool, team: bool = False) -> int:
    if team:
        return team_sessions.print_team(engine, as_json)
    sessions = engine.list_sessions()
    active = engine.active_session()
    active_id = active.id if active is not None else None
    counts = engine.transcript_counts()
    if not as_json:
        print("\n".join(listing_lines(sessions, active_id, counts)))
        return 0
    rows = [
        {"number": n, "id": s.id, "name": s.name, "state": s.state.value,
         "phase": s.phase.value, "active": s.id == active_id,
         "created_at": s.created_at.isoformat(), "last_active_at": s.last_active_at.isoformat(),
         "messages": counts.get(s.id, 0), "workspace": s.workspace}
        for n, s in enumerate(sessions, 1)
    ]  # fmt: skip
    print(json.dumps(rows, indent=2))
    return 0


def run_export(args: argparse.Namespace, make_engine: MakeEngine) -> int:
    from sylk_tui.export.session_export import export_session

    async def body() -> tuple[str, str]:
        engine = make_engine(args)
        try:
            session = engine.get_session(args.ref)
            fmt = cast(SessionFormat, args.format)
            data_dir = paths.data_dir(getattr(args, "data_dir", None))
            return session.name, await export_session(engine, session, fmt, data_dir=data_dir)
        finally:
            await engine.aclose()

    name, text = asyncio.run(body())
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"exported {name!r} to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def run_import(args: argparse.Namespace) -> int:
    from sqlalchemy import make_url

    from backend.config.settings import load_config
    from backend.sessions.ownership import local_owner
    from sylk_tui.export.importing import import_session

    data_dir = paths.data_dir(getattr(args, "data_dir", None))
    settings = load_config(paths.config_file())
    owner = local_owner(settings.team.user)
    url = settings.database_url  # the configured archive, as every engine here opens it
    session = import_session(Path(args.file), data_dir, new_id=args.new_id, owner=owner, url=url)
    where = make_url(url).render_as_string(hide_password=True) if url else data_dir
    print(f"{session.id}\t{session.name}")
    print(f"imported {session.name!r} into {where}", file=sys.stderr)
    return 0
