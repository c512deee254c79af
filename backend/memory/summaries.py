"""Writing a role's checkpoint: by its model when one is configured, else an extract.

The model gets one bounded call (no tools, a deadline, an output limit) with the turns
to summarise and the shape's keys, and must answer with one JSON object. A reply that
is not one, an error or a timeout falls back to :func:`~backend.memory.extract.extract`:
a checkpoint is never skipped for want of a model, and says how it was written.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from backend.llm.types import ChatMessage, ChatOptions, ChatRequest, ChatResult
from backend.memory.extract import EXTRACT_NOTE, extract
from backend.memory.shapes import conform, describe_fields
from backend.memory.thresholds import MemoryPlan

log = logging.getLogger("sylk.memory")

SUMMARY_MAX_TOKENS = 2048
SUMMARY_DEADLINE_S = 60.0
TRANSCRIPT_CHARS = 60_000  # the turns shown to the summariser: their end, if longer
CHECKPOINT_MARK = "Write the checkpoint"  # opens the request, so a script can match it

# One model call: a request in, a result out (ModelClient.run, bound to its model).
SummaryCall = Callable[[ChatRequest], Awaitable[ChatResult]]


def _transcript(messages: list[ChatMessage]) -> str:
    text = "\n\n".join(f"[{m.role}] {m.text}" for m in messages if m.text)
    return text[-TRANSCRIPT_CHARS:]


def summary_request(plan: MemoryPlan, messages: list[ChatMessage], model: str) -> ChatRequest:
    """The one request asking ``plan.role``'s model for its checkpoint."""
    ask = (
        f"{CHECKPOINT_MARK}: your {plan.kind} as the {plan.role}, so the work can go on "
        "after the older turns below are dropped from your context.\n"
        "Answer with one JSON object and nothing else, with exactly these keys:\n"
        f"{describe_fields(plan.role)}\n\n"
        f"The conversation so far:\n{_transcript(messages)}"
    )
    return ChatRequest(
        system=f"You are the {plan.role} in Sylk, writing a checkpoint of your own work.",
        messages=[ChatMessage.user(ask)],
        options=ChatOptions(
            model=model, max_tokens=SUMMARY_MAX_TOKENS, deadline_s=SUMMARY_DEADLINE_S
        ),
    )


def parse_summary(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's reply (a fenced block allowed), else None."""
    fenced = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.DOTALL)
    body = fenced.group(1) if fenced else text.strip()
    try:
        found = json.loads(body)
    except ValueError:
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            return None
        try:
            found = json.loads(body[start : end + 1])
        except ValueError:
            return None
    return found if isinstance(found, dict) else None


async def write_summary(
    plan: MemoryPlan,
    messages: list[ChatMessage],
    *,
    call: SummaryCall | None,
    model: str | None,
) -> tuple[dict[str, Any], str]:
    """``plan.role``'s checkpoint fields and who wrote them (``model`` or ``extract``)."""
    if call is not None and model is not None:
        try:
            result = await call(summary_request(plan, messages, model))
        except Exception as exc:  # a failed summary call must not fail the agent's turn
            log.warning("the %s's checkpoint call failed: %s", plan.role, exc)
        else:
            found = parse_summary(result.text) if result.error is None else None
            if found is not None:
                return conform(plan.role, found), "model"
            log.warning("the %s's checkpoint reply was not a JSON object", plan.role)
    return extract(plan.role, messages), "extract"


def render(role: str, fields: dict[str, Any], written_by: str) -> str:
    """The checkpoint as text: what replaces the older turns, and the chronicle entry."""
    lines = [] if written_by == "model" else [f"({EXTRACT_NOTE})"]
    for name, value in fields.items():
        if value in ("", [], {}, 0):
            continue
        label = name.replace("_", " ")
        if isinstance(value, str):
            lines.append(f"{label}: {value}")
        else:
            lines.append(f"{label}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}")
    if len(lines) <= (0 if written_by == "model" else 1):
        lines.append(f"(the {role} had nothing to record)")
    return "\n".join(lines)
