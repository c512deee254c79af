"""Which workspace paths the Librarian leaves out: one policy for the index and the watcher.

A path is left out when one of its directories is on the seed's ignore list
(plus the usual tool caches), when its type is binary, when it matches an
extra pattern, or when git would ignore it: root and nested ``.gitignore``
files with ``*``, ``**``, ``dir/`` and ``!`` negation. The code index walks
with this policy and the file watcher filters its events through it before it
counts a batch, so a build writing into ``build/`` or a gitignored ``out/`` is
neither indexed nor reported.

``.gitignore`` files are read through an :class:`IgnoreView`, which reads each
one at most once: take a fresh view per walk or per change batch, and an edit
to an ignore file is seen by the next one.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from fnmatch import translate
from pathlib import Path, PurePosixPath

# The seed's FileWatcher.ignorePaths, then version control, environments and tool caches.
SKIP_DIRS = frozenset(
    {
        ".git", "node_modules", "vendor", "__pycache__", ".idea", ".vscode", "dist", "build",
        ".cache", ".hg", ".svn", ".venv", "venv", ".mypy_cache", ".pytest_cache",
        ".ruff_cache", ".tox", ".sylk",
    }
)  # fmt: skip
BINARY_EXTS = frozenset(
    {
        ".pyc", ".pyo", ".so", ".o", ".a", ".dll", ".dylib", ".exe", ".bin", ".class", ".jar",
        ".whl", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".tar", ".png", ".jpg",
        ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".pdf", ".woff", ".woff2", ".ttf", ".otf",
        ".mp3", ".mp4", ".wav", ".ogg", ".db", ".sqlite", ".pkl", ".npy",
    }
)  # fmt: skip
# Workspace.write_text saves through ".<name>.<random>.sylk-tmp"; the rename that follows
# is what changes the file.
DEFAULT_PATTERNS: tuple[str, ...] = ("*.sylk-tmp",)
IGNORE_FILE = ".gitignore"

_Rule = tuple[re.Pattern[str], bool, bool]  # (regex, negated, directories only)
_Layers = list[tuple[str, list[_Rule]]]  # (directory, its rules), root first


def _translate(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and (close := glob.find("]", i + 2)) != -1:
            body = glob[i + 1 : close]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = close + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def parse_gitignore(text: str) -> list[_Rule]:
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        line = line[1:] if negated else line
        line = line[1:] if line.startswith("\\") else line
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        regex = ("" if anchored else "(?:.*/)?") + _translate(line.lstrip("/"))
        rules.append((re.compile(regex), negated, dir_only))
    return rules


def _matched(rel: str, is_dir: bool, layers: _Layers) -> bool:
    """Whether ``rel`` itself is ignored; the last matching rule of the deepest file wins."""
    result = False
    for base, rules in layers:
        sub = rel[len(base) + 1 :] if base else rel
        for regex, negated, dir_only in rules:
            if (is_dir or not dir_only) and regex.fullmatch(sub):
                result = not negated
    return result


def is_ignore_file(rel: str) -> bool:
    """Whether ``rel`` (relative, posix) is a file whose edit changes what is ignored."""
    return PurePosixPath(rel).name == IGNORE_FILE


class IgnorePolicy:
    """What the index and the watcher of the workspace at ``root`` leave out."""

    def __init__(
        self, root: Path, extra: Iterable[str] = (), protected: Iterable[Path] = ()
    ) -> None:
        self.root = root
        self.patterns: tuple[str, ...] = (*DEFAULT_PATTERNS, *extra)
        # Sylk's own data inside the workspace (its data dir, config): never indexed, no news.
        real = root.resolve()
        self.protected = tuple(
            p.relative_to(real).as_posix()
            for p in (Path(q).resolve() for q in protected)
            if real in p.parents
        )
        # fnmatch semantics, compiled once: the walk asks about every entry.
        self._pattern = re.compile("|".join(f"(?:{translate(p)})" for p in self.patterns))

    def skips(self, rel: str, is_dir: bool = False) -> bool:
        """Left out by name alone (no file is read): safe on any thread, at any rate."""
        if rel in ("", "."):
            return False
        if self.is_protected(rel):
            return True
        parts = rel.split("/")
        last = len(parts) - 1
        return any(self._skips_entry(rel, p, is_dir or i < last) for i, p in enumerate(parts))

    def is_protected(self, rel: str) -> bool:
        return any(rel == p or rel.startswith(p + "/") for p in self.protected)

    def _skips_entry(self, rel: str, name: str, is_dir: bool) -> bool:
        """``rel`` left out by its last part, ``name``, alone (its directories passed)."""
        if self.protected and self.is_protected(rel):
            return True
        if is_dir:
            if name in SKIP_DIRS:
                return True
        elif name == ".git" or os.path.splitext(name)[1].lower() in BINARY_EXTS:
            return True  # a worktree's or submodule's ".git" is a file naming its git dir
        return bool(self._pattern.match(name) or self._pattern.match(rel))

    def view(self) -> IgnoreView:
        return IgnoreView(self)

    def ignores(self, rel: str, is_dir: bool = False) -> bool:
        return self.view().ignores(rel, is_dir)


class IgnoreView:
    """The policy with the ignore files as they are now (each read at most once)."""

    def __init__(self, policy: IgnorePolicy) -> None:
        self._policy = policy
        self._rules: dict[str, list[_Rule]] = {}

    def rules(self, rel_dir: str) -> list[_Rule]:
        found = self._rules.get(rel_dir)
        if found is None:
            path = self._policy.root / rel_dir / IGNORE_FILE
            try:
                found = parse_gitignore(path.read_text("utf-8", errors="replace"))
            except OSError:
                found = []
            self._rules[rel_dir] = found
        return found

    def ignores(self, rel: str, is_dir: bool = False) -> bool:
        """Whether ``rel`` (relative, posix) or one of its directories is left out."""
        if self._policy.skips(rel, is_dir):
            return True
        if rel in ("", "."):
            return False
        parts = rel.split("/")
        layers: _Layers = []
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            if rules := self.rules(base):
                layers.append((base, rules))
            if _matched("/".join(parts[: depth + 1]), is_dir or depth < len(parts) - 1, layers):
                return True
        return False

    def walk(self, start: str = "") -> Iterator[tuple[str, os.stat_result]]:
        """Regular files at or below ``start`` ("" is the root) that are not left out,
        in name order, with their ``lstat``; symbolic links are neither followed nor
        reported (one may lead out of the workspace)."""
        start = "" if start in ("", ".") else start
        full = self._policy.root / start if start else self._policy.root
        try:
            st = os.lstat(full)
        except OSError:
            return
        if stat.S_ISREG(st.st_mode):
            if start and not self.ignores(start):
                yield start, st
            return
        if not stat.S_ISDIR(st.st_mode) or (start and self.ignores(start, is_dir=True)):
            return
        layers: _Layers = []
        parts = start.split("/") if start else []
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            if rules := self.rules(base):
                layers.append((base, rules))
        yield from self._walk_dir(start, layers)

    def _walk_dir(self, rel_dir: str, layers: _Layers) -> Iterator[tuple[str, os.stat_result]]:
        if rules := self.rules(rel_dir):
            layers = [*layers, (rel_dir, rules)]
        try:
            entries = sorted(os.scandir(self._policy.root / rel_dir), key=lambda e: e.name)
        except OSError:
            return
        skips = self._policy._skips_entry  # the directories above were checked on the way
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if not skips(rel, entry.name, True) and not _matched(rel, True, layers):
                        yield from self._walk_dir(rel, layers)
                elif (
                    entry.is_file()
                    and not skips(rel, entry.name, False)
                    and not _matched(rel, False, layers)
                ):
                    yield rel, entry.stat(follow_symlinks=False)
            except OSError:  # gone between the listing and the look
                continue
