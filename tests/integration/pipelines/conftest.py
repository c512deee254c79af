"""A small real Python project for the Inspector and Tester to check, and the real tools.

The project has a module with a lint error (an unused import), one with a type error,
a badly formatted one, and a test file with a passing and a failing test. Tools are
Sylk's own ruff, mypy and pytest (its virtualenv's ``bin`` put first on the PATH the
checks search); discovery finds them from the project's pyproject, as it would for a
user. ``fix`` rewrites every file to pass.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.models import ToolDiscoveryRequest, ToolDiscoveryResponse
from backend.workspace.confinement import Confinement

VENV_BIN = str(Path(sys.executable).parent)
PYPROJECT = """\
[project]
name = "fx"
version = "0"

[tool.ruff]
line-length = 100

[tool.mypy]
strict = true

[tool.pytest.ini_options]
pythonpath = ["."]
"""
BAD = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "import os\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n",
    "pkg/halves.py": "def half(x: int) -> int:\n    return x / 2\n",
    "pkg/ugly.py": "def pair(a: int,b: int) -> dict[str, int]:\n    return {'a':a,'b':b}\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": (
        "from pkg.calc import add\n\n\n"
        "def test_add_ok() -> None:\n    assert add(1, 2) == 3\n\n\n"
        "def test_add_bad() -> None:\n    assert add(2, 2) == 5\n"
    ),
}
GOOD = {
    "pkg/calc.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
    "pkg/halves.py": "def half(x: int) -> int:\n    return x // 2\n",
    "pkg/ugly.py": 'def pair(a: int, b: int) -> dict[str, int]:\n    return {"a": a, "b": b}\n',
    "tests/test_calc.py": (
        "from pkg.calc import add\n\n\n"
        "def test_add_ok() -> None:\n    assert add(1, 2) == 3\n\n\n"
        "def test_add_four() -> None:\n    assert add(2, 2) == 4\n"
    ),
}
MODIFIED = ["pkg/calc.py", "pkg/halves.py", "pkg/ugly.py", "tests/test_calc.py"]


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@dataclass
class Project:
    root: Path
    outside: Path  # a folder beside the workspace, for escape attempts
    path_env: str
    discovered: ToolDiscoveryResponse
    confinement: Confinement

    def fix(self) -> None:
        write(self.root, GOOD)

    def fake_tool(self, name: str, script: str) -> None:
        """A project-local tool (found before Sylk's): the project's own code."""
        path = self.root / ".venv" / "bin" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n" + script)
        path.chmod(0o755)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    write(root, BAD)
    outside = tmp_path / "outside"
    outside.mkdir()
    path_env = os.pathsep.join([VENV_BIN, os.environ.get("PATH", os.defpath)])
    discovery = ToolDiscovery(path_env=path_env, probe_versions=False)
    discovered = discovery.discover(ToolDiscoveryRequest(), root)
    return Project(root, outside, path_env, discovered, Confinement.of(root))
