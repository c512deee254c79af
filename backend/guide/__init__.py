"""The Guide: every user request, and every message between agents, passes here.

- ``guide``: ``Guide``, which routes, checks the session and target, and delivers
  through the bus (:mod:`backend.bus`).
- ``commands``: what the Guide and the session manager answer themselves.
- ``status``: the text of /status and /session list.
- ``routing``: the tiered router (DSL, cache, patterns, model).
"""
