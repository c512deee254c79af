"""What one change batch from the file watcher does to the code index.

:func:`apply_batch` re-indexes the created and modified files and drops the
deleted ones, together with the files an edited ``.gitignore`` now hides or
shows (they did not change themselves), and returns the
:class:`~backend.knowledge.code.intent_cache.Change` the intent cache drops its
stale entries by: the paths, the names they define before and after, and the
words they now hold.
"""

from __future__ import annotations

import posixpath

from backend.knowledge.code.index import CodeIndex
from backend.knowledge.code.intent_cache import Change
from backend.knowledge.watch.ignore import is_ignore_file
from backend.knowledge.watch.watcher import ChangeBatch


def apply_batch(index: CodeIndex, batch: ChangeBatch) -> Change:
    """Bring ``index`` up to date with ``batch`` (blocking: run it in a thread)."""
    created, modified, deleted = set(batch.created), set(batch.modified), set(batch.deleted)
    # An edited .gitignore hides or shows files that did not change themselves.
    for base in sorted({posixpath.dirname(p) for p in batch.paths if is_ignore_file(p)}):
        hidden, shown = index.drift(base)
        deleted |= hidden
        created |= shown
    paths = sorted(created | modified | deleted)
    before = index.names_in(paths)
    index.update_files(created | modified)
    index.remove_files(deleted)
    after = index.names_in(paths)
    return Change(
        paths=frozenset(paths),
        added_or_removed=frozenset(created | deleted),
        names=frozenset(before | after),
        words=frozenset(index.words_in(created | modified)),
    )
