"""The Academic's skills: what can be done (research, best practices)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from backend.skills.builtin_base import (
    CONTEXTUAL,
    CORE,
    Params,
    declare,
)
from backend.skills.models import Skill

RESEARCH = "the Academic's research pipeline (external sources, papers, web)"


class ResearchParams(Params):
    topic: str = Field(min_length=1)
    depth: Literal["quick", "standard", "deep"] = "standard"


class CompareParams(Params):
    options: list[str] = Field(min_length=2)
    criteria: list[str] = Field(default_factory=list)


class IngestParams(Params):
    url: str = Field(description="a GitHub repository, paper, article or RFC")


class ProposalParams(Params):
    topic: str
    constraints: list[str] = Field(default_factory=list)


def _acad(op: str, desc: str, params: Any, **kw: Any) -> Any:
    return declare(op, "academic", desc, params, provider=RESEARCH, **kw)


def academic_skills(library: Any | None = None) -> list[Skill]:
    """Without a ``library`` service the ops are declared but answer not-available."""
    return [
        _acad("academic.research.topic", "Research a topic and produce findings with sources.",
              ResearchParams, tier=CORE,
              tags=("research", "investigate", "study", "learn about", "papers"),
              examples=[("quick research", {"topic": "CRDTs", "depth": "quick"})]),
        _acad("academic.research.compare", "Compare approaches or technologies and their "
              "tradeoffs.", CompareParams, tier=CORE,
              tags=("compare", "vs", "versus", "tradeoffs", "alternatives"),
              examples=[("compare two databases", {"options": ["SQLite", "Postgres"]})]),
        _acad("academic.research.best_practices", "Find best practices for a topic.",
              ResearchParams, tier=CORE,
              tags=("best practice", "recommended", "standard", "how should"),
              examples=[("retry best practice", {"topic": "HTTP retries"})]),
        _acad("academic.source.ingest", "Ingest an external source (repository, paper, "
              "article, RFC) for research.", IngestParams, tier=CONTEXTUAL,
              triggers=(r"github", r"\bpaper", r"\barticle", r"\brfc\b", r"\bspec\b"),
              tags=("github", "paper", "article", "rfc", "ingest"),
              examples=[("ingest an RFC", {"url": "https://www.rfc-editor.org/rfc/rfc9110"})]),
        _acad("academic.design.proposal", "Create a design proposal document.",
              ProposalParams, tier=CONTEXTUAL,
              triggers=(r"\bdesign\b", r"\barchitect", r"\bproposal"),
              tags=("design", "architecture", "proposal"),
              examples=[("propose a cache design", {"topic": "route cache"})]),
    ]  # fmt: skip
