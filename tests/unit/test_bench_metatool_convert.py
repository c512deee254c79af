"""The MetaTool converter on a tiny synthetic sample with the data set's quirks."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _converter() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "metatool_convert", ROOT / "benchmarks" / "metatool_convert.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("metatool_convert", module)
    spec.loader.exec_module(module)
    return module


convert_mod = _converter()

CSV = (
    "Query,Tool\n"
    "What's the weather in Paris?,WeatherTool\n"
    '"Convert this PDF, please",PDF&URLTool\n'
    " What's the weather in Paris? ,WeatherTool\n"  # duplicate once whitespace is gone
    "What's the weather in Paris?,lsongai\n"  # same query, another tool
    '"He said ""hi""\n'  # quoted field with a newline and doubled quotes
    'then left",internetSearch\n'
    "Search the web,internetSearch\n"
    "Some query,NoSuchTool\n"
    "   ,WeatherTool\n"
)
TOOLS = {
    "WeatherTool": "Get the  weather\nforecast.",
    "PDF&URLTool": "Chat with PDFs and URLs.",
    "internetSearch": "Search the internet.",
    "lsongai": "Weather and more.",
    "123go": "Starts with a digit.",
}
MULTI = [
    {"query": "Weather and a search", "tool": ["WeatherTool", "internetSearch"]},
    {"query": "Weather and a search", "tool": ["WeatherTool", "internetSearch"]},
]


@pytest.fixture
def src(tmp_path: Path) -> Path:
    folder = tmp_path / "metatool"
    folder.mkdir()
    (folder / "all_clean_data.csv").write_text(CSV, encoding="utf-8")
    (folder / "plugin_des.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (folder / "multi_tool_query_golden.json").write_text(json.dumps(MULTI), encoding="utf-8")
    return folder


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_sanitise_name_gives_valid_op_segments() -> None:
    assert convert_mod.sanitise_name("FinanceTool") == "finance_tool"
    assert convert_mod.sanitise_name("PDF&URLTool") == "pdf_url_tool"
    assert convert_mod.sanitise_name("internetSearch") == "internet_search"
    assert convert_mod.sanitise_name("AI2sql") == "ai2sql"
    assert convert_mod.sanitise_name("123go") == "t_123go"
    assert convert_mod.tool_ids(["A_b", "ABb", "aB_b"]) == {
        "ABb": "a_bb",
        "A_b": "a_b",
        "aB_b": "a_b_b",
    }
    assert convert_mod.tool_ids(["a-b", "a_b"]) == {"a-b": "a_b", "a_b": "a_b_2"}


def test_convert_merges_duplicates_and_normalises(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = convert_mod.convert(src, out)

    tools = _read(out / "tools.jsonl")
    assert [t["id"] for t in tools] == sorted(t["id"] for t in tools)
    weather = next(t for t in tools if t["name"] == "WeatherTool")
    assert weather == {
        "id": "weather_tool",
        "name": "WeatherTool",
        "description": "Get the weather forecast.",
    }

    queries = _read(out / "queries.jsonl")
    assert queries == [
        {"query": "What's the weather in Paris?", "gold": ["weather_tool", "lsongai"]},
        {"query": "Convert this PDF, please", "gold": ["pdf_url_tool"]},
        {"query": 'He said "hi" then left', "gold": ["internet_search"]},
        {"query": "Search the web", "gold": ["internet_search"]},
    ]
    assert _read(out / "multi_queries.jsonl") == [
        {"query": "Weather and a search", "gold": ["weather_tool", "internet_search"]}
    ]
    assert summary["rows"] == 8
    assert summary["duplicate_rows_merged"] == 2
    assert summary["rows_with_newline"] == 1
    assert summary["rows_with_outer_whitespace"] == 2
    assert summary["unknown_tool_skipped"] == 1
    assert summary["empty_skipped"] == 1
    assert summary["queries_with_several_gold"] == 1
    assert summary["multi_duplicate_rows_merged"] == 1


def test_convert_keep_duplicates_and_is_deterministic(src: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    convert_mod.convert(src, first, keep_duplicates=True)
    convert_mod.convert(src, second, keep_duplicates=True)
    for name in ("tools.jsonl", "queries.jsonl", "multi_queries.jsonl"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    queries = _read(first / "queries.jsonl")
    assert len(queries) == 6
    assert all(len(q["gold"]) == 1 for q in queries)
    assert len(_read(first / "multi_queries.jsonl")) == 2
