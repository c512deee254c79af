"""What a library query returns, and the errors a caller can provoke.

Kept apart from the library itself so the renderers and the skills can name
these types without importing the watcher machinery.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.errors import ErrorKind, SylkError
from backend.knowledge.fragments.fragment import Fragment

Mode = Literal["catalog", "full", "index"]
MODES: tuple[Mode, ...] = ("catalog", "full", "index")
DEFAULT_MAX_TOKENS = 3000
DEFAULT_MAX_RESULTS = 15


class LibraryError(SylkError):
    """A library request that cannot be answered as asked (bad mode, budget, filter)."""


class FragmentNotFoundError(LibraryError):
    """No fragment has the given id or URI."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, ref: str, suggestions: list[str]) -> None:
        hint = f"did you mean {', '.join(suggestions)}?" if suggestions else None
        super().__init__(
            f"no fragment in the library matches {ref!r}",
            help_hint=hint or "list fragments with academic.library.query in catalog mode",
        )
        self.ref = ref
        self.suggestions = suggestions


class AmbiguousFragmentError(LibraryError):
    """A bare id names fragments in more than one category."""

    error_kind = ErrorKind.INVALID

    def __init__(self, ref: str, uris: list[str]) -> None:
        super().__init__(
            f"{ref!r} names {len(uris)} fragments: {', '.join(uris)}",
            help_hint="ask for the full URI (sylk://library/<category>/<id>)",
        )
        self.ref = ref
        self.uris = uris


@dataclass(frozen=True)
class LoadWarning:
    """A file the library skipped, and why (shown to the user, never raised)."""

    path: Path
    problem: str

    def __str__(self) -> str:
        return f"skipped fragment {self.path}: {self.problem}"


class MatchInfo(BaseModel):
    """One fragment in an answer, as a model or a UI would list it."""

    model_config = ConfigDict(extra="forbid")
    uri: str
    id: str
    category: str
    title: str
    summary: str
    score: int
    tokens: int
    source: str = Field(description="'built-in' or the file the fragment came from")
    scenario: str | None = None  # index mode: the useWhen line that matched

    @classmethod
    def of(cls, frag: Fragment, score: int, scenario: str | None = None) -> MatchInfo:
        return cls(
            uri=frag.uri,
            id=frag.id,
            category=frag.category,
            title=frag.title,
            summary=frag.summary,
            score=score,
            tokens=frag.estimated_tokens,
            source="built-in" if frag.builtin else str(frag.path),
            scenario=scenario,
        )


class LibraryAnswer(BaseModel):
    """A query's answer: markdown ready to show, and the matches behind it."""

    model_config = ConfigDict(extra="forbid")
    query: str
    mode: Mode
    text: str
    matches: list[MatchInfo] = Field(default_factory=list)
    total_tokens: int = 0  # estimated tokens of ``text``
    version: int
    cached: bool = False
    fallback: bool = False  # index mode answered by full scoring (too few index hits)


class CacheStats(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hits: int
    misses: int
    entries: int
    version: int

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0
