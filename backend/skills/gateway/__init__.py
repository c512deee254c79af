"""The skill gateway: the four verbs a model sees, and what runs under them.

- ``verbs``: the verbs declared once: argument models, the ``Verbs`` protocol, ``call_verb``.
- ``gateway``: ``Gateway``, which implements the verbs and holds per-session state.
- ``search_verb`` / ``describe_verb`` / ``execute_verb`` / ``batch``: each verb's work;
  ``help`` builds describe's pages; ``idempotency`` makes retried writes happen once.
- ``access``: what a caller may see and reach, and the refusals (not found, denied).
- ``contextual``: which contextual ops a session has loaded; ``read_guard``: a write
  to a file needs a fresh read of it.
"""
