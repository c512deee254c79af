"""Who a served client is: a session of the archive, its own or one it was bound to.

A client served without ``--session`` gets a real session of its own, made on its
first request that needs one and named after the client (``clientInfo.name`` from
initialize, e.g. ``mcp: Claude Code``; ``mcp: client`` when it sent none): one per
stdio run, one per HTTP or SSE connection. A real session, not a made-up id, because
every op that touches the session (its context, its files touched, its chronicle)
looks it up in the archive; it is created without taking the foreground, so a TUI
on the same data directory keeps its own.

A caller whose session is not made yet is a placeholder :class:`~backend.mcp.server.callers.Caller`
with ``pending`` set; :class:`SessionOnFirstUse` makes the session (once, even for
concurrent first requests) and the caller that answers from then on.
"""

from __future__ import annotations

import asyncio
import unicodedata
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server import ServerRequestContext

from backend.config.approvals import ApprovalMode
from backend.mcp.server.callers import Caller
from backend.mcp.server.content.library_resources import LibraryResources
from backend.mcp.server.content.prompts import SylkPrompts
from backend.mcp.server.content.registry_resources import RegistryResources
from backend.mcp.server.content.session_resources import SessionResources
from backend.skills.builtin.archivalist import CROSS_SCOPE
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext

if TYPE_CHECKING:
    from backend.engine import Engine

NAME_PREFIX = "mcp: "
UNNAMED_CLIENT = "client"
NAME_CHARS = 48  # a session name is shown in lists; a client's name is its own to pick


def caller_context(
    engine: Engine,
    *,
    session: str | None = None,
    cross_session: bool = False,
    can_write: bool = False,
) -> SkillContext:
    """The rights of a client acting in the session ``session`` names (id, unique id
    prefix, name or number; SessionNotFoundError or AmbiguousSessionError otherwise),
    in that session's workspace. Without ``session`` the context of a client whose
    session is not made yet: an id of its own (``mcp-`` and 12 hex digits) that no
    archive session has, which only a placeholder caller and tests act with."""
    if session is None:
        session_id, workspace = f"mcp-{uuid.uuid4().hex[:12]}", engine.workspace
    else:
        bound = engine.get_session(session)
        session_id, workspace = bound.id, Path(bound.workspace)
    return SkillContext(
        session_id=session_id,
        agent="mcp-client",
        workspace=workspace,
        scopes=frozenset({CROSS_SCOPE}) if cross_session else frozenset(),
        can_write=can_write,
        confinement=engine.confinement(workspace),
        # The client's rights fix its approval mode: without write rights read-only, with
        # them the engine's (the config's or --approval); it can answer no question.
        approval=engine.approval_mode() if can_write else ApprovalMode.READ_ONLY,
        reach=engine.team,  # --cross-session reaches this user's sessions, never a teammate's
    )


def engine_caller(engine: Engine, gateway: Gateway, context: SkillContext) -> Caller:
    """A caller with ``context`` and what it reads of ``engine``: its sessions, the
    library, the registry's resources, and prompts filled from them."""
    providers = (
        SessionResources(engine.archive, context),
        LibraryResources(engine.library),
        RegistryResources(gateway, context),
    )
    return Caller(context, providers, SylkPrompts(gateway, context, engine.library))


def client_name(request: ServerRequestContext[Any]) -> str:
    """The name the client gave at initialize, made fit for a session name: control and
    format characters dropped, whitespace collapsed, at most :data:`NAME_CHARS`."""
    params = request.session.client_params
    raw = params.client_info.name if params is not None else ""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in raw
        if ch.isspace() or unicodedata.category(ch)[0] != "C"
    )
    name = " ".join(kept.split())[:NAME_CHARS].strip()
    return name or UNNAMED_CLIENT


class SessionOnFirstUse:
    """Makes a client's session the first time it is needed, then answers with its caller.

    ``open`` creates the session for a client name and returns the caller acting in it.
    ``opened`` is that caller once made (None before), so whoever lets the client go
    can release what its session holds."""

    def __init__(self, open_caller: Callable[[str], Awaitable[Caller]]) -> None:
        self._open = open_caller
        self._lock = asyncio.Lock()
        self.opened: Caller | None = None

    async def caller(self, client: str) -> Caller:
        async with self._lock:  # two first requests at once still make one session
            if self.opened is None:
                self.opened = await self._open(client)
            return self.opened


def fresh_caller(
    engine: Engine, gateway: Gateway, *, cross_session: bool, can_write: bool
) -> Caller:
    """A placeholder caller for a client with no bound session: its first request makes
    a session named after it (see the module docstring)."""

    async def open_caller(client: str) -> Caller:
        made = await engine.create_session(NAME_PREFIX + client, activate=False)
        context = caller_context(
            engine, session=made.id, cross_session=cross_session, can_write=can_write
        )
        return engine_caller(engine, gateway, context)

    placeholder = caller_context(engine, cross_session=cross_session, can_write=can_write)
    return Caller(placeholder, pending=SessionOnFirstUse(open_caller))


def made(caller: Caller) -> Caller | None:
    """The caller that acted for ``caller``: itself, or a placeholder's once its session
    was made (None if the client never needed one)."""
    return caller if caller.pending is None else caller.pending.opened
