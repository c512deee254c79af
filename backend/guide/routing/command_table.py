"""Every ``/`` command the Guide understands, in one table.

The parser (``dsl.parse``) refuses a head this table does not name, so a command
works only once it is listed here; the help screen, the composer's completion and
"did you mean" all read the same table, so none of them can drift from the parser.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

from backend.budgets import budget_dsl
from backend.config.approvals import MODE_NAMES
from backend.errors import CommandError
from backend.guide.routing import mcp_dsl, model_dsl, session_dsl


@dataclass(frozen=True)
class CommandSpec:
    """One command: the word typed, other spellings of it, how to type it, what it does."""

    name: str
    usage: str
    summary: str
    aliases: tuple[str, ...] = ()

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        "/session",
        "/session " + "|".join(session_dsl.USAGE) + " ...",
        "sessions: create, list, switch, suspend, resume, complete, fail, close,"
        " stats, snapshot, restore",
    ),
    CommandSpec(
        "/task",
        "/task ID prompt|query|interrupt|ignore_inspector|ignore_tester|handoff[_stop] [TEXT]",
        "steer a running pipeline",
    ),
    CommandSpec(
        "/remember",
        "/remember [decision|insight|pattern|failure|todo|note] TEXT",
        "keep it in the session's chronicle (also: 'decision: TEXT')",
        aliases=("/note",),
    ),
    CommandSpec("/status", "/status", "routing, sessions, models and agent health"),
    CommandSpec(
        "/deadletters",
        "/deadletters [list|replay ID|purge]",
        "messages no agent could take",
        aliases=("/dlq",),
    ),
    CommandSpec(
        "/tools",
        "/tools [CATEGORY] [PATH] · /tools choose LANGUAGE CATEGORY TOOL",
        "linters, formatters, tests: found, recommended or chosen",
    ),
    CommandSpec("/undo", "/undo", "revert the files the last agent turn changed"),
    CommandSpec("/diff", "/diff", "what this session changed in the workspace since it started"),
    CommandSpec(
        "/approval",
        "/approval [" + "|".join(MODE_NAMES) + "]",
        "what agents may do without asking",
        aliases=("/approvals",),
    ),
    CommandSpec("/network", "/network [on|off]", "may this session's commands reach the network"),
    CommandSpec(
        "/plan",
        "/plan [show|approve|reject ID]",
        "the session's plans: list, show, decide",
        aliases=("/plans",),
    ),
    CommandSpec(
        "/qa",
        "/qa [status|run|skip-tests|override|stop]",
        "session QA after a plan: where it stands, override, skip tests",
    ),
    CommandSpec(
        "/model", model_dsl.MODEL_USAGE, "which model each agent uses", aliases=("/models",)
    ),
    CommandSpec("/mcp", mcp_dsl.MCP_USAGE, "external MCP servers: health, on/off, re-list tools"),
    CommandSpec("/budget", budget_dsl.BUDGET_USAGE, "token and cost limits: use, set, lift"),
    CommandSpec("/help", "/help [TOPIC]", "the commands, or one topic of them", aliases=("/?",)),
)

COMMAND_WORDS: frozenset[str] = frozenset(s for c in COMMANDS for s in c.spellings)
"""Every spelling the parser accepts as a command's first word."""


def closest_command(word: str, words: Iterable[str] = COMMAND_WORDS) -> str | None:
    """The command ``word`` was most likely meant to be (a typo, a prefix), if any."""
    word = word.lower()
    if len(word) < 3:  # "/" or "/x": too little to guess from
        return None
    known = sorted(words)
    prefixed = [w for w in known if w.startswith(word)]
    if len(prefixed) == 1:
        return prefixed[0]
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return close[0] if close else None


class UnknownCommandError(CommandError):
    """A ``/`` word no command is spelled with; says which command was likely meant."""

    def __init__(self, word: str, suggestion: str | None) -> None:
        said = f"unknown command {word}"
        if suggestion is not None:
            said += f"; did you mean {suggestion}?"
        super().__init__(
            said,
            help_hint="see /help",
            details={"reason": "unknown_command", "command": word, "suggestion": suggestion},
        )
        self.word = word
        self.suggestion = suggestion


def unknown_command(word: str, words: Iterable[str] = COMMAND_WORDS) -> UnknownCommandError:
    return UnknownCommandError(word, closest_command(word, words))
