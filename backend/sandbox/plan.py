"""What the sandbox allows, decided in Sylk before the launcher runs: paths and their rights.

Landlock only *grants*: a rule on a directory gives its rights to everything beneath
it, and nothing can take a right back lower down. So where a subtree must stay out
of a grant (``.git`` while the workspace is writable; Sylk's protected paths while
``/`` is readable), :func:`carve` grants the rights on the *siblings* along the
path to that subtree instead of on its ancestors, and the ancestors keep only what
no excluded subtree denies, plus ``read_dir`` so they can still be listed.

The costs, which :mod:`backend.sandbox.support` states in its ``detail``:

- an ancestor of an excluded subtree gets no right to create, remove or rename its
  entries: with ``.git`` in the workspace root, a command can change the root's
  existing files but not add a file there;
- a listing of an excluded directory still shows its entries' names (its files'
  contents stay unreadable), because the ancestors keep ``read_dir``;
- entries created after the plan was made get only what their parent grants.

With namespaces (level ``full``) none of that is needed: ``.git`` is mounted
read-only and protected paths are hidden under empty mounts.

Reads are not granted beneath ``/`` either: a command reads the system
(:data:`SYSTEM_ROOTS`), the installations its ``PATH`` names (an entry ``.../bin``
gives its prefix, so a pyenv or nvm install under ``$HOME`` works), Sylk's own
Python, the workspace and its private temp dir; the rest of the user's files
(``~/.ssh``, other projects, ``/tmp``) stay out of reach.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from backend.sandbox.kernel import FILE_RIGHTS, FS_RIGHTS

SandboxLevel = Literal["full", "landlock", "none"]
Rights = frozenset[str]

ALL: Rights = frozenset(FS_RIGHTS)
READ: Rights = frozenset({"execute", "read_file", "read_dir"})
WRITE: Rights = ALL - READ
DEVICE: Rights = frozenset({"read_file", "write_file", "truncate", "ioctl_dev"})
# Devices every program may write (``> /dev/null`` truncates, hence the right to).
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


@dataclass(frozen=True)
class PathRule:
    """Landlock rights on ``path`` and (for a directory) everything beneath it."""

    path: Path
    rights: Rights


@dataclass(frozen=True)
class Exclusion:
    """A subtree that must not get ``denied`` from a grant on one of its ancestors."""

    path: Path
    denied: Rights


@dataclass(frozen=True)
class SandboxPlan:
    level: SandboxLevel
    rules: tuple[PathRule, ...] = ()
    readonly: tuple[Path, ...] = ()  # full: bind-mounted read-only
    hidden: tuple[Path, ...] = ()  # full: covered by an empty, unreadable mount
    private_tmpfs: tuple[Path, ...] = ()  # full: a fresh writable tmpfs
    network: bool = False

    def spec(self, argv: Sequence[str], cwd: Path, status_fd: int) -> dict[str, Any]:
        """The launcher's instructions (plain types only: it is marshalled)."""
        uid, gid = os.getuid(), os.getgid()
        return {
            "level": self.level,
            "argv": list(argv),
            "cwd": str(cwd),
            "status_fd": status_fd,
            "rules": [[str(r.path), sorted(r.rights)] for r in self.rules],
            "readonly": [str(p) for p in self.readonly],
            "hidden": [str(p) for p in self.hidden],
            "private_tmpfs": [str(p) for p in self.private_tmpfs],
            "network": self.network,
            # Unprivileged inside, so the exec drops the namespace's capabilities.
            "inner_uid": uid or 1000,
            "inner_gid": gid or 1000,
        }


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _entries(directory: Path) -> Iterable[tuple[Path, str]]:
    try:
        with os.scandir(directory) as found:
            for entry in found:
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                else:
                    kind = "file"
                yield Path(entry.path), kind
    except OSError:
        return  # unreadable: nothing beneath it is granted


def carve(path: Path, rights: Rights, exclusions: Sequence[Exclusion]) -> list[PathRule]:
    """Rules granting ``rights`` beneath ``path`` except what ``exclusions`` deny.

    Symbolic links get no rule: what they point to is ruled by its own path.
    """
    for ex in exclusions:
        if _inside(path, ex.path):
            rights = rights - ex.denied
    below = [ex for ex in exclusions if path in ex.path.parents and ex.denied & rights]
    if not rights:
        return []
    if not below:
        return [PathRule(path, rights)]
    kept = rights.difference(*(ex.denied for ex in below))
    if "read_dir" in rights:
        kept |= {"read_dir"}  # listable; the names beneath are the price
    rules = [PathRule(path, kept)] if kept else []
    for child, kind in _entries(path):
        if kind == "dir":
            rules += carve(child, rights, below)
        elif kind == "file":
            allowed = rights.difference(*(ex.denied for ex in below if ex.path == child))
            if allowed & FILE_RIGHTS:
                rules.append(PathRule(child, allowed & FILE_RIGHTS))
    return rules


def git_paths(workspace: Path) -> list[Path]:
    """The workspace's git internals that lie inside it: ``.git`` and where it points."""
    dot = workspace / ".git"
    if not os.path.lexists(dot):
        return []
    found: list[Path] = []
    real = dot.resolve()
    if dot.is_file() and not dot.is_symlink():
        found.append(dot)  # "gitdir: ..." must not be pointed elsewhere
        try:
            pointer = dot.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            pointer = ""
        if pointer.startswith("gitdir:"):
            real = (workspace / pointer.removeprefix("gitdir:").strip()).resolve()
    if _inside(real, workspace) and real.exists():
        found.append(real)
    return found


# Where programs and their libraries, config and devices live.
SYSTEM_ROOTS = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
    "/proc", "/sys", "/dev", "/nix", "/snap", "/run/systemd/resolve",
)  # fmt: skip


def read_roots(workspace: Path, path_env: str) -> list[Path]:
    """What a command may read beneath: the system, its PATH's installs, Sylk's Python."""
    wanted = [Path(p) for p in SYSTEM_ROOTS]
    for entry in path_env.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue  # a relative PATH entry names nothing fixed
        where = Path(entry).resolve()
        wanted.append(where.parent if where.name in ("bin", "sbin", "shims") else where)
    wanted += [Path(sys.prefix), Path(sys.base_prefix), workspace]
    roots: list[Path] = []
    for path in sorted({p.resolve() for p in wanted if p.exists()}, key=lambda p: len(p.parts)):
        if path != Path("/") and not any(r in path.parents for r in roots):
            roots.append(path)
    return roots


def _devices() -> list[PathRule]:
    return [PathRule(Path(d), DEVICE) for d in DEVICES if os.path.exists(d)]


def build_plan(
    level: SandboxLevel,
    *,
    workspace: Path,
    home: Path,
    protected: Sequence[Path] = (),
    network: bool = False,
    path_env: str | None = None,
) -> SandboxPlan:
    """What a command may touch: read :func:`read_roots`, write the workspace and ``home``."""
    workspace, home = workspace.resolve(), home.resolve()
    path_env = os.environ.get("PATH", os.defpath) if path_env is None else path_env
    readable = read_roots(workspace, path_env)
    if level == "none":
        return SandboxPlan(level, network=True)
    present = [p for p in protected if os.path.lexists(p)]
    # One inside another (the archive file in the data dir) is hidden with it.
    hidden = tuple(p for p in present if not any(q in p.parents for q in present))
    gits = git_paths(workspace)
    if level == "full":
        shm = (Path("/dev/shm"),) if os.path.isdir("/dev/shm") else ()
        rules = [*(PathRule(r, READ) for r in readable), PathRule(workspace, ALL),
                 PathRule(home, ALL),
                 *(PathRule(p, ALL) for p in shm), *_devices()]  # fmt: skip
        return SandboxPlan(level, tuple(rules), tuple(gits), hidden, shm, network)
    exclusions = [*(Exclusion(p, ALL) for p in hidden), *(Exclusion(p, WRITE) for p in gits)]
    rules = [
        *(rule for root in readable for rule in carve(root, READ, exclusions)),
        *carve(workspace, ALL, exclusions),
        *carve(home, ALL, exclusions),
        *_devices(),
    ]
    return SandboxPlan(level, tuple(rules), network=network)
