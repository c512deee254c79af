"""The Academic's fragment library as MCP resources: one per fragment, as markdown.

An MCP client lists them (``sylk://library/<category>/<id>``, with the
fragment's summary and token estimate) and reads the one it needs, the same
progressive disclosure the library's catalog mode gives Sylk's own agents.

One resource is dynamic: ``sylk://library/match?query=...&maxTokens=...``
assembles the fragments that match a query within a token budget (the
library's ``full`` mode, unless ``mode`` asks for ``catalog`` or ``index``),
so a client gets the relevant guidance in one read without listing first.
"""

from __future__ import annotations

import asyncio
from typing import cast, get_args
from urllib.parse import parse_qs, urlsplit

import mcp_types

from backend.errors import SylkError
from backend.knowledge.fragments.library import FragmentLibrary
from backend.knowledge.fragments.models import DEFAULT_MAX_TOKENS, LibraryError, Mode
from backend.mcp.server.content.ports import ResourceBody

PREFIX = "sylk://library/"
MATCH_URI = PREFIX + "match"
MATCH_TEMPLATE = MATCH_URI + "{?query,category,maxTokens,mode}"
MATCH_PARAMS = ("query", "category", "maxTokens", "mode")
MAX_TOKENS_CAP = 20_000  # a resource read lands whole in the client's context


class ResourceParamError(SylkError):
    """A templated resource was read with parameters it does not take or cannot use."""

    def __init__(self, uri: str, message: str, help_hint: str | None = None) -> None:
        super().__init__(message, help_hint=help_hint or f"the template is {MATCH_TEMPLATE}")
        self.uri = uri


def match_params(uri: str) -> tuple[str, str | None, int, Mode]:
    """``(query, category, max_tokens, mode)`` from a match URI; bad ones raise
    :class:`ResourceParamError` naming the parameter."""
    raw = urlsplit(uri).query
    try:
        given = parse_qs(raw, keep_blank_values=True, strict_parsing=bool(raw))
    except ValueError:
        raise ResourceParamError(uri, f"cannot read the query string {raw!r}") from None
    unknown = sorted(set(given) - set(MATCH_PARAMS))
    if unknown:
        raise ResourceParamError(
            uri,
            f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"{MATCH_URI} takes {', '.join(MATCH_PARAMS)}",
        )
    repeated = sorted(name for name, values in given.items() if len(values) > 1)
    if repeated:
        raise ResourceParamError(uri, f"give {', '.join(repeated)} once")
    one = {name: values[0].strip() for name, values in given.items()}
    query = one.get("query", "")
    if not query:
        raise ResourceParamError(uri, "query is required, e.g. ?query=retry+with+backoff")
    budget = one.get("maxTokens") or str(DEFAULT_MAX_TOKENS)
    if not budget.isdigit() or not 1 <= int(budget) <= MAX_TOKENS_CAP:
        raise ResourceParamError(
            uri, f"maxTokens must be a whole number from 1 to {MAX_TOKENS_CAP}, not {budget!r}"
        )
    mode = one.get("mode") or "full"
    if mode not in get_args(Mode):
        modes = ", ".join(get_args(Mode))
        raise ResourceParamError(uri, f"mode must be one of {modes}, not {mode!r}")
    return query, one.get("category") or None, int(budget), cast(Mode, mode)


def titled(title: str, body: str) -> str:
    """The fragment as markdown under its title, given once: most bodies open with it."""
    first = body.lstrip().split("\n", 1)[0]
    if first.startswith("#") and first.lstrip("#").strip().casefold() == title.casefold():
        return body
    return f"# {title}\n\n{body}"


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
            ),
            mcp_types.ResourceTemplate(
                uri_template=MATCH_TEMPLATE,
                name="library-match",
                title="Library guidance for a query",
                description=(
                    "The library fragments matching `query`, assembled within `maxTokens` "
                    f"(default {DEFAULT_MAX_TOKENS}); `category` narrows to one category; "
                    "`mode` is full (default), catalog (summaries) or index (use-when lines)."
                ),
                mime_type="text/markdown",
            ),
        ]

    async def read(self, uri: str) -> ResourceBody | None:
        if not uri.startswith(PREFIX):
            return None
        if urlsplit(uri)._replace(query="").geturl() == MATCH_URI:
            return await self._match(uri)
        try:
            fragment = await asyncio.to_thread(self.library.get, uri)
        except LibraryError:
            return None
        return ResourceBody(titled(fragment.title, fragment.body), mime_type="text/markdown")

    async def _match(self, uri: str) -> ResourceBody:
        query, category, max_tokens, mode = match_params(uri)
        try:
            answer = await asyncio.to_thread(
                self.library.query, query, mode=mode, max_tokens=max_tokens, category=category
            )
        except LibraryError as exc:  # an unknown category, mostly: the client's to fix
            raise ResourceParamError(uri, exc.message, exc.help_hint or None) from None
        return ResourceBody(answer.text, mime_type="text/markdown")
