"""What every gateway verb returns, and the typed errors handlers raise.

A model sees ``Envelope.model_dump(mode="json", exclude_none=True)``:

``{op, ok, result, guidance, meta: {trace_id, latency_ms, warnings, ...}}`` on
success, ``{op, ok: false, error: {code, message, details, help_path,
suggestions}, meta}`` on failure; every error names a ``help_path``. Codes are
few and stable; finer reasons go in ``details.reason`` (``not_available``,
``timeout``, ``cross_session``, ...).
"""

from __future__ import annotations

import json
import time
import uuid
from enum import StrEnum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from backend.errors import ErrorKind, SylkError
from backend.skills.models import Guidance


def new_trace_id() -> str:
    return f"tr_{uuid.uuid4().hex[:16]}"


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()`` reading), for ``meta.latency_ms``."""
    return round((time.perf_counter() - start) * 1000.0, 3)


class ErrorCode(StrEnum):
    VALIDATION_ERROR = "VALIDATION_ERROR"
    ACCESS_DENIED = "ACCESS_DENIED"
    NOT_FOUND = "NOT_FOUND"
    CONFLICT = "CONFLICT"
    INTERNAL = "INTERNAL"


_CODE_OF_KIND = {
    ErrorKind.INVALID: ErrorCode.VALIDATION_ERROR,
    ErrorKind.DENIED: ErrorCode.ACCESS_DENIED,
    ErrorKind.NOT_FOUND: ErrorCode.NOT_FOUND,
    ErrorKind.CONFLICT: ErrorCode.CONFLICT,
    ErrorKind.INTERNAL: ErrorCode.INTERNAL,
}


class SkillError(SylkError):
    """Raised by a handler (or hook) to end a call with a typed error envelope."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        help_path: str | None = None,
    ) -> None:
        super().__init__(message, details=dict(details or {}), help_path=help_path)
        self.code = code


def code_for(exc: SylkError) -> ErrorCode:
    """The envelope code of a typed error: a SkillError's own, else its kind's.

    An engine error a caller provoked (an unknown session, an ambiguous name) is
    therefore never INTERNAL; an error whose class declares no kind is.
    """
    if isinstance(exc, SkillError):
        return exc.code
    return _CODE_OF_KIND[exc.error_kind]


class FieldError(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: str
    message: str
    type: str = ""
    # The parameter name the caller most likely meant (an unknown or missing argument).
    did_you_mean: str | None = None

    @model_serializer(mode="wrap")
    def _without_empty_hint(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Field errors travel inside ``details`` (a plain dict), where the envelope's
        # exclude_none does not reach; a null hint would only cost the model tokens.
        data: dict[str, Any] = handler(self)
        if data.get("did_you_mean") is None:
            data.pop("did_you_mean", None)
        return data


class ErrorInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: ErrorCode
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
    help_path: str | None = None
    suggestions: list[str] | None = None


class Meta(BaseModel):
    model_config = ConfigDict(extra="forbid")
    trace_id: str
    latency_ms: float = 0.0
    warnings: list[str] = Field(default_factory=list)
    dry_run: bool | None = None  # set on execute: whether the call was a dry run
    replayed: bool | None = None  # an idempotency key matched an earlier call
    # execute of an edit or a command: who decided it ran or was refused, e.g.
    # {"decision": "allowed", "by": "user"} (see backend.approvals).
    approval: dict[str, Any] | None = None
    cached: bool | None = None  # describe: served from the help cache
    registry_version: str | None = None
    # describe: a fingerprint of the page; sent back as ``if_none_match`` it spares a resend.
    etag: str | None = None


class Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    op: str
    ok: bool
    result: Any = None
    guidance: list[Guidance] = Field(default_factory=list)
    error: ErrorInfo | None = None
    meta: Meta

    def to_model(self) -> dict[str, Any]:
        """The JSON-ready dict a model sees (empty and unset fields dropped)."""
        data = self.model_dump(mode="json", exclude_none=True)
        if not data.get("guidance"):
            data.pop("guidance", None)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_model(), ensure_ascii=False, default=str)

    @property
    def code(self) -> ErrorCode | None:
        return self.error.code if self.error else None


class SearchHit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    op: str  # an op name, or a resource uri when kind == "resource"
    kind: str = "op"  # "op" | "resource"
    summary: str
    score: float
    params: list[str] = Field(default_factory=list)
    write: bool = False
    destructive: bool = False
    execute_with: dict[str, Any] | None = None  # resources: the op and args that read it
    entry_point: bool = False  # listed first in its domain's group, scored or not
    version: int = 1
    usage: str | None = None  # how to call it, once the session has read its help


def failure(
    op: str,
    code: ErrorCode,
    message: str,
    *,
    trace_id: str,
    details: dict[str, Any] | None = None,
    help_path: str | None = None,
    suggestions: list[str] | None = None,
    latency_ms: float = 0.0,
) -> Envelope:
    """An error envelope; ``help_path`` defaults to ``op`` so every error says where help is."""
    return Envelope(
        op=op,
        ok=False,
        error=ErrorInfo(
            code=code,
            message=message,
            details=dict(details or {}),
            help_path=op if help_path is None else help_path,
            suggestions=suggestions or None,
        ),
        meta=Meta(trace_id=trace_id, latency_ms=latency_ms),
    )
