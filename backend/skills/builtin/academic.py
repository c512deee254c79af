"""The Academic's skills: what can be done (research, best practices).

Given a :class:`~backend.knowledge.fragments.library.FragmentLibrary`, best
practices and the ``academic.library.*`` ops answer from its fragments, and
``research.topic`` falls back to them (saying the answer is from the local
library) because web research needs parts Sylk does not have yet. Comparing
options, ingesting a workspace file into the library and design proposals get their
handlers from an engine, which has the codebase's index too
(:mod:`backend.team.agent_ops.research_ops`). Without a library every op is declared and answers
not-available.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field

from backend.knowledge.fragments.library import FragmentLibrary
from backend.knowledge.fragments.models import (
    AmbiguousFragmentError,
    FragmentNotFoundError,
    LibraryAnswer,
    LibraryError,
)
from backend.skills.builtin.declare import (
    CONTEXTUAL,
    CORE,
    NotAvailableError,
    Params,
    declare,
)
from backend.skills.envelopes import ErrorCode, SkillError, code_for
from backend.skills.models import Guidance, Handler, Skill, SkillContext, SkillResult

RESEARCH = "the Academic's research pipeline (external sources, papers, web)"
LIBRARY = "the Academic's fragment library (given to the engine's skills)"
FROM_LIBRARY = "from Sylk's local fragment library (no web research or model used)"
DEPTH_TOKENS = {"quick": 800, "standard": 2000, "deep": 4000}


class ResearchParams(Params):
    topic: str = Field(min_length=1)
    depth: Literal["quick", "standard", "deep"] = "standard"


class CompareParams(Params):
    options: list[str] = Field(min_length=2)
    criteria: list[str] = Field(default_factory=list)


class IngestParams(Params):
    path: str = Field(min_length=1, description="a markdown or text file in the workspace")
    category: str = Field(
        default="ingested", pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$", description="library category"
    )
    tags: list[str] = Field(default_factory=list, description="tags for every fragment")


class ProposalParams(Params):
    topic: str
    constraints: list[str] = Field(default_factory=list)


class LibraryQueryParams(Params):
    query: str = Field(default="", description="what you want guidance on")
    mode: Literal["catalog", "full", "index"] = Field(
        default="catalog",
        description="catalog: ranked URIs; full: content within max_tokens; index: a few lines",
    )
    max_tokens: int = Field(default=3000, ge=100, le=20000)
    max_results: int = Field(default=15, ge=1, le=50)
    tags: list[str] = Field(default_factory=list, description="fragments must have all of these")
    category: str | None = Field(default=None, description="e.g. testing, security, errors")


class LibraryGetParams(Params):
    ref: str = Field(min_length=1, description="a URI sylk://library/<category>/<id>, or an id")


def _acad(op: str, desc: str, params: Any, handler: Handler | None = None, **kw: Any) -> Skill:
    provider = kw.pop("provider", RESEARCH)
    return declare(op, "academic", desc, params, handler, provider=provider, **kw)


def _library_error(exc: LibraryError) -> SkillError:
    """The library's error with the details a caller needs; the code is the error's kind's.

    A plain :class:`LibraryError` is a request the library cannot answer as asked (bad
    mode, budget, filter), so the caller's to fix although its class declares no kind.
    """
    if isinstance(exc, FragmentNotFoundError):
        details: dict[str, Any] = {"ref": exc.ref, "suggestions": exc.suggestions}
        return SkillError(
            code_for(exc), str(exc), details=details, help_path="academic.library.get"
        )
    if isinstance(exc, AmbiguousFragmentError):
        details = {"reason": "ambiguous", "uris": exc.uris}
        return SkillError(
            code_for(exc), str(exc), details=details, help_path="academic.library.get"
        )
    return SkillError(ErrorCode.VALIDATION_ERROR, str(exc), help_path="academic.library.query")


_READ_MORE = Guidance(op="academic.library.get", prose="Read a whole fragment by its URI")


class LibraryOps:
    """Handlers over one library (it is thread-safe; queries run off the event loop)."""

    def __init__(self, library: FragmentLibrary) -> None:
        self.library = library

    async def _query(self, query: str, **kw: Any) -> LibraryAnswer:
        try:
            return await asyncio.to_thread(self.library.query, query, **kw)
        except LibraryError as exc:
            raise _library_error(exc) from exc

    def _result(self, answer: LibraryAnswer, **extra: Any) -> SkillResult:
        data = {**extra, **answer.model_dump(mode="json")}
        warnings = [str(w) for w in self.library.warnings]
        return SkillResult(result=data, guidance=[_READ_MORE], warnings=warnings)

    async def query(self, ctx: SkillContext, p: LibraryQueryParams) -> SkillResult:
        answer = await self._query(
            p.query,
            mode=p.mode,
            max_tokens=p.max_tokens,
            max_results=p.max_results,
            tags=p.tags,
            category=p.category,
        )
        return self._result(answer)

    async def get(self, ctx: SkillContext, p: LibraryGetParams) -> dict[str, Any]:
        try:
            frag = await asyncio.to_thread(self.library.get, p.ref)
        except LibraryError as exc:
            raise _library_error(exc) from exc
        return {
            "uri": frag.uri,
            "id": frag.id,
            "category": frag.category,
            "title": frag.title,
            "tags": list(frag.tags),
            "capabilities": list(frag.capabilities),
            "use_when": list(frag.use_when),
            "tokens": frag.estimated_tokens,
            "source": "built-in" if frag.builtin else str(frag.path),
            "content": frag.body,
        }

    async def best_practices(self, ctx: SkillContext, p: ResearchParams) -> SkillResult:
        answer = await self._query(p.topic, mode="full", max_tokens=DEPTH_TOKENS[p.depth])
        if not answer.matches:
            categories = await asyncio.to_thread(self.library.categories)
            raise SkillError(
                ErrorCode.NOT_FOUND,
                f"the library has no best practices on {p.topic!r}",
                details={"reason": "no_match", "categories": categories},
                help_path="academic.library.query",
            )
        return self._result(answer, source=FROM_LIBRARY)

    async def research_topic(self, ctx: SkillContext, p: ResearchParams) -> SkillResult:
        answer = await self._query(p.topic, mode="full", max_tokens=DEPTH_TOKENS[p.depth])
        if not answer.matches:
            raise NotAvailableError(
                "academic.research.topic",
                RESEARCH,
                "The local fragment library has nothing on this topic either.",
            )
        result = self._result(answer, source=FROM_LIBRARY)
        result.warnings.insert(
            0, "web research is not available yet; this answer is from the local library only"
        )
        return result


def academic_skills(library: FragmentLibrary | None = None) -> list[Skill]:
    """Without a ``library`` the ops are declared but answer not-available."""
    ops = LibraryOps(library) if library is not None else None
    lib_kw: dict[str, Any] = {"provider": LIBRARY}
    return [
        _acad("academic.research.topic", "Research a topic and produce findings with sources "
              "(until web research exists, answers from the local fragment library when it "
              "has something).", ResearchParams, ops.research_topic if ops else None, tier=CORE,
              tags=("research", "investigate", "study", "learn about", "papers"),
              examples=[("quick research", {"topic": "CRDTs", "depth": "quick"})]),
        _acad("academic.research.compare", "Compare approaches or technologies and their "
              "tradeoffs: a table of criteria with sources (library fragments, code "
              "locations).", CompareParams, tier=CORE,
              tags=("compare", "vs", "versus", "tradeoffs", "alternatives"),
              examples=[("compare two databases", {"options": ["SQLite", "Postgres"]})]),
        _acad("academic.research.best_practices", "Find best practices for a topic (from the "
              "fragment library: toolchains, testing, errors, security, performance).",
              ResearchParams, ops.best_practices if ops else None, tier=CORE, **lib_kw,
              tags=("best practice", "recommended", "standard", "how should"),
              examples=[("retry best practice", {"topic": "HTTP retries"})]),
        _acad("academic.library.query", "Search the fragment library of best-practice "
              "guidance: a ranked catalog of URIs, full content within a token budget, or a "
              "compact index answer.", LibraryQueryParams, ops.query if ops else None,
              tier=CORE, entry_point=True, **lib_kw,
              tags=("library", "fragments", "guidance", "catalog", "lookup", "best practice"),
              examples=[("catalog for a topic", {"query": "python flaky tests"}),
                        ("content within a budget", {"query": "sql injection", "mode": "full",
                                                     "max_tokens": 1500}),
                        ("security fragments only", {"query": "secrets",
                                                     "category": "security"})]),
        _acad("academic.library.get", "Read one library fragment by its URI "
              "(sylk://library/<category>/<id>) or id.", LibraryGetParams,
              ops.get if ops else None, tier=CORE, **lib_kw,
              tags=("library", "fragment", "read", "uri"),
              examples=[("read a fragment",
                         {"ref": "sylk://library/errors/retries-backoff"})]),
        _acad("academic.source.ingest", "Ingest a source (a markdown or text file in the "
              "workspace: notes, a spec, an RFC saved locally) into the fragment library.",
              IngestParams, tier=CONTEXTUAL,
              triggers=(r"\bingest", r"\bpaper", r"\barticle", r"\brfc\b", r"\bspec\b"),
              tags=("paper", "article", "rfc", "spec", "ingest", "add to library"),
              examples=[("ingest a saved RFC", {"path": "docs/rfc9110.md"})]),
        _acad("academic.design.proposal", "Create a design proposal document (an outline "
              "from the library and the codebase, with its sources).",
              ProposalParams, tier=CONTEXTUAL,
              triggers=(r"\bdesign\b", r"\barchitect", r"\bproposal"),
              tags=("design", "architecture", "proposal"),
              examples=[("propose a cache design", {"topic": "route cache"})]),
    ]  # fmt: skip
