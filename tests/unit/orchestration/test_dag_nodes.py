"""A node's request and result: what its agent is asked (prompt, context, upstream
outputs, bounded) and how the recorded answer becomes a NodeResult."""

from __future__ import annotations

from typing import Any

from backend.engine.plan_runs.dag_nodes import UPSTREAM_MAX, node_request, result_of
from backend.messages import Message, MessageType
from backend.plans import PlanNode


def _record(kind: MessageType, **payload: Any) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id="s", source="engineer", target="user", type=kind, payload=payload
    )


def test_the_request_names_the_task_its_context_and_what_came_before() -> None:
    node = PlanNode.model_validate({
        "id": "e1", "agent": "engineer", "prompt": "add the flag", "depends_on": ["t1"],
        "context": {"relevant_files": ["cli.py"], "constraints": ["no new deps"],
                    "reason": "users asked"},
    })  # fmt: skip
    text = node_request("p1", node, {"t1": "flags are parsed in cli.py"})
    assert text.splitlines()[0] == "Task e1 of plan p1: add the flag"
    assert "Relevant files: cli.py" in text and "Constraint: no new deps" in text
    assert "--- result of task t1 ---\nflags are parsed in cli.py" in text


def test_upstream_outputs_are_bounded() -> None:
    node = PlanNode.model_validate({"id": "e1", "agent": "engineer", "prompt": "x"})
    text = node_request("p1", node, {"a": "x" * UPSTREAM_MAX, "b": "y" * 100})
    assert len(text) < UPSTREAM_MAX + 500 and "y" not in text.split("---")[-1]


def test_answers_notices_and_stopped_turns_become_results() -> None:
    passed = result_of(_record(MessageType.AGENT_REPLY, text="done", stop="final"))
    assert passed.ok and passed.output == "done"
    error = result_of(_record(MessageType.SYSTEM_NOTICE, text="The engineer could not answer"))
    assert not error.ok and error.retryable and "could not answer" in (error.error or "")
    offline = result_of(_record(MessageType.SYSTEM_NOTICE, text="no model", offline=True))
    assert not offline.ok and not offline.retryable
    stopped = result_of(_record(MessageType.AGENT_REPLY, text="half", stop="step_limit"))
    assert not stopped.ok and "step_limit" in (stopped.error or "")
