"""Dynamic tool discovery: which linters, formatters, type checkers, test frameworks
and language servers to use for a path in a workspace, decided in three tiers.

Tier 1 (Librarian) reads what the project configures. Where it finds a config
file the answer is settled. Where evidence is weaker (a dependency, a script)
or missing, tier 2 (Academic) weighs in: medium evidence is kept (it is what
the project uses), nothing at all falls back to a remembered user choice, then
to the language default. Where the default is genuinely contested, tier 3
asks the user: the response carries ``requires_user`` and ``user_options``,
and :meth:`ToolDiscovery.choose` stores the answer as a global preference so
every later session (and every restart) gets it without asking.

Tier 1 scans are cached per (workspace, category, directory, languages). Each
call recomputes a cheap fingerprint (stat of every file the scan could read,
and of the scanned directories themselves) and rescans when it differs;
:meth:`invalidate` lets a file watcher drop entries eagerly. Preferences are
read fresh on every call, so a choice made in one session shows in all.

An ``.editorconfig`` between the target and the root is reported with the
formatter decisions (it configures editors, and formatters that read it such
as Prettier, whose detection it then settles); it never adds a tool.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from backend.knowledge.tool_discovery.defaults import (
    LANGUAGE_DEFAULTS,
    language_defaults,
    normalise_language,
)
from backend.knowledge.tool_discovery.editorconfig import (
    EDITORCONFIG,
    EditorConfig,
    apply_editorconfig,
    editorconfig,
)
from backend.knowledge.tool_discovery.files import (
    BIN_DIRS,
    EXTENSIONS,
    ROOT_EXTRAS,
    ConfinedReader,
    fingerprint,
    is_candidate,
    join,
    scan_dirs,
)
from backend.knowledge.tool_discovery.format import editorconfig_note, medium_note
from backend.knowledge.tool_discovery.models import (
    ConfidenceLevel,
    DiscoveredTool,
    LanguageDecision,
    NoPreferenceStoreError,
    Recommendation,
    ToolCategory,
    ToolDiscoveryRequest,
    ToolDiscoveryResponse,
    ToolOption,
    parse_category,
)
from backend.knowledge.tool_discovery.probe import VersionProbe
from backend.knowledge.tool_discovery.scan import ScanResult, scan
from backend.knowledge.tool_discovery.tiers import (
    PREFERENCE_PREFIX,
    preference_key,
    preference_tool,
    preference_value,
    recommend,
)
from backend.workspace.files import Workspace

HIGH, MEDIUM, LOW = ConfidenceLevel.HIGH, ConfidenceLevel.MEDIUM, ConfidenceLevel.LOW
CacheKey = tuple[str, str, str, tuple[str, ...]]


class PreferenceStore(Protocol):
    """The part of the archive discovery needs (global preferences)."""

    def set_preference(self, key: str, value: Any) -> None: ...
    def preferences(self, prefix: str = "") -> dict[str, Any]: ...


@dataclass(frozen=True)
class DiscoveryStats:
    hits: int
    misses: int
    invalidations: int
    entries: int
    version_runs: int


@dataclass
class _Entry:
    stamp: tuple[object, ...]
    result: ScanResult
    editorconfig: EditorConfig | None = None


class ToolDiscovery:
    """The three-tier protocol over any number of workspaces (thread-safe)."""

    def __init__(
        self,
        archive: PreferenceStore | None = None,
        *,
        path_env: str | None = None,
        version_timeout_s: float = 5.0,
        probe_versions: bool = True,
        max_entries: int = 256,
    ) -> None:
        self.archive = archive
        self.path_env = path_env  # None: the process's PATH
        self.probe = VersionProbe(version_timeout_s) if probe_versions else None
        self.max_entries = max_entries
        self._cache: OrderedDict[CacheKey, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = self._invalidations = 0

    # -- tier 1 + escalation ---------------------------------------------------------
    def discover(
        self, request: ToolDiscoveryRequest, workspace: Path, *, refresh: bool = False,
        protected: Iterable[Path] = (),
    ) -> ToolDiscoveryResponse:  # fmt: skip
        """Reads through the confined workspace (never ``protected``, Sylk's own paths);
        runs no file of the workspace (see :mod:`.installed`)."""
        with Workspace(workspace, protected=protected) as ws:
            return self._discover(request, ws, refresh)

    def _discover(
        self, request: ToolDiscoveryRequest, ws: Workspace, refresh: bool
    ) -> ToolDiscoveryResponse:
        languages = sorted({self._language(lang) for lang in request.languages})
        dirs = scan_dirs(ws, request.target_path)  # refuses targets outside the workspace
        category = request.tool_category
        key: CacheKey = (str(ws.root), category.value if category else "*", dirs[-1],
                         tuple(languages))  # fmt: skip
        stamp = fingerprint(ws, dirs)
        with self._lock:
            entry = self._cache.get(key)
            if entry is not None and (refresh or entry.stamp != stamp):
                del self._cache[key]
                self._invalidations += 1
                entry = None
            if entry is not None:
                self._hits += 1
                self._cache.move_to_end(key)
            else:
                self._misses += 1
        cached = entry is not None
        if entry is None:
            reader = ConfinedReader(ws)
            result = scan(
                reader,
                dirs,
                languages,
                category=category,
                probe=self.probe,
                path_env=self.path_env,
                target=request.target_path,
            )
            found = None
            if category in (None, ToolCategory.FORMATTER):
                found = editorconfig(reader, dirs)
            if found is not None:
                result.tools = apply_editorconfig(result.tools, found)
                result.tools.sort(key=lambda t: (t.category.value, -t.confidence.rank, t.name))
            entry = _Entry(stamp, result, found)
            with self._lock:
                self._cache[key] = entry
                while len(self._cache) > self.max_entries:
                    self._cache.popitem(last=False)
        response = self._resolve(entry.result, category, entry.editorconfig)
        response.cached = cached
        response.target_path = dirs[-1] or "."
        return response

    async def adiscover(
        self, request: ToolDiscoveryRequest, workspace: Path, *, refresh: bool = False,
        protected: Iterable[Path] = (),
    ) -> ToolDiscoveryResponse:  # fmt: skip
        return await asyncio.to_thread(self.discover, request, workspace, refresh=refresh,
                                       protected=protected)  # fmt: skip

    def _resolve(
        self,
        result: ScanResult,
        category: ToolCategory | None,
        found: EditorConfig | None = None,
    ) -> ToolDiscoveryResponse:
        categories = [category] if category else list(ToolCategory)
        prefs = self.archive.preferences(PREFERENCE_PREFIX) if self.archive else {}
        response = ToolDiscoveryResponse(
            tier=1, confidence=LOW, languages=list(result.languages), category=category,
            warnings=list(result.warnings),
        )  # fmt: skip
        pairs = [(lang, cat) for lang in result.languages for cat in categories]
        # Tools found for a language the project does not mainly speak (prettier in a
        # Python repo's pre-commit) are reported for the categories they were found in.
        pairs += sorted({(t.language, t.category) for t in result.tools} - set(pairs))
        for language, cat in pairs:
            tools = [t for t in result.tools if t.language == language and t.category == cat]
            self._decide(response, language, cat, tools, prefs)
        if found is not None:
            for decision in response.decisions:
                if decision.category is ToolCategory.FORMATTER:
                    decision.note = f"{decision.note}; {editorconfig_note(found)}"
        if response.decisions:
            response.tier = max(d.tier for d in response.decisions)
            response.confidence = min((d.confidence for d in response.decisions),
                                      key=lambda c: c.rank)  # fmt: skip
        else:
            response.warnings.append("no language detected: nothing to recommend")
        response.requires_user = bool(response.user_options)
        return response

    def _decide(
        self,
        response: ToolDiscoveryResponse,
        language: str,
        category: ToolCategory,
        found: list[DiscoveredTool],
        prefs: dict[str, Any],
    ) -> None:
        decide = response.decisions.append
        best = max((t.confidence for t in found), key=lambda c: c.rank, default=None)
        if best is HIGH:
            response.tools.extend(found)
            decide(
                LanguageDecision(
                    language=language,
                    category=category,
                    tier=1,
                    confidence=HIGH,
                    note="configured in the project",
                )
            )
            return
        if best is MEDIUM:
            response.tools.extend(found)
            decide(
                LanguageDecision(
                    language=language,
                    category=category,
                    tier=2,
                    confidence=MEDIUM,
                    note=medium_note(language, category, found),
                )
            )
            return
        chosen = preference_tool(
            prefs.get(preference_key(language, category)), language, category, self.path_env
        )
        if chosen is not None:
            response.tools.append(chosen)
            decide(
                LanguageDecision(
                    language=language,
                    category=category,
                    tier=3,
                    confidence=HIGH,
                    note="your stored choice",
                )
            )
            return
        if language not in _known():
            decide(
                LanguageDecision(
                    language=language,
                    category=category,
                    tier=2,
                    confidence=LOW,
                    note=f"no defaults known for {language}",
                )
            )
            return
        rec = recommend(language, category, self.path_env)
        if rec.tool is not None and rec.satisfactory:
            response.tools.append(rec.tool)
        elif rec.tool is not None:
            response.user_options.extend(rec.options)
        decide(
            LanguageDecision(
                language=language,
                category=category,
                tier=3 if not rec.satisfactory else 2,
                confidence=LOW,
                requires_user=not rec.satisfactory,
                note=rec.note or "the language's recommended default",
            )
        )

    # -- tier 2 / tier 3 ---------------------------------------------------------------
    def recommend(
        self, language: str, category: ToolCategory | str | None = None
    ) -> list[Recommendation]:
        """The Academic's recommendations for ``language`` (one category or all)."""
        lang = self._language(language)
        cats = [parse_category(category)] if category else list(ToolCategory)
        return [recommend(lang, cat, self.path_env) for cat in cats]

    def options(self, language: str, category: ToolCategory | str) -> list[ToolOption]:
        lang = self._language(language)
        return recommend(lang, parse_category(category), self.path_env).options

    def choose(
        self,
        language: str,
        category: ToolCategory | str,
        tool: str,
        run_command: str | None = None,
    ) -> DiscoveredTool:
        """Store the user's choice for (language, category) as a global preference."""
        lang = self._language(language)
        cat = parse_category(category)
        value = preference_value(lang, cat, tool, run_command)  # raises for a non-option
        if self.archive is None:
            raise NoPreferenceStoreError()
        self.archive.set_preference(preference_key(lang, cat), value)
        chosen = preference_tool(value, lang, cat, self.path_env)
        assert chosen is not None  # value always has a tool and a run command
        return chosen

    async def achoose(
        self, language: str, category: ToolCategory | str, tool: str, run_command: str | None = None
    ) -> DiscoveredTool:
        return await asyncio.to_thread(self.choose, language, category, tool, run_command)

    @staticmethod
    def _language(language: str) -> str:
        lang = normalise_language(language)
        language_defaults(lang)  # raises UnknownLanguageError
        return lang

    # -- cache -------------------------------------------------------------------------
    def invalidate(self, paths: Iterable[str], workspace: Path | None = None) -> int:
        """Drop every cached scan that ``paths`` (absolute, or relative to ``workspace``)
        could change; returns how many were dropped."""
        root = str(workspace.resolve()) if workspace is not None else None
        raw = list(paths)
        dropped = 0
        with self._lock:
            for key, entry in list(self._cache.items()):
                if root is not None and key[0] != root and not any(os.path.isabs(p) for p in raw):
                    continue
                rels = [r for r in (_relative(p, key[0]) for p in raw) if r is not None]
                if any(_affects(rel, entry.result) for rel in rels):
                    del self._cache[key]
                    dropped += 1
            self._invalidations += dropped
        return dropped

    def clear(self) -> None:
        with self._lock:
            self._invalidations += len(self._cache)
            self._cache.clear()

    def stats(self) -> DiscoveryStats:
        with self._lock:
            runs = self.probe.runs if self.probe else 0
            return DiscoveryStats(
                self._hits, self._misses, self._invalidations, len(self._cache), runs
            )


def _known() -> set[str]:
    return set(LANGUAGE_DEFAULTS)


def _relative(path: str, root: str) -> str | None:
    if not os.path.isabs(path):
        return path.replace(os.sep, "/").removeprefix("./")
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def _affects(rel: str, result: ScanResult) -> bool:
    parent, _, name = rel.rpartition("/")
    if rel in result.read or (
        parent in result.dirs and (is_candidate(name) or name == EDITORCONFIG)
    ):
        return True
    if rel in ROOT_EXTRAS or rel.startswith(".github/workflows/"):
        return True
    if any(rel.startswith(join(d, b) + "/") for d in result.dirs for b in BIN_DIRS):
        return True
    return result.language_source == "census" and os.path.splitext(name)[1] in EXTENSIONS
