"""The decision table: mode x action x rules x sandbox -> allow, ask or deny."""

from __future__ import annotations

import pytest

from backend.approvals.policy import RuleBook, Verdict, decide
from backend.approvals.rules import Rule
from backend.config.approvals import ApprovalMode

RO, ASK, EDIT, AUTO = (ApprovalMode.READ_ONLY, ApprovalMode.ASK, ApprovalMode.AUTO_EDIT,
                       ApprovalMode.AUTO)  # fmt: skip
ALLOW, Q, DENY = Verdict.ALLOW, Verdict.ASK, Verdict.DENY
NONE = RuleBook()
CONFIG = RuleBook(
    allow=(Rule("pytest *"), Rule("git status")),
    deny=(Rule("rm -rf *"), Rule("git push*")),
)


@pytest.mark.parametrize(
    ("mode", "action", "confined", "verdict"),
    [
        (RO, "edit", True, DENY), (RO, "command", True, DENY), (RO, "external", True, DENY),
        (ASK, "edit", True, Q), (ASK, "command", True, Q), (ASK, "external", True, Q),
        (EDIT, "edit", True, ALLOW), (EDIT, "command", True, Q), (EDIT, "external", True, Q),
        (AUTO, "edit", True, ALLOW), (AUTO, "command", True, ALLOW), (AUTO, "external", True, Q),
        # No sandbox: every command asks, whatever the mode (read-only still refuses).
        (RO, "command", False, DENY), (ASK, "command", False, Q), (EDIT, "command", False, Q),
        (AUTO, "command", False, Q), (AUTO, "edit", False, ALLOW),
    ],
)  # fmt: skip
def test_modes_without_rules(
    mode: ApprovalMode, action: str, confined: bool, verdict: Verdict
) -> None:
    subject = "src/app.py" if action == "edit" else "make"
    assert decide(mode, action, subject, NONE, confined=confined).verdict is verdict  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", [ASK, EDIT, AUTO])
@pytest.mark.parametrize("confined", [True, False])
def test_deny_rules_win_over_allow_rules_and_every_mode(mode: ApprovalMode, confined: bool) -> None:
    both = RuleBook(allow=(Rule("rm *"),), deny=(Rule("rm -rf *"),))
    decision = decide(mode, "command", "rm -rf build", both, confined=confined)
    assert (decision.verdict, decision.by, decision.rule) == (DENY, "rule", "rm -rf *")
    session = RuleBook(deny=(Rule("git push*"),), session_allow=(Rule("git push *"),))
    assert decide(mode, "command", "git push", session, confined=confined).verdict is DENY


@pytest.mark.parametrize("confined", [True, False])
def test_allow_rules_hold_without_a_sandbox_and_only_for_simple_commands(confined: bool) -> None:
    decision = decide(ASK, "command", "pytest -q", CONFIG, confined=confined)
    assert (decision.verdict, decision.by, decision.rule) == (ALLOW, "rule", "pytest *")
    assert decide(ASK, "command", "git status", CONFIG, confined=confined).verdict is ALLOW
    assert decide(ASK, "command", "pytest; ls", CONFIG, confined=confined).verdict is Q
    assert decide(AUTO, "command", "pytest && git push", CONFIG, confined=True).verdict is DENY


def test_read_only_refuses_even_what_a_rule_allows() -> None:
    decision = decide(RO, "command", "pytest -q", CONFIG, confined=True)
    assert (decision.verdict, decision.reason) == (DENY, "read_only")


def test_session_rules_and_files() -> None:
    book = RuleBook(session_allow=(Rule("make *"),), session_files=frozenset({"src/a.py"}))
    made = decide(ASK, "command", "make test", book, confined=False)
    assert (made.verdict, made.by) == (ALLOW, "session")
    assert decide(ASK, "edit", "src/a.py", book, confined=False).verdict is ALLOW
    assert decide(ASK, "edit", "src/b.py", book, confined=False).verdict is Q


def test_external_tools_match_rules_by_op_id() -> None:
    book = RuleBook(allow=(Rule("github.search*"),), deny=(Rule("github.delete*"),))
    assert decide(AUTO, "external", "github.search_issues", book, confined=True).verdict is ALLOW
    assert decide(AUTO, "external", "github.delete_repo", book, confined=True).verdict is DENY
    assert decide(AUTO, "external", "github.create_issue", book, confined=True).verdict is Q
