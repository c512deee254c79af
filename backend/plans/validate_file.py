"""`sylk plan validate FILE`: check a plan document from the shell.

:func:`validate_file` reads the file (a regular file, at most
``MAX_DOCUMENT_BYTES``; ``.json`` as JSON, ``.yaml``/``.yml`` as YAML, anything else
guessed from the text), validates it like a plan from the Architect, and returns a
:class:`PlanReport` to print. Whatever is wrong raises a
:class:`~backend.plans.errors.PlanError` listing every problem found, so a person
fixes them all in one pass; the CLI prints it as it prints any ``SylkError``.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.plans.document import MAX_DOCUMENT_BYTES, DocumentFormat, load_plan_document
from backend.plans.errors import PlanFileNotFoundError, PlanProblem, ProblemCode
from backend.plans.validated_plan import ValidatedPlan
from backend.roles import AGENT_ROLES

_FORMATS: dict[str, DocumentFormat] = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}


@dataclass(frozen=True, slots=True)
class PlanReport:
    """What a valid plan will do: its nodes, layers and how many run at once."""

    path: str
    plan: ValidatedPlan

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (``sylk plan validate --json``)."""
        policy = self.plan.policy
        return {
            "path": self.path,
            "valid": True,
            "id": self.plan.id,
            "session_id": self.plan.plan.session_id,
            "nodes": len(self.plan.nodes),
            "agents": dict(Counter(n.agent for n in self.plan.nodes.values())),
            "layers": [list(layer) for layer in self.plan.layers],
            "max_concurrency": policy.max_concurrency,
            "fail_fast": policy.fail_fast,
            "default_retry": policy.default_retry.model_dump(),
        }

    def render(self) -> str:
        """The report as lines for a terminal."""
        policy = self.plan.policy
        nodes = self.plan.nodes
        agents = Counter(n.agent for n in nodes.values())
        mix = ", ".join(f"{count} {agent}" for agent, count in sorted(agents.items()))
        retry = policy.default_retry
        lines = [
            f"{self.path}: plan {self.plan.id!r} is valid",
            f"  {len(nodes)} nodes ({mix}) in {len(self.plan.layers)} layers",
            f"  at most {policy.max_concurrency} at once; "
            + ("stops at the first failure" if policy.fail_fast else "runs on past failures")
            + f"; default retry {retry.max} after {retry.backoff_ms} ms",
        ]
        for n, layer in enumerate(self.plan.layers):
            more = f", ... ({len(layer)} nodes)" if len(layer) > 12 else ""
            shown = ", ".join(layer[:12]) + more
            lines.append(f"  layer {n}: {shown}")
        return "\n".join(lines)


def validate_file(path: str | Path, *, agents: Sequence[str] = AGENT_ROLES) -> PlanReport:
    """Read and validate the plan document at ``path``; raise a PlanError if it is not one."""
    shown = str(path)
    data = _read_bounded(Path(path), shown)
    fmt = _FORMATS.get(Path(path).suffix.lower())
    return PlanReport(shown, load_plan_document(data, fmt, agents=agents))


def _read_bounded(path: Path, shown: str) -> bytes:
    """The file's bytes; a FIFO, device or folder is refused before anything is read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise _unreadable(shown, exc.strerror or str(exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _unreadable(shown, "not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise _unreadable(shown, exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def _unreadable(shown: str, reason: str) -> PlanFileNotFoundError:
    message = f"cannot read {shown}: {reason}"
    return PlanFileNotFoundError([PlanProblem(ProblemCode.BAD_DOCUMENT, "", message)])
