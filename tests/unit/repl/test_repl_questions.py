"""The engine's questions answered at the repl's prompt: what each typed answer becomes
(the engine's own answer strings), and that a question is never answered by accident."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from backend.approvals import answers as approval_answers
from backend.events import ApprovalRequest, ChoiceOption, ChoiceQuestion, PlanReview
from sylk_tui.repl.questions import answer


def typed(*lines: str | None) -> Callable[[str], Awaitable[str | None]]:
    """What the user types at each prompt, in order; the end of input after them."""
    queue = list(lines)

    async def ask(prompt: str) -> str | None:
        return queue.pop(0) if queue else None

    return ask


def approval(**fields: object) -> ChoiceQuestion:
    request = ApprovalRequest(
        **{"op": "engineer.shell.run", "agent": "engineer", "action": "command", "mode": "ask",
           "sandbox": "landlock", "command": "pytest -q", "cwd": ".",
           "session_rules": ("pytest *",), **fields}  # type: ignore[arg-type]
    )  # fmt: skip
    return approval_answers.question(request)


@pytest.mark.parametrize(
    ("lines", "value"),
    [
        (["o"], "allow"),
        (["S"], "allow-session:pytest *"),
        (["d"], "deny"),
        (["r", "too  slow\x1b[31m"], "deny:too slow\x1b[31m"),
        (["x", "?", "nope"], None),  # not understood three times: declined, i.e. denied
        ([None], None),  # the end of input
    ],
)
async def test_an_approval_takes_o_s_d_r(lines: list[str | None], value: str | None) -> None:
    assert await answer(approval(), typed(*lines)) == value


async def test_several_session_rules_are_picked_by_number(
    capsys: pytest.CaptureFixture[str],
) -> None:
    question = approval(session_rules=("pytest *", "pytest -q"))
    assert await answer(question, typed("s", "2")) == "allow-session:pytest -q"
    assert await answer(question, typed("s", "9")) is None
    assert "1. pytest *" in capsys.readouterr().out


async def test_an_edit_shows_its_diff_without_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\x1b]0;pwned\x07\n"
    question = approval(action="edit", op="engineer.file.edit", path="x", command="",
                        diff=diff, session_rules=("x",))  # fmt: skip
    assert await answer(question, typed("o")) == "allow"
    out = capsys.readouterr().out
    assert "  +new" in out and "\x1b" not in out and "\x07" not in out


async def test_a_plan_review_takes_a_m_w_l(capsys: pytest.CaptureFixture[str]) -> None:
    question = ChoiceQuestion("Approve plan p1?", "", plan=PlanReview("p1", 1, "layer 1: a"))
    assert await answer(question, typed("a")) == "approve"
    assert await answer(question, typed("m", "add tests")) == "modify:add tests"
    assert await answer(question, typed("w", "why two layers?")) == "why:why two layers?"
    assert await answer(question, typed("l")) is None
    assert await answer(question, typed(None)) is None
    assert "layer 1: a" in capsys.readouterr().out


async def test_a_choice_takes_a_number_or_words_when_it_asks_for_them() -> None:
    options = [ChoiceOption("ruff", "ruff"), ChoiceOption("flake8", "flake8")]
    question = ChoiceQuestion("Which linter?", "", options=options)
    assert await answer(question, typed("2")) == "flake8"
    assert await answer(question, typed("")) is None  # Enter: decide later
    assert await answer(question, typed("pylint", "0", "3")) is None
    free = ChoiceQuestion("Which framework?", "", options=options, free_text=True)
    assert await answer(free, typed("pytest")) == "pytest"
