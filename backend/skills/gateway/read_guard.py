"""Read before write: an agent may change an existing file only after reading it.

A model that edits a file it has not seen guesses at its content; one that
edits a file another process changed since it looked works from a stale copy
and silently undoes that change. So, per session, a post-tool hook records
every file an op read (``engineer.file.read``, ``librarian.file.read``) or
wrote itself (``engineer.file.write``, ``engineer.file.edit``: after its own
write the agent knows the content), with an xxHash64 fingerprint of exactly
the text the op returned or wrote. A pre-tool hook on ``engineer.file.edit``
and ``engineer.file.write`` then refuses a real change to an existing file
with CONFLICT (``details.reason`` ``not_read`` or ``changed_since_read``) and
guidance naming ``engineer.file.read`` for the path. Dry runs (previews) and
creating a new file need no read.

Partial reads count. The model saw the region it edits, and requiring a whole
read would push models to read huge files (which the read op refuses beyond
256 KiB anyway). What is recorded is each region read, by its line bounds; the
check re-slices those lines from the file on disk and compares fingerprints,
so "changed since read" means "what you saw is no longer what is there". A
newer read supersedes every recorded region it overlaps (a whole read or a
write supersedes them all), so reading again always clears a stale record.

Paths are keyed by their real location inside the workspace (symlinks
resolved, see :class:`~backend.workspace.files.Workspace`), so a link and its
target are one file. State is a few dicts per session behind a lock (hooks run
on the event loop, but a gateway may be shared with other threads), and is
dropped when the gateway forgets the session.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xxhash

from backend.skills.envelopes import ErrorCode
from backend.skills.gateway.gateway import Gateway
from backend.skills.hooks.registry import Hook, HookKind, HookPriority, Rejection, ToolCallData
from backend.skills.models import Guidance
from backend.workspace.files import Workspace, WorkspaceError

READ_OPS = frozenset({"engineer.file.read", "librarian.file.read"})
EDIT_OP = "engineer.file.edit"
WRITE_OP = "engineer.file.write"
GUARDED_OPS = frozenset({EDIT_OP, WRITE_OP})
READ_AGAIN_OP = "engineer.file.read"
NOT_READ = "not_read"
CHANGED = "changed_since_read"
# Regions kept per file: enough for a model paging through a file, bounded so a
# long session cannot grow one file's record without limit (oldest go first).
MAX_REGIONS = 32

Region = tuple[int, int]  # 1-based first and last line; an open end is sys.maxsize
WHOLE: Region = (1, sys.maxsize)


def as_read(text: str) -> str:
    """``text`` as a read returns it once written: reads decode with universal
    newlines (see :meth:`Workspace.read_text`), so a ``\\r\\n`` written comes back ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def fingerprint(text: str) -> str:
    # xxHash64, as the workspace's content hashes (backend.knowledge.watch.hashes).
    return xxhash.xxh64(text.encode("utf-8", "surrogatepass")).hexdigest()


def region_of(start_line: int | None, end_line: int | None) -> Region:
    return (start_line or 1, end_line or sys.maxsize)


def region_text(text: str, region: Region) -> str:
    """The lines of ``region`` exactly as :meth:`Workspace.read_text` slices them."""
    if region == WHOLE:
        return text
    lines = text.splitlines(keepends=True)
    first, last = max(1, region[0]), min(len(lines), region[1])
    return "".join(lines[first - 1 : last])


def _overlaps(a: Region, b: Region) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _read_disk(real: Path) -> str | None:
    """The file as a read op would decode it now, or None if it cannot be read."""
    try:
        return real.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


@dataclass(frozen=True)
class Verdict:
    """Why a change is refused: ``reason`` is ``not_read`` or ``changed_since_read``."""

    reason: str
    path: str  # workspace-relative real path


class ReadLedger:
    """Per session, per real path: the regions read and their fingerprints."""

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, dict[Region, str]]] = {}
        self._lock = threading.Lock()

    def record(self, session_id: str, path: Path, region: Region, digest: str) -> None:
        key = str(path)
        with self._lock:
            files = self._sessions.setdefault(session_id, {})
            old = files.get(key, {})
            kept = {r: d for r, d in old.items() if not _overlaps(r, region)}
            kept[region] = digest
            while len(kept) > MAX_REGIONS:
                del kept[next(iter(kept))]
            files[key] = kept

    def regions(self, session_id: str, path: Path) -> dict[Region, str]:
        with self._lock:
            return dict(self._sessions.get(session_id, {}).get(str(path), {}))

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def sessions(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._sessions)


def stale(text: str, regions: dict[Region, str]) -> bool:
    """Does any recorded region's fingerprint differ from the same lines of ``text``?"""
    return any(fingerprint(region_text(text, r)) != d for r, d in regions.items())


def _path_param(data: ToolCallData) -> str | None:
    path = getattr(data.params, "path", None) if data.params is not None else None
    if path is None:
        path = data.args.get("path")
    return path if isinstance(path, str) else None


def _refusal(verdict: Verdict) -> Rejection:
    path = verdict.path
    if verdict.reason == NOT_READ:
        message = f"read {path} before changing it"
        prose = f"Read {path} first, then make the change again"
    else:
        message = f"{path} changed since you read it: read it again"
        prose = f"Read {path} again, then redo the change against what is there now"
    # Error envelopes carry no guidance list, so the next step travels in details in
    # the same shape a successful result's guidance has.
    step = Guidance(op=READ_AGAIN_OP, prose=prose, args={"path": path})
    return Rejection(
        ErrorCode.CONFLICT,
        message,
        details={"reason": verdict.reason, "path": path, "guidance": [step.model_dump()]},
    )


class ReadGuard:
    """The two hooks and the ledger they share; :meth:`attach` installs them."""

    def __init__(self, ledger: ReadLedger | None = None) -> None:
        self.ledger = ledger if ledger is not None else ReadLedger()

    # -- hooks ----------------------------------------------------------------------
    def hooks(self) -> tuple[Hook, Hook]:
        return (
            # Late: after permission, validation and session scoping have passed.
            Hook("read_before_write", HookKind.PRE_TOOL, self.check, HookPriority.LATE),
            Hook("read_tracking", HookKind.POST_TOOL, self.track, HookPriority.NORMAL),
        )

    def attach(self, gateway: Gateway) -> None:
        """Install the hooks on ``gateway`` and forget a session's reads with it."""
        for hook in self.hooks():
            gateway.hooks.install(hook)
        gateway.on_forget_session(self.ledger.forget)

    async def check(self, data: ToolCallData) -> None:
        """Pre-tool: refuse a real edit or overwrite of a file not read, or read stale."""
        if data.skill.op not in GUARDED_OPS or data.dry_run:
            return
        verdict = await self.verdict(
            data.ctx.session_id,
            data.ctx.workspace,
            _path_param(data),
            protected=data.ctx.confinement.protected,
        )
        if verdict is not None:
            raise _refusal(verdict)

    async def verdict(
        self,
        session_id: str,
        workspace: Path,
        path: str | None,
        *,
        protected: tuple[Path, ...] = (),
    ) -> Verdict | None:
        """Why changing ``path`` now would be refused, or None if it may go ahead."""
        if path is None:
            return None
        try:
            ws = Workspace(workspace, protected=protected)
            real = ws.resolve(path)
        except (OSError, WorkspaceError):
            return None  # the op itself reports a bad or confined-out path
        if not real.is_file():
            return None  # a new file needs no read; anything else the op refuses
        rel = ws.relative(real)
        regions = self.ledger.regions(session_id, real)
        if not regions:
            return Verdict(NOT_READ, rel)
        text = await asyncio.to_thread(_read_disk, real)
        if text is not None and stale(text, regions):
            return Verdict(CHANGED, rel)
        return None

    async def track(self, data: ToolCallData) -> None:
        """Post-tool: remember what a successful read or real write showed the agent."""
        op = data.skill.op
        if not data.ok or data.result is None or data.dry_run:
            return
        if op not in READ_OPS and op not in GUARDED_OPS:
            return
        result: Any = data.result.result
        if not isinstance(result, dict) or not isinstance(result.get("path"), str):
            return
        try:
            ws = Workspace(data.ctx.workspace, protected=data.ctx.confinement.protected)
            real = ws.resolve(result["path"])
        except (OSError, WorkspaceError):
            return
        session = data.ctx.session_id
        if op in READ_OPS:
            self._track_read(session, real, data, result.get("content"))
        elif op == WRITE_OP:
            written = getattr(data.params, "content", None)
            if isinstance(written, str):
                self.ledger.record(session, real, WHOLE, fingerprint(as_read(written)))
        else:
            # The edit op reports a diff, not the text it wrote, so the text is read
            # back right after the write; another process changing the file within
            # that instant would go unnoticed until the next read.
            text = await asyncio.to_thread(_read_disk, real)
            if text is not None:
                self.ledger.record(session, real, WHOLE, fingerprint(text))

    def _track_read(self, session: str, real: Path, data: ToolCallData, content: Any) -> None:
        if not isinstance(content, str):
            return
        region = region_of(
            getattr(data.params, "start_line", None), getattr(data.params, "end_line", None)
        )
        if region != WHOLE and not content:
            return  # a range past the end showed nothing of the file
        self.ledger.record(session, real, region, fingerprint(content))


def install_read_guard(gateway: Gateway) -> ReadGuard:
    """A fresh guard attached to ``gateway``."""
    guard = ReadGuard()
    guard.attach(gateway)
    return guard


__all__ = [
    "CHANGED",
    "GUARDED_OPS",
    "NOT_READ",
    "READ_OPS",
    "ReadGuard",
    "ReadLedger",
    "Verdict",
    "fingerprint",
    "install_read_guard",
    "region_text",
]
