"""What a session or a pipeline has used so far, from the archive's ``usage`` table.

Tokens are every token of a call (input, output, cache read and write): each is
processed and each is billed. Cost is the sum of the priced calls; a call to a model
with no price adds no cost (``unpriced`` counts them, so ``/budget`` can say so).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from backend.archive.schema import USAGE
from backend.archive.store import Archive


@dataclass(frozen=True)
class Spend:
    tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    unpriced: int = 0

    def of(self, measure: str) -> float:
        return self.tokens if measure == "tokens" else self.cost_usd


async def spend_of(archive: Archive, session_id: str, pipeline_id: str | None = None) -> Spend:
    """The session's use, or only its pipeline ``pipeline_id``'s."""
    cols = USAGE.c
    tokens = cols.input_tokens + cols.output_tokens + cols.cache_read_tokens
    query = select(
        func.coalesce(func.sum(tokens + cols.cache_write_tokens), 0),
        func.coalesce(func.sum(cols.cost_usd), 0.0),
        func.count(),
        func.count() - func.count(cols.cost_usd),
    ).where(cols.session_id == session_id)
    if pipeline_id is not None:
        query = query.where(cols.pipeline_id == pipeline_id)

    def read(conn: Connection) -> Spend:
        row = conn.execute(query).one()
        return Spend(int(row[0]), float(row[1]), int(row[2]), int(row[3]))

    return await archive.aread(read)


async def pipelines_of(archive: Archive, session_id: str) -> dict[str, tuple[int, float]]:
    """Each of the session's pipelines: (tokens, cost) used so far."""
    cols = USAGE.c
    tokens = cols.input_tokens + cols.output_tokens + cols.cache_read_tokens
    query = (
        select(
            cols.pipeline_id,
            func.sum(tokens + cols.cache_write_tokens),
            func.coalesce(func.sum(cols.cost_usd), 0.0),
        )
        .where(cols.session_id == session_id, cols.pipeline_id.is_not(None))
        .group_by(cols.pipeline_id)
    )

    def read(conn: Connection) -> dict[str, tuple[int, float]]:
        return {str(r[0]): (int(r[1]), float(r[2])) for r in conn.execute(query)}

    return await archive.aread(read)
