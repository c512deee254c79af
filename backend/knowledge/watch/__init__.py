"""The workspace file watcher, and what it shares with the code index.

- ``watcher``: :class:`FileWatcher`, debouncing events and reporting, one
  :class:`ChangeBatch` at a time, the files whose content really changed.
- ``observer``: watchdog's observer thread, the event forwarder and the
  overflow alarm.
- ``hashes``: content hashes of the workspace's files, and workspace paths.
- ``ignore``: the ignore policy (``.gitignore`` files, the default list) that
  the index and the watcher share.
"""
