"""What other Sylk processes changed in a shared archive, as it happens.

PostgreSQL: triggers (installed once, idempotently) ``NOTIFY sylk_archive`` in the
writing transaction itself, so a notification exists exactly when its change was
committed: when a session is created or its state, name or closing changes, and when
a chronicle entry is promoted. A listener thread per process, on a psycopg connection
of its own, LISTENs and hands each payload (kind, id, session, owner) to a callback;
a dropped connection is reopened with backoff, and :meth:`ArchiveWatch.stop` ends it.

SQLite (several processes on one machine): no notifications exist, so a thread polls
``PRAGMA data_version`` (it changes when *another* connection commits; a read of a
few microseconds) every ``poll_s``; only then are sessions and newly promoted entries
compared with what it saw before.

Both see this process's own writes too (another connection wrote them): a reader
that wants only teammates' changes compares the owner.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import URL

from backend.archive.store import Archive

log = logging.getLogger(__name__)

CHANNEL = "sylk_archive"
POLL_S = 1.0
MAX_BACKOFF_S = 30.0

_OWNER = "(({row}.data::json->'owner'->>'user') || '@' || ({row}.data::json->'owner'->>'host'))"
TRIGGERS = (
    "SELECT pg_advisory_xact_lock(1398361931)",  # two processes installing at once
    f"""CREATE OR REPLACE FUNCTION sylk_notify_session() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('{CHANNEL}', json_build_object('kind', 'session', 'id', NEW.id,
        'session_id', NEW.id, 'owner', {_OWNER.format(row="NEW")})::text);
      RETURN NEW;
    END $$ LANGUAGE plpgsql""",
    f"""CREATE OR REPLACE FUNCTION sylk_notify_promoted() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('{CHANNEL}', json_build_object('kind', 'promoted', 'id', NEW.id,
        'session_id', NEW.session_id, 'owner',
        (SELECT {_OWNER.format(row="s")} FROM sessions s WHERE s.id = NEW.session_id))::text);
      RETURN NEW;
    END $$ LANGUAGE plpgsql""",
    "CREATE OR REPLACE TRIGGER sylk_session_created AFTER INSERT ON sessions "
    "FOR EACH ROW EXECUTE FUNCTION sylk_notify_session()",
    "CREATE OR REPLACE TRIGGER sylk_session_moved AFTER UPDATE ON sessions FOR EACH ROW "
    "WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.name IS DISTINCT FROM NEW.name "
    "OR OLD.closed IS DISTINCT FROM NEW.closed) EXECUTE FUNCTION sylk_notify_session()",
    "CREATE OR REPLACE TRIGGER sylk_entry_promoted AFTER INSERT OR UPDATE OF promoted "
    "ON chronicle_entries FOR EACH ROW WHEN (NEW.promoted) "
    "EXECUTE FUNCTION sylk_notify_promoted()",
)


@dataclass(frozen=True)
class ArchiveChange:
    """``kind``: ``session`` (made, or its state, name or closing changed) or
    ``promoted`` (``id``: the entry); ``owner``: ``user@host``, None when unknown."""

    kind: str
    id: str
    session_id: str
    owner: str | None


OnChange = Callable[[ArchiveChange], None]


def _change(payload: str) -> ArchiveChange | None:
    try:
        raw = json.loads(payload)
        return ArchiveChange(
            str(raw["kind"]), str(raw["id"]), str(raw["session_id"]), raw.get("owner")
        )
    except (ValueError, KeyError, TypeError):
        log.warning("an archive notification that is not Sylk's was ignored")
        return None


class ArchiveWatch:
    """One thread that reports other connections' changes to ``on_change``."""

    def __init__(self, archive: Archive, on_change: OnChange, *, poll_s: float = POLL_S) -> None:
        self._archive = archive
        self._on_change = on_change
        self._poll_s = poll_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.listening = threading.Event()  # set once changes from now on will be seen

    def start(self) -> None:
        if self._thread is not None:
            return
        url: URL = self._archive.read(lambda conn: conn.engine.url)
        if self._archive.dialect == "postgresql":
            self._archive.write(_install_triggers)
            target: Callable[[], None] = lambda: self._listen(url)  # noqa: E731
        else:
            target = self._poll
        self._thread = threading.Thread(target=target, name="sylk-archive-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _emit(self, change: ArchiveChange | None) -> None:
        if change is None:
            return
        try:
            self._on_change(change)
        except Exception:  # a subscriber's failure never ends the watch
            log.exception("an archive change could not be delivered")

    # -- PostgreSQL -----------------------------------------------------------------------
    def _listen(self, url: URL) -> None:
        import psycopg

        conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        backoff = 0.5
        while not self._stop.is_set():
            try:
                with psycopg.connect(conninfo, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    backoff = 0.5
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            self._emit(_change(note.payload))
            except psycopg.Error as exc:
                self.listening.clear()
                log.warning("archive notifications lost their connection (%s); retrying", exc)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)

    # -- SQLite ---------------------------------------------------------------------------
    def _poll(self) -> None:
        conn = sqlite3.connect(f"{self._archive.path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            version, seen, promoted_at = self._look(conn, None, {}, "")
            self.listening.set()
            while not self._stop.wait(self._poll_s):
                try:
                    version, seen, promoted_at = self._look(conn, version, seen, promoted_at)
                except sqlite3.Error as exc:  # busy or being checkpointed: the next look
                    log.debug("archive poll skipped: %s", exc)
        finally:
            conn.close()

    def _look(
        self, conn: sqlite3.Connection, version: int | None, seen: dict[str, Any], mark: str
    ) -> tuple[int, dict[str, Any], str]:
        now = int(conn.execute("PRAGMA data_version").fetchone()[0])
        if now == version:
            return now, seen, mark
        rows = conn.execute("SELECT id, state, name, closed, data FROM sessions").fetchall()
        current = {r[0]: (r[1], r[2], r[3]) for r in rows}
        owners = {r[0]: r[4] for r in rows}
        promoted = conn.execute(
            "SELECT id, session_id, promoted_at FROM chronicle_entries "
            "WHERE promoted AND promoted_at > ? ORDER BY promoted_at",
            (mark,),
        ).fetchall()
        if version is not None:  # the first look only takes stock
            for sid, state in current.items():
                if seen.get(sid) != state:
                    self._emit(ArchiveChange("session", sid, sid, _owner(owners[sid])))
            for entry, sid, _at in promoted:
                self._emit(ArchiveChange("promoted", entry, sid, _owner(owners.get(sid))))
        return now, current, max([mark, *(str(p[2]) for p in promoted)])


def _owner(data: str | None) -> str | None:
    try:
        raw = json.loads(data or "{}").get("owner")
        return None if not raw else f"{raw['user']}@{raw['host']}"
    except (ValueError, AttributeError, KeyError, TypeError):
        return None


def _install_triggers(conn: Connection) -> None:
    for statement in TRIGGERS:
        conn.exec_driver_sql(statement)
