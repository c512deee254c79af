"""The session lifecycle's remainder on the engine: fail, close, stats, snapshots, idling.

- ``verbs``: :class:`LifecycleVerbs`, the engine's verbs for them (a base of ``Engine``).
- ``snapshot_work``: snapshot and restore of the session's whole workflow state.
- ``idle_timer``: :class:`IdleTimer`, which suspends sessions left idle.

A part that must act when a session closes (its worktree removed) hooks into
``SessionService`` (its release and discard hooks), which ``close_session`` goes through.
"""
