"""Skills of the dynamic tool discovery protocol: discover (Librarian), recommend
(Academic) and choose (Guide, a write: it stores the user's decision for all sessions).

Agents never hardcode which linter or test runner to use: they ask
``librarian.tools.discover``, which answers from the project's files and
escalates to the Academic's defaults or to the user. Without a
:class:`ToolDiscovery` service the three ops answer not-available.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import Field

from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.format import format_discovery
from backend.knowledge.tool_discovery.models import (
    InvalidChoiceError,
    NoPreferenceStoreError,
    ToolDiscoveryError,
    ToolDiscoveryRequest,
    UnknownCategoryError,
    UnknownLanguageError,
    parse_category,
)
from backend.skills.builtin.declare import CONTEXTUAL, SPECIALISED, WRITE, Params, declare
from backend.skills.envelopes import SkillError, code_for
from backend.skills.models import Guidance, Handler, Policy, Skill, SkillContext, SkillResult

PROVIDER = "the tool discovery service (given to the engine's skills)"
T = TypeVar("T")
CATEGORY_HELP = "linter, formatter, type_checker, test_framework or lsp"


class DiscoverParams(Params):
    category: str | None = Field(default=None, description=f"{CATEGORY_HELP}; omit for all")
    path: str = Field(default=".", description="file or directory the tools are for")
    languages: list[str] = Field(default_factory=list, description="if already known")
    refresh: bool = Field(default=False, description="ignore the cache and rescan")


class RecommendParams(Params):
    language: str = Field(min_length=1, description="e.g. python, typescript, go, rust")
    category: str | None = Field(default=None, description=f"{CATEGORY_HELP}; omit for all")


class ChooseParams(Params):
    language: str = Field(min_length=1)
    category: str = Field(min_length=1, description=CATEGORY_HELP)
    tool: str = Field(min_length=1, description="one of the options offered")
    run_command: str | None = Field(
        default=None, description="only for a custom tool that is not among the options"
    )


def _skill_error(exc: ToolDiscoveryError, field: str) -> SkillError:
    """Discovery's error with the details a caller needs; the code is the error's kind's."""
    if isinstance(exc, NoPreferenceStoreError):
        return SkillError(code_for(exc), str(exc), details={"reason": "not_available"})
    details: dict[str, Any] = {"field_errors": [{"field": field, "message": exc.message}]}
    if isinstance(exc, UnknownLanguageError):
        details |= {"reason": "unknown_language", "known": exc.known}
    elif isinstance(exc, UnknownCategoryError):
        details |= {"reason": "unknown_category", "known": exc.known}
        details["field_errors"][0]["field"] = "category"
    elif isinstance(exc, InvalidChoiceError):
        details |= {"reason": "not_an_option", "options": exc.options}
        details["field_errors"][0]["field"] = "tool"
    return SkillError(code_for(exc), str(exc), details=details)


async def _typed(call: Callable[[], T], field: str) -> T:
    """Run ``call`` in a thread (it reads files, runs --version, touches SQLite)."""
    try:
        return await asyncio.to_thread(call)
    except ToolDiscoveryError as exc:
        raise _skill_error(exc, field) from None


class DiscoveryOps:
    def __init__(self, discovery: ToolDiscovery) -> None:
        self.discovery = discovery

    async def discover(self, ctx: SkillContext, p: DiscoverParams) -> SkillResult:
        def run() -> Any:
            category = parse_category(p.category) if p.category else None
            request = ToolDiscoveryRequest(
                session_id=ctx.session_id, requesting_agent=ctx.agent, tool_category=category,
                target_path=p.path, languages=p.languages,
            )  # fmt: skip
            return self.discovery.discover(
                request, ctx.workspace, refresh=p.refresh, protected=ctx.confinement.protected
            )

        response = await _typed(run, "languages")
        result = response.model_dump(mode="json")
        result["summary"] = format_discovery(response)
        guidance = []
        for decision in (d for d in response.decisions if d.requires_user):
            best = next(
                (o.tool.name for o in response.user_options
                 if o.recommended and o.tool.language == decision.language
                 and o.tool.category == decision.category), "",
            )  # fmt: skip
            guidance.append(
                Guidance(
                    op="guide.tools.choose",
                    prose=f"Ask the user to pick the {decision.language} "
                    f"{decision.category.value.replace('_', ' ')}, then store it",
                    args={
                        "language": decision.language,
                        "category": decision.category.value,
                        "tool": best,
                    },
                )
            )
        return SkillResult(result=result, guidance=guidance[:1], warnings=response.warnings)

    async def recommend(self, ctx: SkillContext, p: RecommendParams) -> dict[str, Any]:
        recs = await _typed(lambda: self.discovery.recommend(p.language, p.category), "language")
        return {"recommendations": [r.model_dump(mode="json") for r in recs]}

    async def choose(self, ctx: SkillContext, p: ChooseParams) -> dict[str, Any]:
        tool = await _typed(
            lambda: self.discovery.choose(p.language, p.category, p.tool, p.run_command),
            "language",
        )
        return {"stored": True, "tool": tool.model_dump(mode="json")}


def discovery_skills(discovery: ToolDiscovery | None) -> list[Skill]:
    ops = DiscoveryOps(discovery) if discovery is not None else None
    discover: Handler | None = ops.discover if ops else None
    recommend: Callable[..., Awaitable[Any]] | None = ops.recommend if ops else None
    choose: Callable[..., Awaitable[Any]] | None = ops.choose if ops else None
    return [
        declare(
            "librarian.tools.discover", "librarian",
            "Find which linters, formatters, type checkers, test frameworks and language "
            "servers a workspace uses, with the commands to run and install them. Escalates "
            "to recommended defaults, or to the user when the choice is open.",
            DiscoverParams, discover, provider=PROVIDER, tier=CONTEXTUAL,
            triggers=(r"\blint", r"\bformat", r"type[ -]?check", r"\bmypy\b", r"\btest "
                      r"(framework|runner)", r"\bpytest\b", r"\bjest\b", r"\bvitest\b",
                      r"\beslint\b", r"\bruff\b", r"\blanguage server", r"\blsp\b"),
            tags=("lint", "linter", "format", "formatter", "type check", "test framework",
                  "test runner", "tools", "lsp", "which tool", "run tests", "ci"),
            examples=[("how does this project lint?", {"category": "linter"}),
                      ("every tool for the web app", {"path": "web"}),
                      ("test runner for Go code", {"category": "test_framework",
                                                   "languages": ["go"]})],
            policy=Policy(
                do=["run the returned run_command; it is the project's own script when "
                    "there is one"],
                dont=["assume a tool from memory: projects differ"],
                edge_cases=["requires_user=true: ask the user, then guide.tools.choose"],
            ),
        ),
        declare(
            "academic.tools.recommend", "academic",
            "Recommend tools for a language (tier 2 of tool discovery): the usual choice per "
            "category with the reason, install and run commands, and whether the community "
            "agrees (satisfactory) or the user should choose among the options.",
            RecommendParams, recommend, provider=PROVIDER, tier=CONTEXTUAL,
            triggers=(r"(which|what|best|recommend\w*) (linter|formatter|type checker|test)",
                      r"\brecommend\w* tool"),
            tags=("recommend", "best linter", "which formatter", "tooling", "defaults"),
            examples=[("TypeScript linters", {"language": "typescript", "category": "linter"}),
                      ("everything for Rust", {"language": "rust"})],
        ),
        declare(
            "guide.tools.choose", "guide",
            "Store the user's choice of tool for a language and category; every session "
            "uses it from then on (it survives restarts).",
            ChooseParams, choose, provider=PROVIDER, kind=WRITE, tier=SPECIALISED,
            tags=("choose tool", "prefer", "use this linter", "remember choice"),
            examples=[("the user picked Biome", {"language": "typescript",
                                                 "category": "linter", "tool": "biome"}),
                      ("a custom tool", {"language": "python", "category": "linter",
                                         "tool": "wemake", "run_command": "flake8 --select=WPS"})],
            notes=("a tool outside the offered options needs run_command",),
        ),
    ]  # fmt: skip
