"""The one place the retrieval benchmarks know Sylk's search API: tools in, a search out.

Every tool becomes a searchable Sylk op (``metatool.<id>``, the data's description, a
no-op parameter model and handler); a query goes through ``Gateway.search`` as an
agent's ``search`` call does.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from retrieval_metrics import LIMIT, SearchFn, op_name

from backend.skills.models import Skill, SkillContext, SkillResult, SkillTier

AGENT = "librarian"  # the owner given to the ops; it does not affect search


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


async def noop(ctx: SkillContext, params: Any) -> SkillResult:
    return SkillResult(result=None)


def make_skills(tools: Sequence[dict[str, Any]], agent: str = AGENT) -> list[Skill]:
    """A row with an ``input_schema`` (an MCP corpus) becomes an op as Sylk's MCP client
    makes one (``backend.mcp.client.as_skills``): its own description (``text``, without
    the schema's JSON) and a parameter model that carries the schema; any other row, its
    description and no parameters."""
    return [
        Skill(
            op=op_name(t["id"]),
            agent=agent,
            description=_description(t),
            params=_params(t),
            handler=noop,
            tier=SkillTier.SPECIALISED,
            searchable=True,
        )
        for t in tools
    ]


def _description(tool: dict[str, Any]) -> str:
    if "input_schema" not in tool:
        return str(tool["description"])
    return str(tool["text"]).strip() or f"Tool {tool['name']!r} of an MCP server."


def _params(tool: dict[str, Any]) -> type[BaseModel]:
    if "input_schema" not in tool:
        return NoParams
    import copy

    from backend.mcp.client.as_skills import McpToolParams

    model = type(f"P{abs(hash(tool['id']))}", (McpToolParams,), {})
    model.raw_schema = copy.deepcopy(tool["input_schema"])
    return model


def search_config(
    k1: float | None, b: float | None, weights: Sequence[str], params: Sequence[str] = ()
) -> tuple[Any, dict[str, Any] | None]:
    """A ``BM25Config`` from the command line (None: the gateway's default), and its record.

    ``params``: ``NAME=VALUE`` for any other scalar field of ``BM25Config``
    (``feedback_docs=2``, ``fallback_weight=0``), converted to the field's default's type.
    """
    if k1 is None and b is None and not weights and not params:
        return None, None
    import dataclasses

    from backend.skills.search.bm25 import BM25Config

    default = BM25Config()
    merged = dict(default.weights)
    for item in weights:
        name, _, value = item.partition("=")
        merged[name.strip()] = float(value)
    extra: dict[str, Any] = {}
    scalars = {f.name for f in dataclasses.fields(BM25Config)} - {"k1", "b", "weights"}
    for item in params:
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in scalars:
            raise SystemExit(f"--param: unknown BM25Config field {name!r} ({sorted(scalars)})")
        extra[name] = type(getattr(default, name))(float(value))
    config = BM25Config(
        k1=default.k1 if k1 is None else k1,
        b=default.b if b is None else b,
        weights=merged,
        **extra,
    )
    return config, dataclasses.asdict(config)


def our_search(
    skills: Sequence[Skill], *, builtins: bool = False, config: Any = None, embedding: Any = None
) -> tuple[str, SearchFn]:
    """Register ``skills`` in a fresh registry; return (API used, query -> op names, best first).

    Goes through ``Gateway.search`` as an agent's ``search`` call does (visibility checks,
    the hit envelope), with a caller that holds no scopes. ``builtins``: register Sylk's
    built-in skills too, so that they compete with the MetaTool ops as in a real session.
    ``embedding``: an ``EmbeddingStage`` fused with BM25 (the hybrid search).
    """
    from backend.skills.gateway.gateway import Gateway
    from backend.skills.registry import Registry

    if builtins:
        from backend.skills.builtin.catalog import register_builtins

        registry = register_builtins()
    else:
        registry = Registry()
    registry.register_all(list(skills))
    gateway = Gateway(registry, search_config=config, embedding=embedding)
    ctx = SkillContext(session_id="bench", agent=AGENT, workspace=Path(tempfile.gettempdir()))

    def search(query: str, limit: int) -> list[str]:
        envelope = gateway.search(ctx, query, None, limit)
        return [str(hit["op"]) for hit in envelope.result["hits"]]

    return "backend.skills.gateway.gateway.Gateway.search", search


class PrimedModel:
    """The semantic stage's model with a corpus's queries embedded beforehand, in batches
    (one at a time, 20,544 MetaTool queries take ~40 minutes; batched, a few). Texts it
    was not primed with (the ops' fields) go to the model as usual."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.vectors: dict[str, Any] = {}

    def prime(self, texts: Sequence[str]) -> None:
        todo = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if todo:
            self.vectors.update(zip(todo, self.model.encode(todo, batch_size=64), strict=True))

    def encode(self, texts: Sequence[str], **options: Any) -> Any:
        import numpy

        if all(t in self.vectors for t in texts):
            return numpy.stack([self.vectors[t] for t in texts])
        return self.model.encode(list(texts), **options)


def primed_hybrid(config: Any, options: dict[str, Any]) -> Any:
    """Per corpus: our search with the semantic stage fused in (``EmbeddingStage``
    defaults unless ``options`` say otherwise), its queries embedded in batches first."""
    from backend.skills.search.embedding import EmbeddingStage

    if not EmbeddingStage.available():
        raise SystemExit("--embedding: the semantic stage's model is not installed")
    model = PrimedModel(EmbeddingStage().model)

    def hybrid(tools: Sequence[dict[str, Any]], queries: Sequence[str]) -> SearchFn:
        model.prime(queries)
        stage = EmbeddingStage(model, query_cache=8, **options)
        _, search = our_search(make_skills(tools), config=config, embedding=stage)
        search("warm up", LIMIT)  # embeds the ops (once per registry version)
        return search

    return hybrid
