"""The handlers behind the workspace ops the Librarian and the Engineer declare.

- ``read``: read, list, search and outline files (the Librarian's and Engineer's reads).
- ``write``: write and edit files, run commands and tests (dry-run aware), through
  :mod:`backend.workspace`.
- ``scan``: walking the workspace the way the ignore files say, and reading text files.
"""
