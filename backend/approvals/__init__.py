"""Approvals: the user's policy for what an agent may do without asking (Codex-style).

Modes per session (``read-only``, ``ask``, ``auto-edit``, ``auto``; the default from
``[approvals] mode``), allow and deny rules for commands from the config and from the
user's answers, and the questions themselves, as engine events carrying a future.

- ``command_shape``: what a command line is made of (one simple command? what could
  it run?), read from hostile text.
- ``rules``: allow and deny rules (``git status``, ``pytest *``, ``git push*``).
- ``policy``: the decision table (mode x action x rules x sandbox -> allow/ask/deny).
- ``session_approvals``: each session's mode, network switch and allowed rules and
  files, kept in its metadata.
- ``request``: what a call is about to do (the command, or the file and its diff).
- ``answers``: the approval question and the answers it takes.
- ``gate``: the pre-tool hook on the gateway that decides, asks and refuses.
- ``errors``: the typed refusal (DENIED) the model reads.
- ``user_commands``: ``/approval``, ``/network`` and the lines of ``/status``.

Which ops are weighed is declared on the skill (``Skill.action``: ``edit``,
``command`` or ``external``), never listed here.
"""
