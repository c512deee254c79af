"""A BM25 index kept in step with a registry's ops and resources.

Names (split), description, tags, examples' descriptions and parameter names become the
fields (see :mod:`backend.skills.search.fields`; a description's lead and details are two
fields); an optional dense stage fuses its ranking with BM25's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from backend.skills.search.bm25 import BM25Config, BM25Index
from backend.skills.search.fields import resource_fields, skill_fields

if TYPE_CHECKING:
    from backend.skills.registry import Registry, RegistryChange
    from backend.skills.search.embedding import EmbeddingStage


class SkillIndex:
    """A BM25 index that follows a registry's ops and resources as they change.

    ``embedding`` (optional, see :mod:`backend.skills.search.embedding`): a dense stage whose
    ranking is fused with BM25's; without it search is BM25 alone.

    The index is built on first use (:attr:`index`), from the registry as it then stands,
    and follows its changes from there: tokenising every op's fields is most of an
    engine's build, and ``sylk run /session list`` or an MCP client's ``initialize``
    search nothing.
    """

    def __init__(
        self,
        registry: Registry,
        config: BM25Config | None = None,
        *,
        embedding: EmbeddingStage | None = None,
    ) -> None:
        self._registry = registry
        self._config = config
        self._index: BM25Index | None = None
        self.embedding = embedding
        if embedding is not None:
            embedding.bind(registry)
        registry.subscribe(self._on_change)

    @property
    def index(self) -> BM25Index:
        index = self._index
        if index is None:
            index = BM25Index(self._config)
            lead = index.config.lead_words
            for skill in self._registry.list():
                index.add(skill.op, skill_fields(skill, lead), group=skill.domain)
            for resource in self._registry.resources():
                index.add(resource.uri, resource_fields(resource, lead), group=resource.domain)
            self._index = index
        return index

    def _on_change(self, change: RegistryChange) -> None:
        index = self._index
        if index is None:
            return  # not built yet: the build reads the registry as it stands then
        lead = index.config.lead_words
        if change.removed:
            index.remove(change.key)
        elif change.skill is not None:
            skill = change.skill
            index.add(change.key, skill_fields(skill, lead), group=skill.domain)
        elif change.resource is not None:
            resource = change.resource
            index.add(change.key, resource_fields(resource, lead), group=resource.domain)

    def search(
        self,
        query: str,
        *,
        domain: str | None = None,
        limit: int = 10,
        include: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        stage = self.embedding
        if stage is not None:
            if stage.ready:
                return stage.search(query, self.index, domain=domain, limit=limit, include=include)
            stage.start_warming()  # lexical until the model is loaded
        return self.index.search(query, domain=domain, limit=limit, include=include)
