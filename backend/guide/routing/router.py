"""Tiered routing: DSL fast path -> route cache -> patterns -> model.

The model tier is consulted only when the patterns are not confident and a
model is configured; offline, the pattern tier is final. Every decision says
which tier made it and how long it took, and is counted per tier.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from backend.budgets.budget_dsl import BudgetCommand
from backend.bus.flow_log import FlowLog
from backend.errors import CommandError
from backend.guide.routing import dsl, patterns, phase_rules
from backend.guide.routing.cache import RouteCache
from backend.guide.routing.decision import (
    CONFIDENT,
    ArchivalistIntent,
    Classification,
    RouteDecision,
    Target,
    Tier,
)
from backend.guide.routing.dsl import (
    AgentMention,
    CheckpointCommand,
    DeadLetterCommand,
    HelpCommand,
    PlanCommand,
    QaCommand,
    RecordCommand,
    SettingCommand,
    StatusCommand,
    TaskCommand,
    ToolsCommand,
)
from backend.guide.routing.mcp_dsl import McpCommand
from backend.guide.routing.model_dsl import ModelCommand
from backend.guide.routing.model_tier import ClassificationError, ModelClassifier
from backend.guide.routing.session_dsl import SessionCommand
from backend.llm.errors import ProviderError
from backend.llm.types import ChatMessage, ChatOptions, ChatRequest
from backend.skills.hooks.registry import HookRegistry, PromptData

log = logging.getLogger(__name__)

# The model tier for a session's request (None: no session), or None: the patterns decide.
ClassifierFactory = Callable[[str | None], ModelClassifier | None]
# A session's phase, running plan and plan awaiting approval (None: an unknown session).
PhaseViewer = Callable[[str], Awaitable[phase_rules.PhaseView | None]]


def _decision(found: Classification, tier: Tier, text: str) -> RouteDecision:
    return RouteDecision(**found.model_dump(), tier=tier, text=text)


def dsl_decision(text: str) -> RouteDecision:
    """The decision for a DSL command; raises CommandError when it is malformed."""
    command = dsl.parse(text)
    if isinstance(command, SessionCommand):
        args: dict[str, str] = {"verb": command.verb}
        if command.ref is not None:
            args["ref"] = command.ref
        if command.name is not None:
            args["name"] = command.name
        if command.text is not None:
            args["text"] = command.text
        target = Target.GUIDE if command.verb == "help" else Target.SESSION_MANAGER
        return RouteDecision(
            target=target, confidence=1.0, tier="dsl", command=args, text=text, subject=None
        )
    if isinstance(command, TaskCommand):
        return RouteDecision(
            target=Target.PIPELINE,
            confidence=1.0,
            tier="dsl",
            command={"verb": command.verb, "task_id": command.task_id},
            text=command.text,
        )
    if isinstance(command, RecordCommand):
        return RouteDecision(
            target=Target.ARCHIVALIST,
            intent=ArchivalistIntent.RECORD.value,
            subject=command.category,
            confidence=1.0,
            tier="dsl",
            command={"verb": "record", "category": command.category},
            text=command.text,
        )
    if isinstance(command, AgentMention):
        # Addressed by name; the patterns still supply intent and subject.
        found = patterns.classify(command.text)
        same = found.target is command.target
        return RouteDecision(
            target=command.target,
            intent=found.intent if same else None,
            subject=found.subject,
            time_scope=found.time_scope if same else None,
            confidence=1.0,
            tier="dsl",
            command={"verb": "mention"},
            text=command.text,
        )
    if isinstance(command, DeadLetterCommand):
        letters: dict[str, str] = {"verb": "deadletters", "action": command.verb}
        if command.letter_id:
            letters["id"] = command.letter_id
        return RouteDecision(
            target=Target.GUIDE, confidence=1.0, tier="dsl", command=letters, text=text
        )
    if isinstance(command, ToolsCommand):
        fields = {
            "action": command.verb,
            "category": command.category,
            "path": command.path,
            "language": command.language,
            "tool": command.tool,
            "run_command": command.run_command,
        }
        tools: dict[str, str] = {"verb": "tools"}
        tools.update({k: v for k, v in fields.items() if v is not None})
        return RouteDecision(
            target=Target.GUIDE, confidence=1.0, tier="dsl", command=tools, text=text
        )
    if isinstance(command, SettingCommand):
        setting: dict[str, str] = {"verb": command.verb}
        if command.value is not None:
            setting["mode" if command.verb == "approval" else "state"] = command.value
        return RouteDecision(
            target=Target.GUIDE, confidence=1.0, tier="dsl", command=setting, text=text
        )
    if isinstance(command, PlanCommand):
        plan: dict[str, str] = {"verb": "plan", "action": command.verb}
        if command.plan_id is not None:
            plan["id"] = command.plan_id
        return RouteDecision(
            target=Target.GUIDE, confidence=1.0, tier="dsl", command=plan, text=text
        )
    if isinstance(command, ModelCommand | McpCommand | BudgetCommand):
        return RouteDecision(
            target=Target.GUIDE, confidence=1.0, tier="dsl", command=command.args(), text=text
        )
    if isinstance(command, QaCommand):
        qa = {"verb": "qa", "action": command.action}
        return RouteDecision(target=Target.GUIDE, confidence=1.0, tier="dsl", command=qa, text=text)
    if isinstance(command, CheckpointCommand):
        return RouteDecision(
            target=Target.GUIDE, confidence=1.0, tier="dsl", command={"verb": command.verb},
            text=text,
        )  # fmt: skip
    verb = "status" if isinstance(command, StatusCommand) else "help"
    guide_args: dict[str, str] = {"verb": verb}
    if isinstance(command, HelpCommand) and command.topic:
        guide_args["topic"] = command.topic
    return RouteDecision(
        target=Target.GUIDE, confidence=1.0, tier="dsl", command=guide_args, text=text
    )


GUIDE = "guide"


class Router:
    def __init__(
        self,
        *,
        cache: RouteCache | None = None,
        flow_log: FlowLog | None = None,
        classifier: ClassifierFactory | None = None,
        hooks: HookRegistry | None = None,
    ) -> None:
        # Only confident decisions are cached: an unsure guess is asked again.
        # "is None", not "or": an empty cache is falsy (it has a length).
        self.cache = (
            RouteCache(capacity=4096, ttl_s=3600, min_confidence=CONFIDENT)
            if cache is None
            else cache
        )
        self.flow_log = FlowLog() if flow_log is None else flow_log
        self._classifier = classifier or (lambda _session_id: None)
        # With hooks, the route cache is consulted and filled by the Guide's prompt hooks
        # (route_cache_lookup / route_cache_store), as the seed lays them out.
        self.hooks = hooks
        # Set by the engine: what a session's phase says about a short line (phase_rules).
        self.phase_view: PhaseViewer | None = None

    async def route(self, text: str, *, session_id: str | None = None) -> RouteDecision:
        """The decision for ``text``; with ``session_id``, the session's phase is asked
        first ("stop" while its plan runs), before the cache."""
        started = time.perf_counter()
        stripped = text.strip()
        if not stripped:
            raise CommandError("nothing to route: the request is empty")
        if dsl.is_dsl(stripped):
            decision = dsl_decision(stripped)
        else:
            decision = await self._in_phase(stripped, session_id) or await self._classify(
                stripped, session_id
            )
        latency_us = (time.perf_counter() - started) * 1e6
        self.flow_log.record_route(decision.tier, latency_us)
        return decision.model_copy(update={"latency_us": latency_us})

    async def _in_phase(self, text: str, session_id: str | None) -> RouteDecision | None:
        if session_id is None or self.phase_view is None:
            return None
        view = await self.phase_view(session_id)
        found = phase_rules.match(text, view) if view is not None else None
        return phase_rules.decision(found, text) if found is not None else None

    async def _classify(self, text: str, session_id: str | None = None) -> RouteDecision:
        prompt = self._before(text)
        cached = prompt.cached_result if prompt is not None else self.cache.get(text)
        if cached is not None:
            return _with_session_command(
                _decision(Classification(**_fields(cached)), "cache", text)
            )
        found = patterns.classify(text)
        decision = _decision(found, "pattern", text)
        if found.confidence < CONFIDENT:
            classifier = self._classifier(session_id)
            if classifier is not None:
                try:
                    decision = _decision(await classifier.classify(text, hint=found), "model", text)
                except (ClassificationError, ProviderError) as exc:
                    # The pattern decision stands; the failure is logged, not hidden.
                    log.warning("model routing failed, keeping the pattern tier: %s", exc)
        found_now = Classification(**_fields(decision))
        if prompt is not None and self.hooks is not None:
            prompt.result = found_now
            self.hooks.run_post_prompt(prompt)
        else:
            self.cache.put(text, found_now)
        return _with_session_command(decision)

    def _before(self, text: str) -> PromptData | None:
        """The Guide's pre-prompt hooks on ``text``; ``cached_result`` set on a cache hit."""
        if self.hooks is None:
            return None
        request = ChatRequest(
            messages=[ChatMessage.user(text)], options=ChatOptions(model="guide-router")
        )
        return self.hooks.run_pre_prompt(PromptData(GUIDE, "", request))


def _with_session_command(decision: RouteDecision) -> RouteDecision:
    """Prose session commands ("switch to session 2") carry their verb as intent."""
    if decision.target is not Target.SESSION_MANAGER or decision.intent is None:
        return decision
    args = {"verb": decision.intent.lower()}
    if decision.subject:
        args["name" if args["verb"] == "new" else "ref"] = decision.subject
    return decision.model_copy(update={"command": args})


def _fields(found: Classification) -> dict[str, object]:
    return found.model_dump(include=set(Classification.model_fields))
