"""``sylk archive migrate --to URL [--from URL]``: a local archive into the team's.

The copy and its checks are :mod:`backend.archive.team.copy`; this prints the table of
counts and checksums and exits non-zero, naming the tables, when any differs. The
source defaults to the configured archive (``database_url``, else the data dir's
``sylk.db``). Nothing here opens an engine: no session is resumed by a migration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from sylk_tui import paths
from sylk_tui.commands.exit_codes import EXIT_ERROR, EXIT_OK

Common = Callable[..., None]


def add_parser(commands: Any, common: Common) -> None:
    archive = commands.add_parser("archive", help="the archive itself: migrate it elsewhere")
    common(archive, default=argparse.SUPPRESS)
    verbs = archive.add_subparsers(dest="archive_verb", metavar="VERB", required=True)
    migrate = verbs.add_parser(
        "migrate",
        help="copy every table of an archive into another (e.g. the team's PostgreSQL)",
        description="Copy sessions, transcripts, the chronicle, usage, plans and snapshots "
        "into the target without loss; rows already there are not copied again. Prints each "
        "table's counts and sha256; exits 1 naming any table that differs.",
    )
    common(migrate, default=argparse.SUPPRESS)
    migrate.add_argument("--to", required=True, metavar="URL", help="postgresql+psycopg://…")
    migrate.add_argument(
        "--from", dest="source", metavar="URL",
        help="the archive to copy (default: the configured one)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from backend.archive.store import Archive
    from backend.archive.team.copy import ArchiveCopy, MigrationError, open_source, same_location
    from backend.config.settings import load_config
    from backend.sessions.ownership import local_owner

    settings = load_config(paths.config_file())
    data_dir = paths.data_dir(getattr(args, "data_dir", None))
    source_url = args.source or settings.database_url
    if same_location(source_url or "", args.to, data_dir):
        raise MigrationError(
            "--to names the archive being copied", help_hint="give the team's database URL"
        )
    source = open_source(source_url, data_dir)
    try:
        target = Archive(data_dir, url=args.to)
        try:
            print(f"copying {source.location} -> {target.location}", file=sys.stderr)
            copy = ArchiveCopy(source, target, local_owner(settings.team.user))
            report = copy.run()
        finally:
            target.close()
    finally:
        source.close()
    print("\n".join(report.lines()))
    if report.mismatched:
        print(f"sylk: error: differs after the copy: {', '.join(report.mismatched)}",
              file=sys.stderr)  # fmt: skip
        return EXIT_ERROR
    print(f"{report.copied} rows copied; every table matches", file=sys.stderr)
    return EXIT_OK
