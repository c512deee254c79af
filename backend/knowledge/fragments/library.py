"""The Academic's fragment library: built-in fragments plus the user's folders, kept fresh.

Loading. The built-in set ships inside the package (``library/<category>/*.md``);
each extra folder is scanned recursively, a file's category defaulting to its
first sub-folder. Files the user controls may be half-written, badly typed or
symlinks pointing elsewhere: each such file is skipped with a :class:`LoadWarning`
(logged, and listed in :attr:`FragmentLibrary.warnings`), never raised. A user
fragment with the same ``category/id`` as a built-in one replaces it, so a team
can override the shipped advice.

Freshness. A watchdog observer on the extra folders only sets a *dirty* flag
from its thread; the next read rescans the folders (re-parsing only files whose
size or mtime changed) under the library's lock. A change is therefore visible
to the first query after the event arrives (milliseconds), and a query never
sees a half-applied reload. Should the observer die (its folder deleted), reads
fall back to rescanning by stat, which is cheap for a few hundred files.

Caching. Answers are cached in memory for every session that shares the
library, keyed by the normalised query, mode, budget, filters and the library
version; every reload bumps the version, so a stale answer cannot be served.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from backend.knowledge.fragments import render
from backend.knowledge.fragments.fragment import (
    URI_PREFIX,
    Fragment,
    FragmentError,
    estimate_tokens,
    read_fragment,
)
from backend.knowledge.fragments.index import FragmentIndex
from backend.knowledge.fragments.match import MIN_SCORE, normalise_query, rank, select_within_budget
from backend.knowledge.fragments.models import (
    DEFAULT_MAX_RESULTS,
    DEFAULT_MAX_TOKENS,
    MODES,
    AmbiguousFragmentError,
    CacheStats,
    FragmentNotFoundError,
    LibraryAnswer,
    LibraryError,
    LoadWarning,
    MatchInfo,
    Mode,
)
from backend.knowledge.fragments.watch import FolderWatch, fragment_files

log = logging.getLogger("sylk.knowledge.library")

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
MAX_FILE_BYTES = 256 * 1024
INDEX_LIMIT = 5
# (mtime_ns, size) -> the parse result, so a rescan re-reads only changed files.
_Parsed = tuple[tuple[int, int], Fragment | FragmentError]
# Told the fragments after every reload, on the reloading thread and under the library's
# lock (so it sees exactly that reload): it must be quick and must not block.
ReloadListener = Callable[[list[Fragment]], None]


class FragmentLibrary:
    """Fragments from the built-in set and ``extra_paths``, queried in three modes."""

    def __init__(
        self,
        extra_paths: Sequence[Path] = (),
        *,
        include_builtin: bool = True,
        builtin_dir: Path = BUILTIN_DIR,
        watch: bool = True,
        cache_size: int = 256,
    ) -> None:
        self.extra_paths = [Path(p).expanduser() for p in extra_paths]
        self._builtin_dir = builtin_dir if include_builtin else None
        self._lock = threading.RLock()
        self._dirty = threading.Event()
        self._parsed: dict[Path, _Parsed] = {}
        self._fragments: dict[str, Fragment] = {}
        self._index = FragmentIndex(())
        self._warnings: list[LoadWarning] = []
        self._cache: OrderedDict[tuple[Any, ...], LibraryAnswer] = OrderedDict()
        self._cache_size = cache_size
        self._hits = 0
        self._misses = 0
        self.version = 0
        self._watcher: FolderWatch | None = None
        self._watch = watch
        self._listeners: list[ReloadListener] = []
        self.reload()
        if watch:
            self._watcher = FolderWatch(self.extra_paths, self._dirty.set)

    # -- loading ----------------------------------------------------------------

    def reload(self) -> None:
        """Rescan every folder now (the watcher makes this unnecessary in normal use)."""
        with self._lock:
            self._dirty.clear()  # before scanning: a change during the scan marks it again
            seen: set[Path] = set()
            warnings: list[LoadWarning] = []
            found: dict[str, Fragment] = {}
            roots: list[tuple[Path, bool]] = []
            if self._builtin_dir is not None:
                roots.append((self._builtin_dir, True))
            roots.extend((p, False) for p in self.extra_paths)
            for root, builtin in roots:
                self._load_root(root, builtin, found, warnings, seen)
            self._parsed = {p: v for p, v in self._parsed.items() if p in seen}
            self._fragments = found
            self._index = FragmentIndex(found.values())
            self._warnings = warnings
            self.version += 1
            self._cache.clear()
            if self._listeners:
                current = sorted(found.values(), key=lambda f: f.uri)
                for listener in list(self._listeners):
                    listener(current)

    def subscribe(self, listener: ReloadListener) -> Callable[[], None]:
        """Call ``listener`` after every reload; returns a function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _load_root(
        self,
        root: Path,
        builtin: bool,
        found: dict[str, Fragment],
        warnings: list[LoadWarning],
        seen: set[Path],
    ) -> None:
        if not root.is_dir():
            warnings.append(LoadWarning(root, "the library folder does not exist"))
            return
        real_root = root.resolve()
        from_this_root: dict[str, Path] = {}
        for path in fragment_files(real_root):
            rel = path.relative_to(real_root)
            result = self._parse(path, real_root, rel, builtin)
            seen.add(path)
            if isinstance(result, FragmentError):
                warnings.append(LoadWarning(path, result.problem))
                continue
            if result.key in from_this_root:
                warnings.append(LoadWarning(path, f"duplicate of {from_this_root[result.key]}"))
                continue
            from_this_root[result.key] = path
            if result.key in found:
                log.info("library: %s overrides %s", path, found[result.key].path)
            found[result.key] = result

    def _parse(self, path: Path, root: Path, rel: Path, builtin: bool) -> Fragment | FragmentError:
        try:
            st = path.stat()
            real = path.resolve()
        except OSError as exc:
            return FragmentError(path, f"cannot be read: {exc.strerror or exc}")
        stamp = (st.st_mtime_ns, st.st_size)
        known = self._parsed.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        result: Fragment | FragmentError
        if not real.is_relative_to(root):
            result = FragmentError(path, f"is a link to {real}, outside the library folder")
        elif st.st_size > MAX_FILE_BYTES:
            result = FragmentError(path, f"is {st.st_size} bytes; fragments stay under 256 KiB")
        else:
            category = rel.parts[0] if len(rel.parts) > 1 else "general"
            try:
                result = read_fragment(path, default_category=category.lower(), builtin=builtin)
            except FragmentError as exc:
                result = exc
        if isinstance(result, FragmentError):
            log.warning("skipped fragment %s: %s", path, result.problem)
        self._parsed[path] = (stamp, result)
        return result

    # -- watching ---------------------------------------------------------------

    @property
    def watching(self) -> bool:
        return self._watcher is not None and self._watcher.alive

    def _fresh(self) -> None:
        """Apply pending changes before a read (a rescan by stat if the watcher is gone)."""
        if self._dirty.is_set():
            self.reload()
        elif self._watch and self.extra_paths and not self.watching:
            self._reload_if_changed()

    def _reload_if_changed(self) -> None:
        with self._lock:
            before = {p: v[0] for p, v in self._parsed.items()}
            now: dict[Path, tuple[int, int]] = {}
            for root in self.extra_paths:
                if root.is_dir():
                    for path in fragment_files(root.resolve()):
                        try:
                            st = path.stat()
                        except OSError:
                            continue
                        now[path] = (st.st_mtime_ns, st.st_size)
            ours = {p: s for p, s in before.items() if self._builtin_dir is None
                    or not p.is_relative_to(self._builtin_dir)}  # fmt: skip
            if any(now.get(p) != s for p, s in ours.items()) or set(now) - set(ours):
                self.reload()

    def close(self) -> None:
        """Stop watching (reads then fall back to rescanning by stat)."""
        if self._watcher is not None:
            self._watcher.stop()

    def __enter__(self) -> FragmentLibrary:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- reading ----------------------------------------------------------------

    @property
    def warnings(self) -> list[LoadWarning]:
        with self._lock:
            self._fresh()
            return list(self._warnings)

    def fragments(self) -> list[Fragment]:
        with self._lock:
            self._fresh()
            return sorted(self._fragments.values(), key=lambda f: f.uri)

    def categories(self) -> list[str]:
        return sorted({f.category for f in self.fragments()})

    def get(self, ref: str) -> Fragment:
        """A fragment by URI (``sylk://library/<category>/<id>``), ``category/id`` or bare id."""
        key = ref.strip()
        if key.startswith("sylk://") and not key.startswith(URI_PREFIX):
            raise LibraryError(f"{ref!r} is not a library URI", help_hint=f"use {URI_PREFIX}...")
        key = key.removeprefix(URI_PREFIX).strip("/").lower()
        with self._lock:
            self._fresh()
            if key in self._fragments:
                return self._fragments[key]
            named = [f for f in self._fragments.values() if f.id == key]
            if len(named) == 1:
                return named[0]
            if named:
                raise AmbiguousFragmentError(ref, sorted(f.uri for f in named))
            names = [*self._fragments, *(f.id for f in self._fragments.values())]
            close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
            raise FragmentNotFoundError(ref, [self._uri_of(c) for c in close])

    def _uri_of(self, name: str) -> str:
        frag = self._fragments.get(name) or next(
            f for f in self._fragments.values() if f.id == name
        )
        return frag.uri

    def cache_stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                hits=self._hits, misses=self._misses, entries=len(self._cache), version=self.version
            )

    def query(
        self,
        query: str,
        *,
        mode: Mode = "catalog",
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_results: int = DEFAULT_MAX_RESULTS,
        tags: Sequence[str] = (),
        category: str | None = None,
        min_score: int = MIN_SCORE,
    ) -> LibraryAnswer:
        """Match ``query`` against the library; see the module docstring for the modes."""
        if mode not in MODES:
            raise LibraryError(f"unknown mode {mode!r}", help_hint=f"use one of {', '.join(MODES)}")
        if max_tokens < 1 or max_results < 1:
            raise LibraryError("max_tokens and max_results must be at least 1")
        category = category.strip().lower() if category else None
        wanted_tags = tuple(sorted({t.strip().lower() for t in tags if t.strip()}))
        if not query.strip() and not category and not wanted_tags:
            raise LibraryError("give a query, tags or a category to search the library")
        with self._lock:
            self._fresh()
            if category and category not in {f.category for f in self._fragments.values()}:
                known = sorted({f.category for f in self._fragments.values()})
                raise LibraryError(
                    f"the library has no category {category!r}",
                    help_hint=f"categories: {', '.join(known)}",
                )
            key = (normalise_query(query), mode, max_tokens, max_results, category, wanted_tags,
                   min_score, self.version)  # fmt: skip
            cached = self._cache.get(key)
            if cached is not None:
                self._hits += 1
                self._cache.move_to_end(key)
                return cached.model_copy(update={"cached": True})
            self._misses += 1
            answer = self._answer(
                query,
                mode,
                max_tokens=max_tokens,
                max_results=max_results,
                category=category,
                tags=wanted_tags,
                min_score=min_score,
            )
            self._cache[key] = answer
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
            return answer

    def _answer(
        self,
        query: str,
        mode: Mode,
        *,
        max_tokens: int,
        max_results: int,
        category: str | None,
        tags: tuple[str, ...],
        min_score: int,
    ) -> LibraryAnswer:
        text = query.strip()
        if mode == "index" and text:
            hits = self._index.lookup(
                text, category=category, required_tags=tags, limit=min(max_results, INDEX_LIMIT)
            )
            if hits:
                out = render.render_index(text, hits)
                matches = [MatchInfo.of(h.fragment, h.score, h.scenario) for h in hits]
                return self._made(text, mode, out, matches)
        scored = rank(
            self._fragments.values(), text, category=category, required_tags=tags,
            min_score=min_score,
        )  # fmt: skip
        if mode == "full":
            chosen = select_within_budget(scored, max_tokens)
            out = render.render_full(text, chosen, max_tokens)
        elif mode == "index":
            chosen = scored[: min(max_results, INDEX_LIMIT)]
            out = render.render_index_fallback(text, chosen)
        else:
            chosen = scored[:max_results]
            out = render.render_catalog(text, chosen)
        matches = [MatchInfo.of(s.fragment, s.score) for s in chosen]
        return self._made(text, mode, out, matches, fallback=mode == "index")

    def _made(
        self, query: str, mode: Mode, text: str, matches: list[MatchInfo], fallback: bool = False
    ) -> LibraryAnswer:
        return LibraryAnswer(
            query=query,
            mode=mode,
            text=text,
            matches=matches,
            total_tokens=estimate_tokens(text),
            version=self.version,
            fallback=fallback,
        )
