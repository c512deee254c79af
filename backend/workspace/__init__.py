"""The session's workspace: what an agent may touch, and how.

- ``files``: reading, listing and writing files confined to the workspace root.
- ``commands``: running a shell command there, bounded in time and output, its
  process group killed whole on timeout or cancel.

Sandboxed commands, approvals and git worktrees come next (see docs/ARCHITECTURE.md).
"""
