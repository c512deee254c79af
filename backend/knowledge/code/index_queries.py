"""What the code index answers: definitions, text matches, outlines and dependencies.

:class:`IndexQueries` reads the tables :class:`~backend.knowledge.code.index_db.IndexDatabase`
holds (and :class:`~backend.knowledge.code.index.CodeIndex` fills) through this
thread's connection; the result records are plain frozen dataclasses.
:func:`search_words` is how full-text search splits text into words.
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from backend.knowledge.code.index_db import IndexDatabase, norm_name

_DEF_RANK = (
    "CASE WHEN kind IN ('class','struct','interface','trait','enum','type') THEN 0 "
    "WHEN kind IN ('function','method') THEN 1 ELSE 2 END"
)


@dataclass(frozen=True, slots=True)
class SymbolHit:
    name: str
    kind: str
    path: str
    line: int
    end_line: int | None
    parent: str | None
    signature: str


@dataclass(frozen=True, slots=True)
class TextHit:
    path: str
    line: int
    snippet: str


@dataclass(frozen=True, slots=True)
class FileOutline:
    path: str
    lang: str | None
    symbols: list[SymbolHit]
    imports: list[str]


@dataclass(frozen=True, slots=True)
class DependencyEdge:
    path: str  # the importing file
    module: str
    line: int
    target: str | None  # the workspace file (or Go package dir + "/") imported, if any


@dataclass(slots=True)
class Dependencies:
    imports: list[DependencyEdge] = field(default_factory=list)
    imported_by: list[DependencyEdge] = field(default_factory=list)


def search_words(text: str) -> set[str]:
    """The lower-case words full-text search matches ``text`` by (FTS5's unicode61
    tokens: runs of letters and digits, so ``read_text`` is two words)."""
    return set(re.findall(r"[^\W_]+", text.lower()))


class IndexQueries(IndexDatabase):
    """Read-only queries over the index of the workspace at ``root``."""

    def locate(self, name: str, limit: int = 50) -> list[SymbolHit]:
        """Definitions named ``name``: exact, else case-insensitive, else ignoring ``_``."""
        tiers = (
            ("name = ?", name),
            ("name = ? COLLATE NOCASE", name),
            ("norm = ?", norm_name(name)),
        )
        for where, arg in tiers:
            rows = self._conn().execute(
                "SELECT name, kind, path, line, end_line, parent, signature FROM symbols "
                f"WHERE {where} ORDER BY {_DEF_RANK}, parent IS NOT NULL, path, line LIMIT ?",
                (arg, limit),
            )
            hits = [SymbolHit(*row) for row in rows]
            if hits:
                return hits
        return []

    def find_symbols(
        self, fragment: str, kinds: Iterable[str] = (), limit: int = 50
    ) -> list[SymbolHit]:
        """Definitions whose name contains ``fragment`` (case-insensitive), of ``kinds``."""
        kinds = list(kinds)
        where = "instr(lower(name), ?) > 0"
        args: list[object] = [fragment.lower()]
        if kinds:
            where += f" AND kind IN ({','.join('?' * len(kinds))})"
            args.extend(kinds)
        rows = self._conn().execute(
            "SELECT name, kind, path, line, end_line, parent, signature FROM symbols "
            f"WHERE {where} ORDER BY length(name), {_DEF_RANK}, path, line LIMIT ?",
            (*args, limit),
        )
        return [SymbolHit(*row) for row in rows]

    def names_in(self, paths: Iterable[str]) -> set[str]:
        """Normalised names of the symbols the index holds for ``paths`` (relative)."""
        sql = "SELECT DISTINCT norm FROM symbols WHERE path IN ({marks})"
        return {str(name) for (name,) in self._rows_for_paths(sql, paths)}

    def words_in(self, paths: Iterable[str]) -> set[str]:
        """:func:`search_words` of the indexed text of ``paths`` (relative)."""
        sql = (
            "SELECT c.body FROM contents c JOIN files f ON f.id = c.rowid WHERE f.path IN ({marks})"
        )
        words: set[str] = set()
        for (body,) in self._rows_for_paths(sql, paths):
            words |= search_words(str(body))
        return words

    def _rows_for_paths(self, sql: str, paths: Iterable[str]) -> Iterator[tuple[Any, ...]]:
        """Rows of ``sql`` (a query with ``IN ({marks})``) for ``paths``, 500 at a time:
        SQLite caps the number of bound parameters."""
        rels = list(paths)
        conn = self._conn()
        for start in range(0, len(rels), 500):
            chunk = rels[start : start + 500]
            yield from conn.execute(sql.format(marks=",".join("?" * len(chunk))), chunk)

    def file_count(self) -> int:
        return int(self._conn().execute("SELECT count(*) FROM files").fetchone()[0])

    def lines(self, path: str, start: int, end: int) -> list[str]:
        """Lines ``start``..``end`` (1-based, inclusive) of an indexed file, from the index."""
        row = (
            self._conn()
            .execute(
                "SELECT c.body FROM contents c JOIN files f ON f.id = c.rowid WHERE f.path = ?",
                (self._rel(path),),
            )
            .fetchone()
        )
        if row is None:
            return []
        return str(row[0]).splitlines()[max(start - 1, 0) : end]

    def search(self, text: str, limit: int = 20) -> list[TextHit]:
        """Files whose text holds every word of ``text`` (adjacent words of an identifier
        such as ``read_text`` as a phrase), best first, with the first match's line."""
        words = re.findall(r"\w+", text)
        if not words:
            return []
        query = " ".join('"' + w.replace('"', "") + '"' for w in words)
        rows = self._conn().execute(
            "SELECT f.path, snippet(contents, 0, '[', ']', '…', 12), "
            "highlight(contents, 0, char(1), char(2)) FROM contents "
            "JOIN files f ON f.id = contents.rowid WHERE contents MATCH ? ORDER BY rank LIMIT ?",
            (query, limit),
        )
        hits = []
        for path, snippet, marked in rows:
            first = marked.find("\x01")
            if first < 0:
                hits.append(TextHit(path, 1, " ".join(snippet.split())))
                continue
            line = marked.count("\n", 0, first) + 1
            start = marked.rfind("\n", 0, first) + 1
            end = marked.find("\n", first)
            text = marked[start : end if end >= 0 else len(marked)]
            hits.append(TextHit(path, line, text.replace("\x01", "[").replace("\x02", "]").strip()))
        return hits

    def structure(self, path: str | Path = ".", limit: int = 500) -> list[FileOutline]:
        """Outline (symbols, imported modules) of a file, or of each file under a directory."""
        rel = self._rel(path)
        conn = self._conn()
        if rel and conn.execute("SELECT 1 FROM files WHERE path = ?", (rel,)).fetchone():
            files = conn.execute("SELECT path, lang FROM files WHERE path = ?", (rel,)).fetchall()
        elif rel:
            files = conn.execute(
                "SELECT path, lang FROM files WHERE path > ? AND path < ? ORDER BY path LIMIT ?",
                (rel + "/", rel + "0", limit),
            ).fetchall()
        else:
            files = conn.execute(
                "SELECT path, lang FROM files ORDER BY path LIMIT ?", (limit,)
            ).fetchall()
        out = []
        for file_path, lang in files:
            symbols = [
                SymbolHit(*row)
                for row in conn.execute(
                    "SELECT name, kind, path, line, end_line, parent, signature FROM symbols "
                    "WHERE path = ? ORDER BY line",
                    (file_path,),
                )
            ]
            imports = [
                m
                for (m,) in conn.execute(
                    "SELECT module FROM imports WHERE path = ? ORDER BY line", (file_path,)
                )
            ]
            out.append(FileOutline(file_path, lang, symbols, imports))
        return out

    def dependencies(
        self, path: str | Path, direction: Literal["imports", "imported_by", "both"] = "imports"
    ) -> Dependencies:
        """What ``path`` imports (resolved to workspace files where possible) and who imports it."""
        rel = self._rel(path)
        conn = self._conn()
        deps = Dependencies()
        if direction in ("imports", "both"):
            for import_id, module, line in conn.execute(
                "SELECT id, module, line FROM imports WHERE path = ? ORDER BY line", (rel,)
            ).fetchall():
                targets = [
                    t
                    for (t,) in conn.execute(
                        "SELECT target FROM import_targets WHERE import_id = ? ORDER BY rowid",
                        (import_id,),
                    )
                    if self._target_exists(conn, t)
                ]
                if any(t.endswith("/") for t in targets):
                    targets = targets[:1]  # Go: the longest package-path suffix that exists
                for target in targets or [None]:
                    deps.imports.append(DependencyEdge(rel, module, line, target))
        if direction in ("imported_by", "both"):
            package = posixpath.dirname(rel) + "/"
            for src, module, line, target in conn.execute(
                "SELECT DISTINCT i.path, i.module, i.line, t.target FROM import_targets t "
                "JOIN imports i ON i.id = t.import_id WHERE t.target IN (?, ?) AND i.path != ? "
                "ORDER BY i.path, i.line",
                (rel, package, rel),
            ):
                deps.imported_by.append(DependencyEdge(src, module, line, target))
        return deps

    @staticmethod
    def _target_exists(conn: sqlite3.Connection, target: str) -> bool:
        if target.endswith("/"):
            sql, arg = "SELECT 1 FROM files WHERE dir = ? AND lang = 'go' LIMIT 1", target[:-1]
        else:
            sql, arg = "SELECT 1 FROM files WHERE path = ?", target
        return conn.execute(sql, (arg,)).fetchone() is not None
