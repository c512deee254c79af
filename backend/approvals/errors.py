"""The one refusal the approval policy gives: DENIED, with a reason word and a way out.

Its message and details become the tool call's error envelope (ACCESS_DENIED), which
is what the model reads: who refused (the mode, a rule, the user, nobody to ask),
the user's own reason when given, and how the user can change it.
"""

from __future__ import annotations

from typing import Any

from backend.errors import ErrorKind, SylkError

HOW_TO_APPROVE = (
    "approve it with `sylk run --approval auto-edit|auto` or `--yes` "
    "(`sylk mcp serve --approval ...` for an MCP client), or add an allow rule under "
    "[approvals] in the config"
)


class ApprovalDeniedError(SylkError):
    error_kind = ErrorKind.DENIED

    def __init__(self, message: str, *, reason: str, op: str, **details: Any) -> None:
        super().__init__(
            message,
            details={"reason": reason, **{k: v for k, v in details.items() if v}},
            help_path=op,
        )
        self.reason = reason

    def failure_word(self) -> str:
        return self.reason


def read_only(op: str, what: str, mode_from: str) -> ApprovalDeniedError:
    how = (
        "change it with /approval ask, auto-edit or auto"
        if mode_from == "session"
        else "the MCP client was given no write rights (sylk mcp serve --allow-write)"
        if mode_from == "caller"
        else "change it with /approval, or --approval for sylk run"
    )
    return ApprovalDeniedError(
        f"refused to {what}: the approval mode is read-only ({how})",
        reason="read_only",
        op=op,
        mode="read-only",
        by="mode",
    )


def by_rule(op: str, what: str, rule: str) -> ApprovalDeniedError:
    return ApprovalDeniedError(
        f"refused to {what}: it matches the deny rule {rule!r} ([approvals] deny in the config)",
        reason="deny_rule",
        op=op,
        rule=rule,
        by="rule",
    )


def by_user(op: str, what: str, reason: str) -> ApprovalDeniedError:
    said = f": {reason}" if reason else ""
    return ApprovalDeniedError(
        f"the user denied the request to {what}{said}",
        reason="denied_by_user",
        op=op,
        user_reason=reason,
        by="user",
    )


def nobody_to_ask(op: str, what: str, mode: str) -> ApprovalDeniedError:
    return ApprovalDeniedError(
        f"refused to {what}: it needs the user's approval (mode {mode}) and no one can "
        f"give it here; {HOW_TO_APPROVE}",
        reason="approval_required",
        op=op,
        mode=mode,
        by="policy",
    )


__all__ = ["HOW_TO_APPROVE", "ApprovalDeniedError", "by_rule", "by_user", "nobody_to_ask"]
