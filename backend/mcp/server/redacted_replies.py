"""Every reply the MCP server sends passes through the engine's redactor.

A client reads what Sylk reads: workspace files, transcripts, library fragments, error
messages that quote a path or a provider's complaint. Any of them may hold a key the
user configured, and the client (an IDE, another agent, a model) must never see it.
Rather than trusting each handler to remember, one server middleware rewrites every
result and every error on its way out, the ``initialize`` result (its instructions)
included, over stdio and HTTP alike.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR
from pydantic import BaseModel, ValidationError

from backend.redaction import Redactor

log = logging.getLogger(__name__)


class RedactedReplies:
    """Server middleware (``Server.middleware``): results and errors, keys redacted."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            error = exc.error
            raise MCPError(
                error.code, self.redactor.text(error.message), self.redactor.data(error.data)
            ) from None
        except ValidationError:
            raise  # the SDK answers it with a fixed message and no data: nothing to redact
        except Exception as exc:  # the SDK would send its text as is
            log.exception("MCP request %r failed", ctx.method)
            message = self.redactor.text(f"{type(exc).__name__}: {exc}")
            raise MCPError(INTERNAL_ERROR, message) from None
        if isinstance(result, BaseModel):
            result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        redacted: HandlerResult = self.redactor.data(result)
        return redacted
