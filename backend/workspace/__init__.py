"""The session's workspace: what an agent may touch, and how.

- ``files``: reading, listing and writing files confined to the workspace root.
- ``commands``: running a shell command there through the sandbox
  (:mod:`backend.sandbox`), bounded in time and output, killed whole on timeout or cancel.

Git worktrees per session come next (see docs/ARCHITECTURE.md).
"""
