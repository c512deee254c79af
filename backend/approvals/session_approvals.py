"""Each session's approval settings: its mode, its network switch, what it allowed.

Kept in the session's metadata (``metadata["approvals"]``) so they survive a
suspend, a resume and a restart; ``load`` and ``save`` are the engine's way to
read and write that (a caller without a stored session, such as an MCP client's
fresh session, keeps them in memory only). The effective mode is, first found:
the caller's (an MCP client's rights), the run's (``sylk run --approval``), the
session's (``/approval``), the config's (``[approvals] mode``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend.approvals.policy import RuleBook
from backend.approvals.rules import Rule
from backend.config.approvals import ApprovalMode, ApprovalSettings

log = logging.getLogger("sylk.approvals")
METADATA_KEY = "approvals"

Load = Callable[[str], Any]
Save = Callable[[str, dict[str, Any]], Awaitable[None]]


class SessionApprovals(BaseModel):
    """What one session chose; stored as plain JSON in its metadata."""

    model_config = ConfigDict(extra="ignore")
    mode: ApprovalMode | None = None  # None: the engine's default
    network: bool = False  # may the session's commands reach the network?
    allow: list[str] = Field(default_factory=list)  # command rules allowed for the session
    files: list[str] = Field(default_factory=list)  # files whose edits need no question


class ApprovalBook:
    """Every session's :class:`SessionApprovals`, read once, written on each change."""

    def __init__(
        self,
        settings: ApprovalSettings,
        *,
        load: Load = lambda _sid: None,
        save: Save | None = None,
        run_mode: ApprovalMode | None = None,
        assume_yes: bool = False,
    ) -> None:
        self.settings = settings
        self.run_mode = run_mode  # `sylk run --approval MODE`: this process only
        self.assume_yes = assume_yes  # `sylk run --yes`: every question answered yes
        self._load = load
        self._save = save
        self._sessions: dict[str, SessionApprovals] = {}
        self._config_rules = (
            tuple(Rule(text) for text in settings.allow),
            tuple(Rule(text) for text in settings.deny),
        )

    # -- reading ---------------------------------------------------------------------
    def of(self, session_id: str) -> SessionApprovals:
        found = self._sessions.get(session_id)
        if found is None:
            found = self._read(session_id)
            self._sessions[session_id] = found
        return found

    def _read(self, session_id: str) -> SessionApprovals:
        stored = self._load(session_id)
        if not isinstance(stored, dict):
            return SessionApprovals()
        try:
            return SessionApprovals.model_validate(stored)
        except ValidationError:
            log.warning("session %s: stored approval settings unreadable; defaults", session_id)
            return SessionApprovals()

    def default_mode(self) -> ApprovalMode:
        """The mode of a session that chose none: the run's, else the config's."""
        return self.run_mode or self.settings.mode

    def mode(self, session_id: str, caller: ApprovalMode | None = None) -> ApprovalMode:
        if caller is not None:
            return caller
        if self.run_mode is not None:
            return self.run_mode
        return self.of(session_id).mode or self.settings.mode

    def network(self, session_id: str) -> bool:
        return self.of(session_id).network

    def rules(self, session_id: str) -> RuleBook:
        mine = self.of(session_id)
        allow, deny = self._config_rules
        return RuleBook(
            allow=allow,
            deny=deny,
            session_allow=tuple(Rule(text) for text in mine.allow),
            session_files=frozenset(mine.files),
        )

    # -- changing --------------------------------------------------------------------
    async def _changed(self, session_id: str, mine: SessionApprovals) -> None:
        self._sessions[session_id] = mine
        if self._save is not None:
            await self._save(session_id, mine.model_dump(mode="json", exclude_defaults=True))

    async def set_mode(self, session_id: str, mode: ApprovalMode) -> None:
        await self._changed(session_id, self.of(session_id).model_copy(update={"mode": mode}))

    async def set_network(self, session_id: str, on: bool) -> None:
        await self._changed(session_id, self.of(session_id).model_copy(update={"network": on}))

    async def allow_command(self, session_id: str, rule: str) -> None:
        mine = self.of(session_id)
        if rule not in mine.allow:
            await self._changed(session_id, mine.model_copy(update={"allow": [*mine.allow, rule]}))

    async def allow_file(self, session_id: str, path: str) -> None:
        mine = self.of(session_id)
        if path not in mine.files:
            await self._changed(session_id, mine.model_copy(update={"files": [*mine.files, path]}))

    def forget(self, session_id: str) -> None:
        """Drop the cached settings (the session ended; what is stored stays)."""
        self._sessions.pop(session_id, None)


__all__ = ["METADATA_KEY", "ApprovalBook", "SessionApprovals"]
