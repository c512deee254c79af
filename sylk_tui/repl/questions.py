"""The engine's questions answered inline, at the repl's prompt.

An approval (an edit, a command, an outside tool) shows what would happen (the diff,
or the command and where it runs) and takes ``o`` allow once, ``s`` allow for the
session (a rule picked by number when several are offered), ``d`` deny, ``r`` deny
with a reason the agent reads. A plan review takes ``a`` approve, ``m`` modify, ``w``
ask why, ``l`` decide later. Any other question lists its options by number, or takes
words when it asks for them. Nothing typed (the end of input, ctrl+c) declines, which
for an approval is a denial. The answer strings are the engine's own
(:mod:`backend.approvals.answers`, :mod:`backend.plans.review`), so the engine parses
them as it parses every front end's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from backend.agents.tool_actions import terminal_text
from backend.approvals import answers
from backend.events import ApprovalRequest, ChoiceQuestion
from sylk_tui.repl.answers import say

Ask = Callable[[str], Awaitable[str | None]]
MAX_DIFF_LINES = 40
ATTEMPTS = 3
"""Answers not understood before the question is declined (a script that loops)."""


async def answer(question: ChoiceQuestion, ask: Ask) -> str | None:
    """Show ``question`` and ask until it is answered; the value its future takes."""
    say(f"? {terminal_text(question.title)}")
    if question.prompt:
        say(f"  {terminal_text(question.prompt)}")
    if question.approval is not None:
        return await _approval(question.approval, ask)
    if question.plan is not None:
        say(terminal_text(question.plan.text))
        return await _plan(ask)
    return await _choice(question, ask)


async def _approval(request: ApprovalRequest, ask: Ask) -> str | None:
    if request.action == "edit":
        lines = (request.diff or "(no change to show)").splitlines()
        for line in lines[:MAX_DIFF_LINES]:
            say(f"  {terminal_text(line)}")
        if len(lines) > MAX_DIFF_LINES:
            say(f"  … {len(lines) - MAX_DIFF_LINES} more lines")
    elif request.command:
        where = f"  (in {request.cwd})" if request.cwd not in ("", ".") else ""
        say(f"  $ {terminal_text(request.command)}{terminal_text(where)}")
    for _ in range(ATTEMPTS):
        typed = await ask("allow once / for session / deny / deny with reason [o/s/d/r] ")
        if typed is None:
            return None
        choice = typed.strip().lower()[:1]
        if choice == "o":
            return answers.allow_once()
        if choice == "s":
            return await _session_rule(request, ask)
        if choice == "d":
            return answers.deny()
        if choice == "r":
            reason = await ask("why not? ")
            return answers.deny(reason or "")
        say("  type o, s, d or r")
    return None


async def _session_rule(request: ApprovalRequest, ask: Ask) -> str | None:
    rules = request.session_rules
    if not rules:
        return answers.allow_once()
    if len(rules) == 1:
        return answers.allow_for_session(rules[0])
    for n, rule in enumerate(rules, 1):
        say(f"  {n}. {terminal_text(rule)}")
    typed = await ask(f"keep which for this session? [1-{len(rules)}] ")
    picked = _number(typed, len(rules))
    return answers.allow_for_session(rules[picked]) if picked is not None else None


async def _plan(ask: Ask) -> str | None:
    from backend.plans.review import APPROVE, MODIFY, WHY

    for _ in range(ATTEMPTS):
        typed = await ask("approve / modify / ask why / later [a/m/w/l] ")
        choice = (typed or "l").strip().lower()[:1]
        if choice == "a":
            return APPROVE
        if choice in ("m", "w"):
            words = await ask("what should change? " if choice == "m" else "your question: ")
            if words and words.strip():
                return f"{MODIFY if choice == 'm' else WHY}:{words.strip()}"
            continue
        if choice == "l":
            return None
        say("  type a, m, w or l")
    return None


async def _choice(question: ChoiceQuestion, ask: Ask) -> str | None:
    options = question.options
    for n, option in enumerate(options, 1):
        say(f"  {n}. {terminal_text(option.label)}")
    hint = f"[1-{len(options)}]" if options else ""
    if question.free_text:
        hint = f"{hint} or type an answer" if hint else "type an answer"
    for _ in range(ATTEMPTS):
        typed = await ask(f"{hint}, Enter to decide later: ")
        if typed is None or not typed.strip():
            return None
        picked = _number(typed, len(options))
        if picked is not None:
            return options[picked].value
        if question.free_text:
            return typed.strip()
        say(f"  type a number from 1 to {len(options)}")
    return None


def _number(typed: str | None, count: int) -> int | None:
    """The 0-based index ``typed`` names among ``count`` options, if it names one."""
    text = (typed or "").strip()
    if text.isdigit() and 1 <= int(text) <= count:
        return int(text) - 1
    return None
