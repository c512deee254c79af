"""Paths between the workspace and a tool's command line and output.

Into a command: every file or test target is checked to lie inside the workspace
(lexically: a ``..`` that leaves it, or an absolute path elsewhere, is refused) and
one that starts with ``-`` is written ``./-name``, so a file an agent named
``--config=evil.toml`` is never read as an option. Out of a tool's output: absolute
paths and ``./`` prefixes become the workspace-relative POSIX paths reports use.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from backend.pipelines.checks.results import CheckPathError


def workspace_relative(path: str, workspace: Path) -> str:
    """``path`` (relative to the workspace, or absolute inside it) as a clean relative path."""
    if not path or "\x00" in path:
        raise CheckPathError(path, "an empty path or one with a NUL byte")
    root = str(workspace)
    raw = path.replace(os.sep, "/")
    if os.path.isabs(raw):
        rel = os.path.relpath(os.path.normpath(raw), root)
    else:
        rel = os.path.normpath(raw)
    rel = PurePosixPath(rel.replace(os.sep, "/")).as_posix()
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        raise CheckPathError(path, "it lies outside the workspace")
    return rel


def as_argument(rel: str) -> str:
    """A relative path as a command-line argument that can never be taken for an option."""
    return f"./{rel}" if rel.startswith("-") else rel


def reported_path(raw: str, workspace: Path) -> str:
    """A path a tool printed, as reports show it; left as printed if it is outside."""
    text = raw.strip()
    try:
        return workspace_relative(text, workspace)
    except CheckPathError:
        return text
