"""What a checkpoint is, as kept on a session's hidden ref, and what /undo and /diff answer.

A session's ref ``refs/sylk/sessions/<id>`` is an append-only chain of commits,
each with a tree of two subtrees, ``before`` and ``after`` (so both stay reachable),
and a message whose body is this module's JSON:

- ``start``: the workspace when the session first changed something (``/diff``'s base);
- ``turn``: what one agent turn changed (``before`` -> ``after``);
- ``undo``: an undo of the ``turn`` named by ``undoes`` (the workspace before and after it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

from backend.checkpoints.git_process import CheckpointError
from backend.errors import ErrorKind

EntryKind = Literal["start", "turn", "undo"]
_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


class NothingToUndoError(CheckpointError):
    error_kind = ErrorKind.NOT_FOUND

    def __init__(self) -> None:
        super().__init__(
            "nothing to undo: no agent turn of this session changed files "
            "(or every one is undone already)",
            help_hint="/diff shows what the session changed",
        )

    def failure_word(self) -> str:
        return "nothing_to_undo"


class UndoConflictError(CheckpointError):
    """Files the turn changed were changed again since: undoing would lose that."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, paths: list[str]) -> None:
        shown = ", ".join(paths[:20]) + (
            f" (and {len(paths) - 20} more)" if len(paths) > 20 else ""
        )
        super().__init__(
            f"changed since the agent's turn: {shown}; undo would lose that — nothing was changed",
            help_hint="/diff shows the changes; edit the files back yourself, or keep them",
        )
        self.paths = paths

    def failure_word(self) -> str:
        return "changed_since"


class TurnRunningError(CheckpointError):
    error_kind = ErrorKind.CONFLICT

    def __init__(self) -> None:
        super().__init__(
            "an agent turn is running in this session; undo waits until it ends",
            help_hint="stop it first (esc), then /undo",
        )

    def failure_word(self) -> str:
        return "turn_running"


def session_ref(session_id: str) -> str:
    """The hidden ref of a session's checkpoints (the id is checked: it names a file)."""
    if not _SESSION_ID.match(session_id):
        raise CheckpointError(f"{session_id!r} is not a session id checkpoints can be kept for")
    return f"refs/sylk/sessions/{session_id}"


@dataclass(frozen=True)
class CheckpointEntry:
    commit: str
    kind: EntryKind
    before: str
    after: str
    at: str
    turn_id: str | None = None
    role: str | None = None
    undoes: str | None = None
    skipped: tuple[str, ...] = ()

    def message(self) -> str:
        """The commit message: a line for people, then the JSON this entry is read back from."""
        what = {"start": "session start", "turn": f"turn {self.turn_id} ({self.role})"}.get(
            self.kind, f"undo of {self.undoes}"
        )
        body = {
            "kind": self.kind, "before": self.before, "after": self.after, "at": self.at,
            "turn_id": self.turn_id, "role": self.role, "undoes": self.undoes,
            "skipped": list(self.skipped),
        }  # fmt: skip
        return f"sylk checkpoint: {what}\n\n{json.dumps(body, sort_keys=True)}\n"

    @classmethod
    def parse(cls, commit: str, message: str) -> CheckpointEntry | None:
        """The entry a commit holds; None for a commit that is not one of ours."""
        _, _, body = message.partition("\n\n")
        try:
            data = json.loads(body)
            return cls(
                commit=commit,
                kind=data["kind"],
                before=str(data["before"]),
                after=str(data["after"]),
                at=str(data["at"]),
                turn_id=data.get("turn_id"),
                role=data.get("role"),
                undoes=data.get("undoes"),
                skipped=tuple(data.get("skipped") or ()),
            )
        except (ValueError, KeyError, TypeError):
            return None


def open_turns(entries: list[CheckpointEntry]) -> list[CheckpointEntry]:
    """The turns not undone, newest first (``entries`` newest first)."""
    undone = {e.undoes for e in entries if e.kind == "undo"}
    return [e for e in entries if e.kind == "turn" and e.commit not in undone]


@dataclass(frozen=True)
class UndoOutcome:
    """What ``/undo`` did: the turn it reverted and the paths it put back."""

    turn_id: str | None
    role: str | None
    restored: list[str]  # changed by the turn: back to their content before it
    removed: list[str]  # created by the turn: deleted again
    recreated: list[str]  # deleted by the turn: back again
    remaining: int  # turns of the session still undoable
    skipped: tuple[str, ...] = ()  # over the size cap during the turn: not checkpointed


@dataclass(frozen=True)
class FileChange:
    path: str
    status: Literal["added", "modified", "deleted"]


@dataclass(frozen=True)
class SessionDiff:
    """The workspace now against the session's start, bounded."""

    started: bool  # False: the session has changed nothing yet
    files: list[FileChange] = field(default_factory=list)
    patch: str = ""  # a unified diff of ``files[:shown]``
    shown: int = 0
    skipped: tuple[str, ...] = ()
