"""A small Python project linted by Sylk's own ruff, for plans whose inspector finds
an unused import (``BAD``) the engineer then fixes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

PYPROJECT = '[project]\nname = "fx"\nversion = "0"\n\n[tool.ruff]\nline-length = 100\n'
BAD = "import os\n\nVERBOSE = True\n"
"""A module ruff flags (F401, the unused ``os``)."""


def ruff_project(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make ``workspace`` that project, with this venv's ruff first on the PATH."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    monkeypatch.setenv("PATH", path)
    (workspace / "pyproject.toml").write_text(PYPROJECT)
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "__init__.py").write_text("")
    return workspace
