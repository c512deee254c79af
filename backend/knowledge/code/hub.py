"""One :class:`CodeKnowledge` per workspace, started on first use and shared by sessions.

The codebase is session-independent (the seed's Librarian): two sessions in the
same workspace share one index, one watcher and one cache.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the index and its scanners load with the first workspace's knowledge
    from backend.knowledge.code.live import ChangeSink, CodeKnowledge, IndexGate, StatusSink


class CodeKnowledgeHub:
    def __init__(
        self,
        data_dir: Path,
        *,
        on_status: StatusSink | None = None,
        on_changes: ChangeSink | None = None,
        watch: bool = True,
    ) -> None:
        self._data_dir = data_dir
        self._on_status = on_status
        self._on_changes = on_changes
        self._watch = watch
        self._known: dict[Path, CodeKnowledge] = {}
        self._lock = asyncio.Lock()
        self._closed = False
        self.gate: IndexGate | None = None  # builds' background workers (set by the engine)

    async def get(self, workspace: Path) -> CodeKnowledge:
        """The workspace's knowledge, started (index building in the background) if new."""
        root = await asyncio.to_thread(Path.resolve, workspace)
        async with self._lock:
            if self._closed:
                raise RuntimeError("the code knowledge hub is closed")
            found = self._known.get(root)
            if found is None:
                from backend.knowledge.code.live import CodeKnowledge, index_path_for

                found = CodeKnowledge(
                    root,
                    index_path_for(self._data_dir, root),
                    on_status=self._on_status,
                    on_changes=self._on_changes,
                    watch=self._watch,
                    protected=(self._data_dir,),  # the archive, the logs, every index
                    gate=self.gate,
                )
                self._known[root] = found
                await found.start()
            return found

    def peek(self, workspace: Path) -> CodeKnowledge | None:
        return self._known.get(workspace.resolve())

    async def aclose(self) -> None:
        async with self._lock:
            self._closed = True
            known, self._known = list(self._known.values()), {}
        await asyncio.gather(*(k.aclose() for k in known), return_exceptions=True)
