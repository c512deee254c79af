"""Which tests are relevant to a pipeline's modified files, kept simple and predictable.

- A modified file that is itself a test is relevant.
- Python (pytest): ``test_<module>.py`` or ``<module>_test.py`` anywhere in the
  workspace, and every test file that imports the module (``import pkg.mod``,
  ``from pkg.mod import``, ``from pkg import mod``).
- JavaScript / TypeScript (jest, vitest): ``<name>.test.*`` and ``<name>.spec.*``
  anywhere (``__tests__`` folders included), and every test file whose imports name
  ``<name>`` as a relative path's last part (``./name``, ``../lib/name.js``).
- Go (go test): the package folder of each modified ``.go`` file, as ``./folder``.

Test files are found by walking the workspace without following a link (a linked
test file or folder is not read; ``protected``, Sylk's own paths, never), skipping
``.git``, virtualenvs, ``node_modules`` and caches, and reading at most
``MAX_TEST_FILES`` of them: past that, name-matched tests are still found but
importers may be missed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from backend.pipelines.checks.paths import workspace_relative

MAX_TEST_FILES = 2000
MAX_READ = 256 * 1024
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "dist",
        "build",
        ".tox",
        "vendor",
    }
)
_PY_TEST = re.compile(r"^(test_.+|.+_test)\.py$")
_JS_TEST = re.compile(r"^.+\.(test|spec)\.[cm]?[jt]sx?$")
_JS_IMPORT = re.compile(
    r"""(?:from\s+|require\(\s*|import\(\s*|import\s+)['"](\.{1,2}/[^'"]+)['"]"""
)


def _walk(workspace: Path, protected: Iterable[Path]) -> list[str]:
    """Test-looking files under ``workspace`` (relative), no link followed."""
    hidden = {Path(p) for p in protected}
    found: list[str] = []
    for folder, dirs, names in os.walk(workspace, followlinks=False):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and here / d not in hidden)
        for name in sorted(names):
            if _PY_TEST.match(name) or _JS_TEST.match(name):
                path = here / name
                if not path.is_symlink():
                    found.append(path.relative_to(workspace).as_posix())
    return found


def has_tests(workspace: Path, framework: str, *, protected: Iterable[Path] = ()) -> bool:
    """Does the project have any test of ``framework`` yet (its own suite)?"""
    if framework == "go test":
        hidden = {Path(p) for p in protected}
        for folder, dirs, names in os.walk(workspace, followlinks=False):
            here = Path(folder)
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and here / d not in hidden]
            if any(n.endswith("_test.go") for n in names):
                return True
        return False
    python = framework == "pytest"
    return any(bool(_PY_TEST.match(t.rpartition("/")[2])) == python
               for t in _walk(workspace, protected))  # fmt: skip


def _read(workspace: Path, rel: str) -> str:
    try:
        with open(workspace / rel, "rb") as handle:
            return handle.read(MAX_READ).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _python_module(rel: str) -> str:
    return rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _imports_python(text: str, module: str) -> bool:
    parent, _, leaf = module.rpartition(".")
    patterns = [
        rf"^\s*import\s+{re.escape(module)}\b",
        rf"^\s*from\s+{re.escape(module)}\s+import\b",
    ]
    if parent:
        patterns.append(rf"^\s*from\s+{re.escape(parent)}\s+import\s+[^\n]*\b{re.escape(leaf)}\b")
    # a src/ layout's module is imported without the src prefix
    if module.startswith("src."):
        return _imports_python(text, module.removeprefix("src."))
    return any(re.search(p, text, re.MULTILINE) for p in patterns)


def relevant_tests(
    workspace: Path, modified: Iterable[str], framework: str, *, protected: Iterable[Path] = ()
) -> list[str]:
    """Test targets for ``framework`` ("pytest", "jest", "vitest", "go test"), sorted."""
    root = workspace.resolve()
    files = [workspace_relative(f, root) for f in modified]
    if framework == "go test":
        folders = {f.rpartition("/")[0] for f in files if f.endswith(".go")}
        return sorted(f"./{d}" if d else "." for d in folders)
    python = framework == "pytest"
    tests = [
        t for t in _walk(root, protected) if bool(_PY_TEST.match(t.rpartition("/")[2])) == python
    ]
    chosen: set[str] = set()
    for file in files:
        name = file.rpartition("/")[2]
        if file in tests:
            chosen.add(file)
            continue
        if python and file.endswith(".py"):
            stem = name.removesuffix(".py")
            chosen.update(
                t for t in tests if t.rpartition("/")[2] in (f"test_{stem}.py", f"{stem}_test.py")
            )
        elif not python and re.search(r"\.[cm]?[jt]sx?$", name):
            stem = name.split(".")[0]
            chosen.update(t for t in tests if t.rpartition("/")[2].split(".")[0] == stem)
    sources = [f for f in files if f not in chosen and f not in tests]
    for test in tests[:MAX_TEST_FILES]:
        if test in chosen:
            continue
        text = _read(root, test)
        if (
            python
            and any(_imports_python(text, _python_module(f)) for f in sources if f.endswith(".py"))
        ) or (not python and _imports_js(text, sources)):
            chosen.add(test)
    return sorted(chosen)


def _imports_js(text: str, sources: list[str]) -> bool:
    stems = {f.rpartition("/")[2].split(".")[0] for f in sources}
    for spec in _JS_IMPORT.findall(text):
        last = spec.rstrip("/").rpartition("/")[2].split(".")[0]
        if last in stems:
            return True
    return False
