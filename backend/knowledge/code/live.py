"""The Librarian's live knowledge of one workspace: index, watcher and cache together.

:class:`CodeKnowledge` builds the :class:`~backend.knowledge.code.index.CodeIndex`
in the background (publishing progress), keeps it current from the
:class:`~backend.knowledge.watch.watcher.FileWatcher`'s change batches, and drops
exactly the :class:`~backend.knowledge.code.intent_cache.IntentCache` entries a batch
makes stale, in the same step as the index update, so a query never sees a new
index with an old cached answer. Queries work while the first build runs; their
answers are not cached until it finishes.

A query reads the index in a worker thread while a change batch may be applied
on the loop; an answer computed from the index before the batch must not be
cached after the batch's invalidation has run. A generation counter moves when
an update starts and again once its invalidation is done (or a rebuild has
finished); a query notes it before computing and caches its answer only if it
has not moved since.

The Librarian model's answers (:class:`ModelAnswer`) live in the same cache,
under the key the index's answer to the same question uses, and carry that
evidence: a question answered from the index reuses it, and the model's answer
depends on everything the evidence depends on and on what its turn read.

Builds and batch updates take a background worker through ``gate`` (the engine's pool);
a build someone awaits (``wait_ready``) goes on without one: the waiting request holds
the worker it might need, so the build takes its priority rather than queue behind it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from backend.knowledge.code.changes import apply_batch
from backend.knowledge.code.evidence import (
    Evidence,
    Lookup,
    ModelAnswer,
    as_cached,
    evidence_of,
    is_model_answer,
    lookup_for,
)
from backend.knowledge.code.evidence_queries import (
    explain_evidence,
    general_evidence,
    locate_evidence,
    pattern_evidence,
)
from backend.knowledge.code.index import CodeIndex
from backend.knowledge.code.intent_cache import Change, Intent, IntentCache
from backend.knowledge.watch.watcher import ChangeBatch, FileWatcher, FileWatcherError

log = logging.getLogger("sylk.knowledge.code")

Phase = Literal["building", "ready", "updated", "rebuilding", "failed"]
# GENERAL questions reuse an answer whose key words overlap this much (Jaccard).
GENERAL_SIMILARITY = 0.6


@dataclass(frozen=True)
class IndexStatus:
    """Progress of a workspace's index, as the UI shows it."""

    workspace: str
    phase: Phase
    done: int = 0
    total: int = 0
    changed: int = 0
    seconds: float = 0.0
    error: str | None = None


StatusSink = Callable[[IndexStatus], None]
# Others who derive things from the workspace's files (tool discovery) hear of each batch.
ChangeSink = Callable[[Path, ChangeBatch], None]
# Waits for a background worker (or until the event is set: then for none) and returns
# how to give it back.
IndexGate = Callable[[asyncio.Event], Awaitable[Callable[[], None]]]


def _no_worker() -> None:  # what a build or batch run without a worker gives back
    return None


def index_path_for(data_dir: Path, root: Path) -> Path:
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return data_dir / "index" / f"{root.resolve().name or 'root'}-{digest}.db"


class CodeKnowledge:
    def __init__(
        self,
        root: Path,
        index_path: Path,
        *,
        on_status: StatusSink | None = None,
        watch: bool = True,
        debounce_s: float = 0.1,
        cache: IntentCache | None = None,
        on_changes: ChangeSink | None = None,
        protected: Iterable[Path] = (),
        gate: IndexGate | None = None,
    ) -> None:
        self.root = root.resolve()
        self._gate = gate
        self._awaited = asyncio.Event()  # a request waits for the build: it needs no worker
        self._on_changes = on_changes
        self.index = CodeIndex(self.root, index_path, protected=protected)  # Sylk's own data
        self.cache = cache if cache is not None else IntentCache()  # an empty one is falsy
        self._on_status = on_status
        self._watch = watch
        self._debounce_s = debounce_s
        self.watcher: FileWatcher | None = None
        self._build_task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._apply_lock = asyncio.Lock()
        self.status = IndexStatus(str(self.root), "building")
        self.batches_applied = 0
        self._generation = 0

    # -- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Watch first (so no edit falls between scan and watch), then build in the background."""
        if self._build_task is not None:
            return
        if self._watch:
            self.watcher = FileWatcher(
                self.root,
                on_changes=self.apply_changes,
                debounce_s=self._debounce_s,
                policy=self.index.policy,  # one ignore policy: what is not indexed is not news
            )
            try:
                await self.watcher.start()
            except FileWatcherError as exc:
                log.warning("%s; the index will not follow edits", exc)
                self.watcher = None
        self._build_task = asyncio.create_task(self._build("building"), name="sylk-index-build")

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    @property
    def generation(self) -> int:
        """Moves whenever the index may have changed: note it before computing an answer,
        and cache the answer only if it has not moved (see :meth:`store_answer`)."""
        return self._generation

    @property
    def applying(self) -> bool:
        """Is a change batch being applied (index updated, then its cache entries dropped)?"""
        return self._apply_lock.locked()

    async def wait_ready(self) -> None:
        """Until the first build (or a rebuild after a bulk change) has finished; the build
        stops waiting for a worker, if it does."""
        if not self._ready.is_set():
            self._awaited.set()
        await self._ready.wait()

    async def aclose(self) -> None:
        if self.watcher is not None:
            await self.watcher.aclose()
        if self._build_task is not None and not self._build_task.done():
            self._build_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._build_task
        await asyncio.to_thread(self.index.close)

    def _publish(self, status: IndexStatus) -> None:
        self.status = status
        if self._on_status is not None:
            try:
                self._on_status(status)
            except Exception:  # a broken listener must not stop indexing
                log.exception("index status listener failed")

    async def _build(self, phase: Phase) -> None:
        loop = asyncio.get_running_loop()
        started = time.perf_counter()

        def progress(done: int, total: int) -> None:
            status = IndexStatus(str(self.root), phase, done, total)
            loop.call_soon_threadsafe(self._publish, status)

        self._publish(IndexStatus(str(self.root), phase))
        release = await self._worker()
        try:
            stats = await asyncio.to_thread(self.index.build, progress)
        except Exception as exc:
            log.exception("indexing %s failed", self.root)
            self._publish(IndexStatus(str(self.root), "failed", error=str(exc)))
            return
        finally:
            release()
            self._awaited.clear()
        self.cache.clear()  # nothing cached while building, but a rebuild starts afresh
        self._generation += 1  # a query that read the old tree must not cache its answer
        self._ready.set()
        seconds = time.perf_counter() - started
        self._publish(
            IndexStatus(str(self.root), "ready", stats.files, stats.files, stats.indexed, seconds)
        )

    # -- keeping current ---------------------------------------------------------------

    async def apply_changes(self, batch: ChangeBatch) -> None:
        """Update the index and drop the stale cache entries for one change batch."""
        if self._on_changes is not None:
            try:
                self._on_changes(self.root, batch)
            except Exception:
                log.exception("file change listener failed")
        async with self._apply_lock:
            self._generation += 1  # answers computed from here on may predate the change
            if batch.bulk:
                self.cache.clear()
                self._ready.clear()  # answers stay uncached until the rebuild is done
                if self._build_task is not None and not self._build_task.done():
                    await self._build_task
                self._build_task = asyncio.create_task(
                    self._build("rebuilding"), name="sylk-index-rebuild"
                )
                self.batches_applied += 1
                return
            release = await self._worker()
            try:
                change = await asyncio.to_thread(self._update, batch)
            finally:
                release()
            self.cache.apply(change)
            self._generation += 1  # read while the update ran: maybe the old index
            self.batches_applied += 1
        self._publish(IndexStatus(str(self.root), "updated", changed=len(batch)))

    async def _worker(self) -> Callable[[], None]:
        """A background worker from the gate, or none once a request awaits the build."""
        if self._gate is None or self._awaited.is_set():
            return _no_worker
        return await self._gate(self._awaited)

    def _update(self, batch: ChangeBatch) -> Change:
        return apply_batch(self.index, batch)

    # -- queries ------------------------------------------------------------------------

    def _cacheable(self) -> bool:
        return self.ready

    def _store(self, lookup: Lookup, evidence: Evidence, generation: int) -> None:
        """Cache ``evidence`` unless the index may have changed since it was computed
        (puts and batch application both run on the loop, so the check is exact)."""
        if self._cacheable() and generation == self._generation:
            # Without a definition a LOCATE answer is a text search for the name's words.
            located = lookup.intent is Intent.LOCATE and bool(evidence.definitions)
            self.cache.put(
                lookup.intent,
                lookup.key,
                evidence,
                files=evidence.files,
                names=lookup.names,
                terms=() if located else lookup.terms,
                empty=not (evidence.definitions or evidence.snippets),
            )

    async def locate(self, entity: str, text: str = "") -> Evidence:
        """Definitions of ``entity`` (``session_manager`` finds ``SessionManager``)."""
        lookup = lookup_for(Intent.LOCATE, entity)
        found = self.cache.get(lookup.intent, lookup.key) if self._cacheable() else None
        cached = evidence_of(found)
        if cached is not None:
            return as_cached(cached)
        generation = self._generation
        evidence = await asyncio.to_thread(self._locate, entity, text)
        self._store(lookup, evidence, generation)
        return evidence

    def _locate(self, entity: str, text: str = "") -> Evidence:
        return locate_evidence(self.index, entity, text, lambda: self.ready)

    async def explain(self, subject: str) -> Evidence:
        """The subject's definitions with their source, and where else it appears."""
        return await self._cached(lookup_for(Intent.EXPLAIN, subject), self._explain)

    def _explain(self, subject: str) -> Evidence:
        return explain_evidence(self.index, subject, lambda: self.ready)

    async def patterns(self, concept: str) -> Evidence:
        """Ranked places in the code that show how ``concept`` is done."""
        return await self._cached(lookup_for(Intent.PATTERN, concept), self._patterns)

    def _patterns(self, concept: str) -> Evidence:
        return pattern_evidence(self.index, concept, lambda: self.ready)

    async def general(self, query: str) -> Evidence:
        """Full-text matches for a free-form question."""
        return await self._cached(lookup_for(Intent.GENERAL, query, query), self._general)

    def _general(self, query: str) -> Evidence:
        return general_evidence(self.index, query, lambda: self.ready)

    async def _cached(self, lookup: Lookup, compute: Callable[[str], Evidence]) -> Evidence:
        cached = None
        if self._cacheable():
            found = (
                self.cache.get_similar(lookup.intent, lookup.key, GENERAL_SIMILARITY)
                if lookup.intent is Intent.GENERAL
                else self.cache.get(lookup.intent, lookup.key)
            )
            cached = evidence_of(found)
        if cached is not None:
            return as_cached(cached)
        generation = self._generation
        evidence = await asyncio.to_thread(compute, lookup.subject)
        self._store(lookup, evidence, generation)
        return evidence

    # -- the model's answers -------------------------------------------------------

    async def fresh_evidence(self, lookup: Lookup) -> Evidence:
        """The index's evidence for ``lookup``, computed now without the cache (what a
        model answer about the same subject depends on, besides what its turn read)."""
        computes: dict[Intent, Callable[[str], Evidence]] = {
            Intent.LOCATE: self._locate,
            Intent.EXPLAIN: self._explain,
            Intent.PATTERN: self._patterns,
            Intent.GENERAL: self._general,
        }
        return await asyncio.to_thread(computes[lookup.intent], lookup.subject)

    def cached_answer(
        self, lookup: Lookup, *, similarity: float = 1.0, count: bool = True
    ) -> ModelAnswer | None:
        """A cached model answer for ``lookup`` (GENERAL: for a key at least ``similarity``
        alike); index evidence under the key is not one."""
        if not self._cacheable():
            return None
        accept = is_model_answer
        found = (
            self.cache.get_similar(
                lookup.intent, lookup.key, similarity, accept=accept, count=count
            )
            if lookup.intent is Intent.GENERAL
            else self.cache.get(lookup.intent, lookup.key, accept=accept, count=count)
        )
        return found if isinstance(found, ModelAnswer) else None

    def store_answer(
        self,
        lookup: Lookup,
        answer: ModelAnswer,
        generation: int,
        *,
        files: Iterable[str],
        names: Iterable[str] = (),
        terms: Iterable[str] = (),
        listed: Iterable[str] = (),
        everywhere: bool = False,
    ) -> bool:
        """Cache a model ``answer`` computed from the workspace as it was at ``generation``;
        False (nothing cached) if a change batch has begun since, or the index is not
        built. It depends on the evidence's files, ``files`` the turn read, entity
        ``names`` and search ``terms`` it looked up, directories it ``listed``, and with
        ``everywhere`` (it surveyed whole directories) on any file at all."""
        if not self._cacheable() or generation != self._generation:
            return False
        every = set(files) | answer.evidence.files
        self.cache.put(
            lookup.intent,
            lookup.key,
            answer,
            files=every,
            names={*lookup.names, *names},
            terms={*lookup.terms, *terms},
            listed=listed,
            # Drawn on no file, or on all of them: any change may be one that matters.
            empty=everywhere or not every,
        )
        return True
