"""Which envelope code a typed engine error becomes when an op's handler raises it.

A model reads the code to decide what to do next: NOT_FOUND and
VALIDATION_ERROR say "change the request", CONFLICT "the state does not allow
it now", INTERNAL "Sylk failed". An engine error a caller provoked (an unknown
session, an ambiguous name) is therefore never INTERNAL; errors not listed
here are, with their class name as the reason.
"""

from __future__ import annotations

from backend.errors import (
    AmbiguousSessionError,
    CommandError,
    InvalidTransitionError,
    SessionNotActiveError,
    SessionNotFoundError,
    SylkError,
)
from backend.knowledge.fragments.models import AmbiguousFragmentError, FragmentNotFoundError
from backend.knowledge.tool_discovery.models import (
    InvalidChoiceError,
    UnknownCategoryError,
    UnknownLanguageError,
)
from backend.skills.envelopes import ErrorCode

_CODES: tuple[tuple[type[SylkError], ErrorCode], ...] = (
    (SessionNotFoundError, ErrorCode.NOT_FOUND),
    (FragmentNotFoundError, ErrorCode.NOT_FOUND),
    (AmbiguousSessionError, ErrorCode.VALIDATION_ERROR),
    (AmbiguousFragmentError, ErrorCode.VALIDATION_ERROR),
    (CommandError, ErrorCode.VALIDATION_ERROR),
    (UnknownLanguageError, ErrorCode.VALIDATION_ERROR),
    (UnknownCategoryError, ErrorCode.VALIDATION_ERROR),
    (InvalidChoiceError, ErrorCode.VALIDATION_ERROR),
    (InvalidTransitionError, ErrorCode.CONFLICT),
    (SessionNotActiveError, ErrorCode.CONFLICT),
)


def code_for(exc: SylkError) -> ErrorCode:
    for kind, code in _CODES:
        if isinstance(exc, kind):
            return code
    return ErrorCode.INTERNAL


__all__ = ["code_for"]
