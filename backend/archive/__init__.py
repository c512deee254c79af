"""The archive: one SQLite file of sessions, transcripts, snapshots and usage.

- ``store``: :class:`Archive`, reading and writing sessions, transcripts,
  snapshots, steps, usage and preferences.
- ``schema``: the tables (the chronicle's too), and the check that a database
  file is safe to open.
- ``writer``: :class:`ArchiveWriter`, the single writer thread and its queue.
- ``records``: :class:`SessionRecords`, what a reader of sessions and transcripts
  needs (the MCP server's resources), and no more.
"""
