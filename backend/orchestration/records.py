"""What the scheduler says about nodes: results, records, events and the outcome.

A node's runner returns a :class:`NodeResult`; the scheduler keeps one
:class:`NodeRecord` per node (what the state store persists, so a restarted run
knows which nodes already passed), tells listeners every transition as a
:class:`NodeEvent`, and ends with a :class:`DagOutcome`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple


class NodeStatus(StrEnum):
    """Where a node is; PASSED, FAILED, SKIPPED and CANCELLED are final for one run."""

    PENDING = "pending"
    RUNNING = "running"
    RETRYING = "retrying"  # an attempt failed; waiting out the backoff before the next
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"  # never started: an upstream node failed, or fail_fast stopped the DAG
    CANCELLED = "cancelled"  # stopped while running, or the whole DAG was cancelled


FINAL = frozenset({NodeStatus.PASSED, NodeStatus.FAILED, NodeStatus.SKIPPED, NodeStatus.CANCELLED})


class DagStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class NodeResult:
    """What running a node gave: an output for its dependants, or why it failed.

    A runner may also raise: any exception is a failed attempt. ``retryable`` False
    fails the node at once, whatever retries remain (e.g. the user chose "fail").
    """

    output: Any = None
    ok: bool = True
    error: str | None = None
    retryable: bool = True

    @classmethod
    def passed(cls, output: Any = None) -> NodeResult:
        return cls(output=output)

    @classmethod
    def failed(cls, error: str, *, retryable: bool = True) -> NodeResult:
        return cls(ok=False, error=error, retryable=retryable)


class NodeRecord(NamedTuple):
    """A node's state as persisted: enough to skip it on resume if it passed.

    ``digest`` fingerprints the node as it was planned; a passed record whose digest
    differs from the node now in the plan is not trusted, and the node runs again.
    (A named tuple: the scheduler makes a few per node, and a frozen dataclass costs
    several times as much to build.)
    """

    status: NodeStatus
    attempts: int = 0
    output: Any = None
    error: str | None = None
    duration_s: float | None = None
    digest: str = ""


class NodeEvent(NamedTuple):
    """One transition of one node, for the status stream (the seed's DAG_STATUS).

    ``attempt`` counts from 1 (0 before the first); ``duration_s`` is the attempt's
    time on RETRYING, the node's total running time on a final status, else None;
    ``delay_s`` is the backoff before the next attempt on RETRYING; ``resumed`` marks
    a node that passed in an earlier run and is not run again.
    """

    dag_id: str
    node_id: str
    status: NodeStatus
    attempt: int = 0
    max_attempts: int = 1
    duration_s: float | None = None
    error: str | None = None
    delay_s: float | None = None
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class DagOutcome:
    """How a run ended and each node's final record."""

    dag_id: str
    status: DagStatus
    records: Mapping[str, NodeRecord]

    @property
    def outputs(self) -> dict[str, Any]:
        """The outputs of the nodes that passed, by node id."""
        return {k: r.output for k, r in self.records.items() if r.status is NodeStatus.PASSED}

    def with_status(self, status: NodeStatus) -> list[str]:
        """The ids of the nodes that ended with ``status``, in plan order."""
        return [k for k, r in self.records.items() if r.status is status]
