"""Each session's own models: ``/model`` and ``sylk sessions new --provider/--model``.

Kept in the session's metadata (``metadata["models"]``: a role, or ``*`` for every
role, -> provider and model) so a choice survives a suspend, a resume, a restart,
a snapshot and an export like the rest of the session. The model a role uses is,
first found: the run's flag (``sylk run --provider/--model``: this process only),
the session's choice for that role, the session's choice for all roles, the config
(:func:`backend.llm.selection.choose_model`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend.config.settings import SylkConfig
from backend.errors import CommandError
from backend.guide.routing.model_dsl import MODEL_USAGE
from backend.llm.selection import ModelChoice, choose_model
from backend.roles import AGENT_ROLES
from backend.sessions.models import Session

log = logging.getLogger("sylk.agents")
METADATA_KEY = "models"
ALL_ROLES = "*"
SESSION_CHOICE = "this session's /model"


class ModelOverride(BaseModel):
    """One stored choice: a provider, and its model (None: the provider's default)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    provider: str = Field(min_length=1)
    model: str | None = None

    @property
    def label(self) -> str:
        return f"{self.provider}/{self.model}" if self.model else self.provider


def parse_spec(spec: str) -> ModelOverride:
    """``PROVIDER/MODEL`` or ``PROVIDER`` (a model name may hold more slashes)."""
    provider, _, model = spec.strip().partition("/")
    if not provider or (spec.strip().endswith("/") and not model):
        raise CommandError(f"{spec!r} names no provider and model", help_hint=MODEL_USAGE)
    return ModelOverride(provider=provider, model=model or None)


def check_role(role: str) -> str:
    """A known role, lower-cased; a typed error listing them otherwise."""
    name = role.strip().lower()
    if name not in AGENT_ROLES:
        raise CommandError(
            f"unknown agent role {role!r}", help_hint="roles are " + ", ".join(AGENT_ROLES)
        )
    return name


def stored(metadata: Mapping[str, Any]) -> dict[str, ModelOverride]:
    """The session's choices by role (``*``: all); unreadable entries are skipped."""
    raw = metadata.get(METADATA_KEY)
    if not isinstance(raw, dict):
        return {}
    found: dict[str, ModelOverride] = {}
    for role, value in raw.items():
        try:
            found[str(role)] = ModelOverride.model_validate(value)
        except ValidationError:
            log.warning("stored model choice for %s is unreadable; ignored", role)
    return found


def dump(choices: Mapping[str, ModelOverride]) -> dict[str, Any] | None:
    """What goes into the session's metadata (None: remove the key)."""
    return {r: c.model_dump(exclude_none=True) for r, c in choices.items()} or None


def override_for(session: Session | None, role: str) -> ModelOverride | None:
    if session is None:
        return None
    choices = stored(session.metadata)
    return choices.get(role) or choices.get(ALL_ROLES)


def effective_choice(
    config: SylkConfig,
    role: str,
    session: Session | None,
    *,
    run_provider: str | None = None,
    run_model: str | None = None,
) -> ModelChoice:
    """The run's flag, else the session's choice, else the config's, for ``role``."""
    if run_provider is not None:
        return choose_model(config, role, provider=run_provider, model=run_model)
    own = override_for(session, role)
    if own is None:
        return choose_model(config, role, model=run_model)
    choice = choose_model(config, role, provider=own.provider, model=run_model or own.model)
    reason = "this run's --model" if run_model else SESSION_CHOICE
    return dataclasses.replace(choice, reason=reason)


def describe(choice: ModelChoice) -> str:
    if choice.offline:
        return "offline (no model configured)"
    return f"{choice.provider}/{choice.model} ({choice.reason})"
