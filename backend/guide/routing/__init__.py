"""The Guide's tiered router: DSL fast path -> route cache -> patterns -> model.

- ``router``: ``Router``, the tiers in order; ``decision``: ``RouteDecision`` and
  ``Target`` (derived from :data:`backend.roles.AGENT_ROLES`).
- ``dsl`` / ``session_dsl``: commands (``@agent``, ``/session ...``) decided without classifying.
- ``cache``: the same request is not classified twice.
- ``patterns`` with ``rules``, ``question_rules`` and ``text``: the pattern tier.
- ``model_tier``: one model call for what the patterns were unsure of.
"""
