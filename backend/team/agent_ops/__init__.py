"""The real handlers of the agents' team ops that need the engine's parts: the
Inspector's and the Tester's (``inspector_ops``, ``tester_ops``, failing test output read
by ``test_output``), the Archivalist's analysis (``knowledge_ops``) and the Academic's
research (``research_ops``)."""
