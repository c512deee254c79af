"""What sandbox this machine can give, found out once per process.

The launcher itself is asked (``--probe``): it reads Landlock's ABI and tries, in a
throw-away child, the user, mount, pid and net namespaces and a fresh ``/proc``:
exactly what a sandboxed command will need, so a machine that forbids unprivileged
namespaces (Ubuntu 24.04's default) is found before a command fails on it.
``SYLK_SANDBOX=landlock`` or ``none`` caps the level (a user's escape hatch, and how
the lesser levels are tested on a machine that has the full one).
"""

from __future__ import annotations

import functools
import marshal
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.sandbox.plan import SandboxLevel

LAUNCHER = Path(__file__).with_name("launcher.py")
LEVELS: tuple[SandboxLevel, ...] = ("none", "landlock", "full")
# Landlock's syscalls are 444-446 on every architecture with the generic table.
_ARCHES = frozenset({"x86_64", "amd64", "aarch64", "arm64", "riscv64", "ppc64le", "s390x"})
_PROBE_TIMEOUT_S = 20.0

_FULL = (
    "commands run sandboxed: Landlock ABI {abi} in user, mount and pid namespaces "
    "(reads only the system, its tools and the workspace; writes only in the workspace "
    "and a temp dir, .git read-only, Sylk's own files hidden, no IP network unless "
    "allowed, no process outlives its call)"
)
_LANDLOCK = (
    "commands run under Landlock ABI {abi} without namespaces ({why}): reads only the "
    "system, its tools and the workspace; writes only in the workspace and a temp dir, "
    ".git read-only, Sylk's files unreadable (their names still listable); no file can "
    "be added directly in a folder that holds .git or a protected path (the workspace "
    "root, usually); {net}"
)
_NONE = (
    "commands run UNCONFINED ({why}): only their own process group, an allow-listed "
    "environment and the time limit apply, so every command needs approval"
)


@dataclass(frozen=True)
class SandboxSupport:
    """The best sandbox level here and a sentence for /status saying what it means."""

    level: SandboxLevel
    detail: str
    landlock_abi: int = 0
    namespaces: bool = False

    @property
    def confined(self) -> bool:
        return self.level != "none"


def _ask_launcher() -> dict[str, Any]:
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", str(LAUNCHER), "--probe"],
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            env={"PATH": os.environ.get("PATH", os.defpath)},
            check=False,
        )
        found = marshal.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, EOFError, ValueError, TypeError):
        found = {}
    return found if isinstance(found, dict) else {}


def _network_note(abi: int) -> str:
    if abi >= 4:
        return "TCP blocked unless allowed, but not UDP nor path-named unix sockets"
    return f"network NOT blocked (TCP rules need Landlock ABI 4, this kernel has {abi})"


def probe_support(cap: str | None = None) -> SandboxSupport:
    """Find the level (no cache; :func:`sandbox_support` is the cached one)."""
    if not sys.platform.startswith("linux"):
        return SandboxSupport("none", _NONE.format(why=f"no sandbox on {sys.platform}"))
    if platform.machine().lower() not in _ARCHES:
        why = f"Landlock calls not wired for {platform.machine()}"
        return SandboxSupport("none", _NONE.format(why=why))
    found = _ask_launcher()
    abi = int(found.get("landlock_abi", 0))
    spaces = bool(found.get("userns")) and bool(found.get("proc"))
    if abi < 1:
        why = "this kernel has no Landlock, or it is disabled"
        return SandboxSupport("none", _NONE.format(why=why), abi, spaces)
    wanted = cap if cap in LEVELS else "full"
    if wanted == "none":
        return SandboxSupport("none", _NONE.format(why="SYLK_SANDBOX=none"), abi, spaces)
    if spaces and wanted == "full":
        return SandboxSupport("full", _FULL.format(abi=abi), abi, spaces)
    if not spaces:
        why = str(found.get("failed") or "unprivileged user namespaces are not allowed")
    else:
        why = "SYLK_SANDBOX=landlock"
    detail = _LANDLOCK.format(abi=abi, why=why, net=_network_note(abi))
    return SandboxSupport("landlock", detail, abi, spaces)


@functools.cache
def sandbox_support() -> SandboxSupport:
    """The best sandbox level this machine gives (probed once, then cached)."""
    return probe_support(os.environ.get("SYLK_SANDBOX", "").strip().lower() or None)
