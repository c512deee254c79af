"""Where a discovered tool is installed, and its version, running nothing of the workspace's.

A binary in the project's own ``.venv/bin``, ``venv/bin`` or ``node_modules/.bin``
is the repository's code: running it, even with ``--version``, runs whatever the
repository put there, as the user. So discovery never executes a file that lies
inside the workspace. A project-local tool counts as installed when its file is
there (looked at through the confined workspace), and its version comes from the
package metadata installed beside it, read and marked ``metadata`` (not executed):
a ``<name>-<version>.dist-info/METADATA`` ``Version:`` in the virtualenv's
site-packages, a ``node_modules/<package>/package.json`` ``version``.

Only a binary found on PATH outside the workspace is ever asked its version
(:class:`~backend.knowledge.tool_discovery.probe.VersionProbe`): PATH entries that
are relative or lie inside the workspace are dropped, and a PATH entry that is a
link into the workspace is refused too.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from backend.knowledge.tool_discovery.catalog import ToolSpec
from backend.knowledge.tool_discovery.files import MAX_LOCK_BYTES, ConfinedReader, join

VENV_BINS = (".venv/bin", "venv/bin")
VENVS = (".venv", "venv")
MAX_METADATA_BYTES = 2 * 1024 * 1024  # METADATA carries the package's whole README
METADATA = "metadata"  # the version_source of a version read, not executed


@dataclass(frozen=True)
class Installed:
    path: Path
    local: bool  # inside the workspace: never executed


def inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def system_path(path_env: str | None, root: Path) -> str:
    """``path_env`` (None: the process's PATH) without relative entries or the workspace's."""
    raw = os.environ.get("PATH", os.defpath) if path_env is None else path_env
    kept = [
        entry
        for entry in raw.split(os.pathsep)
        if os.path.isabs(entry) and not inside(Path(os.path.realpath(entry)), root)
    ]
    return os.pathsep.join(kept)


def system_which(exe: str, path_env: str | None, root: Path) -> Path | None:
    """``exe`` on PATH outside the workspace, or None."""
    found = shutil.which(exe, path=system_path(path_env, root))
    if found is None or inside(Path(os.path.realpath(found)), root):
        return None
    return Path(found)


def locate(
    spec: ToolSpec,
    reader: ConfinedReader,
    path_env: str | None,
    *,
    node_dirs: list[str],
    scanned: list[str],
) -> Installed | None:
    """Where the tool is: the project's own bin dirs first (never run), then PATH.

    ``node_dirs`` are the directories with a package.json, ``scanned`` every scanned
    directory, both nearest first."""
    exe = spec.executable
    local: list[str] = []
    if spec.ecosystem == "node":
        local = [join(d, f"node_modules/.bin/{exe}") for d in node_dirs]
    elif spec.ecosystem == "python":
        local = [join(d, f"{b}/{exe}") for d in scanned for b in VENV_BINS]
    for rel in local:
        st = reader.stat(rel)  # a link leading out is warned about and counts as absent
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_mode & 0o111:
            return Installed(reader.root / rel, local=True)
    found = system_which(exe, path_env, reader.root)
    return Installed(found, local=False) if found is not None else None


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _metadata_version(text: str) -> str:
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        if line.startswith("Version:"):
            return line.partition(":")[2].strip()
    return ""


def python_version(spec: ToolSpec, dirs: list[str], reader: ConfinedReader) -> str:
    """The version installed in a virtualenv of ``dirs`` (nearest first), from its METADATA."""
    if not spec.package:
        return ""
    wanted = _normalised(spec.package)
    for d in dirs:
        for venv in VENVS:
            lib = join(d, f"{venv}/lib")
            for python in (n for n in reader.listdir(lib) if n.startswith("python")):
                packages = f"{lib}/{python}/site-packages"
                for name in reader.listdir(packages):
                    stem = name.removesuffix(".dist-info")
                    project, _, version = stem.rpartition("-")
                    if stem == name or _normalised(project) != wanted:
                        continue
                    text = reader.text(f"{packages}/{name}/METADATA", MAX_METADATA_BYTES)
                    return (_metadata_version(text) if text else "") or version
    return ""


def node_version(spec: ToolSpec, node_dirs: list[str], reader: ConfinedReader) -> tuple[str, str]:
    """(version, source): installed in node_modules (``metadata``), else pinned in
    package-lock.json (``lock``)."""
    if not spec.package:
        return "", ""
    for d in node_dirs:
        data = reader.json(join(d, f"node_modules/{spec.package}/package.json"))
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return str(data["version"]), METADATA
        lock_rel = join(d, "package-lock.json")
        lock = reader.json(lock_rel, MAX_LOCK_BYTES) if reader.exists(lock_rel) else None
        if isinstance(lock, dict):
            entry = lock.get("packages", {}).get(f"node_modules/{spec.package}", {})
            if isinstance(entry, dict) and isinstance(entry.get("version"), str):
                return str(entry["version"]), "lock"
    return "", ""
