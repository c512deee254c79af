"""What can go wrong sending a pipeline to a Ray cluster, each a typed error a user can act on."""

from __future__ import annotations

from pathlib import Path

from backend.config.settings import ConfigError
from backend.errors import ErrorKind, SylkError

RAY_EXTRA = "pip install 'sylk-tui[ray]'"


class ClusterError(SylkError):
    """A pipeline could not be run on the cluster, or its result not brought back."""

    error_kind = ErrorKind.CONFLICT


class RayMissingError(ConfigError):
    """``[orchestration] backend = "ray"`` without Ray installed."""

    def __init__(self) -> None:
        super().__init__(
            '[orchestration] backend = "ray" needs Ray, which is not installed',
            help_hint=f'{RAY_EXTRA}, or set [orchestration] backend = "local"',
        )


class ClusterUnreachableError(ClusterError):
    """The configured cluster did not answer within the connect time limit."""

    def __init__(self, address: str, why: str) -> None:
        super().__init__(
            f"the Ray cluster at {address!r} could not be reached: {why}",
            help_hint="check [orchestration] address (auto, local or ray://host:port) "
            'and that the head runs; or set [orchestration] backend = "local"',
            details={"reason": "cluster_unreachable", "address": address},
        )


class NotARepositoryError(ClusterError):
    """A pipeline goes to a worker through git: the session's workspace must be in a repository."""

    def __init__(self, workspace: Path) -> None:
        super().__init__(
            f"the workspace {workspace} is not in a git repository: the ray backend "
            "hands work to its workers through git",
            help_hint='git init the workspace, or set [orchestration] backend = "local"',
            details={"reason": "not_a_repository", "workspace": str(workspace)},
        )


class ApplyConflictError(ClusterError):
    """The worker's result no longer applies to the session's files (they changed meanwhile)."""

    def __init__(self, files: list[str], detail: str) -> None:
        named = ", ".join(files[:20]) or "(no files)"
        super().__init__(
            f"the worker's edits to {named} conflict with the session's files, "
            "changed since the task started; nothing was applied",
            help_hint="run the task again (/task), or run it locally",
            details={"reason": "apply_conflict", "files": files, "git": detail[:500]},
        )
        self.files = files
