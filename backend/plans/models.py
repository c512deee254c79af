"""The seed's DAG schema ("DAG Output Schema") as pydantic models.

A plan is what the Architect proposes and the Orchestrator runs: nodes (each an
agent, a prompt, context and metadata, and the nodes it depends on), an optional
``execution_order`` (the layers) and a policy. These models check each field's shape
and range; :mod:`backend.plans.graph` checks the plan as a graph. Every model forbids
unknown keys, so a misspelt ``depends_ons`` is an error, not a silently ignored wish.

Defaults, and which one applies when (the seed gives two retry defaults):

* a node's ``metadata.timeout_ms`` defaults to 60,000 (one minute per attempt);
* a node's ``metadata.retry``, when the node gives one, applies to that node; a key it
  leaves out takes the node default (``max`` 1, ``backoff_ms`` 1,000), so
  ``"retry": {}`` means one retry after one second;
* a node without ``metadata.retry`` takes the plan's ``policy.default_retry``, which
  defaults to ``max`` 2, ``backoff_ms`` 2,000 (keys left out take those too);
* ``policy`` defaults to ``max_concurrency`` 4 and ``fail_fast`` true.

``retry.max`` counts retries after the first attempt (``max`` 2: up to three
attempts); the wait before retry *k* is ``backoff_ms * 2**(k-1)``.

Numbers are strict integers (``true`` or ``"60000"`` is not a timeout) within bounds
that keep an untrusted plan from asking for a year-long timeout or a million retries.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

MAX_NODES = 10_000
"""More nodes than any plan a person approves; enough for the scheduler's benchmark."""
MAX_TEXT = 200_000
MAX_TIMEOUT_MS = 24 * 3600 * 1000
MAX_RETRIES = 10
MAX_BACKOFF_MS = 10 * 60 * 1000
MAX_CONCURRENCY = 256
DEFAULT_TIMEOUT_MS = 60_000

Identifier = Annotated[
    str, StringConstraints(strict=True, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
]
"""A node, plan or session id: letters, digits and ``_ . : -``, at most 128 characters.

Ids are shown to the user, logged and used as keys in the DAG state store, so an
agent cannot smuggle arrows, spaces or control characters into them.
"""
Text = Annotated[str, StringConstraints(strict=True, max_length=MAX_TEXT)]
ShortText = Annotated[str, StringConstraints(strict=True, max_length=4096)]
Priority = Literal["low", "normal", "high", "critical"]
FileOperation = Literal["read", "create", "write", "delete"]

PRIORITY_RANK: dict[str, int] = {"low": 0, "normal": 1, "high": 2, "critical": 3}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NodeRetry(_Model):
    """Retries of one node: ``max`` retries after the first attempt, exponential backoff."""

    max: int = Field(default=1, strict=True, ge=0, le=MAX_RETRIES)
    backoff_ms: int = Field(default=1000, strict=True, ge=0, le=MAX_BACKOFF_MS)

    def delay_s(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1-based): doubling from the base."""
        return self.backoff_ms * (1 << (retry - 1)) / 1000


class PolicyRetry(NodeRetry):
    """The plan-wide retry for nodes that do not give their own (seed: max 2, 2,000 ms)."""

    max: int = Field(default=2, strict=True, ge=0, le=MAX_RETRIES)
    backoff_ms: int = Field(default=2000, strict=True, ge=0, le=MAX_BACKOFF_MS)


class NodeContext(_Model):
    """What a node's agent is given besides its prompt (seed: ``context``)."""

    relevant_files: list[ShortText] = Field(default_factory=list, max_length=1000)
    reason: Text | None = None
    upstream_outputs: list[Identifier] = Field(default_factory=list, max_length=MAX_NODES)
    """Ancestors whose outputs this node reads, beyond its direct dependencies'."""
    constraints: list[Text] = Field(default_factory=list, max_length=100)
    compliance_criteria: list[Text] = Field(default_factory=list, max_length=100)


class NodeMetadata(_Model):
    """How a node runs: priority among ready nodes, time limit, retries, file access."""

    priority: Priority = "normal"
    timeout_ms: int = Field(default=DEFAULT_TIMEOUT_MS, strict=True, ge=1, le=MAX_TIMEOUT_MS)
    retry: NodeRetry | None = None
    file_operations: list[FileOperation] = Field(default_factory=list, max_length=4)


class PlanNode(_Model):
    """One task of the plan, for one agent."""

    id: Identifier
    agent: Annotated[str, StringConstraints(strict=True, min_length=1, max_length=64)]
    prompt: Annotated[str, StringConstraints(strict=True, min_length=1, max_length=MAX_TEXT)]
    context: NodeContext = Field(default_factory=NodeContext)
    metadata: NodeMetadata = Field(default_factory=NodeMetadata)
    depends_on: list[Identifier] = Field(default_factory=list, max_length=MAX_NODES)


class PlanPolicy(_Model):
    """How the whole plan runs (seed: ``policy``)."""

    max_concurrency: int = Field(default=4, strict=True, ge=1, le=MAX_CONCURRENCY)
    fail_fast: bool = Field(default=True, strict=True)
    default_retry: PolicyRetry = Field(default_factory=PolicyRetry)


class Plan(_Model):
    """A whole plan as written: the document before its graph is checked."""

    id: Identifier
    session_id: Identifier | None = None
    prompt: Text = ""
    nodes: list[PlanNode] = Field(default_factory=list, max_length=MAX_NODES)
    execution_order: list[list[Identifier]] | None = Field(default=None, max_length=MAX_NODES)
    policy: PlanPolicy = Field(default_factory=PlanPolicy)
