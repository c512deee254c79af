"""A plan as the user reviews it: its status, its text, and the answers a review takes.

The review shows what the user approves: the layers in the order they run, each node's
agent, prompt and dependencies, and the policy. A plan comes from a model or a client,
so control characters are removed before the text reaches a terminal (an escape
sequence in a prompt must not repaint the screen or hide a node). A review is a
question on the :class:`~backend.questions.QuestionBoard` whose answer is one string:
``approve``, ``modify:FEEDBACK`` or ``why:QUESTION``; ``None`` decides later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from backend.errors import ErrorKind, SylkError
from backend.events import ChoiceOption, ChoiceQuestion, PlanReview

APPROVE, MODIFY, WHY = "approve", "modify", "why"
MAX_ANSWER = 8000
"""Characters of the user's feedback or question kept (the rest is cut, and said so)."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class PlanStatus(StrEnum):
    """Where one version of a plan stands."""

    DRAFT = "draft"  # stored, not shown for approval yet
    AWAITING_APPROVAL = "awaiting_approval"
    APPROVED = "approved"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"  # a modification replaced it


OPEN = frozenset({PlanStatus.DRAFT, PlanStatus.AWAITING_APPROVAL})
"""Statuses a plan may still be approved, rejected or modified from."""


class PlanNotFoundError(SylkError):
    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, plan_id: str) -> None:
        super().__init__(
            f"this session has no plan {plan_id!r}",
            help_hint="/plan lists the session's plans",
            details={"reason": "plan_not_found", "plan_id": plan_id},
        )


class PlanExistsError(SylkError):
    """A new plan reuses the id of one the session holds: changes go through modify."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, plan_id: str, status: str) -> None:
        super().__init__(
            f"this session already has a plan {plan_id!r} ({status})",
            help_hint="give the new plan another id, or change this one with architect.plan.modify",
            details={"reason": "plan_exists", "plan_id": plan_id, "status": status},
        )


class PlanClosedError(SylkError):
    """The plan's status no longer allows the move (approved, rejected or superseded)."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, plan_id: str, version: int, status: str, wanted: str) -> None:
        super().__init__(
            f"plan {plan_id!r} (version {version}) is {status}: it cannot be {wanted}",
            help_hint="/plan lists the session's plans and their status",
            details={"reason": "plan_closed", "plan_id": plan_id, "status": status},
        )


class PlanningNeedsModelError(SylkError):
    """A plan from a request in words needs the Architect's model; none is configured."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self) -> None:
        super().__init__(
            "planning from a request needs a model, and none is configured",
            help_hint="configure a provider (sylk --help, [providers] in the config), or "
            "submit a plan document as `plan`",
            details={"reason": "needs_model"},
        )


@dataclass(frozen=True, slots=True)
class ReviewAnswer:
    """The user's answer to a review: approve, modify (feedback), why (question), later."""

    kind: Literal["approve", "modify", "why", "later"]
    text: str = ""


def parse_answer(value: str | None) -> ReviewAnswer:
    """A review question's answer string as a :class:`ReviewAnswer`; anything else is later."""
    if value is None:
        return ReviewAnswer("later")
    head, _, rest = value.partition(":")
    rest = clean(rest).strip()[:MAX_ANSWER]
    if head == APPROVE and not rest:
        return ReviewAnswer("approve")
    if head in (MODIFY, WHY) and rest:
        return ReviewAnswer("modify" if head == MODIFY else "why", rest)
    return ReviewAnswer("later")


def clean(text: str) -> str:
    """``text`` without control characters (newlines and tabs stay)."""
    return _CONTROL.sub("", text)


def render_plan(document: dict[str, Any], *, version: int, status: str = "") -> str:
    """The plan as the user reads it before approving: layers, nodes, policy."""
    nodes = {n["id"]: n for n in document.get("nodes", [])}
    layers: list[list[str]] = document.get("execution_order") or [list(nodes)]
    head = f"Plan {document['id']} (version {version}"
    head += f", {status.replace('_', ' ')})" if status else ")"
    lines = [clean(head), f"{len(nodes)} tasks in {len(layers)} layers"]
    if document.get("prompt"):
        lines.append("Request: " + clean(str(document["prompt"])))
    for number, layer in enumerate(layers, start=1):
        together = " (together)" if len(layer) > 1 else ""
        lines.append(f"Layer {number}{together}")
        for node_id in layer:
            lines.extend(_node_lines(nodes[node_id]))
    lines.append(_policy_line(document.get("policy") or {}))
    return "\n".join(lines)


def _node_lines(node: dict[str, Any]) -> list[str]:
    prompt = clean(str(node["prompt"])).replace("\n", "\n      ")
    lines = [f"  {clean(node['id'])}  [{clean(node['agent'])}]  {prompt}"]
    meta = node.get("metadata") or {}
    facts = []
    if node.get("depends_on"):
        facts.append("after " + ", ".join(clean(d) for d in node["depends_on"]))
    if meta.get("file_operations"):
        facts.append("files: " + "/".join(meta["file_operations"]))
    if meta.get("priority", "normal") != "normal":
        facts.append(f"priority {meta['priority']}")
    constraints = (node.get("context") or {}).get("constraints") or []
    facts.extend("must: " + clean(str(c)) for c in constraints[:5])
    if facts:
        lines.append("      " + " · ".join(facts))
    return lines


def _policy_line(policy: dict[str, Any]) -> str:
    retry = policy.get("default_retry") or {}
    return (
        f"Policy: at most {policy.get('max_concurrency', 4)} at once · "
        + ("stop at the first failure" if policy.get("fail_fast", True) else "keep going")
        + f" · retry {retry.get('max', 2)}x, backoff {retry.get('backoff_ms', 2000)} ms"
    )


def review_question(
    document: dict[str, Any], *, version: int, status: str, explanation: str = ""
) -> ChoiceQuestion:
    """The review as a question: its options name the answers a front end may give."""
    plan_id = str(document["id"])
    review = PlanReview(
        plan_id=plan_id,
        version=version,
        text=render_plan(document, version=version, status=status),
        explanation=clean(explanation),
    )
    return ChoiceQuestion(
        title=f"Approve plan {plan_id}?",
        prompt="Approve it, ask for changes, or ask why; Esc decides later.",
        options=[
            ChoiceOption(APPROVE, "Approve", "run it as shown", recommended=True),
            ChoiceOption(MODIFY, "Modify", "say what to change; the Architect revises it"),
            ChoiceOption(WHY, "Ask why", "ask a question; the Architect answers, then asks again"),
        ],
        plan=review,
    )
