"""Each session's approval settings: the effective mode, persistence, bad stored data;
and the answers an approval question takes (parsed, never trusted)."""

from __future__ import annotations

from typing import Any

from backend.approvals import answers
from backend.approvals.session_approvals import ApprovalBook
from backend.config.approvals import ApprovalMode, ApprovalSettings
from backend.events import ApprovalRequest


async def test_the_effective_mode_caller_then_run_then_session_then_config() -> None:
    saved: dict[str, dict[str, Any]] = {}

    async def save(session_id: str, data: dict[str, Any]) -> None:
        saved[session_id] = data

    book = ApprovalBook(ApprovalSettings(mode=ApprovalMode.AUTO_EDIT), save=save)
    assert book.mode("s1") is ApprovalMode.AUTO_EDIT
    await book.set_mode("s1", ApprovalMode.READ_ONLY)
    assert book.mode("s1") is ApprovalMode.READ_ONLY
    assert book.mode("s1", ApprovalMode.AUTO) is ApprovalMode.AUTO  # the caller's rights
    assert saved["s1"] == {"mode": "read-only"}
    await book.set_network("s1", True)
    await book.allow_command("s1", "pytest *")
    await book.allow_file("s1", "src/a.py")
    assert saved["s1"] == {"mode": "read-only", "network": True, "allow": ["pytest *"],
                           "files": ["src/a.py"]}  # fmt: skip
    # A fresh book (a restart) reads what was saved.
    again = ApprovalBook(ApprovalSettings(), load=saved.get)
    assert again.mode("s1") is ApprovalMode.READ_ONLY and again.network("s1")
    assert again.rules("s1").session_files == {"src/a.py"}
    run = ApprovalBook(ApprovalSettings(), load=saved.get, run_mode=ApprovalMode.AUTO)
    assert run.mode("s1") is ApprovalMode.AUTO and run.default_mode() is ApprovalMode.AUTO


def test_unreadable_stored_settings_fall_back_to_defaults() -> None:
    book = ApprovalBook(ApprovalSettings(), load=lambda _sid: {"mode": "yolo", "allow": 3})
    assert book.mode("s") is ApprovalMode.ASK and book.of("s").allow == []


REQUEST = ApprovalRequest(
    op="engineer.shell.run", agent="engineer", action="command", mode="ask",
    sandbox="none", command="pytest -q", session_rules=("pytest *", "pytest -q"),
)  # fmt: skip


def test_answers_are_parsed_never_trusted() -> None:
    assert answers.parse("allow", REQUEST) == answers.Answer(True)
    assert answers.parse(answers.allow_for_session("pytest *"), REQUEST).session_rule == "pytest *"
    forged = answers.parse(answers.allow_for_session("rm *"), REQUEST)
    assert not forged.allowed and forged.session_rule is None
    assert answers.parse("deny", REQUEST) == answers.Answer(False)
    assert (
        answers.parse(answers.deny("  use\nruff   instead "), REQUEST).reason == "use ruff instead"
    )
    assert not answers.parse(None, REQUEST).allowed
    assert not answers.parse("yes please", REQUEST).allowed


def test_the_question_offers_the_keys_answers() -> None:
    question = answers.question(REQUEST)
    assert question.approval is REQUEST
    assert [o.value for o in question.options] == [
        "allow", "allow-session:pytest *", "allow-session:pytest -q", "deny", "deny:"
    ]  # fmt: skip
    assert "pytest -q" in question.title and "sandbox: none" in question.prompt
