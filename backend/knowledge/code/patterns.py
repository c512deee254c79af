"""Conventions the code index can show without a model: naming, errors, tests, layout.

``detect_patterns`` counts what the code does (not what a style guide says);
``concept_terms`` turns a concept such as "error handling" into the code words
that show it, for full-text evidence.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backend.knowledge.code.index import CodeIndex


_CONCEPTS: dict[str, tuple[str, ...]] = {
    "error": ("raise", "except", "catch", "throw", "errors.New", "Result", "panic"),
    "exception": ("raise", "except", "try", "catch", "throw"),
    "log": ("logging.getLogger", "logger", "log.", "console.log"),
    "test": ("def test_", "pytest", "assert", "describe(", "it(", "func Test"),
    "config": ("config", "settings", "environ", "toml", "yaml"),
    "cache": ("cache", "lru_cache", "ttl", "invalidate"),
    "async": ("async def", "await", "asyncio", "Promise", "goroutine", "go func"),
    "retry": ("retry", "backoff", "attempt"),
    "auth": ("auth", "token", "login", "password", "session"),
    "database": ("sqlite", "execute", "SELECT", "INSERT", "transaction"),
    "validation": ("validate", "pydantic", "BaseModel", "ValidationError", "schema"),
}
_CASES = {
    "snake_case": re.compile(r"^_*[a-z][a-z0-9]*(_[a-z0-9]+)+$"),
    "camelCase": re.compile(r"^_*[a-z]+[A-Z][A-Za-z0-9]*$"),
    "PascalCase": re.compile(r"^_*[A-Z][a-z0-9]+[A-Z]?[A-Za-z0-9]*$"),
    "UPPER_CASE": re.compile(r"^_*[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$"),
    "lowercase": re.compile(r"^_*[a-z][a-z0-9]*$"),
}
_FUNCTION_KINDS = ("function", "method")
_TYPE_KINDS = ("class", "struct", "interface", "trait", "enum", "type")


def concept_terms(concept: str) -> list[str]:
    """The concept's own words first, then code words that show it."""
    words = [w for w in re.split(r"[\W_]+", concept.lower()) if len(w) > 2]
    terms = [" ".join(words)] if words else []
    for word in words:
        for stem, extra in _CONCEPTS.items():
            if word.startswith(stem) or stem.startswith(word):
                terms.extend(e for e in extra if e not in terms)
    return terms or [concept]


def case_of(name: str) -> str:
    for label, pattern in _CASES.items():
        if pattern.match(name):
            return label
    return "mixed"


@dataclass
class PatternReport:
    naming: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    error_types: list[tuple[str, int]] = field(default_factory=list)
    tests: dict[str, Any] = field(default_factory=dict)
    languages: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "languages": self.languages,
            "naming": self.naming,
            "errors": self.errors,
            "error_types": [{"name": n, "count": c} for n, c in self.error_types],
            "tests": self.tests,
        }


def detect_patterns(index: CodeIndex, path: str = ".") -> PatternReport:
    """Naming conventions per language and kind, error-handling habits and test layout."""
    conn = index.reader()
    prefix = "" if path in (".", "") else path.rstrip("/") + "/"
    report = PatternReport()
    report.languages = dict(
        conn.execute(
            "SELECT lang, count(*) FROM files WHERE lang IS NOT NULL AND path LIKE ? "
            "GROUP BY lang ORDER BY count(*) DESC",
            (prefix + "%",),
        ).fetchall()
    )
    _naming(conn, prefix, report)
    _errors(conn, prefix, report)
    _tests(conn, prefix, report)
    return report


def _naming(conn: sqlite3.Connection, prefix: str, report: PatternReport) -> None:
    rows = conn.execute(
        "SELECT f.lang, s.kind, s.name FROM symbols s JOIN files f ON f.path = s.path "
        "WHERE s.path LIKE ? AND f.lang IS NOT NULL",
        (prefix + "%",),
    )
    counts: dict[str, dict[str, Counter[str]]] = {}
    for lang, kind, name in rows:
        group = "functions" if kind in _FUNCTION_KINDS else "types" if kind in _TYPE_KINDS else kind
        counts.setdefault(lang, {}).setdefault(group, Counter())[case_of(name)] += 1
    report.naming = {
        lang: {group: dict(c.most_common(3)) for group, c in groups.items()}
        for lang, groups in counts.items()
    }


def _count(conn: sqlite3.Connection, prefix: str, phrase: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM contents JOIN files f ON f.id = contents.rowid "
        "WHERE contents MATCH ? AND f.path LIKE ?",
        (f'"{phrase}"', prefix + "%"),
    ).fetchone()
    return int(row[0])


def _errors(conn: sqlite3.Connection, prefix: str, report: PatternReport) -> None:
    for label, phrase in (
        ("files raising exceptions (raise)", "raise"),
        ("files catching (except/catch)", "except"),
        ("files with catch blocks", "catch"),
        ("Go files returning errors (err != nil)", "err nil"),
        ("Rust files using Result", "Result"),
        ("files logging", "logging"),
    ):
        if n := _count(conn, prefix, phrase):
            report.errors[label] = n
    types = Counter(
        name
        for (name,) in conn.execute(
            "SELECT name FROM symbols WHERE kind = 'class' AND path LIKE ? AND "
            "(name LIKE '%Error' OR name LIKE '%Exception')",
            (prefix + "%",),
        )
    )
    report.error_types = types.most_common(10)


def _tests(conn: sqlite3.Connection, prefix: str, report: PatternReport) -> None:
    paths = [
        p
        for (p,) in conn.execute(
            "SELECT path FROM files WHERE path LIKE ? AND "
            "(path LIKE '%test%' OR path LIKE '%spec%')",
            (prefix + "%",),
        )
    ]
    dirs = Counter(p.split("/")[0] for p in paths if "/" in p)
    names = Counter(
        "test_*.py" if re.search(r"(^|/)test_[^/]*\.py$", p)
        else "*_test.go" if p.endswith("_test.go")
        else "*.test.ts/js" if re.search(r"\.test\.[jt]sx?$", p)
        else "*.spec.ts/js" if re.search(r"\.spec\.[jt]sx?$", p)
        else "other"
        for p in paths
    )  # fmt: skip
    report.tests = {
        "test_files": len(paths),
        "top_dirs": dict(dirs.most_common(3)),
        "file_naming": dict(names.most_common(4)),
        "test_functions": int(
            conn.execute(
                "SELECT count(*) FROM symbols WHERE path LIKE ? AND (name LIKE 'test%' OR "
                "name LIKE 'Test%') AND kind IN ('function', 'method')",
                (prefix + "%",),
            ).fetchone()[0]
        ),
    }
