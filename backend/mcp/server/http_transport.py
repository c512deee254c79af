"""``sylk mcp serve --http`` and ``--sse``: the same server for clients that connect over HTTP.

``--http`` serves the SDK's streamable HTTP transport at ``/mcp``; ``--sse`` the legacy
HTTP+SSE one (``GET /sse``, ``POST /messages/``) for clients that predate it. Either
way each client is a caller of its own (:mod:`backend.mcp.server.callers`), with the rights
the command line gave, as a stdio client is.

The server listens on 127.0.0.1 unless told otherwise and refuses any other address
without ``allow_remote``; with it, every request needs a bearer token
(:mod:`backend.mcp.server.auth`), whose scopes bound what it reaches. On loopback no
token is asked unless one is configured: whoever reaches the port then acts with the
server's rights, so the Host and Origin headers are checked (the SDK's DNS-rebinding
protection) and a web page cannot reach it through a name that resolves to it.

Streamable-HTTP sessions expire when idle and are bounded in number
(:mod:`backend.mcp.server.http_sessions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn
from mcp.server import Server
from mcp.server.sse import SseServerTransport
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.errors import SylkError
from backend.mcp.server.auth import TokenAuth, request_grant
from backend.mcp.server.body_limit import BodyLimit
from backend.mcp.server.callers import CallerLookup, SessionCallers, fixed
from backend.mcp.server.http_sessions import MCP_PATH, SessionLimits, streamable_app

DEFAULT_HOST = "127.0.0.1"
SSE_PATH, MESSAGES_PATH = "/sse", "/messages/"
# Long enough for a tool call in flight to answer, short enough for a supervisor's
# stop timeout; open event streams are ended at once (AppStatus), so only calls wait.
GRACE_S = 5
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_HOSTS = ("0.0.0.0", "::")

MakeServer = Callable[[CallerLookup], Server[Any]]


class HttpEndpointError(SylkError):
    """``--http``/``--sse`` names no usable address."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__(
            f"cannot serve on {value!r}: {reason}",
            help_hint="give [HOST:]PORT, e.g. 8765, 127.0.0.1:8765 or [::1]:8765",
        )
        self.value = value


class RemoteBindError(SylkError):
    """A non-loopback address without ``--allow-remote``."""

    def __init__(self, host: str) -> None:
        super().__init__(
            f"refusing to serve MCP on {host}: it is not a loopback address",
            help_hint="serve on 127.0.0.1, or pass --allow-remote: every request then needs "
            "a bearer token (`sylk mcp token show`)",
        )
        self.host = host


class HttpBindError(SylkError):
    """The address is taken, not this machine's, or not allowed."""

    def __init__(self, endpoint: HttpEndpoint, error: OSError) -> None:
        super().__init__(
            f"cannot listen on {endpoint.authority}: {error.strerror or error}",
            help_hint="pick another port, or stop what is listening there",
        )
        self.endpoint = endpoint
        self.error = error


@dataclass(frozen=True)
class HttpEndpoint:
    """Where to listen. ``port`` 0 picks a free one; ``sse`` serves the legacy transport."""

    host: str = DEFAULT_HOST
    port: int = 0
    sse: bool = False

    @property
    def header_host(self) -> str:
        """The host as a Host header or URL spells it (IPv6 in brackets)."""
        return f"[{self.host}]" if ":" in self.host else self.host

    @property
    def authority(self) -> str:
        return f"{self.header_host}:{self.port}"

    @property
    def path(self) -> str:
        return SSE_PATH if self.sse else MCP_PATH

    def url(self, port: int | None = None) -> str:
        host = "127.0.0.1" if self.host in WILDCARD_HOSTS else self.header_host
        return f"http://{host}:{self.port if port is None else port}{self.path}"


_ENDPOINT = re.compile(r"(?:(?P<host>\[[^\]]*\]|[^\[\]:]*):)?(?P<port>\d{1,5})")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_endpoint(value: str, *, sse: bool = False, allow_remote: bool = False) -> HttpEndpoint:
    """``[HOST:]PORT`` as an endpoint; :class:`HttpEndpointError` if malformed,
    :class:`RemoteBindError` for a non-loopback host without ``allow_remote``."""
    found = _ENDPOINT.fullmatch(value.strip())
    if found is None:
        raise HttpEndpointError(value, "expected [HOST:]PORT (an IPv6 host in brackets)")
    port = int(found["port"])
    if port > 65535:
        raise HttpEndpointError(value, f"port {port} is above 65535")
    host = (found["host"] or DEFAULT_HOST).strip("[]") or DEFAULT_HOST
    if not allow_remote and not is_loopback(host):
        raise RemoteBindError(host)
    return HttpEndpoint(host, port, sse)


def listen(endpoint: HttpEndpoint) -> socket.socket:
    """A socket listening on ``endpoint``, bound now so a taken port fails before the
    engine starts anything; :class:`HttpBindError` otherwise."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            endpoint.host, endpoint.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise HttpBindError(endpoint, exc) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise HttpBindError(endpoint, exc) from None
    return sock


def security_settings(endpoint: HttpEndpoint) -> TransportSecuritySettings:
    """Host and Origin checks against DNS rebinding: the loopback names, plus the
    address served on. A wildcard bind has no one name to check against, and a server
    open to the network is reachable directly anyway, so it goes unchecked."""
    if endpoint.host in WILDCARD_HOSTS:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = list(dict.fromkeys((endpoint.header_host, *LOOPBACK_HOSTS)))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[form for host in hosts for form in (host, f"{host}:*")],
        allowed_origins=[form for host in hosts for form in (f"http://{host}", f"http://{host}:*")],
    )


class SseConnections:
    """``GET /sse``: each event stream is one client, with a caller and server of its own."""

    def __init__(
        self,
        transport: SseServerTransport,
        settings: TransportSecuritySettings,
        make_server: MakeServer,
        callers: SessionCallers,
        auth: TokenAuth | None = None,
    ) -> None:
        self.auth = auth
        self.transport = transport
        self.security = TransportSecurityMiddleware(settings)
        self.make_server = make_server
        self.callers = callers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "GET":
            await Response(status_code=405, headers={"Allow": "GET"})(scope, receive, send)
            return
        refused = await self.security.validate_request(Request(scope, receive))
        if refused is not None:
            await refused(scope, receive, send)
            return
        caller = self.callers.make()
        server = self.make_server(fixed(caller))
        if self.auth is not None:  # the token checked at GET /sse bounds the connection
            server = self.auth.bound(server, request_grant(Request(scope)))
        try:
            async with self.transport.connect_sse(scope, receive, send) as (reader, writer):
                await server.run(reader, writer, server.create_initialization_options())
        finally:
            self.callers.release(caller)


def build_app(
    endpoint: HttpEndpoint,
    make_server: MakeServer,
    callers: SessionCallers,
    limits: SessionLimits | None = None,
    auth: TokenAuth | None = None,
) -> ASGIApp:
    """The ASGI app: the transport within its body limit, within ``auth`` if given (so
    a request without a token is refused before its body is read)."""
    wrap: Callable[[ASGIApp], ASGIApp] = auth.middleware if auth else (lambda app: app)
    settings = security_settings(endpoint)
    if endpoint.sse:
        transport = SseServerTransport(MESSAGES_PATH, security_settings=settings)
        routes = [
            Route(SSE_PATH, SseConnections(transport, settings, make_server, callers, auth)),
            Mount(MESSAGES_PATH, app=transport.handle_post_message),
        ]
        return wrap(BodyLimit(Starlette(routes=routes)))
    app, _manager = streamable_app(
        auth.bound(make_server(callers)) if auth else make_server(callers),
        callers,
        settings,
        limits or SessionLimits(),
    )
    return wrap(BodyLimit(app))


class _Uvicorn(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # SIGINT and SIGTERM are backend.mcp.server.shutdown's: they end serve_http through
        # its stop event, after which nothing may re-raise them.
        yield


async def serve_http(
    endpoint: HttpEndpoint,
    sock: socket.socket,
    make_server: MakeServer,
    callers: SessionCallers,
    stop: asyncio.Event,
    *,
    limits: SessionLimits | None = None,
    on_listening: Callable[[str], None] | None = None,
    auth: TokenAuth | None = None,
) -> None:
    """Serve on ``sock`` (from :func:`listen`) until ``stop`` is set, then shut down:
    event streams end, calls in flight get :data:`GRACE_S` seconds to answer, and every
    client session is closed. Streamable-HTTP sessions live within ``limits``; with
    ``auth`` every request needs one of its tokens."""
    config = uvicorn.Config(
        build_app(endpoint, make_server, callers, limits, auth),
        lifespan="on",
        http="h11",
        ws="none",
        log_config=None,
        access_log=False,
        server_header=False,
        timeout_graceful_shutdown=GRACE_S,
    )
    server = _Uvicorn(config)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    if on_listening is not None:
        on_listening(endpoint.url(sock.getsockname()[1]))
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not serving.done():
            AppStatus.should_exit = True  # ends event streams, which would hold connections
            server.should_exit = True
            await asyncio.wait({serving})
            AppStatus.should_exit = False
    serving.result()
