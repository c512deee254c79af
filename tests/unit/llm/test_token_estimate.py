"""The local token count used when a server reports no usage (issue 14, defect 5), and
the types that carry it: ``Usage.estimated`` and a tool call's ``arguments_error``."""

from __future__ import annotations

import json

import pytest

from backend.llm.accounting import summarise
from backend.llm.token_estimate import count_reply, count_request, count_text
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    Usage,
)

PROSE = (
    "Sylk runs many coding-agent sessions side by side. Each session keeps its own "
    "transcript, workspace and phase, and every command an agent runs is confined by the "
    "sandbox. When a model answers, the retrying client counts the tokens it was sent and "
    "the tokens it returned, so the cost of a session can be shown where the user looks. "
)
CODE = '''def fibonacci(limit: int) -> list[int]:
    """The Fibonacci numbers below ``limit``."""
    numbers = [0, 1]
    while numbers[-1] + numbers[-2] < limit:
        numbers.append(numbers[-1] + numbers[-2])
    return numbers


class Counter:
    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def add(self, word: str) -> None:
        self.seen[word] = self.seen.get(word, 0) + 1
'''
FILES = {"files": [{"path": f"src/m{i}.py", "size": i * 137, "ok": True} for i in range(100)]}

# What OpenAI's cl100k_base tokenizer counts for each text (measured once with tiktoken).
MEASURED = [
    (PROSE * 8, 561),
    (CODE * 6, 696),
    (json.dumps(FILES), 2096),
    ("这是一个测试。日本語のテキストも少し含まれています。한국어 문장도 있습니다。" * 20, 640),
    (
        "Die Straßenbahn fährt über die Brücke und hält am Bahnhof. Größenänderung wäre schön. "
        * 20,
        581,
    ),
    ("Это тестовый текст на русском языке, который проверяет оценку токенов. " * 20, 601),
]


@pytest.mark.parametrize(("text", "cl100k"), MEASURED, ids=[
    "prose", "python", "json", "cjk", "german", "russian"])  # fmt: skip
def test_the_estimate_stays_within_15_percent_of_a_real_tokenizer(text: str, cl100k: int) -> None:
    assert abs(count_text(text) - cl100k) <= 0.15 * cl100k


def test_hostile_text_is_counted_in_one_pass_with_a_sane_figure() -> None:
    """One unbroken megabyte-long "word" (what made a pure-Python BPE take seconds)."""
    assert count_text("a" * 1_000_000) == round(1_000_000 / 5.5)
    assert count_text("\u4e00" * 10_000) == 9_000
    assert count_text("") == 0 and count_text(" ") == 0


def test_a_request_counts_its_system_prompt_messages_and_tools() -> None:
    base = ChatRequest(messages=[ChatMessage.user("hi")], options=ChatOptions(model="m"))
    bare = count_request(base)
    with_system = count_request(base.model_copy(update={"system": PROSE}))
    assert with_system - bare == count_text(PROSE)
    tool = ToolSpec(name="read_file", description=PROSE, input_schema={"type": "object"})
    assert count_request(base.model_copy(update={"tools": [tool]})) > bare + count_text(PROSE)
    result = ChatMessage(role="user", content=[ToolResultBlock(tool_call_id="c1", content=CODE)])
    call = ChatMessage.assistant(calls=[ToolCall(id="c1", name="read_file", arguments=FILES)])
    longer = base.model_copy(update={"messages": [*base.messages, call, result]})
    assert count_request(longer) > bare + count_text(CODE) + count_text(json.dumps(FILES)) // 2


def test_a_reply_counts_its_text_and_each_calls_arguments() -> None:
    assert count_reply("", []) == 0
    assert count_reply(PROSE, []) == count_text(PROSE)
    assert count_reply(PROSE, ['{"path": "a.txt"}']) > count_text(PROSE)


def test_a_sum_with_an_estimated_part_is_estimated() -> None:
    reported, counted = Usage(input_tokens=10, output_tokens=2), Usage(estimated=True)
    assert not (reported + reported).estimated
    assert (reported + counted).estimated and (counted + reported).estimated
    assert Usage().empty and counted.empty and not reported.empty


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('{"path": "a.txt"', "not valid JSON"),
        ('["a.txt"]', "a JSON list, not an object"),
        ("42", "a JSON int, not an object"),
        ("{'path': 'a.txt'}", "not valid JSON"),
    ],
)
def test_arguments_that_are_not_a_json_object_are_recorded(raw: str, problem: str) -> None:
    call = ToolCall.from_raw("c1", "read_file", raw)
    assert call.arguments == {}
    assert call.arguments_error is not None
    assert problem in call.arguments_error and raw in call.arguments_error


def test_good_or_blank_arguments_have_no_error_and_a_long_excerpt_is_cut() -> None:
    assert ToolCall.from_raw("c1", "f", '{"a": 1}') == ToolCall(
        id="c1", name="f", arguments={"a": 1}
    )
    assert ToolCall.from_raw("c1", "f", "  ", {"b": 2}).arguments == {"b": 2}
    long = ToolCall.from_raw("c1", "f", '{"text": "' + "x" * 5000)
    assert long.arguments_error is not None and len(long.arguments_error) < 300
    assert long.arguments_error.endswith("…")


def _row(calls: int, estimated_calls: int) -> dict[str, object]:
    return {"agent": "engineer", "provider": "local", "model": "m", "calls": calls,
            "input_tokens": 1234, "output_tokens": 56, "cache_read_tokens": 0,
            "cache_write_tokens": 0, "cost_usd": None, "priced_calls": 0,
            "estimated_calls": estimated_calls}  # fmt: skip


def test_the_status_line_marks_estimated_counts() -> None:
    assert summarise("s", [_row(2, 0)]).status_line() == "1,234 in · 56 out · $0.0000+"
    every = summarise("s", [_row(2, 2)])
    assert every.total.estimated
    assert every.status_line() == "~1,234 in · ~56 out (estimated) · $0.0000+"
    assert "(1 of 2 calls estimated)" in summarise("s", [_row(2, 1)]).status_line()
