"""Convert the MetaTool data set into plain JSON-lines files for the retrieval benchmark.

Input (a MetaTool checkout's data folder, MIT licensed):

- ``plugin_des.json``: tool name -> description (199 tools);
- ``all_clean_data.csv``: ``Query,Tool`` rows, one tool per query (20,614 rows);
- ``multi_tool_query_golden.json``: ``[{"query", "tool": [names]}]`` (497 queries).

Output (in ``--out``, default ``/tmp/metatool``):

- ``tools.jsonl``: ``{"id", "name", "description"}`` per tool, sorted by id;
- ``queries.jsonl``: ``{"query", "gold": [ids]}``, single-tool queries, CSV order;
- ``multi_queries.jsonl``: the same for the multi-tool queries, file order.

The output is deterministic: the same input gives byte-identical files.

Ids. A tool's id is its name in snake case, so that it can be the last segment of a
Sylk op name (``metatool.<id>``, which must match ``[a-z][a-z0-9_-]*``): camel-case
humps become underscores (``FinanceTool`` -> ``finance_tool``, ``PDF&URLTool`` ->
``pdf_url_tool``, ``internetSearch`` -> ``internet_search``), every other run of
characters outside ``[a-z0-9]`` becomes one underscore, a name that does not start with
a letter gets a ``t_`` prefix, and a clash (none in MetaTool) gets ``_2``, ``_3``...
in name order.

CSV quirks. The file is read with the csv module (RFC 4180 quoting: quoted fields with
commas, doubled quotes and newlines). Every query and description has its whitespace
collapsed (a run of spaces, tabs or newlines becomes one space) and stripped: 766 rows
have leading or trailing spaces, and one row holds a newline: a query that opens with a
stray quote swallows the line after it (``...in Colorado?鈥?\\nWeather_Forecast,I'm
curious about the weather in Sydney``, both WeatherTool). It is kept as one query,
as the csv module reads it. Two rows carry the mojibake ``鈥?`` (a UTF-8 right quote read
as GBK); it is left as it is. Empty queries and tools missing from ``plugin_des.json``
would be skipped and counted (there are none).

Duplicates. After whitespace normalisation 55 query texts occur more than once (125
rows); 12 of them carry different tools (e.g. "What is the weather forecast for
tomorrow?" -> WeatherTool and lsongai). By default rows with the same query text (case
kept) are merged into one query whose gold list holds every distinct tool, in order of
first appearance: 20,544 queries, 11 with 2 gold tools and 1 with 4. ``--keep-duplicates``
writes one query per CSV row instead (20,614 queries, one gold tool each, as MetaTool
scores them). The multi-tool file is deduplicated the same way.

    .venv/bin/python benchmarks/metatool_convert.py \\
        --src /work/shared/bench/metatool --out /tmp/metatool

Prints one JSON object with the counts above.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DEFAULT_SRC = Path("/work/shared/bench/metatool")
DEFAULT_OUT = Path("/tmp/metatool")
TOOLS_FILE = "plugin_des.json"
SINGLE_FILE = "all_clean_data.csv"
MULTI_FILE = "multi_tool_query_golden.json"

_WS = re.compile(r"\s+")
_HUMP_LOWER = re.compile(r"([a-z0-9])([A-Z])")  # fooBar -> foo_Bar
_HUMP_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")  # URLTool -> URL_Tool
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def normalise_text(text: str) -> str:
    return _WS.sub(" ", text).strip()


def sanitise_name(name: str) -> str:
    """A tool name as an op segment: snake case, ``[a-z][a-z0-9_]*``."""
    snake = _HUMP_ACRONYM.sub(r"\1_\2", _HUMP_LOWER.sub(r"\1_\2", name.strip()))
    ident = _NON_ALNUM.sub("_", snake.lower()).strip("_")
    if not ident or not ident[0].isalpha():
        ident = f"t_{ident}" if ident else "t"
    return ident


def tool_ids(names: Iterable[str]) -> dict[str, str]:
    """Name -> unique id; clashes get ``_2``, ``_3``... in name order."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(set(names)):
        base = sanitise_name(name)
        ident, n = base, 1
        while ident in taken:
            n += 1
            ident = f"{base}_{n}"
        taken.add(ident)
        ids[name] = ident
    return ids


def read_tools(src: Path) -> dict[str, str]:
    raw = json.loads((src / TOOLS_FILE).read_text(encoding="utf-8-sig"))
    if not isinstance(raw, dict):
        raise ValueError(f"{TOOLS_FILE}: expected an object of name -> description")
    return {str(name).strip(): normalise_text(str(desc)) for name, desc in raw.items()}


def read_single_rows(src: Path, stats: dict[str, int]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    with (src / SINGLE_FILE).open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        header = [h.strip().lower() for h in next(reader)]
        try:
            qcol, tcol = header.index("query"), header.index("tool")
        except ValueError as exc:
            raise ValueError(f"{SINGLE_FILE}: header must name Query and Tool") from exc
        for record in reader:
            if not record or all(not cell.strip() for cell in record):
                continue
            stats["rows"] += 1
            if len(record) <= max(qcol, tcol):
                stats["short_rows_skipped"] += 1
                continue
            query, tool = record[qcol], record[tcol].strip()
            if "\n" in query or "\r" in query:
                stats["rows_with_newline"] += 1
            if query != query.strip():
                stats["rows_with_outer_whitespace"] += 1
            rows.append((normalise_text(query), tool))
    return rows


def read_multi_rows(src: Path) -> list[tuple[str, list[str]]]:
    raw = json.loads((src / MULTI_FILE).read_text(encoding="utf-8-sig"))
    return [
        (normalise_text(str(item["query"])), [str(t).strip() for t in item["tool"]]) for item in raw
    ]


def build_queries(
    rows: Iterable[tuple[str, list[str]]],
    ids: dict[str, str],
    stats: dict[str, int],
    prefix: str,
    keep_duplicates: bool,
) -> list[dict[str, Any]]:
    merged: dict[str, list[str]] = {}
    kept: list[dict[str, Any]] = []
    for query, names in rows:
        if not query:
            stats[f"{prefix}empty_skipped"] += 1
            continue
        known = [ids[n] for n in names if n in ids]
        stats[f"{prefix}unknown_tool_skipped"] += len(names) - len(known)
        if not known:
            continue
        if keep_duplicates:
            kept.append({"query": query, "gold": list(dict.fromkeys(known))})
            continue
        if query in merged:
            stats[f"{prefix}duplicate_rows_merged"] += 1
            merged[query].extend(g for g in known if g not in merged[query])
        else:
            merged[query] = list(dict.fromkeys(known))
    if keep_duplicates:
        return kept
    return [{"query": q, "gold": gold} for q, gold in merged.items()]


def write_jsonl(path: Path, items: Iterable[dict[str, Any]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
            count += 1
    return count


def convert(src: Path, out: Path, keep_duplicates: bool = False) -> dict[str, Any]:
    """Write tools.jsonl, queries.jsonl and multi_queries.jsonl; return the counts."""
    stats: dict[str, int] = {
        "rows": 0,
        "short_rows_skipped": 0,
        "rows_with_newline": 0,
        "rows_with_outer_whitespace": 0,
        "empty_skipped": 0,
        "unknown_tool_skipped": 0,
        "duplicate_rows_merged": 0,
        "multi_empty_skipped": 0,
        "multi_unknown_tool_skipped": 0,
        "multi_duplicate_rows_merged": 0,
    }
    descriptions = read_tools(src)
    ids = tool_ids(descriptions)
    tools = sorted(
        ({"id": ids[n], "name": n, "description": d} for n, d in descriptions.items()),
        key=lambda t: t["id"],
    )
    single_rows = [(q, [t]) for q, t in read_single_rows(src, stats)]
    single = build_queries(single_rows, ids, stats, "", keep_duplicates)
    multi_path = src / MULTI_FILE
    multi = (
        build_queries(read_multi_rows(src), ids, stats, "multi_", keep_duplicates)
        if multi_path.exists()
        else []
    )
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "tools.jsonl", tools)
    write_jsonl(out / "queries.jsonl", single)
    write_jsonl(out / "multi_queries.jsonl", multi)
    return {
        "src": str(src),
        "out": str(out),
        "keep_duplicates": keep_duplicates,
        "files": {
            "tools": str(out / "tools.jsonl"),
            "queries": str(out / "queries.jsonl"),
            "multi": str(out / "multi_queries.jsonl"),
        },
        "tools": len(tools),
        "queries": len(single),
        "queries_with_several_gold": sum(1 for q in single if len(q["gold"]) > 1),
        "multi_queries": len(multi),
        **stats,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=DEFAULT_SRC, help="MetaTool data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument(
        "--keep-duplicates",
        action="store_true",
        help="one query per CSV row (default: merge rows with the same query text)",
    )
    args = parser.parse_args(argv)
    summary = convert(args.src, args.out, args.keep_duplicates)
    json.dump(summary, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
