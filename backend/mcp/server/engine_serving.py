"""``sylk mcp serve``: an open Engine served over stdio or HTTP, and what each client
leaves behind when it goes.

Instructions. A client reads them once, at initialize, before it calls anything, so
they are computed then rather than at startup: after the configured MCP servers have
listed their tools (a wait of at most :data:`TOOLS_SETTLE_S`, so a hung server never
holds initialize longer) and for the client's own reach (a token's grant leaves out
the ops outside it, as ``describe('')`` does). The text is kept per registry version,
grant and server health, so a thousand clients cost one computation each while
nothing changes.

Clients' sessions. A client served without ``--session`` acts in a session of its
own (:mod:`backend.mcp.server.client_sessions`). When it goes (stdin closes, its
HTTP session is deleted or expires, its SSE stream ends) that session is closed: kept
in the archive with everything it did (``sylk sessions`` lists it with closed ones),
its agents stopped and the gateway's state for it (ops it unveiled, help it read,
idempotency keys) dropped, so a server that has served thousands of connections
holds nothing for them. Closed rather than suspended or completed: the session was
never in the foreground (only an active session may be suspended or completed) and no
later client resumes it, as each gets a session of its own. A session some op moved
to the foreground is suspended first. A client bound to ``--session`` acts in the
user's session, which stays as it is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from backend.errors import SylkError
from backend.mcp.server.callers import Caller, CallerLookup, SessionCallers, fixed
from backend.mcp.server.client_sessions import (
    caller_context,
    engine_caller,
    fresh_caller,
    made,
)
from backend.mcp.server.content.instructions import server_instructions
from backend.mcp.server.content.server_domains import describe_server_domains
from backend.mcp.server.server import SylkMcpServer
from backend.mcp.server.stdio_transport import serve_stdio
from backend.sessions.models import SessionState
from backend.skills.builtin.archivalist import CROSS_SCOPE
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import OpBound, SkillContext

if TYPE_CHECKING:
    from backend.engine import Engine
    from backend.mcp.server.auth import TokenAuth
    from backend.mcp.server.http_sessions import SessionLimits
    from backend.mcp.server.http_transport import HttpEndpoint

log = logging.getLogger(__name__)

TOOLS_SETTLE_S = 2.0  # how long initialize waits for MCP servers still listing their tools
_KEPT_INSTRUCTIONS = 64


async def serve_engine(
    engine: Engine,
    *,
    gateway: Gateway | None = None,
    can_write: bool = False,
    session: str | None = None,
    cross_session: bool = False,
    http: HttpEndpoint | None = None,
    limits: SessionLimits | None = None,
    stop: asyncio.Event | None = None,
    on_listening: Callable[[str], None] | None = None,
    auth: TokenAuth | None = None,
    settle_s: float = TOOLS_SETTLE_S,
) -> bool:
    """Serve ``engine`` over stdio until the client closes stdin, or over ``http`` (each
    client its own caller, its session within ``limits``) until ``stop`` is set; see
    :func:`caller_context` for ``session`` and ``cross_session``. True if ``stop`` ended
    it. ``on_listening`` hears the URL once the HTTP socket listens; ``settle_s`` bounds
    initialize's wait for the MCP servers. The engine stays open: closing it is the
    caller's, after this returns (the sessions of the clients that went are closed by
    then)."""

    context = caller_context(
        engine, session=session, cross_session=cross_session, can_write=can_write
    )  # an unknown --session fails here, before anything starts
    engine.start_idle_timer()  # sessions idle past [sessions] auto_suspend_after_s suspend
    if http is not None:
        from backend.mcp.server import http_sessions, http_transport  # uvicorn: only for HTTP

        sock = http_transport.listen(http)  # a taken port fails before the tools start
    if gateway is None:
        gateway = await engine.tools_gateway()  # configured MCP servers' tools join as hidden ops
    stop_describing = describe_server_domains(gateway.registry)
    served = Served(engine, gateway, context, session is None, settle_s)
    try:
        if http is None:
            caller = served.make_caller()
            try:
                return await serve_stdio(served.server(fixed(caller)).build(), stop)
            finally:
                served.release(caller)
        limits = limits or http_sessions.SessionLimits()
        callers = SessionCallers(served.make_caller, served.release, capacity=limits.max_sessions)
        stopping = stop or asyncio.Event()
        if auth is not None:  # every request needs a token; a token's scopes bound its ops
            auth.guard(gateway.hooks)
        await http_transport.serve_http(
            http,
            sock,
            lambda lookup: served.server(lookup).build(),
            callers,
            stopping,
            limits=limits,
            on_listening=on_listening,
            auth=auth,
        )
        return stopping.is_set()
    finally:
        try:
            await served.drain()
        finally:
            stop_describing()


@dataclasses.dataclass
class Served:
    """What :func:`serve_engine` serves: its engine and gateway, the bound context (or
    the template of a fresh client's), and whether clients get sessions of their own
    (``fresh``) or act in the bound one; it owns the tasks closing gone clients'
    sessions."""

    engine: Engine
    gateway: Gateway
    context: SkillContext
    fresh: bool
    settle_s: float = TOOLS_SETTLE_S
    closing: set[asyncio.Task[None]] = dataclasses.field(default_factory=set)
    told: dict[tuple[object, ...], str] = dataclasses.field(default_factory=dict)

    def make_caller(self) -> Caller:
        if not self.fresh:  # every client acts in the bound session
            return engine_caller(self.engine, self.gateway, self.context)
        ctx = self.context
        return fresh_caller(
            self.engine,
            self.gateway,
            cross_session=CROSS_SCOPE in ctx.scopes,
            can_write=ctx.can_write,
        )

    def release(self, caller: Caller) -> None:
        """``caller``'s client went: its own session (if it got one) is closed."""
        acted = made(caller)
        if not self.fresh or acted is None:  # the bound session is the user's
            return
        session_id = acted.context.session_id
        self.gateway.forget_session(session_id)  # at once, whatever closing takes
        task = asyncio.get_running_loop().create_task(
            self._close(session_id), name=f"mcp-close-session-{session_id}"
        )
        self.closing.add(task)
        task.add_done_callback(self.closing.discard)

    async def _close(self, session_id: str) -> None:
        try:
            if self.engine.get_session(session_id).state is SessionState.ACTIVE:
                await self.engine.suspend_session(session_id)
            await self.engine.close_session(session_id)
        except SylkError as exc:  # closed or changed by someone else meanwhile
            log.info("MCP client session %s not closed: %s", session_id, exc)

    async def drain(self) -> None:
        """Wait for the sessions of the clients that went to be closed."""
        while self.closing:
            await asyncio.gather(*list(self.closing), return_exceptions=True)

    async def instructions(self, bound: OpBound | None) -> str:
        """What a client within ``bound`` is told at initialize (see the module doc)."""
        await self.engine.wait_tools_started(self.settle_s)
        note = self.engine.tool_servers_note()
        key = (self.gateway.registry.version, bound, note)
        text = self.told.get(key)
        if text is None:
            text = await asyncio.to_thread(
                server_instructions,
                self.gateway.registry,
                dataclasses.replace(self.context, op_bound=bound),
                self.engine.archive,
                self.engine.library,
                self.gateway.offered,
                own_session=self.fresh,
                tool_servers=note,
                runnable=self.gateway.access.runnable,
            )
            if len(self.told) >= _KEPT_INSTRUCTIONS:
                self.told.clear()
            self.told[key] = text
        return text

    def server(self, callers: CallerLookup) -> SylkMcpServer:
        return SylkMcpServer(
            self.gateway,
            self.context,
            instructions_for=self.instructions,
            callers=callers,
            redactor=self.engine.redactor,
        )
