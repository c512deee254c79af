"""What confines an agent beyond its workspace root, decided once per session by the engine.

- ``protected``: Sylk's own directories (its config with the API keys, its data dir
  with the archive and every session's history). Never read, listed or written by
  an agent's file op or command, even when they lie inside the workspace.
- ``network``: whether the session's commands may use the network (off by default).

Handlers read it from :attr:`~backend.skills.models.SkillContext.confinement`; the
file ops pass ``protected`` to :class:`~backend.workspace.files.Workspace`, the
command runner hands both to the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Confinement:
    protected: tuple[Path, ...] = ()
    network: bool = False

    @classmethod
    def of(cls, workspace: Path, *paths: Path | None, network: bool = False) -> Confinement:
        """Protect ``paths`` (files or dirs; resolved, each once, None skipped).

        A directory that is the workspace or holds it cannot be protected whole
        (nothing could be touched): its own entries named in ``paths`` are.
        """
        root = workspace.expanduser().resolve()
        seen: dict[Path, None] = {}
        for path in paths:
            if path is None:
                continue
            real = path.expanduser().resolve()
            if real != root and real not in root.parents:
                seen[real] = None
        return cls(protected=tuple(seen), network=network)
