"""``sylk sessions new --provider P [--model M]``: a session made with its own models.

The choice is kept with the session (as ``/model PROVIDER/MODEL`` would keep it, for
every role), unlike ``sylk run --provider/--model``, which holds for that run only.
It is checked before the session is made, so a provider that cannot be used leaves
nothing behind.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from backend.errors import CommandError

if TYPE_CHECKING:
    from backend.engine import Engine
    from backend.sessions.models import Session


def add_flags(parser: argparse.ArgumentParser) -> None:
    # Own dests: --provider/--model of `sylk run` become the engine's run flags.
    parser.add_argument(
        "--provider",
        dest="session_provider",
        metavar="PROVIDER",
        help="the session's provider for every role, kept with it (/model changes it)",
    )
    parser.add_argument(
        "--model", dest="session_model", metavar="MODEL", help="its model (needs --provider)"
    )
    for flag, what in (("--max-tasks", "tasks"), ("--max-engineers", "engineers")):
        parser.add_argument(flag, metavar="N", help=f"at most N {what} at once (/session limits)")


async def create(engine: Engine, args: argparse.Namespace) -> Session:
    """The new session, its model choice checked first and then kept."""
    provider, model = args.session_provider, args.session_model
    if model and not provider:
        raise CommandError(
            "--model needs --provider for a session",
            help_hint="sylk sessions new NAME --provider P --model M",
        )
    spec = engine.check_model(f"{provider}/{model}" if model else provider) if provider else None
    limits = _limits_text(args)
    isolation = False if getattr(args, "no_isolation", False) else None  # else the config's
    session = await engine.create_session(args.name, activate=False, isolation=isolation)
    if spec is not None:
        said = await engine.model_command(session.id, {"action": "set", "spec": spec})
        print(said, file=sys.stderr)
    if limits:
        await engine.limits_command(session.id, limits)
    return session


def _limits_text(args: argparse.Namespace) -> str:
    """``tasks N engineers N`` from the flags, checked before the session is made."""
    from backend.engine.worker_lanes import parse_limits  # the engine is loaded by now

    pairs = (("tasks", args.max_tasks), ("engineers", args.max_engineers))
    text = " ".join(f"{name} {value}" for name, value in pairs if value is not None)
    parse_limits(text)
    return text
