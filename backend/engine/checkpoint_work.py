"""Checkpoints wired into an engine: the service, and the hook that snapshots first.

Every call of an op that changes the workspace (an ``edit``, a ``command``, an
``external`` tool; not a dry run) made inside an agent's turn first makes sure the
turn has its "before" snapshot. The hook runs last among the pre-tool hooks, after
the approval gate: a refused call costs no snapshot. It never blocks a call: when
git fails the call goes on and says there is no checkpoint.
"""

from __future__ import annotations

from backend.checkpoints.service import Checkpoints, current_turn
from backend.engine.config import EngineConfig
from backend.errors import SylkError
from backend.skills.gateway.gateway import Gateway
from backend.skills.hooks.registry import Hook, HookKind, HookPriority, ToolCallData

CHANGES_FILES = frozenset({"edit", "command", "external"})


def checkpoint_hook() -> Hook:
    async def before_change(data: ToolCallData) -> None:
        turn = current_turn()
        if turn is None or data.dry_run or data.skill.action not in CHANGES_FILES:
            return
        if turn.session_id != data.ctx.session_id:
            return
        try:
            await turn.before_change()
        except (SylkError, OSError) as exc:
            data.warnings.append(f"no checkpoint for this turn (cannot undo it): {exc}")

    # After every other pre-tool hook (the approval gate runs at LAST too).
    after_all = HookPriority.LAST + 10
    return Hook("checkpoint_before_change", HookKind.PRE_TOOL, before_change, after_all)


def install_checkpoints(config: EngineConfig, gateway: Gateway) -> Checkpoints:
    """The engine's checkpoints (shadow repositories under its data dir), hooked in."""
    checkpoints = Checkpoints(config.data_dir, config.confinement)
    gateway.hooks.install(checkpoint_hook())
    return checkpoints
