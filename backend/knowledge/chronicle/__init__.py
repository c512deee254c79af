"""The Archivalist's chronicle: what was done, decided and learned, per session.

- ``chronicle``: :class:`Chronicle`, recording and querying entries with the
  sessions' isolation and promotion rules.
- ``store``: the chronicle's SQL: entries, file records, the full-text indexes.
- ``models``: categories, entries, queries and time scopes.
- ``record``: keeping what the user states ("decision: ...") in the chronicle.
- ``briefing``: briefings and session summaries.
- ``history_cache``: the intent-aware cache of history answers.
- ``text``: a question's search words, and FTS5 queries made of them.
- ``evidence``: what the offline answers read beyond the chronicle (test runs,
  reported results, earlier questions to the archive).
- ``answer``: answering a history question from the archive with no model.
- ``answer_lines``: how such an answer writes each record it found.
- ``answer_tests``: the offline answer to "did the tests pass".
- ``topic``: a question's topic, and how much of it a record mentions.
"""
