"""How a discovered tool is run, installed, found and asked for its version in *this* project.

The package manager comes from the lock files (``pnpm-lock.yaml`` means
``pnpm exec`` and ``pnpm add -D``; ``uv.lock`` means ``uv run`` and ``uv add
--dev``), so the commands an agent gets are the ones the project's
contributors type. A tool counts as installed when the project's own
``node_modules/.bin`` or virtualenv has it (its real path inside the
workspace), or when it is on PATH.

Versions come, best first, from a lock file pin, a pre-commit ``rev``, the
installed tool itself (``<tool> --version`` as a real subprocess with a short
timeout), and last the manifest's version range.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.knowledge.tool_discovery.catalog import ToolSpec
from backend.knowledge.tool_discovery.files import MAX_LOCK_BYTES, ConfinedReader, join

VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?(?:[-+][0-9A-Za-z.]+)?)")
NODE_EXEC = {"npm": "npx", "pnpm": "pnpm exec", "yarn": "yarn", "bun": "bunx"}
NODE_SCRIPT = {"npm": "npm run", "pnpm": "pnpm run", "yarn": "yarn", "bun": "bun run"}
NODE_ADD = {"npm": "npm install -D", "pnpm": "pnpm add -D", "yarn": "yarn add -D",
            "bun": "bun add -d"}  # fmt: skip
PY_RUN = {"uv": "uv run ", "poetry": "poetry run ", "pip": ""}
PY_ADD = {"uv": "uv add --dev", "poetry": "poetry add --group dev", "pip": "pip install"}
RUSTUP = {"clippy": "clippy", "rustfmt": "rustfmt", "rust-analyzer": "rust-analyzer"}
GO_INSTALL = {
    "golangci-lint": "go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@latest",
    "gopls": "go install golang.org/x/tools/gopls@latest",
}
VENV_BINS = (".venv/bin", "venv/bin")


@dataclass
class ProjectTooling:
    """The package managers and local bin directories of the scanned directories."""

    node_pm: str = "npm"
    python_pm: str = "pip"
    node_dirs: list[str] = field(default_factory=list)  # dirs with package.json, nearest first
    scanned: list[str] = field(default_factory=list)  # nearest first
    python_locks: dict[str, str] = field(default_factory=dict)  # package -> pinned version


def project_tooling(reader: ConfinedReader, dirs: list[str]) -> ProjectTooling:
    nearest = list(reversed(dirs))
    tooling = ProjectTooling(scanned=nearest)
    tooling.node_dirs = [d for d in nearest if reader.exists(join(d, "package.json"))]
    for d in nearest:
        lock = next(
            (pm for pm, name in (("pnpm", "pnpm-lock.yaml"), ("yarn", "yarn.lock"),
                                 ("bun", "bun.lockb"), ("bun", "bun.lock"),
                                 ("npm", "package-lock.json")) if reader.exists(join(d, name))),
            None,
        )  # fmt: skip
        if lock:
            tooling.node_pm = lock
            break
    for d in nearest:
        for pm, name in (("uv", "uv.lock"), ("poetry", "poetry.lock")):
            data = (
                reader.toml(join(d, name), MAX_LOCK_BYTES) if reader.exists(join(d, name)) else None
            )
            if data is not None:
                tooling.python_pm = pm
                for pkg in data.get("package", []):
                    if isinstance(pkg, dict) and "name" in pkg and "version" in pkg:
                        key = str(pkg["name"]).lower().replace("_", "-")
                        tooling.python_locks[key] = str(pkg["version"])
                return tooling
    return tooling


def run_command(spec: ToolSpec, category: Any, tooling: ProjectTooling) -> str:
    base = spec.runs[category]
    if spec.ecosystem == "node":
        return f"{NODE_EXEC[tooling.node_pm]} {base}"
    if spec.ecosystem == "python":
        return f"{PY_RUN[tooling.python_pm]}{base}"
    if spec.ecosystem == "ruby" and not base.startswith("bundle"):
        return f"bundle exec {base}"
    return base


def install_command(spec: ToolSpec, tooling: ProjectTooling) -> str:
    if spec.builtin:
        return ""
    if spec.ecosystem == "node" and spec.package:
        return f"{NODE_ADD[tooling.node_pm]} {spec.package}"
    if spec.ecosystem == "python" and spec.package:
        return f"{PY_ADD[tooling.python_pm]} {spec.package}"
    if spec.name in RUSTUP:
        return f"rustup component add {RUSTUP[spec.name]}"
    if spec.name in GO_INSTALL:
        return GO_INSTALL[spec.name]
    if spec.ecosystem == "ruby":
        return f"bundle add {spec.package or spec.name} --group development"
    if spec.ecosystem == "php" and spec.package:
        return f"composer require --dev {spec.package}"
    return ""


def locate(
    spec: ToolSpec, tooling: ProjectTooling, reader: ConfinedReader, path_env: str | None
) -> Path | None:
    """Where the tool's executable is: the project's own bin dirs first, then PATH."""
    exe = spec.executable
    local: list[str] = []
    if spec.ecosystem == "node":
        local = [join(d, f"node_modules/.bin/{exe}") for d in tooling.node_dirs]
    elif spec.ecosystem == "python":
        local = [join(d, f"{b}/{exe}") for d in tooling.scanned for b in VENV_BINS]
    for rel in local:
        if os.path.lexists(reader.root / rel):
            real = reader.inside(rel)  # warns when it escapes the workspace
            if real is not None and os.access(real, os.X_OK):
                return real
    found = shutil.which(exe, path=path_env)
    return Path(found) if found else None


def node_version(spec: ToolSpec, tooling: ProjectTooling, reader: ConfinedReader) -> str:
    """The exact version installed in node_modules, else pinned in package-lock.json."""
    if not spec.package:
        return ""
    for d in tooling.node_dirs:
        data = reader.json(join(d, f"node_modules/{spec.package}/package.json"))
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return str(data["version"])
        lock_rel = join(d, "package-lock.json")
        lock = reader.json(lock_rel, MAX_LOCK_BYTES) if reader.exists(lock_rel) else None
        if isinstance(lock, dict):
            entry = lock.get("packages", {}).get(f"node_modules/{spec.package}", {})
            if isinstance(entry, dict) and isinstance(entry.get("version"), str):
                return str(entry["version"])
    return ""


class VersionProbe:
    """Runs ``<tool> --version`` once per executable (re-run when the binary changes)."""

    def __init__(self, timeout_s: float = 5.0) -> None:
        self.timeout_s = timeout_s
        self.runs = 0
        self._memo: dict[tuple[str, int, tuple[str, ...]], str] = {}
        self._gates: dict[tuple[str, int, tuple[str, ...]], threading.Lock] = {}
        self._lock = threading.Lock()

    def version(self, argv: tuple[str, ...], exe: Path, cwd: Path, path_env: str | None) -> str:
        try:
            stamp = exe.stat().st_mtime_ns
        except OSError:
            return ""
        key = (str(exe), stamp, argv)
        with self._lock:
            gate = self._gates.setdefault(key, threading.Lock())
        with gate:  # one run per binary even when several categories ask at once
            if key not in self._memo:
                self._memo[key] = self._run(argv, exe, cwd, path_env)
                with self._lock:
                    self.runs += 1
            return self._memo[key]

    def _run(self, argv: tuple[str, ...], exe: Path, cwd: Path, path_env: str | None) -> str:
        command = list(argv)
        if Path(command[0]).name == exe.name:
            command[0] = str(exe)  # the very binary discovery found (project-local first)
        elif (other := shutil.which(command[0], path=path_env)) is not None:
            command[0] = other
        else:
            return ""
        env = dict(os.environ)
        if path_env is not None:
            env["PATH"] = path_env
        try:
            done = subprocess.run(  # argv from the catalog, never from input
                command, cwd=cwd, env=env, capture_output=True, text=True,
                timeout=self.timeout_s, stdin=subprocess.DEVNULL, check=False,
            )  # fmt: skip
            output = f"{done.stdout}\n{done.stderr}" if done.returncode == 0 else ""
        except (OSError, subprocess.SubprocessError):
            output = ""
        match = VERSION.search(output)
        return match.group(1) if match else ""
