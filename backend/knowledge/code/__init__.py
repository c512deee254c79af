"""The Librarian's index of a workspace's code, and what it answers.

- ``index``: :class:`CodeIndex`, walking the workspace and writing files,
  symbols, imports and text into the index.
- ``index_db``: the index's SQLite file: schema, per-thread connections, one writer.
- ``index_queries``: the read queries (definitions, full text, outlines,
  dependencies) and their result records.
- ``symbols``: symbols and imports per language, extracted for the index.
- ``live``: :class:`CodeKnowledge`, the index kept current by the file watcher
  together with its cache, building in the background.
- ``seed``: :func:`seed_index_from`, a new worktree's index copied from its base
  tree's, with only the files that differ re-parsed.
- ``changes``: what one change batch from the watcher does to the index.
- ``hub``: one :class:`CodeKnowledge` per workspace, shared by sessions.
- ``evidence``: what the answers are made of (evidence, snippets, the model's
  answers) and how a question is keyed in the cache.
- ``evidence_queries``: the index's evidence for each kind of question.
- ``intent_cache``: the intent-aware query cache and its invalidation rules.
- ``patterns``: conventions the index shows without a model, and concept words.
- ``answers``: the answers that need no model, as markdown.
- ``full_build/``: a full build's worker processes and the helper thread that fills
  an empty index while the building thread parses.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backend.knowledge.code.index import BuildStats, CodeIndex
    from backend.knowledge.code.seed import SeedStats, seed_index_from

__all__ = ["BuildStats", "CodeIndex", "SeedStats", "seed_index_from"]


def __getattr__(name: str) -> Any:
    """The exports, imported on first use: a build's worker processes import the index
    alone, without the live index (asyncio, the watcher) that seeding brings in."""
    if name in ("BuildStats", "CodeIndex"):
        from backend.knowledge.code import index

        return getattr(index, name)
    if name in ("SeedStats", "seed_index_from"):
        from backend.knowledge.code import seed

        return getattr(seed, name)
    raise AttributeError(name)
