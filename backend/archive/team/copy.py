"""Copying one archive into another (``sylk archive migrate``): a laptop's SQLite
history into the team's PostgreSQL, without loss and without copying anything twice.

Rows are keyed by what identifies them: their id (sessions, transcript messages,
snapshots, chronicle entries), their key (preferences), or, for the append-only
logs numbered by ``seq`` (agent steps, usage, files, phase moves, plans), their
place in their session's log: a session whose log already holds n rows in the
target gets the source's rows after the n-th. ``seq`` is numbered afresh by the
target (a teammate's rows hold the numbers already) in the source's order. Each
batch is one transaction of the target's writer.

Afterwards every table is compared: the source's rows against the target's rows with
the same keys, by count and by a sha256 over the rows in key order with ``seq``
left out. A session without an owner gets the migrating user's on the way, on both
sides of the comparison: that is what was meant to be written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Boolean, Column, Connection, Float, Integer, Table, func, insert, select
from sqlalchemy.engine import make_url

from backend.archive.schema import SCHEMA_META, TABLES
from backend.archive.store import Archive
from backend.archive.team.ownership import json_owner
from backend.errors import ArchiveError, ErrorKind
from backend.sessions.ownership import SessionOwner

BATCH = 500
_KEYED = {
    "sessions": "id",
    "transcript": "id",
    "snapshots": "id",
    "chronicle_entries": "id",
    "preferences": "key",
}
"""Tables whose rows carry their own identity; the others are per-session logs."""
Row = tuple[Any, ...]


class MigrationError(ArchiveError):
    """The copy cannot start: no source, the source is the target, or a bad location."""

    error_kind = ErrorKind.INVALID


@dataclass
class TableCopy:
    """One table's outcome: rows in the source, copied now, matched in the target."""

    table: str
    source_rows: int = 0
    copied: int = 0
    target_rows: int = 0
    source_sha: str = ""
    target_sha: str = ""

    @property
    def ok(self) -> bool:
        return self.source_rows == self.target_rows and self.source_sha == self.target_sha


@dataclass
class CopyReport:
    tables: list[TableCopy] = field(default_factory=list)

    @property
    def mismatched(self) -> list[str]:
        return [t.table for t in self.tables if not t.ok]

    @property
    def copied(self) -> int:
        return sum(t.copied for t in self.tables)

    def lines(self) -> list[str]:
        head = f"{'table':<18} {'source':>7} {'copied':>7} {'target':>7}  {'sha256':<16}  ok"
        rows = [
            f"{t.table:<18} {t.source_rows:>7} {t.copied:>7} {t.target_rows:>7}  "
            f"{t.source_sha[:16]:<16}  {'yes' if t.ok else 'NO (target ' + t.target_sha[:16] + ')'}"
            for t in self.tables
        ]
        return [head, *rows]


def same_location(source: str, target: str, data_dir: Path) -> bool:
    """Both name one database: the same SQLite file, or the same server and database."""
    from backend.archive.postgres import locate

    a, b = locate(source, data_dir), locate(target, data_dir)
    if isinstance(a, Path) or isinstance(b, Path):
        return isinstance(a, Path) and isinstance(b, Path) and a.resolve() == b.resolve()
    return _server_key(a.render_as_string()) == _server_key(b.render_as_string())


def _server_key(url: str) -> tuple[Any, ...]:
    u = make_url(url)
    return (u.host, u.port, u.database, u.username, tuple(sorted(u.query.items())))


def open_source(raw: str | None, data_dir: Path) -> Archive:
    """The archive to copy from; a SQLite file must exist (opening would make one)."""
    from backend.archive.postgres import locate

    where = locate(raw, data_dir)
    if isinstance(where, Path) and not where.is_file():
        raise MigrationError(
            f"there is no archive at {where} to migrate",
            help_hint="name the SQLite archive with --from sqlite:///PATH",
        )
    return Archive(data_dir, url=raw)


def _columns(table: Table) -> list[Column[Any]]:
    return [c for c in table.columns if c.name != "seq" and c.name in _DECLARED[table.name]]


_DECLARED = {t.name: {c.name for c in t.columns} for t in TABLES}


def _normal(column: Column[Any], value: Any) -> Any:
    """One value as both databases give it back (SQLite: 0/1 booleans, PostgreSQL: bool)."""
    if value is None:
        return None
    if isinstance(column.type, Boolean):
        return int(bool(value))
    if isinstance(column.type, Float):
        return repr(float(value))
    if isinstance(column.type, Integer):
        return int(value)
    return str(value)


def _with_owner(data: str, owner: SessionOwner) -> str:
    try:
        parsed = json.loads(data)
    except ValueError:
        return data  # copied as it is; the comparison still covers it
    if not isinstance(parsed, dict) or parsed.get("owner") is not None:
        return data
    return json.dumps({**parsed, "owner": owner.model_dump()}, separators=(",", ":"))


def _sha(rows: Sequence[Row]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, separators=(",", ":"), default=str).encode() + b"\n")
    return digest.hexdigest()


def _chunks(items: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class ArchiveCopy:
    """Copies ``source`` into ``target`` table by table; ``owner`` for rows without one."""

    def __init__(self, source: Archive, target: Archive, owner: SessionOwner) -> None:
        self.source = source
        self.target = target
        self.owner = owner

    def run(self, on_table: Callable[[TableCopy], None] | None = None) -> CopyReport:
        report = CopyReport()
        for table in TABLES:
            if table is SCHEMA_META:
                continue
            done = self._keyed(table) if table.name in _KEYED else self._logged(table)
            report.tables.append(done)
            if on_table is not None:
                on_table(done)
        return report

    # -- reading ------------------------------------------------------------------------
    def _source_rows(self, table: Table) -> list[Row]:
        cols = _columns(table)
        order = [table.c.seq] if "seq" in table.c else [table.c[_KEYED[table.name]]]

        def read(conn: Connection) -> list[Row]:
            rows = conn.execute(select(*cols).order_by(*order))
            return [tuple(_normal(c, v) for c, v in zip(cols, r, strict=True)) for r in rows]

        rows = self.source.read(read)
        if table.name == "sessions":
            names = [c.name for c in cols]
            rows = [self._owned(dict(zip(names, r, strict=True))) for r in rows]
        return rows

    def _owned(self, row: dict[str, Any]) -> Row:
        """A session row with an owner, in ``data`` and the owner columns alike."""
        data = _with_owner(row["data"], self.owner)
        if row.get("owner_user") is None:
            owner = json_owner(data) or self.owner
            row = {**row, "owner_user": owner.user, "owner_host": owner.host}
        return tuple({**row, "data": data}.values())

    def _target_rows(self, table: Table, column: str, values: Sequence[Any]) -> list[Row]:
        """The target's rows whose ``column`` is one of ``values``, in ``seq`` order."""
        cols = _columns(table)
        order = [table.c.seq] if "seq" in table.c else []
        found: list[Row] = []
        for chunk in _chunks(list(values)):
            query = select(*cols).where(table.c[column].in_(chunk)).order_by(*order)

            def read(conn: Connection, query: Any = query) -> list[Row]:
                return [
                    tuple(_normal(c, v) for c, v in zip(cols, r, strict=True))
                    for r in conn.execute(query)
                ]

            found.extend(self.target.read(read))
        return found

    # -- tables keyed by their own id ------------------------------------------------------
    def _keyed(self, table: Table) -> TableCopy:
        key = _KEYED[table.name]
        names = [c.name for c in _columns(table)]
        at = names.index(key)
        rows = self._source_rows(table)  # in seq order where there is one: kept so
        done = TableCopy(table.name, source_rows=len(rows))
        for batch in _chunks(rows):
            done.copied += self.target.write(self._insert_missing(table, key, names, batch))
        there = self._target_rows(table, key, [r[at] for r in rows])
        if "seq" not in table.c:  # compared in key order; otherwise in seq order
            rows, there = sorted(rows, key=lambda r: r[at]), sorted(there, key=lambda r: r[at])
        done.target_rows, done.source_sha, done.target_sha = len(there), _sha(rows), _sha(there)
        return done

    @staticmethod
    def _insert_missing(
        table: Table, key: str, names: list[str], batch: Sequence[Row]
    ) -> Callable[[Connection], int]:
        at = names.index(key)

        def fn(conn: Connection) -> int:
            wanted = [r[at] for r in batch]
            have = set(conn.execute(select(table.c[key]).where(table.c[key].in_(wanted))).scalars())
            new = [dict(zip(names, r, strict=True)) for r in batch if r[at] not in have]
            if new:
                conn.execute(insert(table), _typed(table, new))
            return len(new)

        return fn

    # -- per-session logs numbered by seq -----------------------------------------------
    def _logged(self, table: Table) -> TableCopy:
        names = [c.name for c in _columns(table)]
        at = names.index("session_id")
        rows = self._source_rows(table)
        by_session: dict[str, list[Row]] = {}
        for row in rows:
            by_session.setdefault(row[at], []).append(row)
        done = TableCopy(table.name, source_rows=len(rows))
        sessions = sorted(by_session)
        for chunk in _chunks(sessions, 50):
            logs = {s: by_session[s] for s in chunk}
            done.copied += self.target.write(self._append_beyond(table, names, logs))
        ordered = [r for s in sessions for r in by_session[s]]
        there = self._target_rows(table, "session_id", sessions)
        there.sort(key=lambda r: r[at])  # stable: each session's rows stay in seq order
        done.target_rows, done.source_sha, done.target_sha = (
            len(there),
            _sha(ordered),
            _sha(there),
        )
        return done

    @staticmethod
    def _append_beyond(
        table: Table, names: list[str], logs: dict[str, list[Row]]
    ) -> Callable[[Connection], int]:
        def fn(conn: Connection) -> int:
            counted = select(table.c.session_id, func.count()).where(
                table.c.session_id.in_(list(logs))
            )
            grouped = conn.execute(counted.group_by(table.c.session_id))
            have: dict[str, int] = {str(sid): int(n) for sid, n in grouped}
            new = [
                dict(zip(names, r, strict=True))
                for sid, log in logs.items()
                for r in log[have.get(sid, 0) :]
            ]
            if new:
                conn.execute(insert(table), _typed(table, new))
            return len(new)

        return fn


def _typed(table: Table, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Normalised values back to the column's type for the insert."""
    out = []
    for row in rows:
        fixed = dict(row)
        for name, value in row.items():
            column = table.c[name]
            if value is None:
                continue
            if isinstance(column.type, Boolean):
                fixed[name] = bool(value)
            elif isinstance(column.type, Float):
                fixed[name] = float(value)
        out.append(fixed)
    return out
