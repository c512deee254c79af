"""``sylk sessions snapshot|restore|stats``: a session's snapshots and figures from a shell.

The same engine verbs as ``/session snapshot|snapshots|restore|stats`` on the same data
dir, for scripts and for sessions not on screen. ``snapshot ID --list`` lists them;
``restore`` leaves a DAG it brings back to run at the next start (``--resume`` runs it
now and waits for it). A refusal (the session running, a bad snapshot) is an error line
and exit status 1, and nothing is changed.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backend.engine import Engine

Common = Callable[..., None]
MakeEngine = Callable[[argparse.Namespace], "Engine"]
VERBS = ("snapshot", "restore", "stats")
REF_HELP = "session id, unique id prefix, name or number"


def add_parsers(verbs: Any, common: Common) -> None:
    snap = verbs.add_parser("snapshot", help="store the session's whole workflow state")
    common(snap, default=argparse.SUPPRESS)
    snap.add_argument("ref", metavar="ID", help=REF_HELP)
    snap.add_argument("--label", help="a name for the snapshot (one line)")
    snap.add_argument("--list", action="store_true", help="list the session's snapshots")
    restore = verbs.add_parser("restore", help="bring the session back to a snapshot")
    common(restore, default=argparse.SUPPRESS)
    restore.add_argument("ref", metavar="ID", help=REF_HELP)
    restore.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot id, prefix or label")
    restore.add_argument("--resume", action="store_true", help="run its DAG on now and wait")
    stats = verbs.add_parser("stats", help="what the session did, in numbers")
    common(stats, default=argparse.SUPPRESS)
    stats.add_argument("ref", metavar="ID", help=REF_HELP)
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")


async def _verb(engine: Engine, args: argparse.Namespace) -> str:
    from backend.sessions.stats import stats_text

    session = engine.get_session(args.ref)
    if args.verb == "stats":
        figures = await engine.session_stats(session.id)
        return figures.model_dump_json(indent=2) if args.json else stats_text(figures)
    if args.verb == "snapshot":
        if args.list:
            return engine.snapshots_text(session.id)
        snap = await engine.snapshot_session(session.id, args.label)
        return f"snapshot {snap.id} of session {session.name!r}"
    now = await engine.restore_snapshot(session.id, args.snapshot, resume=args.resume)
    said = f"session {now.name!r} restored ({now.state.value}, phase {now.phase.value})"
    running = [p for p, e in (now.metadata.get("dags") or {}).items()
               if isinstance(e, dict) and e.get("status") == "running"]  # fmt: skip
    if args.resume:
        for plan_id in running:
            outcome = await engine.wait_dag(session.id, plan_id)
            said += f"\nplan {plan_id}: {outcome.status.value if outcome else 'not run'}"
    elif running:
        said += f"\nits DAG ({', '.join(running)}) runs on at the next start"
    return said


def run(args: argparse.Namespace, make_engine: MakeEngine) -> int:
    async def body() -> str:
        engine = make_engine(args)
        try:
            return await _verb(engine, args)
        finally:
            await engine.aclose()

    print(asyncio.run(body()))
    return 0
