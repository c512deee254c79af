"""What a code index holds, as plain rows to compare two indexes by."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def snapshot(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Everything the index answers from, without row ids."""
    with sqlite3.connect(db) as conn:
        return {
            "files": conn.execute(
                "SELECT path, size, hash, lang, dir FROM files ORDER BY path"
            ).fetchall(),
            "symbols": conn.execute(
                "SELECT name, kind, path, line, end_line, parent, signature, norm FROM symbols "
                "ORDER BY path, line, name"
            ).fetchall(),
            "imports": conn.execute(
                "SELECT path, module, line FROM imports ORDER BY path, line, module"
            ).fetchall(),
            "targets": conn.execute(
                "SELECT i.path, i.module, i.line, t.target FROM import_targets t "
                "JOIN imports i ON i.id = t.import_id ORDER BY 1, 3, 2, 4"
            ).fetchall(),
            "contents": conn.execute(
                "SELECT f.path, c.body FROM contents c JOIN files f ON f.id = c.rowid ORDER BY 1"
            ).fetchall(),
        }
