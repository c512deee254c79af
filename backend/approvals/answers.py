"""An approval question's answers, as the strings a question's future carries.

``allow`` (this once), ``allow-session:RULE`` (a command rule or, for an edit, the
file, kept for the session), ``deny``, ``deny:REASON`` (the user's words go back to
the model as the tool's result). ``None`` (Esc, nobody answered, withdrawn) denies.
Any front end may answer (the TUI's modal, a client answering by question id), so an
answer is parsed, never trusted: a session rule that was not offered, or anything
unrecognised, is a denial.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.events import ApprovalRequest, ChoiceOption, ChoiceQuestion

ALLOW = "allow"
ALLOW_SESSION = "allow-session:"
DENY = "deny"
DENY_WITH_REASON = "deny:"
MAX_REASON = 500


@dataclass(frozen=True)
class Answer:
    allowed: bool
    session_rule: str | None = None  # kept for the session when allowed with `a`
    reason: str = ""  # the user's reason for a denial, if given


def allow_once() -> str:
    return ALLOW


def allow_for_session(rule: str) -> str:
    return f"{ALLOW_SESSION}{rule}"


def deny(reason: str = "") -> str:
    reason = " ".join(reason.split())[:MAX_REASON]
    return f"{DENY_WITH_REASON}{reason}" if reason else DENY


def parse(value: str | None, request: ApprovalRequest) -> Answer:
    if value == ALLOW:
        return Answer(True)
    if value is not None and value.startswith(ALLOW_SESSION):
        rule = value.removeprefix(ALLOW_SESSION)
        if rule in request.session_rules:
            return Answer(True, session_rule=rule)
        return Answer(False, reason="the answer named a rule that was not offered")
    if value is not None and value.startswith(DENY_WITH_REASON):
        return Answer(False, reason=" ".join(value.removeprefix(DENY_WITH_REASON).split()))
    return Answer(False)


def _what(request: ApprovalRequest) -> str:
    if request.action == "edit":
        return f"edit {request.path}"
    if request.action == "external":
        return f"call {request.op} (outside Sylk's sandbox)"
    return f"run `{request.command}`"


def question(request: ApprovalRequest) -> ChoiceQuestion:
    """The question a front end shows; its options are the answers it may give."""
    options = [ChoiceOption(ALLOW, "Yes, this once", "y", recommended=True)]
    for rule in request.session_rules:
        label = (
            f"Yes, and edits to {rule} for this session"
            if request.action == "edit"
            else f"Yes, and `{rule}` for this session"
        )
        options.append(ChoiceOption(allow_for_session(rule), label, "a"))
    options.append(ChoiceOption(DENY, "No", "n"))
    options.append(ChoiceOption(DENY_WITH_REASON, "No, and tell the agent why", "d"))
    where = f" in {request.cwd}" if request.cwd and request.cwd != "." else ""
    return ChoiceQuestion(
        title=f"Allow the {request.agent} to {_what(request)}?",
        prompt=f"{request.op}{where} · mode {request.mode} · sandbox: {request.sandbox}",
        options=options,
        approval=request,
    )


__all__ = [
    "ALLOW",
    "DENY",
    "Answer",
    "allow_for_session",
    "allow_once",
    "deny",
    "parse",
    "question",
]
