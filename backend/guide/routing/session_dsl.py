"""Parsing of the ``/session`` DSL typed into the composer.

Parsing is pure: it turns text into a :class:`SessionCommand` or raises a
:class:`CommandError` whose message includes the usage line, so a mistyped
command is answered with how to type it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Literal, cast

from backend.errors import CommandError

MERGE_MODES = ("ff", "merge", "squash")
NO_ISOLATION = "--no-isolation"

Verb = Literal[
    "new", "list", "switch", "suspend", "resume", "complete", "help",
    "fail", "close", "stats", "snapshot", "snapshots", "restore", "merge", "limits",
]  # fmt: skip

USAGE: dict[str, str] = {
    "new": "/session new [NAME] [--no-isolation]",
    "list": "/session list",
    "switch": "/session switch ID|NAME|NUMBER",
    "suspend": "/session suspend [ID|NAME|NUMBER]",
    "resume": "/session resume ID|NAME|NUMBER",
    "complete": "/session complete [ID|NAME|NUMBER]",
    "fail": "/session fail [REASON]",
    "close": "/session close [ID|NAME|NUMBER]",
    "stats": "/session stats [ID|NAME|NUMBER]",
    "snapshot": "/session snapshot [LABEL]",
    "snapshots": "/session snapshots",
    "restore": "/session restore SNAPSHOT",
    "merge": "/session merge [ff|merge|squash] [ID|NAME|NUMBER]",
    "limits": "/session limits [tasks N] [engineers N]",
}

HELP_TEXT = "\n".join(
    [
        "Commands:",
        *(f"  {line}" for line in USAGE.values()),
        "  /help",
        "Sessions are matched by id (or a unique prefix), by name, or by their number in the list.",
    ]
)


@dataclass(frozen=True)
class SessionCommand:
    verb: Verb
    ref: str | None = None
    name: str | None = None
    text: str | None = None  # a failure's reason, a snapshot's label


def is_command(text: str) -> bool:
    return text.lstrip().startswith("/")


def parse(text: str) -> SessionCommand:
    """Parse a slash command; ``/help`` and ``/session ...`` are understood."""
    try:
        words = shlex.split(text.strip())
    except ValueError as exc:
        raise CommandError(f"cannot read command: {exc}", help_hint="see /help") from exc
    if not words:
        raise CommandError("empty command", help_hint="see /help")
    head = words[0].lower()
    if head in ("/help", "/?"):
        return SessionCommand("help")
    if head != "/session":
        raise CommandError(f"unknown command {words[0]}", help_hint="see /help")
    if len(words) == 1:
        raise CommandError("/session needs a verb", help_hint=" | ".join(USAGE.values()))
    verb, args = words[1].lower(), words[2:]
    if verb not in USAGE:
        raise CommandError(
            f"unknown /session verb {words[1]!r}", help_hint=" | ".join(USAGE.values())
        )
    if verb == "new":  # --no-isolation: it works in place, no worktree (text carries it)
        flag = [a for a in args if a.lower() == NO_ISOLATION]
        name = " ".join(a for a in args if a.lower() != NO_ISOLATION) or None
        return SessionCommand("new", name=name, text=NO_ISOLATION if flag else None)
    if verb == "merge":  # the session's branch into its base (backend.worktrees)
        mode = args.pop(0).lower() if args and args[0].lower() in MERGE_MODES else "ff"
        if len(args) > 1:
            raise CommandError("/session merge takes one session at most", help_hint=USAGE[verb])
        return SessionCommand("merge", ref=args[0] if args else None, text=mode)
    if verb in ("fail", "snapshot", "limits"):  # the rest: the reason, the label, the limits
        return SessionCommand(cast(Verb, verb), text=" ".join(args) or None)
    if verb in ("list", "snapshots"):
        if args:
            raise CommandError(f"/session {verb} takes no arguments", help_hint=USAGE[verb])
        return SessionCommand(cast(Verb, verb))
    if verb in ("switch", "resume", "restore") and len(args) != 1:
        raise CommandError(f"/session {verb} needs exactly one session", help_hint=USAGE[verb])
    if len(args) > 1:
        raise CommandError(f"/session {verb} takes one session at most", help_hint=USAGE[verb])
    ref = args[0] if args else None
    if verb == "switch":
        return SessionCommand("switch", ref=ref)
    if verb == "resume":
        return SessionCommand("resume", ref=ref)
    if verb == "suspend":
        return SessionCommand("suspend", ref=ref)
    if verb in ("close", "stats", "restore"):
        return SessionCommand(cast(Verb, verb), ref=ref)
    return SessionCommand("complete", ref=ref)
