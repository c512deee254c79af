"""The paraphrase set behind ``benchmarks/cache_bench.py``: shape and labels.

A malformed line or a lone query in a group would make the benchmark's hit rate
meaningless (a group of one can never hit), so the file is checked like code.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from backend.guide.routing.decision import ArchivalistIntent, LibrarianIntent

DATA = Path(__file__).resolve().parents[2] / "data" / "cache_paraphrases.jsonl"
INTENTS = {
    "librarian": {i.value for i in LibrarianIntent},
    "archivalist": {i.value for i in ArchivalistIntent},
}


def rows() -> list[dict[str, str]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def test_every_line_is_a_valid_labelled_query() -> None:
    for n, row in enumerate(rows(), 1):
        assert set(row) == {"group", "agent", "intent", "query"}, f"line {n}: {row}"
        assert re.fullmatch(r"g\d{3}", row["group"]), f"line {n}: bad group {row['group']!r}"
        assert row["agent"] in INTENTS, f"line {n}: unknown agent {row['agent']!r}"
        assert row["intent"] in INTENTS[row["agent"]], f"line {n}: bad intent {row['intent']!r}"
        assert row["query"].strip() == row["query"] and len(row["query"]) >= 5, f"line {n}"


def test_enough_queries_in_groups_of_paraphrases() -> None:
    data = rows()
    assert len(data) >= 240
    sizes = Counter(r["group"] for r in data)
    assert min(sizes.values()) >= 3, {g: s for g, s in sizes.items() if s < 3}
    # A group is one question: one agent and one intent, its lines together, no repeats.
    for group in sizes:
        members = [r for r in data if r["group"] == group]
        assert len({(r["agent"], r["intent"]) for r in members}) == 1, group
        assert len({r["query"].lower() for r in members}) == len(members), group
    order = [r["group"] for r in data]
    assert order == sorted(order), "groups must be contiguous and in order"


def test_every_intent_is_covered() -> None:
    groups = {(r["agent"], r["intent"], r["group"]) for r in rows()}
    per = Counter((agent, intent) for agent, intent, _ in groups)
    assert per["librarian", "LOCATE"] >= 20 and per["librarian", "PATTERN"] >= 8
    assert per["librarian", "EXPLAIN"] >= 8 and per["librarian", "GENERAL"] >= 4
    archivalist = {intent for agent, intent, _ in groups if agent == "archivalist"}
    assert archivalist >= {"HISTORICAL", "ACTIVITY", "OUTCOME", "SIMILAR", "RESUME"}


def test_paraphrases_of_one_thing_get_one_subject() -> None:
    """The caches key on the Guide's subject, so a compound name must survive whole and
    a frame must not swallow the subject it points at."""
    from backend.guide.routing.patterns import classify

    same = {
        "code_index": ["where does the code index class live", "find CodeIndex"],
        "file_watcher": ["where does the file watcher live", "where is FileWatcher"],
        "history_cache": ["where does the history cache live", "locate HistoryCache"],
        "caching": ["what caching patterns do we use", "what's our caching strategy"],
        "watchdog_overflow": [
            "did we hit the watchdog overflow before",
            "have we had a problem like this watchdog overflow before",
        ],
    }
    for subject, texts in same.items():
        assert [classify(t).subject for t in texts] == [subject] * len(texts), subject
    # A head word followed by a frame word is still not a subject of its own.
    assert classify("where is the code for auth").subject == "auth"
    assert classify("which file has the parser").subject == "parser"
