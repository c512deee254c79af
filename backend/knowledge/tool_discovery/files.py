"""Which files tool discovery looks at, reading them confined, and their fingerprint.

Discovery reads config files and manifests in the target's directory and every
directory above it up to the workspace root (so ``web/src/app.ts`` sees both
``web/package.json`` and the root's ``.pre-commit-config.yaml``), plus CI and
editor settings at the root. The fingerprint covers every file it *could*
read there: each candidate's (size, mtime_ns), and each scanned directory's
own mtime, which changes when a file is created, deleted or renamed in it. So
a newly created ``.eslintrc.json`` changes the fingerprint even though no
earlier call read it.

Every read and listing goes through the confined
:class:`~backend.workspace.files.Workspace`: a config file that is a symlink to
somewhere outside the workspace is never read (it is skipped with a warning),
and Sylk's own data inside the workspace is neither read nor listed.
"""

from __future__ import annotations

import fnmatch
import json
import os
import stat
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.workspace.files import (
    FileTooLargeError,
    PathOutsideWorkspaceError,
    Workspace,
    WorkspaceError,
)

CANDIDATE_NAMES = frozenset(
    {
        "pyproject.toml", "setup.cfg", "setup.py", "tox.ini", ".flake8", ".pylintrc", "pylintrc",
        "mypy.ini", ".mypy.ini", "pytest.ini", "ruff.toml", ".ruff.toml", "pyrightconfig.json",
        "Pipfile", "uv.lock", "poetry.lock", "conftest.py", ".isort.cfg", ".pre-commit-config.yaml",
        "package.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lockb", "bun.lock",
        "tsconfig.json", "jsconfig.json", "biome.json", "biome.jsonc", ".oxlintrc.json", "go.mod",
        ".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json", "Cargo.toml",
        "rustfmt.toml", ".rustfmt.toml", "clippy.toml", ".clippy.toml", "rust-toolchain",
        "rust-toolchain.toml", "Makefile", "makefile", "GNUmakefile", "Gemfile", ".rubocop.yml",
        ".rspec", "composer.json", "phpstan.neon", "phpunit.xml", "phpunit.xml.dist",
        ".clang-format", ".clang-tidy", "CMakeLists.txt", ".shellcheckrc", "pom.xml",
        "build.gradle", "build.gradle.kts", ".editorconfig",
    }
)  # fmt: skip
CANDIDATE_GLOBS = (
    "requirements*.txt", ".eslintrc*", "eslint.config.*", ".prettierrc*", "prettier.config.*",
    "jest.config.*", "vitest.config.*", "vitest.workspace.*", ".mocharc*", "playwright.config.*",
    "*.csproj",
)  # fmt: skip
ROOT_EXTRAS = (".github/workflows", ".gitlab-ci.yml", ".vscode/settings.json")
# Installing a tool changes these directories: is_installed must not come from a stale cache.
BIN_DIRS = ("node_modules/.bin", ".venv/bin", "venv/bin")
MAX_CONFIG_BYTES = 512 * 1024
MAX_LOCK_BYTES = 4 * 1024 * 1024

EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript",
    ".mts": "typescript", ".go": "go", ".rs": "rust", ".rb": "ruby", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".sh": "bash",
    ".php": "php", ".cs": "csharp",
}  # fmt: skip
SKIP_DIRS = frozenset(
    {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", "target",
     ".pytest_cache", ".ruff_cache", ".tox", "dist", "build", ".sylk", "vendor"}
)  # fmt: skip
CENSUS_LIMIT = 3000


def is_candidate(name: str) -> bool:
    return name in CANDIDATE_NAMES or any(fnmatch.fnmatch(name, g) for g in CANDIDATE_GLOBS)


@dataclass
class ConfinedReader:
    """Reads workspace files for one discovery pass through the confined :class:`Workspace`
    (by descriptor: never outside the root, never Sylk's own data, never a hard link)."""

    ws: Workspace
    warnings: list[str] = field(default_factory=list)
    read: set[str] = field(default_factory=set)  # relative paths actually opened

    @property
    def root(self) -> Path:
        return self.ws.root

    def _warn_outside(self, rel: str) -> None:
        message = f"ignored {rel}: it is a symlink to a place outside the workspace"
        if message not in self.warnings:
            self.warnings.append(message)

    def stat(self, rel: str) -> os.stat_result | None:
        """What ``rel`` is (links inside followed), None if missing or refused."""
        try:
            return self.ws.stat(rel)
        except PathOutsideWorkspaceError:
            self._warn_outside(rel)
        except WorkspaceError:
            pass
        return None

    def text(self, rel: str, limit: int = MAX_CONFIG_BYTES) -> str | None:
        try:
            data = self.ws.read_bytes(rel, limit)
        except FileTooLargeError:
            self.warnings.append(f"skipped {rel}: larger than {limit // 1024} KiB")
            return None
        except PathOutsideWorkspaceError:
            self._warn_outside(rel)
            return None
        except WorkspaceError:
            return None
        self.read.add(rel)
        return data.decode("utf-8", errors="replace")

    def toml(self, rel: str, limit: int = MAX_CONFIG_BYTES) -> dict[str, Any] | None:
        text = self.text(rel, limit)
        if text is None:
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            self.warnings.append(f"could not parse {rel}: {exc}")
            return None

    def json(self, rel: str, limit: int = MAX_CONFIG_BYTES) -> Any:
        text = self.text(rel, limit)
        if text is None:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            self.warnings.append(f"could not parse {rel}: {exc}")
            return None

    def yaml(self, rel: str) -> Any:
        import yaml  # loads with the first YAML config a scan reads

        text = self.text(rel)
        if text is None:
            return None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            self.warnings.append(f"could not parse {rel}: {str(exc).splitlines()[0]}")
            return None

    def exists(self, rel: str) -> bool:
        return self.stat(rel) is not None

    def listdir(self, rel: str) -> list[str]:
        try:
            names = self.ws.list_dir(rel or ".", limit=None)
        except PathOutsideWorkspaceError:
            self._warn_outside(rel)
            return []
        except WorkspaceError:
            return []
        return [name.rstrip("/") for name in names]


def scan_dirs(ws: Workspace, target: str) -> list[str]:
    """Workspace-relative directories from the root down to the target's directory."""
    real = ws.resolve(target)  # raises PathOutsideWorkspaceError for escapes
    st = ws.stat(target)
    if real != ws.root and (st is None or not stat.S_ISDIR(st.st_mode)):
        real = real.parent
    rel = ws.relative(real)
    dirs = [""]
    if rel != ".":
        parts = rel.split("/")
        dirs.extend("/".join(parts[: i + 1]) for i in range(len(parts)))
    return dirs


def join(directory: str, name: str) -> str:
    return f"{directory}/{name}" if directory else name


def candidates_in(reader: ConfinedReader, directory: str) -> list[str]:
    return [join(directory, n) for n in reader.listdir(directory) if is_candidate(n)]


def _stat(root: Path, rel: str) -> tuple[str, int, int] | tuple[str, str]:
    path = root / rel
    try:
        if path.is_symlink():
            real = path.resolve()
            if real != root and root not in real.parents:
                return (rel, "outside")
        st = path.stat()
    except OSError:
        return (rel, "missing")
    return (rel, st.st_size, st.st_mtime_ns)


def fingerprint(ws: Workspace, dirs: list[str]) -> tuple[object, ...]:
    """Cheap identity of everything discovery could read for these directories."""
    root = ws.root
    parts: list[object] = []
    watched = [*dirs, *(join(d, b) for d in dirs for b in BIN_DIRS), *ROOT_EXTRAS]
    for rel in watched:
        parts.append(_stat(root, rel))
    for directory in [*dirs, ".github/workflows"]:
        try:
            names = sorted(os.listdir(root / directory))
        except OSError:
            continue
        wanted = directory == ".github/workflows"
        parts.extend(_stat(root, join(directory, n)) for n in names if wanted or is_candidate(n))
    return tuple(parts)


def census(ws: Workspace, start: str) -> dict[str, int]:
    """Source files per language under ``start`` (bounded walk; ignored trees skipped)."""
    counts: dict[str, int] = {}
    base = ws.resolve(start)
    st = ws.stat(start)
    if st is None or not stat.S_ISDIR(st.st_mode):
        base = base.parent

    def keep(_rel: str, name: str) -> bool:
        return name not in SKIP_DIRS and not name.startswith(".")

    try:
        for seen, rel in enumerate(ws.walk_files(ws.relative(base), keep), 1):
            language = EXTENSIONS.get(os.path.splitext(rel)[1])
            if language:
                counts[language] = counts.get(language, 0) + 1
            if seen >= CENSUS_LIMIT:
                break
    except WorkspaceError:
        pass
    return counts


def workflow_files(reader: ConfinedReader) -> Iterator[str]:
    for name in reader.listdir(".github/workflows"):
        if name.endswith((".yml", ".yaml")):
            yield f".github/workflows/{name}"
    if reader.exists(".gitlab-ci.yml"):
        yield ".gitlab-ci.yml"
