"""What a Librarian turn drew on, and how the intent cache keeps model answers apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend.agents.knowledge_desk import Question
from backend.agents.librarian_cache import question_lookup, turn_sources
from backend.knowledge.code.intent_cache import Change, Intent, IntentCache


def _workspace(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "core.py").write_text("class Core: ...\n")
    (root / "pkg" / "util.py").write_text("import pkg.core\n")
    return root.resolve()


def _result(op: str, result: Any, **extra: Any) -> tuple[str, dict[str, Any]]:
    envelope = {"op": op, "ok": True, "result": result, **extra}
    return "tool_result", {"name": "execute", "content": json.dumps(envelope), "is_error": False}


def _call(name: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    return "tool_call", {"name": name, "arguments": arguments}


def test_reads_search_hits_and_import_edges_are_files_guidance_is_not(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    steps = [
        _call("execute", op="librarian.code.search", args={"query": "Core"}),
        _result(
            "librarian.code.search",
            {"definitions": [{"path": "pkg/core.py", "line": 1}], "hits": []},
            guidance=[{"op": "librarian.file.read", "args": {"path": "pkg/never_read.py"}}],
        ),
        _call("librarian__file__read", path="./pkg/core.py"),
        _call("execute", op="librarian.code.dependencies", args={"path": "pkg/core.py"}),
        _result(
            "librarian.code.dependencies", {"path": "pkg/core.py", "imported_by": ["pkg/util.py"]}
        ),
        _call("search", query="read a file"),  # the skill registry, not the workspace
    ]
    sources = turn_sources(steps, root)
    assert sources.files == {"pkg/core.py", "pkg/util.py"}
    assert "core" in sources.names and "core" in sources.terms
    assert sources.cacheable and not sources.everywhere and not sources.listed


def test_listings_are_directories_and_a_missing_file_is_still_a_dependency(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    steps = [
        _call("batch", calls=[
            {"verb": "execute", "op": "librarian.file.list", "args": {"path": "pkg"}},
            {"verb": "execute", "op": "librarian.code.structure", "args": {}},
            {"verb": "describe", "op": "librarian.file.read"},
        ]),
        _call("execute", op="engineer.file.read@1", args={"path": "pkg/gone.py"}),
        _call("execute", op="librarian.file.read", args={"path": "../outside.py"}),
    ]  # fmt: skip
    sources = turn_sources(steps, root)
    assert sources.listed == {"pkg", ""}
    assert sources.files == {"pkg/gone.py"}
    assert sources.cacheable


def test_any_op_beyond_reading_makes_the_turn_uncacheable(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    write = _call("execute", op="engineer.file.write", args={"path": "pkg/new.py"})
    assert not turn_sources([write], root).cacheable
    survey = _call("execute", op="librarian.code.patterns", args={"topic": "errors"})
    found = turn_sources([survey], root)
    assert found.cacheable and found.everywhere and {"errors", "raise"} <= found.terms


def test_questions_that_point_at_the_conversation_are_not_keyed(tmp_path: Path) -> None:
    def ask(text: str, intent: str | None, subject: str | None = None) -> Any:
        return question_lookup(Question("s", tmp_path, text, intent=intent, subject=subject))

    assert ask("explain how it works", "EXPLAIN") is None
    assert ask("how does that parser work", "EXPLAIN", "parser") is None
    explain = ask("explain how the Ledger works", "EXPLAIN", "ledger")
    assert explain.intent is Intent.EXPLAIN and explain.key == "ledger"
    pattern = ask("what is our error handling strategy", "PATTERN", "error_handling")
    assert pattern.intent is Intent.PATTERN and pattern.key == "error"
    located = ask("where is FooBar defined", "LOCATE", "foo_bar")
    assert located.intent is Intent.LOCATE and located.key == "foobar"
    assert ask("list the parser tests", None).intent is Intent.GENERAL


def test_a_reader_can_skip_values_it_cannot_use_and_count_afterwards() -> None:
    cache = IntentCache()
    cache.put(Intent.EXPLAIN, "ledger", "evidence", files=["ledger.py"])
    assert cache.get(Intent.EXPLAIN, "ledger", accept=lambda v: v == "answer") is None
    assert cache.get(Intent.EXPLAIN, "ledger", count=False) == "evidence"
    cache.note(Intent.EXPLAIN, hit=True)
    stats = cache.stats()["EXPLAIN"]
    assert stats["misses"] == 1 and stats["hits"] == 1
    cache.put(Intent.GENERAL, "parser test", "answer")
    cache.put(Intent.GENERAL, "parser test list", "evidence")
    found = cache.get_similar(
        Intent.GENERAL, "parser test list", 0.6, accept=lambda v: v == "answer"
    )
    assert found == "answer"


def test_an_entry_that_listed_a_directory_drops_when_a_file_appears_below_it() -> None:
    cache = IntentCache()
    cache.put(Intent.EXPLAIN, "pkg", "answer", files=["pkg/core.py"], listed=["pkg"])
    cache.put(Intent.EXPLAIN, "root", "answer", files=["README.md"], listed=[""])
    cache.apply(Change(frozenset({"docs/a.md"}), added_or_removed=frozenset({"docs/a.md"})))
    assert cache.peek(Intent.EXPLAIN, "pkg") is not None
    assert cache.peek(Intent.EXPLAIN, "root") is None  # the root listing covers everything
    deep = "pkg/sub/new.py"
    cache.apply(Change(frozenset({deep}), added_or_removed=frozenset({deep})))
    assert cache.peek(Intent.EXPLAIN, "pkg") is None
