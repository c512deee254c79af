"""Shared pieces of the corpus builders: sentences, schemas, writing the two jsonl files.

Every corpus is a folder with ``tools.jsonl`` (``{"id", "name", "description"}``) and
``queries.jsonl`` (``{"query", "gold"}``), the shapes ``tool_retrieval_bench.py`` reads,
plus ``corpus.json``: where it came from and how its queries were made.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

# A sentence ends at . ! or ? followed by white space and an upper-case letter or a quote
# / backtick; "e.g. foo" and "v1.2" do not end one.
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<=[.!?])\s+(?=[A-Z`\"'(\[*])")
_MARKDOWN_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_SPACES = re.compile(r"\s+")


def clean(text: str) -> str:
    """Markdown links reduced to their text, white space collapsed."""
    return _SPACES.sub(" ", _MARKDOWN_LINK.sub(r"\1", text)).strip()


def split_summary(text: str) -> tuple[str, str]:
    """(first sentence, the rest) of ``text``; the rest is empty for one sentence."""
    text = clean(text)
    parts = _SENTENCE_END.split(text, maxsplit=1)
    return parts[0].strip(), (parts[1].strip() if len(parts) > 1 else "")


def schema_json(properties: Mapping[str, Any], required: Iterable[str] = ()) -> str:
    """A JSON parameter schema as a tool catalog would carry it in a description."""
    schema = {"type": "object", "properties": dict(properties), "required": sorted(required)}
    return json.dumps(schema, ensure_ascii=False, sort_keys=True)


def unique_queries(
    candidates: Sequence[tuple[str, str]], min_words: int = 3
) -> list[dict[str, Any]]:
    """``{"query", "gold"}`` for (query, tool id) pairs whose query text names one tool only.

    A query text shared by several tools ("Return self==value.") is dropped: it cannot
    tell them apart, whatever the ranking. So is a query of fewer than ``min_words`` words.
    """
    counts = Counter(q.lower() for q, _ in candidates)
    return [
        {"query": q, "gold": [tool]}
        for q, tool in candidates
        if counts[q.lower()] == 1 and len(q.split()) >= min_words
    ]


def write_corpus(
    out: Path,
    tools: Sequence[dict[str, Any]],
    queries: Sequence[dict[str, Any]],
    about: dict[str, Any],
) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("tools.jsonl", tools), ("queries.jsonl", queries)):
        with (out / name).open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    summary = {**about, "n_tools": len(tools), "n_queries": len(queries)}
    (out / "corpus.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def tool_id(name: str) -> str:
    """An op-safe id: lower case, runs of other characters as one underscore."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
