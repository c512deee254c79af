"""The Guide's DSL fast path: commands decided without any classification.

    /session new|list|switch|suspend|resume|complete ...
    /task <id> prompt|query|interrupt|ignore_inspector|ignore_tester [TEXT]
    /remember [decision|insight|pattern|failure|todo|note] TEXT   (or "decision: TEXT")
    @agent MESSAGE          send straight to one agent
    /help [TOPIC]   /status   /approval [MODE]   /network [on|off]
    /plan [show|approve|reject ID]   /qa [status|run|skip-tests|override|stop]
    /model [ROLE] [PROVIDER/MODEL] | reset [ROLE]
    /mcp [enable|disable NAME | refresh [NAME]]

Parsing is pure; a malformed command raises :class:`CommandError` whose hint is
the usage line of what was meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from backend.budgets import budget_dsl
from backend.budgets.budget_dsl import BudgetCommand
from backend.config.approvals import MODE_NAMES
from backend.errors import CommandError
from backend.guide.routing import mcp_dsl, model_dsl
from backend.guide.routing import session_dsl as session_commands
from backend.guide.routing.command_table import COMMAND_WORDS, unknown_command
from backend.guide.routing.decision import AGENT_TARGETS, Target
from backend.guide.routing.mcp_dsl import McpCommand
from backend.guide.routing.model_dsl import ModelCommand
from backend.guide.routing.session_dsl import SessionCommand

TaskVerb = Literal[
    "prompt", "query", "interrupt", "ignore_inspector", "ignore_tester", "handoff", "handoff_stop"
]
TASK_VERBS: tuple[TaskVerb, ...] = (
    "prompt",
    "query",
    "interrupt",
    "ignore_inspector",
    "ignore_tester",
    "handoff",
    "handoff_stop",
)
TASK_USAGE = (
    "/task ID prompt TEXT  ·  /task ID query [TEXT]  ·  "
    "/task ID interrupt|ignore_inspector|ignore_tester|handoff|handoff_stop"
)
MENTION_USAGE = "@AGENT MESSAGE, where AGENT is one of: " + ", ".join(
    sorted(t.value for t in AGENT_TARGETS)
)


@dataclass(frozen=True)
class TaskCommand:
    task_id: str
    verb: TaskVerb
    text: str = ""


@dataclass(frozen=True)
class AgentMention:
    target: Target
    text: str


@dataclass(frozen=True)
class RecordCommand:
    """Something to keep in the session's chronicle, as the Archivalist's category."""

    category: str
    text: str


@dataclass(frozen=True)
class StatusCommand:
    pass


@dataclass(frozen=True)
class HelpCommand:
    topic: str | None = None


@dataclass(frozen=True)
class DeadLetterCommand:
    verb: Literal["list", "replay", "purge"]
    letter_id: str | None = None


@dataclass(frozen=True)
class ToolsCommand:
    """``/tools [CATEGORY] [PATH]`` or ``/tools choose LANGUAGE CATEGORY TOOL [COMMAND]``."""

    verb: Literal["discover", "choose"]
    category: str | None = None
    path: str = "."
    language: str | None = None
    tool: str | None = None
    run_command: str | None = None


@dataclass(frozen=True)
class CheckpointCommand:
    """``/undo`` (revert the last agent turn's changes) or ``/diff`` (the session's)."""

    verb: Literal["undo", "diff"]


@dataclass(frozen=True)
class SettingCommand:
    """``/approval [MODE]`` or ``/network [on|off]``: show, or set, a session setting."""

    verb: Literal["approval", "network"]
    value: str | None = None


@dataclass(frozen=True)
class PlanCommand:
    """``/plan`` (the session's plans), ``/plan show|approve|reject ID``."""

    verb: Literal["list", "show", "approve", "reject"]
    plan_id: str | None = None


@dataclass(frozen=True)
class QaCommand:
    """``/qa [status|run|skip-tests|override|stop]``: the session's QA after a plan."""

    action: str = "status"


DslCommand = (
    SessionCommand
    | TaskCommand
    | RecordCommand
    | AgentMention
    | StatusCommand
    | HelpCommand
    | DeadLetterCommand
    | ToolsCommand
    | CheckpointCommand
    | SettingCommand
    | PlanCommand
    | QaCommand
    | ModelCommand
    | McpCommand
    | BudgetCommand
)
TOOL_CATEGORIES = ("linter", "formatter", "type_checker", "test_framework", "lsp")
TOOLS_USAGE = (
    "/tools [linter|formatter|type_checker|test_framework|lsp] [PATH]  ·  "
    "/tools choose LANGUAGE CATEGORY TOOL [RUN COMMAND]"
)
APPROVAL_USAGE = "/approval [" + "|".join(MODE_NAMES) + "]"
NETWORK_USAGE = "/network [on|off]"
PLAN_USAGE = "/plan · /plan show|approve|reject ID"
QA_ACTIONS = ("status", "run", "skip-tests", "override", "stop")
QA_USAGE = "/qa [" + "|".join(QA_ACTIONS) + "]"
DEAD_LETTER_USAGE = "/deadletters [list] · /deadletters replay ID · /deadletters purge"

_MENTION = re.compile(r"^@([A-Za-z_]+)[\s,:]*(.*)$", re.DOTALL)
# The word a line to remember leads with -> the chronicle category it is kept under.
RECORD_CATEGORIES = {
    "decision": "decision", "decided": "decision", "insight": "insight",
    "lesson": "insight", "lesson learned": "insight", "learned": "insight",
    "pattern": "pattern", "convention": "pattern", "failure": "failure",
    "todo": "open_thread", "to do": "open_thread", "open question": "open_thread",
    "question": "open_thread", "note": "general", "remember": "general",
}  # fmt: skip
RECORD_USAGE = (
    "/remember [decision|insight|pattern|failure|todo|note] TEXT, or a line such as "
    "'decision: TEXT'"
)
_RECORD_LEAD = re.compile(
    r"^(" + "|".join(sorted(RECORD_CATEGORIES, key=len, reverse=True)) + r")\s*:\s*(\S.*)$",
    re.IGNORECASE | re.DOTALL,
)

HELP_TOPICS: dict[str, str] = {
    "session": session_commands.HELP_TEXT,
    "task": "Steer a running pipeline:\n  " + TASK_USAGE,
    "agents": "Address one agent directly:\n  " + MENTION_USAGE,
    "plan": "The Architect's plans in this session, and deciding one:\n  " + PLAN_USAGE,
    "qa": "The session's QA after a plan passes (inspection, then the whole test suite):\n"
    f"  {QA_USAGE}\n  override: accept the inspection findings (listed as deferred); "
    "skip-tests: skip the test run; stop: back to planning; run: check again",
    "model": model_dsl.HELP_TOPIC,
    "mcp": mcp_dsl.HELP_TOPIC,
    "budget": budget_dsl.HELP_TOPIC,
    "tools": "Which linters, formatters, type checkers and test frameworks this project "
    "uses:\n  " + TOOLS_USAGE,
}
HELP_TEXT = "\n".join(
    [
        session_commands.HELP_TEXT,
        "  /task ID prompt|query|interrupt|ignore_inspector|ignore_tester [TEXT]",
        "  /remember [decision|insight|pattern|failure|todo|note] TEXT   keep it in the "
        "session's chronicle (also: 'decision: TEXT')",
        "  @AGENT MESSAGE     (agents: " + ", ".join(sorted(t.value for t in AGENT_TARGETS)) + ")",
        "  /status            routing, sessions and agent health",
        "  /deadletters [list|replay ID|purge]   messages no agent could take",
        "  /tools [CATEGORY] [PATH]   linters, formatters, tests: found, recommended or chosen",
        "  /undo              revert the files the last agent turn changed",
        "  /diff              what this session changed in the workspace since it started",
        f"  {APPROVAL_USAGE}   what agents may do without asking",
        f"  {NETWORK_USAGE}   may this session's commands reach the network",
        "  /plan [show|approve|reject ID]   the session's plans: list, show, decide",
        f"  {QA_USAGE}   session QA after a plan: where it stands, override, skip tests",
        model_dsl.HELP_LINE,
        mcp_dsl.HELP_LINE,
        budget_dsl.HELP_LINE,
        "  /help [session|task|agents|tools|plan|qa|model|mcp|budget]",
        "Anything else is routed by the Guide to the agent best placed to answer.",
    ]
)


def is_dsl(text: str) -> bool:
    stripped = text.lstrip()
    return (
        stripped.startswith("/")
        or bool(_MENTION.match(stripped))
        or bool(_RECORD_LEAD.match(stripped))
    )


def _parse_record(text: str) -> RecordCommand:
    """``/remember [CATEGORY] TEXT``; a first word that is no category is part of TEXT."""
    rest = text.split(None, 1)[1].strip() if len(text.split(None, 1)) > 1 else ""
    if not rest:
        raise CommandError("/remember needs something to remember", help_hint=RECORD_USAGE)
    first, _, tail = rest.partition(" ")
    category = RECORD_CATEGORIES.get(first.lower().rstrip(":"))
    if category is not None and tail.strip():
        return RecordCommand(category, tail.strip())
    return RecordCommand("general", rest)


def _parse_task(words: list[str]) -> TaskCommand:
    if len(words) < 3:
        raise CommandError("/task needs a task id and a verb", help_hint=TASK_USAGE)
    task_id, verb = words[1], words[2].lower()
    if verb not in TASK_VERBS:
        raise CommandError(f"unknown /task verb {words[2]!r}", help_hint=TASK_USAGE)
    text = " ".join(words[3:]).strip()
    if verb == "prompt" and not text:  # query's text is optional: the state is the answer
        raise CommandError(f"/task {verb} needs the text to send", help_hint=TASK_USAGE)
    if verb not in ("prompt", "query") and text:
        raise CommandError(f"/task {verb} takes no text", help_hint=TASK_USAGE)
    return TaskCommand(task_id=task_id, verb=verb, text=text)


def _parse_dead_letters(words: list[str]) -> DeadLetterCommand:
    verb = words[1].lower() if len(words) > 1 else "list"
    if verb == "replay":
        if len(words) != 3:
            raise CommandError("/deadletters replay needs one id", help_hint=DEAD_LETTER_USAGE)
        return DeadLetterCommand("replay", words[2])
    if verb in ("list", "purge") and len(words) <= 2:
        return DeadLetterCommand("list" if verb == "list" else "purge")
    raise CommandError(f"unknown /deadletters verb {words[1]!r}", help_hint=DEAD_LETTER_USAGE)


def _parse_tools(words: list[str]) -> ToolsCommand:
    rest = words[1:]
    if rest and rest[0].lower() == "choose":
        if len(rest) < 4:
            raise CommandError(
                "/tools choose needs a language, a category and a tool", help_hint=TOOLS_USAGE
            )
        chosen = rest[2].lower().replace("-", "_")
        if chosen not in TOOL_CATEGORIES:
            raise CommandError(f"unknown tool category {rest[2]!r}", help_hint=TOOLS_USAGE)
        command = " ".join(rest[4:]) or None
        return ToolsCommand("choose", chosen, language=rest[1], tool=rest[3], run_command=command)
    category: str | None = None
    if rest and rest[0].lower().replace("-", "_") in TOOL_CATEGORIES:
        category = rest.pop(0).lower().replace("-", "_")
    if len(rest) > 1:
        raise CommandError("/tools takes at most a category and one path", help_hint=TOOLS_USAGE)
    return ToolsCommand("discover", category, rest[0] if rest else ".")


def _parse_setting(words: list[str]) -> SettingCommand:
    if words[0].lower() == "/approval":
        if len(words) > 2 or (len(words) == 2 and words[1].lower() not in MODE_NAMES):
            raise CommandError(
                f"/approval takes one of {', '.join(MODE_NAMES)}", help_hint=APPROVAL_USAGE
            )
        return SettingCommand("approval", words[1].lower() if len(words) == 2 else None)
    if len(words) > 2 or (len(words) == 2 and words[1].lower() not in ("on", "off")):
        raise CommandError("/network takes on or off", help_hint=NETWORK_USAGE)
    return SettingCommand("network", words[1].lower() if len(words) == 2 else None)


def _parse_plan(words: list[str]) -> PlanCommand:
    if len(words) == 1 or (len(words) == 2 and words[1].lower() == "list"):
        return PlanCommand("list")
    verb = words[1].lower()
    if verb not in ("show", "approve", "reject") or len(words) != 3:
        raise CommandError("/plan takes show, approve or reject and a plan id",
                           help_hint=PLAN_USAGE)  # fmt: skip
    return PlanCommand(verb, words[2])  # type: ignore[arg-type]


def _parse_qa(words: list[str]) -> QaCommand:
    action = words[1].lower() if len(words) > 1 else "status"
    if len(words) > 2 or action not in QA_ACTIONS:
        raise CommandError("/qa takes one of " + ", ".join(QA_ACTIONS), help_hint=QA_USAGE)
    return QaCommand(action)


def _parse_mention(match: re.Match[str]) -> AgentMention:
    name, text = match.group(1).lower(), match.group(2).strip()
    try:
        target = Target(name)
    except ValueError:
        target = None
    if target is None or target not in AGENT_TARGETS:
        raise CommandError(f"no agent named @{match.group(1)}", help_hint=MENTION_USAGE)
    if not text:
        raise CommandError(f"@{name} needs a message", help_hint=MENTION_USAGE)
    return AgentMention(target=target, text=text)


def parse(text: str) -> DslCommand:
    stripped = text.strip()
    mention = _MENTION.match(stripped)
    if mention:
        return _parse_mention(mention)
    lead = _RECORD_LEAD.match(stripped)
    if lead:
        return RecordCommand(RECORD_CATEGORIES[lead.group(1).lower()], lead.group(2).strip())
    words = stripped.split()
    head = words[0].lower() if words else ""
    if head not in COMMAND_WORDS:
        raise unknown_command(words[0] if words else stripped)
    if head == "/session":
        return session_commands.parse(stripped)
    if head == "/task":
        return _parse_task(words)
    if head in ("/remember", "/note"):
        return _parse_record(stripped)
    if head == "/status":
        if len(words) > 1:
            raise CommandError("/status takes no arguments", help_hint="/status")
        return StatusCommand()
    if head in ("/deadletters", "/dlq"):
        return _parse_dead_letters(words)
    if head == "/tools":
        return _parse_tools(words)
    if head in ("/undo", "/diff"):
        if len(words) > 1:
            raise CommandError(f"{head} takes no arguments", help_hint=head)
        return CheckpointCommand("undo" if head == "/undo" else "diff")
    if head in ("/approval", "/approvals", "/network"):
        return _parse_setting(["/approval" if head == "/approvals" else head, *words[1:]])
    if head in ("/plan", "/plans"):
        return _parse_plan(words)
    if head == "/qa":
        return _parse_qa(words)
    if head in ("/model", "/models"):
        return model_dsl.parse(words)
    if head == "/mcp":
        return mcp_dsl.parse(words)
    if head == "/budget":
        return budget_dsl.parse(words)
    if head in ("/help", "/?"):
        topic = words[1].lower() if len(words) > 1 else None
        if topic is not None and topic not in HELP_TOPICS:
            raise CommandError(
                f"no help on {words[1]!r}", help_hint="topics: " + ", ".join(HELP_TOPICS)
            )
        return HelpCommand(topic)
    # The table names a command no branch above parses: a bug of ours, said plainly.
    raise CommandError(f"{head} is listed as a command but not understood yet")


def help_text(topic: str | None) -> str:
    return HELP_TOPICS[topic] if topic else HELP_TEXT
