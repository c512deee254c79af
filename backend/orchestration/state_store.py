"""Where a DAG's node records are kept, so a restarted run resumes instead of redoing.

The scheduler saves a node's record on each transition that matters (running, each
final status) and, when it starts, loads the records of its DAG: a node whose record
says PASSED (for the same node as planned, by digest) is not run again; every other
node runs. :class:`DagStateStore` is the small protocol the scheduler needs;
:class:`MemoryDagStateStore` keeps records for one process (tests, benchmarks), and
:class:`~backend.orchestration.sqlite_state_store.SqliteDagStateStore` keeps them in
a file that survives a kill.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from backend.errors import ErrorKind, SylkError
from backend.orchestration.records import NodeRecord


class DagStateError(SylkError):
    """The DAG state store cannot be read or written."""

    error_kind = ErrorKind.INTERNAL


class OutputNotStorableError(DagStateError):
    """A node's output cannot be persisted (the SQLite store keeps JSON only)."""

    error_kind = ErrorKind.INVALID


@runtime_checkable
class DagStateStore(Protocol):
    """Loads a DAG's node records and saves one node's record."""

    async def load(self, dag_id: str) -> dict[str, NodeRecord]:
        """Every record saved for ``dag_id``, by node id (empty for a new DAG)."""
        ...

    async def save(self, dag_id: str, node_id: str, record: NodeRecord) -> None:
        """Replace the node's record; once this returns, ``load`` sees it."""
        ...


class MemoryDagStateStore:
    """Records in a dict: survives a scheduler, not the process."""

    def __init__(self) -> None:
        self._dags: dict[str, dict[str, NodeRecord]] = {}

    async def load(self, dag_id: str) -> dict[str, NodeRecord]:
        return dict(self._dags.get(dag_id, {}))

    async def save(self, dag_id: str, node_id: str, record: NodeRecord) -> None:
        self._dags.setdefault(dag_id, {})[node_id] = record
