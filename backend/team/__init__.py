"""The team at work: what turns approved plans and single requests into checked changes.

Below the engine and above the scheduler and the pipelines: the live pipelines of each
session and the user's ``/task`` steering, the session's QA after a plan and the fix
loop, the completion summary, and the real handlers of the agents' team ops (the
Inspector's, the Tester's, the Architect's, the Guide's). The engine builds these parts
and wires them (:mod:`backend.engine.team_work`); the ops' declarations stay in
:mod:`backend.skills.builtin`, and :func:`backend.team.wiring.install_handler` gives a
declared op its real handler.
"""
