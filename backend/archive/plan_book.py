"""The plans of each session, every version with its status, in the archive's ``plans`` table.

The archive knows nothing of the DAG model (that is ``backend.plans``, a floor above):
here a plan is its document as JSON plus the fields that say where it stands. A status
moves only from one the caller names (``expected``), in one statement, so two front ends
answering the same review cannot both approve it; a modification is stored as a new
version and the one it replaces is marked superseded in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, insert, select, update

from backend.archive.schema import PLANS
from backend.archive.store import Archive

_plans = PLANS


@dataclass(frozen=True, slots=True)
class StoredPlan:
    """One version of one plan as the archive holds it."""

    session_id: str
    plan_id: str
    version: int
    status: str
    document: dict[str, Any]
    source: str
    created_at: str
    updated_at: str
    supersedes: int | None = None
    feedback: str = ""
    decided_by: str | None = None


def _stored(row: Any) -> StoredPlan:
    return StoredPlan(
        session_id=row.session_id,
        plan_id=row.plan_id,
        version=row.version,
        status=row.status,
        document=json.loads(row.document),
        source=row.source,
        created_at=row.created_at,
        updated_at=row.updated_at,
        supersedes=row.supersedes,
        feedback=row.feedback,
        decided_by=row.decided_by,
    )


class PlanBook:
    """Reads and writes of the ``plans`` table through one archive's writer."""

    def __init__(self, archive: Archive) -> None:
        self._archive = archive

    async def add(self, plan: StoredPlan, *, superseded_status: str | None = None) -> None:
        """Store ``plan``; when it supersedes a version, that one's status becomes
        ``superseded_status`` in the same transaction."""
        row = {
            "session_id": plan.session_id,
            "plan_id": plan.plan_id,
            "version": plan.version,
            "status": plan.status,
            "supersedes": plan.supersedes,
            "source": plan.source,
            "feedback": plan.feedback,
            "document": json.dumps(plan.document, sort_keys=True),
            "created_at": plan.created_at,
            "updated_at": plan.updated_at,
            "decided_by": plan.decided_by,
        }

        def fn(conn: Connection) -> None:
            conn.execute(insert(_plans), [row])
            if plan.supersedes is not None and superseded_status is not None:
                conn.execute(
                    _where(plan.session_id, plan.plan_id, plan.supersedes).values(
                        status=superseded_status, updated_at=plan.created_at
                    )
                )

        await self._archive.awrite(fn)

    async def move(
        self,
        plan: StoredPlan,
        status: str,
        *,
        expected: Collection[str],
        at: str,
        decided_by: str | None = None,
    ) -> bool:
        """Set the version's status if it is still one of ``expected``; False if not."""
        stmt = (
            _where(plan.session_id, plan.plan_id, plan.version)
            .where(_plans.c.status.in_(list(expected)))
            .values(status=status, updated_at=at, decided_by=decided_by)
        )
        moved: int = await self._archive.awrite(lambda conn: conn.execute(stmt).rowcount)
        return moved == 1

    async def versions(self, session_id: str, plan_id: str | None = None) -> list[StoredPlan]:
        """The session's plans (or one plan's versions), oldest first."""
        query = select(_plans).where(_plans.c.session_id == session_id)
        if plan_id is not None:
            query = query.where(_plans.c.plan_id == plan_id)
        query = query.order_by(_plans.c.seq)
        return await self._archive.aread(lambda conn: [_stored(r) for r in conn.execute(query)])


def _where(session_id: str, plan_id: str, version: int) -> Any:
    return update(_plans).where(
        _plans.c.session_id == session_id,
        _plans.c.plan_id == plan_id,
        _plans.c.version == version,
    )
