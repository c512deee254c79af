"""What a call of one of the four tools answers: the gateway's envelope, always.

``execute`` answers with the envelope the gateway built; so do ``search``,
``describe`` and ``batch``, even when the call fails before the gateway saw it
(arguments the tool's schema refuses) or a verb raised: the error then has the
same shape, ``{op, ok: false, error: {code, message, details, help_path}, meta}``
with field errors under ``details.field_errors``, ``op`` and ``help_path`` the
tool's name. A client (or a model) reads one kind of error whichever tool it called.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from backend.errors import SylkError
from backend.mcp.client.content import media_blocks
from backend.skills.envelopes import Envelope, ErrorCode, code_for, failure
from backend.skills.hooks.builtin import field_errors, validation_message

# Built on the first media reply, not at start-up (the server answers initialize first).
_CONTENT_BLOCK: TypeAdapter[mcp_types.ContentBlock] = TypeAdapter(
    mcp_types.ContentBlock, config={"defer_build": True}
)


def as_result(value: Any, *, is_error: bool = False) -> mcp_types.CallToolResult:
    """``value`` (an envelope, or anything JSON-ready) as a tool result, text and structured."""
    media: list[mcp_types.ContentBlock] = []
    if isinstance(value, Envelope):
        data: Any = value.to_model()
        is_error = is_error or not value.ok
        media = _media(value.result)
    else:
        data = to_jsonable_python(value, fallback=str)
    # Through protocol 2025-11-25 structured content must be an object.
    structured = data if isinstance(data, dict) else {"result": data}
    text = data if isinstance(data, str) else json.dumps(data, indent=1, ensure_ascii=False)
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=text), *media],
        structured_content=structured,
        is_error=is_error,
    )


def _media(result: Any) -> list[mcp_types.ContentBlock]:
    """An external tool's images, audio and resources, passed on whole to the client (the
    text part only describes them); a block the protocol's types refuse is left out."""
    blocks: list[mcp_types.ContentBlock] = []
    for block in media_blocks(result):
        try:
            blocks.append(_CONTENT_BLOCK.validate_python(block))
        except ValidationError:
            continue
    return blocks


def invalid_arguments(
    tool: str, model: type[BaseModel], arguments: dict[str, Any], exc: ValidationError, trace: str
) -> mcp_types.CallToolResult:
    """Arguments ``tool``'s input schema refuses, as a VALIDATION_ERROR envelope."""
    errors = field_errors(exc, model, arguments)
    return as_result(
        failure(
            tool,
            ErrorCode.VALIDATION_ERROR,
            validation_message(tool, errors),
            trace_id=trace,
            details={"field_errors": [e.model_dump(mode="json") for e in errors]},
        )
    )


def raised(tool: str, exc: Exception, trace: str) -> mcp_types.CallToolResult:
    """An exception out of ``tool``'s verb, as an envelope: a typed error keeps its code,
    details and help path; anything else is INTERNAL (the log has the traceback)."""
    if isinstance(exc, SylkError):
        details = dict(exc.details or {})
        details.setdefault("reason", exc.failure_word())
        message = f"{exc.message} ({exc.help_hint})" if exc.help_hint else exc.message
        envelope = failure(
            tool, code_for(exc), message, trace_id=trace, details=details, help_path=exc.help_path
        )
    else:
        envelope = failure(
            tool,
            ErrorCode.INTERNAL,
            f"{type(exc).__name__}: {exc}",
            trace_id=trace,
            details={"reason": "unexpected", "help": "see sylk.log"},
        )
    return as_result(envelope)
