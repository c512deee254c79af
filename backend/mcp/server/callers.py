"""Who a request comes from: one :class:`Caller` per client connection.

Over stdio the process serves one client, so one caller answers every request. Over
streamable HTTP one server answers every client, and a client is its MCP session
(the ``Mcp-Session-Id`` header the transport issues at initialize), so
:class:`SessionCallers` makes a caller the first time it sees a session and keeps it
until the session ends (the client deletes it, or it expires: see
:mod:`backend.mcp.server.http_sessions`), or until it is the least recently used of
more sessions than the transport itself admits.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp.server import ServerRequestContext
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import DEFAULT_MAX_SESSIONS
from starlette.requests import Request

from backend.mcp.server.content.ports import ResourceProvider
from backend.mcp.server.content.prompts import SylkPrompts
from backend.skills.models import SkillContext

if TYPE_CHECKING:
    from backend.mcp.server.client_sessions import SessionOnFirstUse


@dataclass(frozen=True)
class Caller:
    """One client as the server answers it: its context (session, workspace, scopes,
    write permission), the resources it may read and its prompts. A caller whose
    session is made on its first request is a placeholder: ``pending`` makes the caller
    that answers (:mod:`backend.mcp.server.client_sessions`)."""

    context: SkillContext
    providers: tuple[ResourceProvider, ...] = ()
    prompts: SylkPrompts | None = None
    pending: SessionOnFirstUse | None = None


CallerLookup = Callable[[ServerRequestContext[Any]], Caller]


def fixed(caller: Caller) -> CallerLookup:
    """The same caller for every request: a connection of its own (stdio, legacy SSE)."""

    def lookup(_ctx: ServerRequestContext[Any]) -> Caller:
        return caller

    return lookup


def session_key(ctx: ServerRequestContext[Any]) -> str | None:
    """The streamable-HTTP session a request belongs to, if it came over HTTP."""
    request = ctx.request
    if isinstance(request, Request):
        return request.headers.get(MCP_SESSION_ID_HEADER)
    return None


class SessionCallers:
    """A caller per streamable-HTTP session, made by ``make`` on the session's first request.

    ``release`` is told when a caller is dropped (the session was deleted or evicted),
    so what the backend keeps per session (ops unveiled by guidance) can go too. A
    request without a session id (none reach the handlers in the handshake era, but a
    transport may change) is answered as a caller of its own that is not kept.
    """

    def __init__(
        self,
        make: Callable[[], Caller],
        release: Callable[[Caller], None] = lambda _caller: None,
        *,
        capacity: int = DEFAULT_MAX_SESSIONS,
    ) -> None:
        self.make = make
        self.release = release
        self.capacity = capacity
        self._callers: OrderedDict[str, Caller] = OrderedDict()

    def __call__(self, ctx: ServerRequestContext[Any]) -> Caller:
        key = session_key(ctx)
        if key is None:
            return self.make()
        caller = self._callers.get(key)
        if caller is None:
            caller = self._callers[key] = self.make()
            while len(self._callers) > self.capacity:
                _key, evicted = self._callers.popitem(last=False)
                self.release(evicted)
        else:
            self._callers.move_to_end(key)
        return caller

    def __len__(self) -> int:
        return len(self._callers)

    def __contains__(self, key: object) -> bool:
        return key in self._callers

    def forget(self, key: str) -> None:
        """Session ``key`` ended; a session never seen, or already forgotten, is no error."""
        caller = self._callers.pop(key, None)
        if caller is not None:
            self.release(caller)
