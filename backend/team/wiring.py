"""Giving a declared op its real handler, once the engine has built what serves it."""

from __future__ import annotations

from typing import Any

from backend.skills.gateway.gateway import Gateway
from backend.skills.models import Handler, Skill


def install_handler(gateway: Gateway, op: str, handler: Handler, **changes: Any) -> Skill:
    """Replace ``op``'s handler (a placeholder's, usually) and mark it available.

    The op keeps its declaration (description, parameters, tags, examples); ``changes``
    may update other fields of the skill (``params``, ``kind``, ``action``, ...).
    """
    declared = gateway.registry.get(op)
    if declared is None:
        raise KeyError(f"{op} is not declared")
    skill = declared.model_copy(update={"handler": handler, "available": True, **changes})
    gateway.registry.unregister(op)
    gateway.registry.register(skill)
    return skill
