"""The ``[orchestration]`` table: where an approved plan's engineer pipelines run.

``backend = "local"`` (the default) runs them in this process, as always. ``"ray"``
sends each engineer node's whole pipeline to a Ray cluster (``backend.cluster``): a
team with more parallel work than one machine carries. ``address`` is where the
cluster is: ``"auto"`` (a cluster this machine already belongs to), ``"ray://host:port"``
(a remote head through Ray Client) or ``"local"`` (a head started in this process on
127.0.0.1, for a laptop or a test). Ray is an extra (``pip install 'sylk-tui[ray]'``),
imported only when this says ``"ray"``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class OrchestrationSettings(BaseModel):
    """``[orchestration]``: ``backend``, ``address``, and the Ray task's limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["local", "ray"] = "local"
    address: str = "auto"
    # Ray's own reruns of a task whose worker died (a system failure); 0: the scheduler's
    # retry policy reruns the node instead, as a new attempt the DAG view shows.
    max_retries: int = Field(default=0, ge=0, le=10)
    # How long connecting to the cluster may take before the plan fails (never a hang).
    connect_timeout_s: float = Field(default=30.0, gt=0, le=600)
    # CPUs a pipeline's task reserves on the cluster (its checks run in it).
    cpus_per_pipeline: float = Field(default=1.0, gt=0, le=64)

    @field_validator("address")
    @classmethod
    def _known_address(cls, value: str) -> str:
        if value in ("auto", "local") or value.startswith("ray://"):
            return value
        raise ValueError('address is "auto", "local" or "ray://host:port"')
