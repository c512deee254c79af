"""The builtin skills of the nine agents.

- ``catalog``: every builtin skill and ``build_gateway``/``agent_context``, the defaults an
  engine uses; ``declare``: the compact ``declare(...)`` form, shared parameter models,
  and not-available placeholders (``Unbuilt``, ``NotAvailableError``).
- Per agent: ``guide`` (and ``session.*``), ``engineer``, ``librarian`` /
  ``librarian_index``, ``archivalist``, ``academic``, ``teams`` (architect,
  orchestrator, inspector, tester), ``discovery`` (tool discovery), ``sessions``.
- ``workspace/``: the handlers of the workspace ops (read, write, scan);
  ``library_resources``: library fragments as registry resources.
"""
