"""Agents: the loop they share, their turns, and how a request becomes an answer.

- ``answering``: :class:`AnswerPipeline`, a request for an agent answered from its
  stores, the answer cache, offline, or by a turn of the agent, and recorded.
- ``dispatch``: delivering a routed request to an agent in its session, through
  the Guide.
- ``turns``: one agent turn for a session: the model chosen, the loop run, the
  steps recorded.
- ``loop``: the agent loop every role shares.
- ``conversation``: the history an agent's model sees, from the transcript.
- ``knowledge_desk``: what the knowledge agents answer from their stores alone.
- ``librarian_cache``: the Librarian model's answers, cached and dropped as exactly
  as the index's own.
- ``tools``: the tool executor interface of the loop; ``gateway_tools``: the
  gateway as that executor.
"""
