"""A checkpoint built from the turns themselves, when no model can write one.

Honest offline behaviour: this does not understand the conversation, it lifts from it
what a pattern can find (paths, requests, the answers' opening sentences, test counts,
lines that name an error) into the role's shape, and says so (``written_by: extract``).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from backend.llm.types import ChatMessage
from backend.memory.shapes import conform

EXTRACT_NOTE = "an extract of the turns made without a model, not a written summary"
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z]{1,5})(?![\w/])")
_URL = re.compile(r"https?://[^\s)>\]]+")
_PROBLEM = re.compile(r"\b(error|warning|fail(?:ed|ure)?|issue|bug)\b", re.IGNORECASE)
_COUNTS = {
    name: re.compile(rf"(\d+) {name}", re.IGNORECASE) for name in ("passed", "failed", "skipped")
}
_TEST_FILE = re.compile(r"(?:^|/)(?:test_[\w-]+\.py|[\w-]+_test\.(?:py|go)|[\w-]+\.test\.[jt]sx?)$")
_LIST_LIMIT = 20
_TEXT_LIMIT = 600


def _texts(messages: list[ChatMessage], speaker: str) -> list[str]:
    return [m.text.strip() for m in messages if m.role == speaker and m.text.strip()]


def _first_sentence(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    cut = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
    return cut[:limit]


def _unique(items: list[str], limit: int = _LIST_LIMIT) -> list[str]:
    return list(dict.fromkeys(items))[-limit:]


def _paths(texts: list[str]) -> list[str]:
    return _unique([p for t in texts for p in _PATH.findall(t) if not p[0].isdigit()])


def _problems(texts: list[str]) -> list[str]:
    lines = [line.strip() for t in texts for line in t.splitlines() if _PROBLEM.search(line)]
    return _unique([line[:200] for line in lines])


def _count(texts: list[str], name: str) -> int:
    return sum(int(n) for t in texts for n in _COUNTS[name].findall(t))


def extract(role: str, messages: list[ChatMessage]) -> dict[str, Any]:
    """``role``'s checkpoint fields lifted from ``messages`` (see the module docstring)."""
    asked, answered = _texts(messages, "user"), _texts(messages, "assistant")
    every = asked + answered
    paths = _paths(every)
    findings = [_first_sentence(a) for a in answered]
    first = asked[0] if asked else ""
    last = answered[-1] if answered else ""
    values: dict[str, Any]
    if role == "librarian":
        tops = _unique([p.split("/")[0] + ("/" if "/" in p else "") for p in paths])
        values = {
            "directory_structure": ", ".join(tops),
            "key_paths": paths,
            "new_discoveries": _unique(findings),
        }
    elif role == "guide":
        heads = Counter(" ".join(a.split()[:3]).lower() for a in asked)
        values = {
            "request_patterns": [{"pattern": p, "count": n} for p, n in heads.most_common(10)],
            "session_routing_stats": {"requests": len(asked), "answers": len(answered)},
        }
    elif role == "academic":
        values = {
            "title": _first_sentence(first, 120),
            "abstract": last[:_TEXT_LIMIT],
            "topics_researched": _unique([_first_sentence(a, 120) for a in asked]),
            "key_findings": [
                {"topic": _first_sentence(q, 120), "summary": a[:300], "confidence": "low"}
                for q, a in zip(asked, answered, strict=False)
            ][-_LIST_LIMIT:],
            "sources_cited": [{"url": u} for u in _unique(_URL.findall("\n".join(every)))]
            + [{"path": p} for p in paths],
        }
    elif role == "architect":
        values = {"original_request": first, "implementation_plan": last[: _TEXT_LIMIT * 4]}
    elif role == "inspector":
        problems = _problems(answered)
        values = {
            "checks_performed": _unique([_first_sentence(a, 120) for a in asked]),
            "issues_found": len(problems),
            "issues_remaining": [{"description": p} for p in problems],
        }
    elif role == "tester":
        tests = [p for p in paths if _TEST_FILE.search(p)]
        failures = [p for p in _problems(answered) if "fail" in p.lower()]
        values = {
            "tests_created": [{"file": t} for t in tests],
            "pass_count": _count(answered, "passed"),
            "fail_count": _count(answered, "failed"),
            "skip_count": _count(answered, "skipped"),
            "failure_descriptions": [{"error": p} for p in failures],
        }
    else:
        values = {
            "summary": "\n".join(f"- {_first_sentence(a)}" for a in answered)[-_TEXT_LIMIT * 4 :],
            "open_items": [],
        }
    return conform(role, values)
