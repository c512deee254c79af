"""Which model each role uses: ``/model``, the lines of ``/status``, the Guide's model tier.

A session's choices live in its metadata (:mod:`backend.agents.session_models`);
``/model`` shows, sets and resets them, checking first that the provider exists and
can be called (a typed error otherwise, nothing stored). The Guide's routing model
tier uses the ``guide`` role's model like any role (the run's flag, the session's
``/model guide``, ``[agents.guide]``: pick a small, fast one), bounded by ``[guide]
model_tier_deadline_s`` and ``model_tier_max_tokens`` with a single attempt: a
stalled or rambling model costs at most the deadline before the pattern tier's
guess is used.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from backend.agents.session_models import (
    ALL_ROLES,
    METADATA_KEY,
    SESSION_CHOICE,
    ModelOverride,
    check_role,
    describe,
    dump,
    parse_spec,
    stored,
)
from backend.errors import CommandError, SylkError
from backend.guide.routing.model_dsl import MODEL_USAGE
from backend.guide.routing.model_tier import ModelClassifier, RoutingClient
from backend.llm.offline import how_to_configure
from backend.llm.selection import choose_model
from backend.memory.metered import MeteredClient
from backend.memory.windows import context_window
from backend.roles import AGENT_ROLES
from backend.sessions.models import Session

if TYPE_CHECKING:
    from backend.agents.turns import TurnRunner
    from backend.engine.session_service import SessionService

log = logging.getLogger("sylk.engine")


def guide_classifier(
    turns: TurnRunner, session_of: Callable[[str], Session], session_id: str | None
) -> ModelClassifier | None:
    """The Guide's model tier for a request of ``session_id``, bounded; None offline or
    when the guide's provider is unusable (the patterns then decide; the log says why)."""
    from backend.llm.client import ModelClient
    from backend.llm.resilience import RetryPolicy

    session: Session | None = None
    if session_id:
        with contextlib.suppress(SylkError):  # e.g. an MCP client's unstored session
            session = session_of(session_id)
    try:
        choice = turns.choice("guide", session)
    except SylkError as exc:
        log.warning("routing model tier off: %s", exc)
        return None
    if choice.offline:
        return None
    shared = turns.client(choice.provider)
    bounds = turns.settings.guide
    # One attempt: a retry would spend the deadline the pattern tier's guess saves.
    client = ModelClient(
        shared.provider, policy=RetryPolicy(max_attempts=1), breakers=shared.breakers
    )
    routing: RoutingClient = client
    if session is not None:  # its calls show as the guide's context in /status
        window = context_window(turns.settings, choice.provider, choice.model)
        routing = MeteredClient(client, turns.context, session.id, "guide", window)
    return ModelClassifier(
        routing,
        choice.model,
        max_tokens=bounds.model_tier_max_tokens,
        deadline_s=bounds.model_tier_deadline_s,
    )


def check_spec(turns: TurnRunner, spec: str, role: str | None = None) -> ModelOverride:
    """``PROVIDER[/MODEL]`` if its provider exists and can be called, else a typed error."""
    wanted = parse_spec(spec)
    choose_model(turns.settings, role or "architect", provider=wanted.provider, model=wanted.model)
    return wanted


def role_lines(turns: TurnRunner, session: Session | None) -> list[str]:
    """One line per role: the provider/model it uses in ``session`` and why, or why not."""
    lines = []
    for role in AGENT_ROLES:
        try:
            text = describe(turns.choice(role, session))
        except SylkError as exc:
            text = f"unusable: {exc.message}"
        lines.append(f"  {role:<12} {text}")
    return lines


def status_models(turns: TurnRunner, session: Session | None) -> str:
    """``Model:`` in ``/status``: the Architect's, then every role's."""
    try:
        head = describe(turns.choice("architect", session))
    except SylkError as exc:
        head = f"unusable: {exc.message}"
    lines = [head, "Models per role (/model to change):", *role_lines(turns, session)]
    if head.startswith("offline"):  # the advice answers give once per session, always here
        lines.append(how_to_configure(turns.settings.source))
    if session is not None and (context := turns.context.status_line(session.id)):
        lines.append(f"Context: {context}")  # each agent's, as last measured
    profiles = turns.server_profiles()
    if profiles:
        shown = ", ".join(f"{name}: {profile}" for name, profile in sorted(profiles.items()))
        lines.append(f"Server profiles: {shown}")
    return "\n".join(lines)


async def model_command(
    turns: TurnRunner, sessions: SessionService, ref: str, args: dict[str, str]
) -> str:
    """``/model``: show the session's models, set one role's (or all), or reset."""
    session = sessions.get(ref)
    action = args.get("action", "show")
    if action == "show":
        return "\n".join([f"Models in session {session.name!r}:", *role_lines(turns, session),
                          f"Change: {MODEL_USAGE}"])  # fmt: skip
    choices = stored(session.metadata)
    role = check_role(args["role"]) if args.get("role") else None
    if action == "reset":
        if role is None:
            choices.clear()
        else:
            choices.pop(role, None)
        session = await sessions.set_metadata(session.id, METADATA_KEY, dump(choices))
        if role is None:
            return "every role is back to the config in this session (/model lists them)"
        return f"the {role} is back to the config in this session: " + describe(
            turns.choice(role, session)
        )
    if action != "set" or not args.get("spec"):
        raise CommandError(f"unknown /model action {action!r}", help_hint=MODEL_USAGE)
    wanted = check_spec(turns, args["spec"], role)  # refused before anything is stored
    choices[role or ALL_ROLES] = wanted
    if role is None:  # every role: the roles' own choices give way
        choices = {ALL_ROLES: wanted}
    session = await sessions.set_metadata(session.id, METADATA_KEY, dump(choices))
    now = turns.choice(role or "architect", session)
    who = f"the {role} uses" if role else "every role uses"
    answer = f"In session {session.name!r}, {who} {now.provider}/{now.model}."
    if now.reason != SESSION_CHOICE:
        answer += f" While this run's --provider/--model is given, it wins ({describe(now)})."
    return answer
