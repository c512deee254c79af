"""/model's grammar: show, set for one role or all, reset; malformed lines are typed errors."""

from __future__ import annotations

import pytest

from backend.errors import CommandError
from backend.guide.routing import dsl
from backend.guide.routing.decision import Target
from backend.guide.routing.model_dsl import ModelCommand
from backend.guide.routing.router import dsl_decision


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("/model", ModelCommand("show")),
        ("/models", ModelCommand("show")),
        ("/model openai/gpt-x", ModelCommand("set", None, "openai/gpt-x")),
        (
            "/model Engineer local/qwen/qwen2.5:7b",
            ModelCommand("set", "engineer", "local/qwen/qwen2.5:7b"),
        ),
        ("/model reset", ModelCommand("reset")),
        ("/model reset tester", ModelCommand("reset", "tester")),
    ],
)
def test_model_lines_parse(line: str, command: ModelCommand) -> None:
    assert dsl.parse(line) == command


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("/model poet openai/x", "unknown agent role 'poet'"),
        ("/model engineer", "needs the provider and model"),
        ("/model reset poet", "unknown agent role 'poet'"),
        ("/model reset a b", "at most one role"),
        ("/model engineer openai/x extra", "a role and PROVIDER/MODEL at most"),
    ],
)
def test_malformed_model_lines_say_what_is_wrong(line: str, fragment: str) -> None:
    with pytest.raises(CommandError, match=fragment) as info:
        dsl.parse(line)
    hint = info.value.help_hint  # the usage line, or the roles there are
    assert "/model [ROLE] PROVIDER[/MODEL]" in hint or "roles are guide, architect" in hint


def test_a_model_line_is_the_guides_own_command() -> None:
    decision = dsl_decision("/model architect anthropic/claude-x")
    assert decision.target is Target.GUIDE and decision.tier == "dsl"
    assert decision.command == {
        "verb": "model",
        "action": "set",
        "role": "architect",
        "spec": "anthropic/claude-x",
    }
    assert "/model" in dsl.help_text(None) and "/model reset" in dsl.help_text("model")
