"""Prompts an MCP client can offer its user: requests filled with what Sylk knows.

Three, each a template whose ``${name}`` placeholders take the caller's
arguments and what Sylk gathers for them (orchestr8's argument substitution):

- ``best-practice`` (``topic``, optional ``category``): the library fragments
  for the topic, assembled within a token budget;
- ``where-is`` (``symbol``): the symbol's definitions and mentions from the
  workspace's code index;
- ``briefing`` (optional ``tier``): the Archivalist's briefing of the session
  the server acts in.

What they gather goes through the gateway with the server's own caller
context, so a prompt sees exactly what the client's tools would. Bad arguments
(unknown, missing, not one of the choices) raise :class:`PromptError`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import Any

import mcp_types

from backend.errors import SylkError
from backend.knowledge.fragments.library import FragmentLibrary
from backend.skills.envelopes import new_trace_id
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext

LIBRARY_BUDGET = 2500  # tokens of guidance in one best-practice prompt
MENTIONS = 15
BRIEFING_TIERS = ("micro", "standard", "full")


class PromptError(SylkError):
    """A prompt was asked for by a name it does not have, or with arguments it cannot use."""

    def __init__(self, prompt: str, message: str, *, argument: str | None = None) -> None:
        super().__init__(message, help_hint="prompts/list shows each prompt's arguments")
        self.prompt = prompt
        self.argument = argument


@dataclass(frozen=True)
class Argument:
    name: str
    description: str
    required: bool = False
    default: str = ""
    # Called when the prompt is listed or used, so choices follow the library as it changes.
    choices: Callable[[], Sequence[str]] | None = None


Gather = Callable[[dict[str, str]], Awaitable[dict[str, str]]]


@dataclass(frozen=True)
class PromptSpec:
    name: str
    title: str
    description: str
    template: str
    gather: Gather
    arguments: tuple[Argument, ...] = field(default_factory=tuple)

    def listing(self) -> mcp_types.Prompt:
        return mcp_types.Prompt(
            name=self.name,
            title=self.title,
            description=self.description,
            arguments=[
                mcp_types.PromptArgument(
                    name=a.name, description=_described(a), required=a.required
                )
                for a in self.arguments
            ],
        )

    def values(self, given: dict[str, str]) -> dict[str, str]:
        """The arguments with defaults filled in; anything unusable raises PromptError."""
        known = {a.name for a in self.arguments}
        unknown = sorted(set(given) - known)
        if unknown:
            takes = ", ".join(sorted(known)) or "no arguments"
            raise PromptError(
                self.name,
                f"prompt {self.name!r} has no argument {unknown[0]!r}; it takes {takes}",
                argument=unknown[0],
            )
        values: dict[str, str] = {}
        for arg in self.arguments:
            value = (given.get(arg.name) or "").strip()
            if not value and arg.required:
                raise PromptError(
                    self.name,
                    f"prompt {self.name!r} needs the argument {arg.name!r}: {arg.description}",
                    argument=arg.name,
                )
            value = value or arg.default
            choices = list(arg.choices()) if arg.choices else []
            if value and choices and value not in choices:
                raise PromptError(
                    self.name,
                    f"{arg.name} must be one of {', '.join(choices)}, not {value!r}",
                    argument=arg.name,
                )
            values[arg.name] = value
        return values


def _tiers() -> Sequence[str]:
    return BRIEFING_TIERS


def _described(arg: Argument) -> str:
    text = arg.description
    if arg.choices:
        text += f" (one of {', '.join(arg.choices())})"
    if arg.default:
        text += f"; default {arg.default}"
    return text


BEST_PRACTICE = """\
Work on this following the practices below: ${topic}

They come from Sylk's guidance library (${sources}). Follow them where they fit; \
where you depart from one, say which and why.

${guidance}"""

WHERE_IS = """\
Where is `${symbol}` defined in this workspace, and how is it used? Answer with \
file:line references.

Sylk's code index found:

${findings}

To read more around a line, call the `execute` tool with op `librarian.file.read` \
and args {"path": ..., "start_line": ..., "end_line": ...}."""

BRIEFING = """\
Catch up on this Sylk session before you continue: what was decided, what failed, \
what is still open.

${briefing}

For more, call the `execute` tool with op `archivalist.chronicle.query` and a \
`search_text`."""


class SylkPrompts:
    """The prompts of one server: listed by prompts/list, filled in by prompts/get."""

    def __init__(self, gateway: Gateway, ctx: SkillContext, library: FragmentLibrary) -> None:
        self.gateway = gateway
        self.ctx = ctx
        self.library = library
        self.specs = {
            spec.name: spec
            for spec in (
                PromptSpec(
                    "best-practice",
                    "Best practices for a topic",
                    "Sylk's library guidance on a topic (retries, SQL injection, flaky tests, "
                    "...), ready to work from.",
                    BEST_PRACTICE,
                    self._best_practice,
                    (
                        Argument("topic", "what you are about to do, in a few words", True),
                        Argument("category", "only this library category", choices=self._cats),
                    ),
                ),
                PromptSpec(
                    "where-is",
                    "Where is a symbol",
                    "Where a function, class or constant is defined in the workspace and where "
                    "it is mentioned, from Sylk's code index.",
                    WHERE_IS,
                    self._where_is,
                    (Argument("symbol", "a function, class or constant name", True),),
                ),
                PromptSpec(
                    "briefing",
                    "Session briefing",
                    "What this Sylk session has decided, tried and left open, from the "
                    "Archivalist's chronicle.",
                    BRIEFING,
                    self._briefing,
                    (Argument("tier", "how much detail", default="standard", choices=_tiers),),
                ),
            )
        }

    def prompts(self) -> list[mcp_types.Prompt]:
        return [spec.listing() for spec in self.specs.values()]

    async def get(self, name: str, arguments: dict[str, str] | None) -> mcp_types.GetPromptResult:
        spec = self.specs.get(name)
        if spec is None:
            raise PromptError(
                name, f"no prompt named {name!r}; the prompts are {', '.join(self.specs)}"
            )
        values = await asyncio.to_thread(spec.values, dict(arguments or {}))
        gathered = await spec.gather(values)
        text = Template(spec.template).substitute({**values, **gathered})
        return mcp_types.GetPromptResult(
            description=spec.description,
            messages=[
                mcp_types.PromptMessage(role="user", content=mcp_types.TextContent(text=text))
            ],
        )

    # -- what each prompt gathers -------------------------------------------------------
    def _cats(self) -> list[str]:
        return self.library.categories()

    async def _op(self, op: str, args: dict[str, Any]) -> tuple[Any, str]:
        """``(result, "")`` when ``op`` succeeded, else ``(None, why not)``."""
        ctx = dataclasses.replace(self.ctx, trace_id=new_trace_id())
        envelope = await self.gateway.execute(ctx, op, args)
        if envelope.ok:
            return envelope.result, ""
        return None, envelope.error.message if envelope.error else "it failed"

    async def _best_practice(self, values: dict[str, str]) -> dict[str, str]:
        answer = await asyncio.to_thread(
            self.library.query,
            values["topic"],
            mode="full",
            max_tokens=LIBRARY_BUDGET,
            category=values["category"] or None,
        )
        if not answer.matches:
            return {
                "sources": "which has nothing on it",
                "guidance": "No fragment matched; answer from general knowledge and say so.",
            }
        return {"sources": ", ".join(m.uri for m in answer.matches), "guidance": answer.text}

    async def _where_is(self, values: dict[str, str]) -> dict[str, str]:
        symbol = values["symbol"]
        (found, _), (mentioned, _) = await asyncio.gather(
            self._op("librarian.code.context", {"symbol": symbol, "max_lines": 30}),
            # Case-sensitive runs the line scan: every line naming the symbol, not ranked chunks.
            self._op(
                "librarian.code.search",
                {"query": symbol, "case_sensitive": True, "limit": MENTIONS},
            ),
        )
        definitions = (found or {}).get("definitions") or []
        hits = (mentioned or {}).get("hits") or []
        parts = []
        for d in definitions:
            parts.append(f"- definition at `{d['path']}:{d['line']}` ({d.get('kind', 'symbol')})")
            if d.get("code"):
                parts.append(f"```\n{d['code']}\n```")
        parts.extend(f"- mention at `{h['path']}:{h['line']}`: {h['text']}" for h in hits)
        if not parts:
            parts.append(f"nothing: no definition or mention of `{symbol}` is indexed.")
        return {"findings": "\n".join(parts)}

    async def _briefing(self, values: dict[str, str]) -> dict[str, str]:
        result, why_not = await self._op("archivalist.memory.briefing", {"tier": values["tier"]})
        if result is None:
            return {"briefing": f"(no briefing: {why_not})"}
        return {"briefing": str(result.get("text") or "(the chronicle has nothing yet)")}
