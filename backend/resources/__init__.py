"""The resource manager: what sessions sharing one codebase must not do to each other.

File-level read/write locks (:mod:`file_locks`), per-line records of who changed a
shared file (:mod:`line_owners`), changed hunks of a worktree against its base
(:mod:`hunks`), and the conflict watch that warns both sessions as soon as two live
sessions change one file (:mod:`conflict_watch`).
"""

from backend.resources.conflict_watch import Conflict, ConflictWatch, SessionPlace
from backend.resources.file_locks import FileLocks, RWLock

__all__ = ["Conflict", "ConflictWatch", "FileLocks", "RWLock", "SessionPlace"]
