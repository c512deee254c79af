"""The Academic's fragment library as MCP resources: one per fragment, as markdown.

An MCP client lists them (``sylk://library/<category>/<id>``, with the
fragment's summary and token estimate) and reads the one it needs, the same
progressive disclosure the library's catalog mode gives Sylk's own agents.
"""

from __future__ import annotations

import asyncio

import mcp_types

from backend.knowledge.fragment_library import FragmentLibrary
from backend.knowledge.library_models import LibraryError
from backend.mcp.ports import ResourceBody

PREFIX = "sylk://library/"


class LibraryResources:
    def __init__(self, library: FragmentLibrary) -> None:
        self.library = library

    async def list_resources(self) -> list[mcp_types.Resource]:
        fragments = await asyncio.to_thread(self.library.fragments)
        return [
            mcp_types.Resource(
                uri=f.uri,
                name=f"{f.category}/{f.id}",
                title=f.title,
                description=f"{f.summary} (~{f.estimated_tokens} tokens)",
                mime_type="text/markdown",
            )
            for f in fragments
        ]

    def templates(self) -> list[mcp_types.ResourceTemplate]:
        return [
            mcp_types.ResourceTemplate(
                uri_template=PREFIX + "{category}/{id}",
                name="fragment",
                title="Library fragment",
                description="A guidance fragment of Sylk's library (best practices, toolchains).",
                mime_type="text/markdown",
            )
        ]

    async def read(self, uri: str) -> ResourceBody | None:
        if not uri.startswith(PREFIX):
            return None
        try:
            fragment = await asyncio.to_thread(self.library.get, uri)
        except LibraryError:
            return None
        return ResourceBody(f"# {fragment.title}\n\n{fragment.body}", mime_type="text/markdown")
