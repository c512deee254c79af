"""The Guide's DSL: /task, @agent, /status, /help, and /session through one parser."""

from __future__ import annotations

import pytest

from backend.errors import CommandError
from backend.guide.routing.decision import Target
from backend.guide.routing.dsl import (
    AgentMention,
    DeadLetterCommand,
    HelpCommand,
    RecordCommand,
    StatusCommand,
    TaskCommand,
    ToolsCommand,
    help_text,
    is_dsl,
    parse,
)
from backend.guide.routing.session_dsl import SessionCommand


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/task t3 prompt use the new API", TaskCommand("t3", "prompt", "use the new API")),
        ("/task t3 query what's left?", TaskCommand("t3", "query", "what's left?")),
        ("/task 7 interrupt", TaskCommand("7", "interrupt")),
        ("/task 7 IGNORE_TESTER", TaskCommand("7", "ignore_tester")),
        ("@librarian where is the cache?", AgentMention(Target.LIBRARIAN, "where is the cache?")),
        ("@Archivalist, what did we do", AgentMention(Target.ARCHIVALIST, "what did we do")),
        ("@tester: run it", AgentMention(Target.TESTER, "run it")),
        ("/status", StatusCommand()),
        ("/help", HelpCommand()),
        ("/help task", HelpCommand("task")),
        ("/session list", SessionCommand("list")),
        ("/deadletters", DeadLetterCommand("list")),
        ("/dlq replay dl-3", DeadLetterCommand("replay", "dl-3")),
        ("/deadletters purge", DeadLetterCommand("purge")),
        ("/tools", ToolsCommand("discover")),
        ("/tools linter", ToolsCommand("discover", "linter")),
        ("/tools test-framework web", ToolsCommand("discover", "test_framework", "web")),
        ("/tools src/app", ToolsCommand("discover", None, "src/app")),
        (
            "/tools choose typescript linter biome",
            ToolsCommand("choose", "linter", language="typescript", tool="biome"),
        ),
        (
            "/tools choose go linter custom make vet",
            ToolsCommand("choose", "linter", language="go", tool="custom", run_command="make vet"),
        ),
    ],
)
def test_parses(text: str, expected: object) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("/task", "needs a task id and a verb"),
        ("/task t1 dance", "unknown /task verb"),
        ("/task t1 prompt", "needs the text"),
        ("/task t1 interrupt now please", "takes no text"),
        ("@nobody hello", "no agent named @nobody"),
        ("@guide hello", "no agent named @guide"),
        ("@librarian", "needs a message"),
        ("/status now", "takes no arguments"),
        ("/help cooking", "no help on 'cooking'"),
        ("/frobnicate", "unknown command"),
        ("/deadletters replay", "needs one id"),
        ("/deadletters eat", "unknown /deadletters verb"),
        ("/tools choose python linter", "needs a language, a category and a tool"),
        ("/tools choose python painter ruff", "unknown tool category 'painter'"),
        ("/tools linter a b", "at most a category and one path"),
    ],
)
def test_errors_carry_usage(text: str, fragment: str) -> None:
    with pytest.raises(CommandError) as info:
        parse(text)
    assert fragment in str(info.value)


def test_is_dsl() -> None:
    assert is_dsl("@tester go") and is_dsl(" /status")
    assert not is_dsl("email me@example.com") and not is_dsl("plain words")


def test_help_mentions_everything() -> None:
    text = help_text(None)
    for fragment in ("/session new", "/task ID", "@AGENT", "/status", "librarian"):
        assert fragment in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("decision: invoices stay in SQLite", RecordCommand("decision", "invoices stay in SQLite")),
        ("Lesson learned: never mock the archive",
         RecordCommand("insight", "never mock the archive")),
        ("TODO:check the timezone", RecordCommand("open_thread", "check the timezone")),
        ("/remember failure the deploy hung on migrations",
         RecordCommand("failure", "the deploy hung on migrations")),
        ("/remember staging is read only", RecordCommand("general", "staging is read only")),
        ("/note decision", RecordCommand("general", "decision")),  # a category with no text
    ],
)  # fmt: skip
def test_lines_to_remember(text: str, expected: RecordCommand) -> None:
    assert is_dsl(text)
    assert parse(text) == expected


def test_remembering_nothing_is_an_error_and_a_bare_colon_is_prose() -> None:
    with pytest.raises(CommandError, match="needs something to remember") as info:
        parse("/remember")
    assert "decision: TEXT" in str(info.value.help_hint)
    assert not is_dsl("decision:") and not is_dsl("what was the decision: a or b?")
    assert "/remember" in help_text(None)
