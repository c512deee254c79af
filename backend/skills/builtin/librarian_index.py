"""The Librarian's ops over the code index (the workspace-scan ops are the fallback).

Every path is confined by :class:`~backend.workspace.files.Workspace` before the
index sees it. While a workspace's first build runs, answers come from what is
indexed so far and carry a warning saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from backend.knowledge.code.index_queries import SymbolHit
from backend.knowledge.code.patterns import detect_patterns
from backend.skills.builtin.declare import Params
from backend.skills.builtin.workspace import read as scan
from backend.skills.builtin.workspace.scan import glob_match
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import Guidance, SkillContext, SkillResult
from backend.workspace.files import Workspace

if TYPE_CHECKING:
    from backend.knowledge.code.hub import CodeKnowledgeHub
    from backend.knowledge.code.live import CodeKnowledge

KINDS: dict[str, tuple[str, ...]] = {
    "function": ("function", "method"),
    "type": ("class", "struct", "interface", "trait", "enum", "type", "union"),
    "const": ("constant",),
    "var": ("variable",),
    "all": (),
}
INDEX_BUILDING = "the code index is still being built: results may be incomplete"
# A call waits this long for a workspace's first build, then answers from what is indexed.
READY_WAIT_S = 10.0


class PatternParams(Params):
    topic: str = Field(default="", description="what kind of convention, e.g. 'error handling'")
    path: str = Field(default=".", description="limit to files under this directory")


def _symbol(hit: SymbolHit) -> dict[str, Any]:
    return {k: v for k, v in asdict(hit).items() if v not in (None, "")}


class IndexedLibrarian:
    """Handlers bound to a hub: each call finds its workspace's index."""

    def __init__(self, hub: CodeKnowledgeHub, ready_wait_s: float = READY_WAIT_S) -> None:
        self.hub = hub
        self._ready_wait_s = ready_wait_s

    async def _knowledge(self, ctx: SkillContext) -> tuple[CodeKnowledge, list[str]]:
        knowledge = await self.hub.get(Path(ctx.workspace))
        if not knowledge.ready:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(knowledge.wait_ready(), self._ready_wait_s)
        return knowledge, [] if knowledge.ready else [INDEX_BUILDING]

    @staticmethod
    def _rel(ctx: SkillContext, path: str) -> str:
        ws = Workspace(ctx.workspace, protected=ctx.confinement.protected)
        return ws.relative(ws.resolve(path))  # raises for paths outside or Sylk's own

    async def search_code(self, ctx: SkillContext, p: scan.SearchCodeParams) -> SkillResult:
        if p.regex or p.case_sensitive:
            return await scan.search_code(ctx, p)  # the index's text search is word-based
        knowledge, warnings = await self._knowledge(ctx)
        index = knowledge.index

        def run() -> dict[str, Any]:
            definitions = [
                _symbol(h)
                for h in index.find_symbols(p.query, KINDS[p.symbol_type], limit=p.limit)
                if glob_match(h.path, p.file_glob)
            ]
            hits = []
            if p.symbol_type == "all":
                hits = [
                    {"path": h.path, "line": h.line, "text": h.snippet[:240]}
                    for h in index.search(p.query, limit=p.limit * 2)
                    if glob_match(h.path, p.file_glob)
                ][: p.limit]
            return {"definitions": definitions, "hits": hits, "source": "code index"}

        found = await asyncio.to_thread(run)
        if not found["definitions"] and not found["hits"] and p.symbol_type == "all":
            return await scan.search_code(ctx, p)  # substrings inside words: a plain scan
        guidance = []
        first = (found["definitions"] or found["hits"])[:1]
        if first:
            line = int(first[0]["line"])
            guidance.append(
                Guidance(
                    op="librarian.file.read",
                    prose="Read the lines around the first result",
                    args={
                        "path": first[0]["path"],
                        "start_line": max(1, line - 5),
                        "end_line": line + 40,
                    },
                )
            )
        return SkillResult(result=found, guidance=guidance, warnings=warnings)

    async def symbol_context(self, ctx: SkillContext, p: scan.SymbolContextParams) -> Any:
        knowledge, warnings = await self._knowledge(ctx)
        index = knowledge.index
        only = self._rel(ctx, p.path) if p.path else None

        def run() -> dict[str, Any]:
            hits = [h for h in index.locate(p.symbol, limit=20) if only in (None, h.path)]
            out = []
            for h in hits[:10]:
                last = min(h.end_line or h.line + p.max_lines - 1, h.line + p.max_lines - 1)
                code = "\n".join(index.lines(h.path, h.line, last))
                out.append({**_symbol(h), "start_line": h.line, "end_line": last, "code": code})
            return {"symbol": p.symbol, "definitions": out}

        found = await asyncio.to_thread(run)
        return SkillResult(result=found, warnings=warnings)

    async def structure(self, ctx: SkillContext, p: scan.StructureParams) -> Any:
        """The directory tree, plus each file's outline (symbols, imports) when the path is
        a file or a directory of up to 40 files."""
        tree = await scan.structure(ctx, p)
        knowledge, warnings = await self._knowledge(ctx)
        outlines = await asyncio.to_thread(knowledge.index.structure, self._rel(ctx, p.path), 41)
        if len(outlines) <= 40:
            tree["outline"] = [
                {
                    "path": o.path,
                    "lang": o.lang,
                    "symbols": [f"{s.line}: {s.kind} {s.name}" for s in o.symbols[:80]],
                    "imports": o.imports[:40],
                }
                for o in outlines
            ]
        return SkillResult(result=tree, warnings=warnings)

    async def dependencies(self, ctx: SkillContext, p: scan.DependenciesParams) -> Any:
        rel = self._rel(ctx, p.path)
        if not (Path(ctx.workspace) / rel).is_file():
            raise SkillError(ErrorCode.NOT_FOUND, f"{p.path!r} is not a file in the workspace")
        knowledge, warnings = await self._knowledge(ctx)
        direction: Literal["imports", "imported_by", "both"] = p.direction
        deps = await asyncio.to_thread(knowledge.index.dependencies, rel, direction)
        out: dict[str, Any] = {"path": rel}
        if direction in ("imports", "both"):
            out["imports"] = [
                {"module": e.module, "line": e.line, "file": e.target} for e in deps.imports
            ]
        if direction in ("imported_by", "both"):
            out["imported_by"] = sorted({e.path for e in deps.imported_by})
        return SkillResult(result=out, warnings=warnings)

    async def patterns(self, ctx: SkillContext, p: PatternParams) -> Any:
        rel = self._rel(ctx, p.path)
        knowledge, warnings = await self._knowledge(ctx)
        report = await asyncio.to_thread(detect_patterns, knowledge.index, rel)
        result = report.as_dict()
        if p.topic.strip():
            evidence = await knowledge.patterns(p.topic)
            result["examples"] = [
                {"path": s.path, "line": s.line, "text": s.text[:240]} for s in evidence.snippets
            ]
        return SkillResult(result=result, warnings=warnings)
