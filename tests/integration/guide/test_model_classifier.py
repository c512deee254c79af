"""The Guide's model tier over real HTTP: the real SDKs and adapters talk to the local stub.

One model call gives a structured classification, through the ``route`` tool
(both vendors) or a JSON object in plain text; anything unusable raises
ClassificationError so the Guide can keep the pattern tier's answer.
"""

from __future__ import annotations

from typing import Any

import pytest

from backend.guide.routing.decision import Classification, Target
from backend.guide.routing.model_tier import (
    ROUTE_TOOL,
    ClassificationError,
    ModelClassifier,
    validate,
)
from backend.guide.routing.patterns import classify as pattern_classify
from backend.llm.client import ModelClient
from backend.llm.provider import Provider
from backend.llm.resilience import RetryPolicy
from backend.llm.scripted import Script, ScriptedCall, ScriptedProvider, ScriptedTurn
from tests.stubs import LLMStub, Status, StubToolCall, text_reply, tool_reply

LOCATE = {
    "target": "librarian",
    "intent": "LOCATE",
    "subject": "auth_middleware",
    "time_scope": None,
    "confidence": 0.93,
}


def classifier(provider: Provider) -> ModelClassifier:
    client = ModelClient(provider, policy=RetryPolicy(max_attempts=1))
    return ModelClassifier(client, "stub-model", deadline_s=10.0)


def sent_tools(stub: LLMStub, vendor: str) -> list[str]:
    body = stub.requests[-1].body
    if vendor == "anthropic":
        return [t["name"] for t in body["tools"]]
    return [t["function"]["name"] for t in body["tools"]]


def sent_text(stub: LLMStub) -> str:
    """Every string the SDK sent (system prompt, messages, tool schemas), joined."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(stub.requests[-1].body)
    return "\n".join(found)


async def test_a_route_tool_call_is_parsed(
    llm_stub: LLMStub, provider: Provider, vendor: str
) -> None:
    llm_stub.push(tool_reply(StubToolCall("route", LOCATE, pieces=4)))
    found = await classifier(provider).classify("where is the auth middleware")
    assert found == Classification(**LOCATE)
    assert sent_tools(llm_stub, vendor) == ["route"]
    sent = sent_text(llm_stub)
    assert "where is the auth middleware" in sent
    for word in ("LOCATE", "PATTERN", "EXPLAIN", "HISTORICAL", "RESUME", "time_scope"):
        assert word in sent


async def test_an_archivalist_answer_is_tidied(llm_stub: LLMStub, provider: Provider) -> None:
    answer = {
        "target": "archivalist",
        "intent": "historical",
        "subject": "Auth Migration",
        "time_scope": "last month",
        "confidence": 0.89,
        "reasoning": "past tense, 'we'",  # unknown keys are ignored
    }
    llm_stub.push(tool_reply(StubToolCall("route", answer)))
    found = await classifier(provider).classify("how did we handle the auth migration last month")
    assert found == Classification(
        target=Target.ARCHIVALIST,
        intent="HISTORICAL",
        subject="auth_migration",
        time_scope="last_month",
        confidence=0.89,
    )


async def test_the_pattern_hint_is_sent(llm_stub: LLMStub, provider: Provider) -> None:
    llm_stub.push(tool_reply(StubToolCall("route", LOCATE)))
    hint = pattern_classify("how does raft consensus work")
    await classifier(provider).classify("how does raft consensus work", hint=hint)
    sent = sent_text(llm_stub)
    assert "<request>\nhow does raft consensus work\n</request>" in sent
    assert 'Keyword matcher\'s guess: {"target": "librarian", "intent": "EXPLAIN"' in sent


@pytest.mark.parametrize(
    "text",
    [
        '{"target": "tester", "intent": null, "subject": null, "time_scope": null, '
        '"confidence": 0.8}',
        '```json\n{"target": "tester", "confidence": 0.8}\n```',
        'Routing it: {"target": "tester", "confidence": 0.8} - done.',
    ],
)
async def test_json_in_plain_text_is_accepted(
    llm_stub: LLMStub, provider: Provider, text: str
) -> None:
    llm_stub.push(text_reply(text[:10], text[10:]))
    found = await classifier(provider).classify("run the tests")
    assert (found.target, found.intent, found.confidence) == (Target.TESTER, None, 0.8)


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({**LOCATE, "target": "wizard"}, "target"),
        ({**LOCATE, "confidence": 1.7}, "confidence"),
        ({**LOCATE, "intent": "HISTORICAL"}, "intent 'HISTORICAL' for librarian"),
        ({**LOCATE, "target": "pipeline", "intent": None}, "cannot be routed to"),
        ({"intent": "LOCATE", "confidence": 0.5}, "target"),
    ],
)
async def test_an_invalid_classification_raises(
    llm_stub: LLMStub, provider: Provider, arguments: dict[str, Any], fragment: str
) -> None:
    llm_stub.push(tool_reply(StubToolCall("route", arguments)))
    with pytest.raises(ClassificationError) as info:
        await classifier(provider).classify("where is the auth middleware")
    assert info.value.kind == "invalid"
    assert fragment in str(info.value)


async def test_malformed_tool_arguments_raise(llm_stub: LLMStub, provider: Provider) -> None:
    llm_stub.push(tool_reply(StubToolCall("route", raw_arguments='{"target": "libr')))
    with pytest.raises(ClassificationError) as info:
        await classifier(provider).classify("where is the auth middleware")
    # The call completes with its arguments' error (issue 14, defect 7): not a route.
    assert info.value.kind == "invalid"
    assert '{"target": "libr' in str(info.value)


async def test_text_without_json_raises(llm_stub: LLMStub, provider: Provider) -> None:
    llm_stub.push(text_reply("I think the Librarian should take this one."))
    with pytest.raises(ClassificationError) as info:
        await classifier(provider).classify("where is the auth middleware")
    assert info.value.kind == "no_answer"
    assert info.value.raw == "I think the Librarian should take this one."


async def test_broken_json_in_text_raises(llm_stub: LLMStub, provider: Provider) -> None:
    llm_stub.push(text_reply('{"target": "tester", "confidence": }'))
    with pytest.raises(ClassificationError, match="not valid JSON") as info:
        await classifier(provider).classify("run the tests")
    assert info.value.kind == "invalid"


async def test_another_tool_instead_of_route_raises(llm_stub: LLMStub, provider: Provider) -> None:
    llm_stub.push(tool_reply(StubToolCall("read_file", {"path": "README.md"})))
    with pytest.raises(ClassificationError, match="read_file instead of route"):
        await classifier(provider).classify("where is the auth middleware")


async def test_a_provider_failure_raises_a_classification_error(
    llm_stub: LLMStub, provider: Provider
) -> None:
    llm_stub.push(Status(400, message="bad request"))
    with pytest.raises(ClassificationError) as info:
        await classifier(provider).classify("where is the auth middleware")
    assert info.value.kind == "provider"
    assert info.value.__cause__ is not None


async def test_empty_text_is_refused_before_any_call(llm_stub: LLMStub, provider: Provider) -> None:
    with pytest.raises(ValueError, match="empty"):
        await classifier(provider).classify("   ")
    assert llm_stub.count() == 0


# -- the scripted provider -----------------------------------------------------------------
def scripted(*turns: ScriptedTurn) -> ModelClassifier:
    return classifier(ScriptedProvider(Script(turns=list(turns))))


async def test_scripted_route_call() -> None:
    answer = {"target": "session_manager", "intent": "Switch", "subject": "2", "confidence": 0.95}
    found = await scripted(
        ScriptedTurn(expect="session 2", tool_calls=[ScriptedCall(name="route", arguments=answer)])
    ).classify("take me over to session 2")
    assert (found.target, found.intent, found.subject) == (Target.SESSION_MANAGER, "switch", "2")


async def test_scripted_plain_json() -> None:
    found = await scripted(ScriptedTurn(text='{"target": "academic", "confidence": 0.7}')).classify(
        "tell me about vector clocks"
    )
    assert (found.target, found.intent, found.subject) == (Target.ACADEMIC, None, None)


async def test_scripted_malformed_answer_raises() -> None:
    bad = {"target": "librarian", "intent": "FIND", "confidence": 0.9}
    with pytest.raises(ClassificationError, match="intent 'FIND'"):
        await scripted(
            ScriptedTurn(tool_calls=[ScriptedCall(name="route", arguments=bad)])
        ).classify("find the cache")


async def test_scripted_fault_raises() -> None:
    fault = ScriptedTurn.model_validate({"error": {"kind": "auth", "message": "bad key"}})
    with pytest.raises(ClassificationError) as info:
        await scripted(fault).classify("where is the cache")
    assert info.value.kind == "provider"


# -- the contract the Guide relies on --------------------------------------------------------
def test_the_tool_schema_describes_a_classification() -> None:
    schema = ROUTE_TOOL.input_schema
    assert set(schema["properties"]) == set(Classification.model_fields)
    assert schema["additionalProperties"] is False
    assert "pipeline" not in schema["properties"]["target"]["enum"]
    assert {"LOCATE", "RESUME", "switch", None} <= set(schema["properties"]["intent"]["enum"])


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"target": "academic", "intent": "GENERAL", "confidence": 0.6}, (None, None)),
        ({"target": "librarian", "intent": None, "subject": "", "confidence": 0.6},
         ("GENERAL", None)),
        ({"target": "archivalist", "intent": "resume", "confidence": 0.6}, ("RESUME", None)),
        ({"target": "librarian", "intent": "EXPLAIN", "subject": "CreateSession", "confidence": 1},
         ("EXPLAIN", "create_session")),
    ],
)  # fmt: skip
def test_validate_tidies(data: dict[str, Any], expected: tuple[str | None, str | None]) -> None:
    found = validate(data)
    assert (found.intent, found.subject) == expected
