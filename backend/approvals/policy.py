"""The decision table: a mode, an action, the rules and the sandbox -> allow, ask or deny.

Pure: no I/O, no questions; :class:`~backend.approvals.gate.ApprovalGate` asks when
the table says so. In order:

1. ``read-only`` refuses every edit, command and external tool.
2. A deny rule refuses a command (or an external tool, by op id) whatever the mode.
3. An allow rule (the session's, then the config's) lets a command through; the
   session's allowed files let an edit through. Rules are the user's own approval,
   given ahead of time, so they hold even where no sandbox confines commands.
4. The mode: ``auto-edit`` and ``auto`` let edits through; ``auto`` lets commands
   through only when a sandbox confines them; external tools act outside the
   sandbox, so no mode lets them through.
5. Everything else asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from backend.approvals.rules import Rule, first_match
from backend.config.approvals import ApprovalMode
from backend.skills.models import Action


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    by: str  # "mode", "rule", "session", "user", "yes", "policy"
    reason: str  # a stable word: "read_only", "deny_rule", "mode", "unconfined", ...
    rule: str | None = None


@dataclass(frozen=True)
class RuleBook:
    """The rules one call is weighed against: the config's and the session's."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    session_allow: tuple[Rule, ...] = ()
    session_files: frozenset[str] = field(default_factory=frozenset)


def decide(
    mode: ApprovalMode, action: Action, subject: str, rules: RuleBook, *, confined: bool
) -> Decision:
    """``subject`` is the command line, the external tool's op id, or the edited path."""
    if mode is ApprovalMode.READ_ONLY:
        return Decision(Verdict.DENY, "mode", "read_only")
    if action == "edit":
        if subject in rules.session_files:
            return Decision(Verdict.ALLOW, "session", "session_file", subject)
        if mode in (ApprovalMode.AUTO_EDIT, ApprovalMode.AUTO):
            return Decision(Verdict.ALLOW, "mode", "mode")
        return Decision(Verdict.ASK, "mode", "mode")
    denied = first_match(rules.deny, subject, deny=True)
    if denied is not None:
        return Decision(Verdict.DENY, "rule", "deny_rule", denied.text)
    allowed = first_match(rules.session_allow, subject, deny=False)
    if allowed is not None:
        return Decision(Verdict.ALLOW, "session", "session_rule", allowed.text)
    allowed = first_match(rules.allow, subject, deny=False)
    if allowed is not None:
        return Decision(Verdict.ALLOW, "rule", "allow_rule", allowed.text)
    if action == "external":
        return Decision(Verdict.ASK, "policy", "outside_sandbox")
    if mode is ApprovalMode.AUTO:
        if confined:
            return Decision(Verdict.ALLOW, "mode", "mode")
        return Decision(Verdict.ASK, "policy", "unconfined")
    return Decision(Verdict.ASK, "mode", "mode")


__all__ = ["Decision", "RuleBook", "Verdict", "decide"]
