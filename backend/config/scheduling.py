"""The ``[scheduling]`` table: how much work runs at once across every session.

Why a bound at all: fifty sessions each with a ready DAG would otherwise start every
node at once, and one machine (or one provider's rate limit) cannot carry that. The
worker pool (``backend.orchestration.worker_pool``) hands these workers out fairly
between sessions, the user's requests before background work; each session's own
limits come from its ``SessionConfig``.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field


def default_workers() -> int:
    """Agents mostly wait on a model or a subprocess: twice the cores, at least four."""
    return max(4, 2 * (os.cpu_count() or 1))


class SchedulingSettings(BaseModel):
    """``[scheduling]``: ``max_workers`` (all sessions together) and ``age_after`` (how
    many user jobs may overtake a waiting background job before it goes first)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_workers: int = Field(default_factory=default_workers, ge=1, le=1024)
    age_after: int = Field(default=8, ge=1, le=10_000)
