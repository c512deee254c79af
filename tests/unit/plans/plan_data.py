"""Plan documents for the plan tests: the seed's example, and a builder for variants."""

from __future__ import annotations

from typing import Any


def node(node_id: str, *deps: str, agent: str = "engineer", **extra: Any) -> dict[str, Any]:
    return {
        "id": node_id,
        "agent": agent,
        "prompt": f"do {node_id}",
        "depends_on": list(deps),
        **extra,
    }


def plan(*nodes: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "plan-1", "nodes": list(nodes), **extra}


def seed_example() -> dict[str, Any]:
    """The seed's "DAG Output Schema" example, completed with the t3 and t4 it lays out."""
    return {
        "id": "workflow-uuid",
        "session_id": "session-uuid",
        "prompt": "Add rate limiting to the API",
        "nodes": [
            {
                "id": "t1",
                "agent": "librarian",
                "prompt": "Index current middleware patterns",
                "context": {
                    "relevant_files": ["src/middleware/"],
                    "reason": "Need to understand existing patterns",
                },
                "metadata": {
                    "priority": "high",
                    "timeout_ms": 60000,
                    "retry": {"max": 1, "backoff_ms": 1000},
                    "file_operations": ["read"],
                },
                "depends_on": [],
            },
            {
                "id": "t2",
                "agent": "engineer",
                "prompt": "Create rate limiter interface following existing middleware pattern",
                "context": {
                    "upstream_outputs": ["t1"],
                    "constraints": ["Follow existing middleware pattern"],
                },
                "metadata": {"priority": "normal", "file_operations": ["create", "write"]},
                "depends_on": ["t1"],
            },
            node("t3", "t1"),
            node("t4", "t2", "t3", agent="tester", context={"upstream_outputs": ["t1"]}),
        ],
        "execution_order": [["t1"], ["t2", "t3"], ["t4"]],
        "policy": {
            "max_concurrency": 4,
            "fail_fast": True,
            "default_retry": {"max": 2, "backoff_ms": 2000},
        },
    }
