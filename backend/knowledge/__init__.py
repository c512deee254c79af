"""What the agents know, each room kept by one of them.

- ``code``: the Librarian's index of the workspace's code (files, symbols,
  imports, full text), kept live by the watcher, with its intent-aware cache.
- ``chronicle``: the Archivalist's chronicle of what was done, decided and
  learned, in the archive's SQLite file, and the answers it gives without a model.
- ``fragments``: the Academic's library of guidance fragments (built-in ones in
  ``fragments/builtin/*/*.md`` plus the user's folders).
- ``tool_discovery``: which linters, formatters, type checkers and test tools a
  workspace uses, and which to recommend when it configures none.
- ``watch``: the workspace file watcher and the ignore policy the index shares.

Sessions, transcripts, snapshots and usage live in :mod:`backend.archive`.
"""
