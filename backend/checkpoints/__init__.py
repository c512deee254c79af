"""Checkpoints of agent turns: what each turn changed, ``/undo`` and ``/diff``.

- ``service``: :class:`Checkpoints` (per engine) and :class:`TurnCheckpoint` (per
  agent turn; :func:`current_turn` inside it), undo and the session's diff.
- ``shadow_repo``: the per-workspace bare git repository in Sylk's data dir that
  holds the snapshots, outside the workspace's reach.
- ``git_process``: running git safely against an untrusted work tree; typed errors.
- ``restore``: putting files back through directory descriptors, never following a link.
- ``records``: the entries on a session's hidden ref, and what undo and diff answer.
- ``answers``: the text of ``/undo`` and ``/diff``.
"""
