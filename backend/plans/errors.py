"""What can be wrong with a plan, as typed errors that list every problem found.

A plan comes from a model or from a document a person or another client wrote, so
it is checked whole and every problem is reported at once: the model gets one
chance to fix everything, and a person sees the full list from `sylk plan validate`.
Each problem is a :class:`PlanProblem` (a machine-readable code, the path of the
offending field such as ``nodes[2].depends_on[0]``, a sentence, and the fields a
program needs, e.g. the cycle as a list). The error raised is the subclass for the
problems' code when they all share one (two unknown agents raise
:class:`UnknownAgentError`), else :class:`PlanProblemsError`. Every one is a
:class:`~backend.errors.SylkError` of kind INVALID whose ``details["problems"]``
lists them all, so callers catch :class:`PlanError` and read ``problems``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from backend.errors import ErrorKind, SylkError

MAX_LISTED = 50
"""Problems listed in an error's message; ``details`` and ``problems`` keep them all."""


class ProblemCode(StrEnum):
    """One word per kind of problem; stable, so programs may match on it."""

    EMPTY_PLAN = "empty_plan"
    DUPLICATE_ID = "duplicate_id"
    UNKNOWN_AGENT = "unknown_agent"
    MISSING_DEPENDENCY = "missing_dependency"
    SELF_DEPENDENCY = "self_dependency"
    CYCLE = "cycle"
    EXECUTION_ORDER = "execution_order"
    BAD_NUMBER = "bad_number"
    BAD_FIELD = "bad_field"
    BAD_DOCUMENT = "bad_document"


@dataclass(frozen=True, slots=True)
class PlanProblem:
    """One thing wrong with a plan: where (``path``), what (``code``), and in words."""

    code: ProblemCode
    path: str
    message: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code.value, "path": self.path, "message": self.message, **self.fields}

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class PlanError(SylkError):
    """A plan, or a plan document, that cannot be run; ``problems`` says every reason."""

    error_kind = ErrorKind.INVALID
    code: ClassVar[ProblemCode | None] = None

    def __init__(self, problems: Sequence[PlanProblem]) -> None:
        if not problems:
            raise ValueError("a PlanError needs at least one problem")
        self.problems: tuple[PlanProblem, ...] = tuple(problems)
        if len(self.problems) == 1:
            message = str(self.problems[0])
        else:
            lines = "\n".join(f"  {p}" for p in self.problems[:MAX_LISTED])
            more = len(self.problems) - MAX_LISTED
            if more > 0:
                lines += f"\n  ... and {more} more (all in details['problems'])"
            message = f"the plan has {len(self.problems)} problems:\n{lines}"
        super().__init__(message, details={"problems": [p.as_dict() for p in self.problems]})

    def failure_word(self) -> str:
        return self.code.value if self.code is not None else "invalid_plan"


class EmptyPlanError(PlanError):
    """The plan has no nodes: there is nothing to approve or run."""

    code = ProblemCode.EMPTY_PLAN


class DuplicateNodeIdError(PlanError):
    """Two nodes share an id, so dependencies on it would be ambiguous."""

    code = ProblemCode.DUPLICATE_ID


class UnknownAgentError(PlanError):
    """A node names an agent Sylk does not have (``backend.roles.AGENT_ROLES``)."""

    code = ProblemCode.UNKNOWN_AGENT


class MissingDependencyError(PlanError):
    """A node depends on (or reads the output of) a node the plan does not hold."""

    code = ProblemCode.MISSING_DEPENDENCY


class SelfDependencyError(PlanError):
    """A node depends on itself: it could never start."""

    code = ProblemCode.SELF_DEPENDENCY


class DependencyCycleError(PlanError):
    """Nodes depend on each other in a ring; each problem names its ring."""

    code = ProblemCode.CYCLE


class ExecutionOrderError(PlanError):
    """The plan's ``execution_order`` is not the layering its ``depends_on`` gives."""

    code = ProblemCode.EXECUTION_ORDER


class PlanFieldError(PlanError):
    """Fields of the wrong shape or type, or numbers out of range."""

    code = None

    def failure_word(self) -> str:
        return "bad_field"


class PlanDocumentError(PlanError):
    """A plan document that cannot be read as JSON or YAML at all."""

    code = ProblemCode.BAD_DOCUMENT


class PlanFileNotFoundError(PlanError):
    """``sylk plan validate FILE`` was given a path that is no readable file."""

    error_kind = ErrorKind.NOT_FOUND
    code = ProblemCode.BAD_DOCUMENT


class PlanProblemsError(PlanError):
    """Problems of several kinds at once (each one's ``code`` says which)."""


_BY_CODE: dict[ProblemCode, type[PlanError]] = {
    ProblemCode.EMPTY_PLAN: EmptyPlanError,
    ProblemCode.DUPLICATE_ID: DuplicateNodeIdError,
    ProblemCode.UNKNOWN_AGENT: UnknownAgentError,
    ProblemCode.MISSING_DEPENDENCY: MissingDependencyError,
    ProblemCode.SELF_DEPENDENCY: SelfDependencyError,
    ProblemCode.CYCLE: DependencyCycleError,
    ProblemCode.EXECUTION_ORDER: ExecutionOrderError,
    ProblemCode.BAD_NUMBER: PlanFieldError,
    ProblemCode.BAD_FIELD: PlanFieldError,
    ProblemCode.BAD_DOCUMENT: PlanDocumentError,
}


def error_for(problems: Sequence[PlanProblem]) -> PlanError:
    """The one error to raise for ``problems``: the shared kind's class, else the mixed one."""
    classes = {_BY_CODE[p.code] for p in problems}
    cls = classes.pop() if len(classes) == 1 else PlanProblemsError
    return cls(problems)
