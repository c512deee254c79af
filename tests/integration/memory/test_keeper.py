"""The context keeper over a real chronicle: each role's thresholds, offline extracts,
the estimate when no provider counted, and a summary call that fails or rambles."""

from __future__ import annotations

from typing import Any

import pytest

from backend.agents.conversation import conversation
from backend.engine import EngineParts
from backend.knowledge.chronicle.models import Category, ChronicleQuery, Entry
from backend.llm.errors import ProviderUnavailableError
from backend.llm.types import ChatRequest, ChatResult, Usage
from backend.memory.extract import EXTRACT_NOTE
from backend.memory.keeper import KEEP_RECENT, PROMPT_HEADER, SUMMARY_HEADER, ContextKeeper
from backend.memory.ledger import ContextLedger
from backend.messages import Message, MessageType

WINDOW = 100_000
Records = list[Message[dict[str, Any]]]


def _exchange(session: str, n: int, answer: str) -> Records:
    asked = Message[dict[str, Any]](
        session_id=session, source="user", type=MessageType.USER_INPUT,
        payload={"text": f"request {n}: check src/mod{n}.py"},
    )  # fmt: skip
    said = Message[dict[str, Any]](
        session_id=session, source="agent", type=MessageType.AGENT_REPLY,
        payload={"text": answer},
    )  # fmt: skip
    return [asked, said]


def _keeper(parts: EngineParts) -> ContextKeeper:
    return ContextKeeper(ContextLedger(), parts.knowledge.chronicle, conversation)


async def _entries(parts: EngineParts, session: str, category: Category) -> list[Entry]:
    query = ChronicleQuery(categories=[category], current_only=True)
    found = await parts.knowledge.chronicle.query(session, query)
    return sorted(found, key=lambda e: e.data["checkpoint_index"])


async def _walk(
    keeper: ContextKeeper, role: str, tokens: list[int], answer: str = "Looked at it."
) -> tuple[Records, list[list[str]]]:
    """One turn per count in ``tokens``: the provider reports it after each turn."""
    records: Records = []
    seen: list[list[str]] = []
    for n, count in enumerate(tokens):
        history = await keeper.prepare("s1", role, records, f"request {n} now", window=WINDOW)
        seen.append([m.text for m in history])
        records += _exchange("s1", n, f"{answer} ({n})")
        keeper.ledger.note_usage("s1", role, Usage(input_tokens=count))
    await keeper.ledger.settle()  # checkpoints are written beside the turns
    return records, seen


async def test_the_guide_checkpoints_at_50_75_90_and_compacts_at_95(
    engine_parts: EngineParts,
) -> None:
    keeper = _keeper(engine_parts)
    _, seen = await _walk(keeper, "guide", [10_000, 51_000, 76_000, 91_000, 96_000, 0])
    entries = await _entries(engine_parts, "s1", Category.GUIDE_CHECKPOINT)
    assert [e.data["checkpoint_index"] for e in entries] == [1, 2, 3, 4]
    assert [e.data["compacted"] for e in entries] == [False, False, False, True]
    assert entries[3].title is not None and "compaction" not in entries[3].title
    for entry in entries:  # the seed's GuideSummary, written offline as an extract
        assert entry.data["written_by"] == "extract"
        assert entry.content.startswith(f"({EXTRACT_NOTE}")
        assert {"known_routings", "frequent_matches", "failed_routings", "agent_capabilities",
                "request_patterns", "session_routing_stats"} <= set(entry.data)  # fmt: skip
    assert entries[0].data["request_patterns"]  # lifted from the requests
    # Nothing compacted before 95%; the turn after it opens with the preface.
    assert not any(t.startswith(PROMPT_HEADER) for turn in seen[:5] for t in turn)
    after = seen[5]
    assert after[0].startswith(PROMPT_HEADER) and "request 0: check src/mod0.py" in after[0]
    assert SUMMARY_HEADER in after[0]
    assert not any("(0)" in t for t in after[1:])  # the oldest answers are gone
    assert len(after) <= KEEP_RECENT + 2


async def test_an_inspector_writes_its_findings_at_85_and_compacts_at_95(
    engine_parts: EngineParts,
) -> None:
    keeper = _keeper(engine_parts)
    answer = "Ran ruff on src/mod.py: error F401 unused import; 3 issues remain."
    await _walk(keeper, "inspector", [50_000, 86_000, 90_000, 96_000, 0], answer)
    entries = await _entries(engine_parts, "s1", Category.INSPECTOR_FINDINGS)
    assert [e.data["compacted"] for e in entries] == [False, True]
    findings = entries[0].data
    assert 0.85 <= findings["context_usage"] < 0.95
    assert findings["issues_found"] >= 1 and findings["issues_remaining"]
    assert "F401" in findings["issues_remaining"][0]["description"]
    for seed_field in ("checks_performed", "issues_resolved", "fixes_completed",
                       "fixes_pending", "validation_state", "pipeline_id"):  # fmt: skip
        assert seed_field in findings


async def test_with_no_provider_count_the_estimate_is_used(engine_parts: EngineParts) -> None:
    keeper = _keeper(engine_parts)
    records: Records = []
    for n in range(6):
        records += _exchange("s1", n, "word " * 700)
    history = await keeper.prepare("s1", "tester", records, "and now?", window=4_000)
    memory = keeper.ledger.get("s1", "tester")
    assert memory.use is not None and memory.use.estimated  # no usage noted: estimated
    entries = await _entries(engine_parts, "s1", Category.TESTER_SUMMARY)
    assert len(entries) == 1 and entries[0].data["estimated_usage"]
    assert entries[0].data["compacted"]  # 4,200 words in 4,000 tokens: past 95% at once
    assert history[0].text.startswith(PROMPT_HEADER)
    assert keeper.ledger.status_line("s1") == f"tester {memory.use.describe()}"
    assert memory.use.describe().startswith("~")


async def test_a_jump_past_every_level_writes_one_checkpoint(engine_parts: EngineParts) -> None:
    keeper = _keeper(engine_parts)
    await _walk(keeper, "librarian", [10_000, 10_000, 10_000, 80_000, 0])
    entries = await _entries(engine_parts, "s1", Category.LIBRARIAN_CHECKPOINT)
    assert len(entries) == 1 and entries[0].data["compacted"]
    assert entries[0].data["key_paths"]  # paths lifted from the turns


@pytest.mark.parametrize("reply", ["not json at all", "[1, 2]", None])
async def test_a_summary_call_that_fails_falls_back_to_the_extract(
    engine_parts: EngineParts, reply: str | None
) -> None:
    keeper = _keeper(engine_parts)
    asked: list[ChatRequest] = []

    async def call(request: ChatRequest) -> ChatResult:
        asked.append(request)
        if reply is None:
            raise ProviderUnavailableError("overloaded")
        return ChatResult(provider="scripted", model="m", text=reply)

    records: Records = []
    for n in range(4):
        records += _exchange("s1", n, "Read the file.")
    keeper.ledger.note_usage("s1", "academic", Usage(input_tokens=90_000))
    await keeper.prepare("s1", "academic", records, "go on", window=WINDOW, call=call, model="m")
    await keeper.ledger.settle()
    assert len(asked) == 1 and asked[0].options.max_tokens <= 2048  # one bounded call
    entries = await _entries(engine_parts, "s1", Category.ACADEMIC_RESEARCH_PAPER)
    assert len(entries) == 1 and entries[0].data["written_by"] == "extract"
    assert entries[0].data["title"].startswith("request 0")


async def test_a_pipelines_engineer_is_left_to_its_handoff(engine_parts: EngineParts) -> None:
    keeper = _keeper(engine_parts)
    records: Records = []
    for n in range(4):
        records += _exchange("s1", n, "Edited it.")
    keeper.ledger.note_usage("s1", "engineer", Usage(input_tokens=97_000))
    kept = await keeper.prepare("s1", "engineer", records, "go on", window=WINDOW, handoff=True)
    assert len(kept) == 9  # measured, nothing compacted: the handoff owns the 95% line
    assert keeper.ledger.status_line("s1") == "engineer 97% of 100k"
    compacted = await keeper.prepare("s1", "engineer", records, "go on", window=WINDOW)
    assert compacted[0].text.startswith(PROMPT_HEADER)  # outside a pipeline: the fallback
    assert (await _entries(engine_parts, "s1", Category.GENERAL))[0].agent == "engineer"


async def test_a_compaction_outlives_a_restart(engine_parts: EngineParts) -> None:
    keeper = _keeper(engine_parts)
    records, _ = await _walk(keeper, "librarian", [10_000, 30_000, 80_000, 0])
    before = keeper.ledger.get("s1", "librarian")
    assert before.compactions == 1 and before.through is not None

    restarted = _keeper(engine_parts)  # a new ledger: only the chronicle remembers
    history = await restarted.prepare("s1", "librarian", records, "after restart", window=WINDOW)
    assert history[0].text.startswith(PROMPT_HEADER) and SUMMARY_HEADER in history[0].text
    assert "request 0: check src/mod0.py" in history[0].text  # the task, verbatim
    assert not any("(0)" in m.text for m in history)  # still compacted away
    after = restarted.ledger.get("s1", "librarian")
    assert after.through == before.through and after.checkpoint_index == 2
    assert after.done == set()  # no checkpoint since the compaction
