"""What ``sylk``'s exit status means (``sylk run --help`` prints ``EXIT_CODES``).

No imports: the command line's parser needs the text before any engine module loads.
"""

from __future__ import annotations

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_OFFLINE = 0, 1, 2, 3
EXIT_NOT_SAVED, EXIT_PLAN_INCOMPLETE, EXIT_TRUNCATED, EXIT_INTERRUPTED = 4, 5, 6, 130
EXIT_CODES = """exit status:
  0    the request was answered (and saved)
  1    an error (a bad session name, a provider failure, ...)
  2    bad arguments or settings
  3    no model is configured: the offline answer was printed
  4    the archive could not be written (a full disk, a read-only data dir): an
       answer printed was not saved
  5    a plan was proposed but did not complete: it waits for approval, its DAG
       failed or was cancelled, the session stopped short of the complete phase,
       or it completed without edits or commands the approval policy refused
  6    the answer was cut at the model's output limit (max_tokens): what came
       was printed and saved, ending with "(truncated)"
  130  interrupted"""


def status_for(error: BaseException) -> int:
    """The exit status for a typed error the command reports: 2 for settings that cannot
    be used (a ``ConfigError``: a corrupt config file, an unusable database_url, a provider
    not configured, a missing extra), 4 for an archive that could not be written, else 1.
    Imports nothing: a ``ConfigError`` exists only once its module is loaded."""
    import sys

    settings = sys.modules.get("backend.config.settings")
    if settings is not None and isinstance(error, settings.ConfigError):
        return EXIT_USAGE
    errors = sys.modules.get("backend.errors")
    if errors is not None and isinstance(error, errors.ArchiveWriteError):
        return EXIT_NOT_SAVED
    return EXIT_ERROR
