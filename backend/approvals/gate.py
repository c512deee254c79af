"""The approval gate: a pre-tool hook that weighs every edit, command and external tool.

It runs last among the pre-tool hooks (after validation, session scoping and the
read-before-write guard, so nobody is asked about a call that would be refused
anyway), for every caller: agent turns, MCP clients, ``execute``, ``batch`` and
pinned op tools all go through the gateway's one execute path. It does nothing on
a dry run (nothing acts); a model that passes ``dry_run=false`` gets a real call,
and so the gate. The model can change nothing here: the mode comes from the
caller's context, the run, the session or the config.

When the table (:mod:`backend.approvals.policy`) says ask: ``sylk run --yes``
answers yes; otherwise a front end that shows questions is asked through the
:class:`~backend.questions.QuestionBoard` (an event carrying a future); with none
attached the call is refused with reason ``approval_required``. Every decision is
left on the call (``meta.approval`` of its envelope): what was decided and by whom.
The gate also stamps the session's network switch into the context the handler
gets, so the sandbox hears ``/network`` whichever front end made the call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from backend.approvals import answers, errors
from backend.approvals.policy import Decision, Verdict, decide
from backend.approvals.request import Described, describe
from backend.approvals.rules import session_rules
from backend.approvals.session_approvals import ApprovalBook
from backend.config.approvals import ApprovalMode
from backend.events import ApprovalRequest
from backend.questions import QuestionBoard
from backend.skills.hooks.registry import APPROVAL_NOTE, Hook, HookKind, HookPriority, ToolCallData
from backend.skills.models import SkillContext

GATE_HOOK = "approval_gate"
UNCONFINED = "none: commands run unconfined, so every command needs approval"


class ApprovalGate:
    def __init__(
        self,
        book: ApprovalBook,
        questions: QuestionBoard,
        *,
        sandboxed: Callable[[], bool] = lambda: False,
        sandbox_level: Callable[[], str] = lambda: "",
    ) -> None:
        self.book = book
        self.questions = questions
        self.sandboxed = sandboxed
        self._level = sandbox_level

    def hook(self) -> Hook:
        return Hook(GATE_HOOK, HookKind.PRE_TOOL, self.check, HookPriority.LAST)

    def sandbox_words(self) -> str:
        if not self.sandboxed():
            return UNCONFINED
        return self._level() or "commands run confined to the workspace"

    def _mode_from(self, ctx: SkillContext) -> str:
        if ctx.approval is not None:
            return "caller"
        if self.book.run_mode is not None:
            return "run"
        return "session" if self.book.of(ctx.session_id).mode is not None else "config"

    async def check(self, data: ToolCallData) -> None:
        skill, ctx = data.skill, data.ctx
        if skill.action is None or data.dry_run:
            return
        if skill.action == "command":
            network = self.book.network(ctx.session_id)
            confinement = dataclasses.replace(ctx.confinement, network=network)
            data.ctx = dataclasses.replace(ctx, confinement=confinement)
        mode = self.book.mode(ctx.session_id, ctx.approval)
        if mode is ApprovalMode.READ_ONLY:  # refused before anything is read to describe it
            self._note(data, "denied", Decision(Verdict.DENY, "mode", "read_only"), mode)
            raise errors.read_only(skill.op, _what_generic(skill.action), self._mode_from(ctx))
        described = await describe(skill, ctx, data.params, data.args)
        decision = decide(
            mode,
            described.action,
            described.subject,
            self.book.rules(ctx.session_id),
            confined=self.sandboxed(),
        )
        what = _what(described)
        if decision.verdict is Verdict.DENY:
            self._note(data, "denied", decision, mode)
            raise errors.by_rule(skill.op, what, decision.rule or "")
        if decision.verdict is Verdict.ASK:
            decision = await self._ask(data, described, mode.value, what)
        self._note(data, "allowed", decision, mode)

    async def _ask(
        self, data: ToolCallData, described: Described, mode: str, what: str
    ) -> Decision:
        skill, ctx = data.skill, data.ctx
        if self.book.assume_yes:
            return Decision(Verdict.ALLOW, "yes", "assume_yes")
        if not self.questions.answered_here:
            self._note(data, "denied", Decision(Verdict.DENY, "policy", "approval_required"), mode)
            raise errors.nobody_to_ask(skill.op, what, mode)
        request = self._request(data, described, mode)
        value = await self.questions.ask(answers.question(request), ctx.session_id)
        answer = answers.parse(value, request)
        if not answer.allowed:
            denied = Decision(Verdict.DENY, "user", "denied_by_user")
            self._note(data, "denied", denied, mode, user_reason=answer.reason)
            raise errors.by_user(skill.op, what, answer.reason)
        if answer.session_rule is not None:
            if described.action == "edit":
                await self.book.allow_file(ctx.session_id, answer.session_rule)
            else:
                await self.book.allow_command(ctx.session_id, answer.session_rule)
            return Decision(Verdict.ALLOW, "user", "allowed_for_session", answer.session_rule)
        return Decision(Verdict.ALLOW, "user", "allowed_once")

    def _request(self, data: ToolCallData, described: Described, mode: str) -> ApprovalRequest:
        if described.action == "edit":
            offered: tuple[str, ...] = (described.path,)
            sandbox = "edits stay inside the workspace"
        elif described.action == "external":
            offered, sandbox = (described.subject,), "outside Sylk's sandbox"
        else:
            offered, sandbox = session_rules(described.command), self.sandbox_words()
        return ApprovalRequest(
            op=data.skill.op,
            agent=data.ctx.agent,
            action=described.action,
            mode=mode,
            sandbox=sandbox,
            command=described.command,
            cwd=described.cwd,
            path=described.path,
            diff=described.diff,
            session_rules=offered,
        )

    @staticmethod
    def _note(
        data: ToolCallData, outcome: str, decision: Decision, mode: Any, **extra: str
    ) -> None:
        note: dict[str, Any] = {
            "decision": outcome,
            "by": decision.by,
            "reason": decision.reason,
            "mode": str(getattr(mode, "value", mode)),
        }
        if decision.rule:
            note["rule"] = decision.rule
        note.update({k: v for k, v in extra.items() if v})
        data.annotations[APPROVAL_NOTE] = note


def _what_generic(action: str) -> str:
    return {"edit": "edit files", "external": "call a tool outside Sylk"}.get(
        action, "run commands"
    )


def _what(described: Described) -> str:
    if described.action == "edit":
        return f"edit {described.path}"
    if described.action == "external":
        return f"call {described.subject}"
    return f"run `{described.command}`"


__all__ = ["GATE_HOOK", "UNCONFINED", "ApprovalGate"]
