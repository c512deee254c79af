"""Hearing an external MCP server say its tool list changed.

A server tells its client with ``notifications/tools/list_changed``. How it reaches
the client depends on the protocol era the two agreed on:

- 2025-era (the ``initialize`` handshake; most npm servers today) sends it bare, at any
  time; the SDK hands it to the session's ``message_handler``.
- 2026-era (``server/discover``) sends it only on a ``subscriptions/listen`` stream the
  client opened; the SDK hands those to the ``message_handler`` too.

So one handler (:func:`list_changed_handler`) hears both, and :func:`listening`
keeps a listen stream open on a 2026-era connection for as long as the session lives,
so such a server sends the notification at all. What to do about it (re-list, after a
debounce) is the hub's business: here only "server X changed" is passed on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import mcp_types
from mcp import Client
from mcp.client.session import MessageHandlerFnT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

log = logging.getLogger(__name__)


def list_changed_handler(on_change: Callable[[], None]) -> MessageHandlerFnT:
    """A ``message_handler`` for the SDK client that calls ``on_change()`` (synchronously,
    never raising into the SDK) for each tools list_changed notification."""

    async def handler(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            try:
                on_change()
            except Exception:  # the session must survive a listener's bug
                log.exception("handling an MCP tools list_changed notification failed")
        await asyncio.sleep(0)

    return handler


async def _follow(client: Client, name: str) -> None:
    try:
        async with client.listen(tools_list_changed=True) as subscription:
            async for _event in subscription:  # the message handler already heard it
                pass
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a server that refuses to listen still works; it just never tells
        log.info("MCP server %r offers no tool change stream: %s", name, exc)


@contextlib.asynccontextmanager
async def listening(client: Client, name: str) -> AsyncIterator[None]:
    """While inside, a 2026-era server that declares ``tools.listChanged`` may tell of
    changes (a 2025-era one needs nothing opened)."""
    task: asyncio.Task[None] | None = None
    tools = client.server_capabilities.tools
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS and tools and tools.list_changed:
        task = asyncio.create_task(_follow(client, name), name=f"mcp-listen-{name}")
    try:
        yield
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
