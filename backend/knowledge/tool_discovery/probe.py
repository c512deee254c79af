"""How a discovered tool is run, installed, found and asked for its version in *this* project.

The package manager comes from the lock files (``pnpm-lock.yaml`` means
``pnpm exec`` and ``pnpm add -D``; ``uv.lock`` means ``uv run`` and ``uv add
--dev``), so the commands an agent gets are the ones the project's
contributors type. Where a tool is installed and which version, without running
anything of the workspace's, is :mod:`.installed`'s business.

Versions come, best first, from a lock file pin, a pre-commit ``rev``, the
metadata of a project-local install (read, never executed), a tool on PATH
outside the workspace (``<tool> --version`` as a real subprocess with a short
timeout), and last the manifest's version range.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.knowledge.tool_discovery.catalog import ToolSpec
from backend.knowledge.tool_discovery.files import MAX_LOCK_BYTES, ConfinedReader, join
from backend.knowledge.tool_discovery.installed import inside, system_path, system_which
from backend.workspace.commands import child_env

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


class VersionProbe:
    """Runs ``<tool> --version`` once per executable (re-run when the binary changes).

    Only binaries outside the workspace (see :mod:`.installed`): one inside is never
    run. The probe gets the allow-listed environment commands get, PATH without the
    workspace's directories, stdin closed, ``/`` as its working directory (so no
    project config or plugin of the workspace is loaded) and a timeout that kills
    its whole process group.
    """

    def __init__(self, timeout_s: float = 5.0) -> None:
        self.timeout_s = timeout_s
        self.runs = 0
        self._memo: dict[tuple[str, int, tuple[str, ...]], str] = {}
        self._gates: dict[tuple[str, int, tuple[str, ...]], threading.Lock] = {}
        self._lock = threading.Lock()

    def version(
        self, argv: tuple[str, ...], exe: Path, workspace: Path, path_env: str | None
    ) -> str:
        try:
            stamp = exe.stat().st_mtime_ns
        except OSError:
            return ""
        key = (str(exe), stamp, argv)
        with self._lock:
            gate = self._gates.setdefault(key, threading.Lock())
        with gate:  # one run per binary even when several categories ask at once
            if key not in self._memo:
                self._memo[key] = self._run(argv, exe, workspace.resolve(), path_env)
                with self._lock:
                    self.runs += 1
            return self._memo[key]

    def _run(self, argv: tuple[str, ...], exe: Path, root: Path, path_env: str | None) -> str:
        command = list(argv)
        if Path(command[0]).name == exe.name:
            command[0] = str(exe)
        elif (other := system_which(command[0], path_env, root)) is not None:
            command[0] = str(other)
        else:
            return ""
        if inside(Path(os.path.realpath(command[0])), root):
            return ""  # the workspace's own code: never run
        env = child_env()
        env["PATH"] = system_path(path_env, root)
        try:
            proc = subprocess.Popen(  # argv from the catalog, never from input
                command, cwd="/", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True,
            )  # fmt: skip
        except OSError:
            return ""
        try:
            out, err = proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return ""
        match = VERSION.search(f"{out}\n{err}" if proc.returncode == 0 else "")
        return match.group(1) if match else ""
