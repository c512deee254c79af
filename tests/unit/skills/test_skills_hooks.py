"""Hooks: priority order, per-agent registration, rejection and rewriting, the seed's hooks."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from backend.llm.types import ChatMessage, ChatOptions, ChatRequest
from backend.redaction import Redactor
from backend.skills.envelopes import ErrorCode
from backend.skills.gateway.gateway import Gateway
from backend.skills.hooks.builtin import (
    FileTouch,
    file_tracking,
    result_logging,
    route_cache_hooks,
    session_context_injection,
)
from backend.skills.hooks.registry import (
    HookKind,
    HookPriority,
    HookRegistry,
    PromptData,
    Rejection,
    ToolCallData,
)
from backend.skills.models import OpKind, Skill, SkillContext, SkillResult
from backend.skills.registry import Registry

SECRET = "sk-test-1234567890abcdef"


class NoteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    text: str = ""
    session_id: str | None = None


def make_gateway(hooks: HookRegistry | None = None) -> tuple[Gateway, list[Any]]:
    calls: list[Any] = []

    async def handler(ctx: SkillContext, params: NoteArgs) -> SkillResult:
        calls.append(params)
        return SkillResult(result={"path": params.path, "created": True})

    reg = Registry()
    reg.register(
        Skill(op="notes.file.write", agent="engineer", description="Write a note file",
              params=NoteArgs, handler=handler, kind=OpKind.WRITE)
    )  # fmt: skip
    return Gateway(reg, hooks), calls


def ctx(agent: str = "engineer", **kw: Any) -> SkillContext:
    fields: dict[str, Any] = {
        "session_id": "s1",
        "agent": agent,
        "workspace": Path("."),
        "can_write": True,
    }
    fields.update(kw)
    return SkillContext(**fields)


def request(text: str = "hello") -> ChatRequest:
    return ChatRequest(
        system="You are the guide.",
        messages=[ChatMessage.user(text)],
        options=ChatOptions(model="m"),
    )


async def test_tool_hooks_run_in_priority_then_registration_order() -> None:
    hooks = HookRegistry()
    order: list[str] = []
    for name, prio in [("late", HookPriority.LATE), ("first", HookPriority.FIRST),
                       ("normal_a", HookPriority.NORMAL), ("normal_b", HookPriority.NORMAL),
                       ("last", HookPriority.LAST)]:  # fmt: skip
        hooks.add(HookKind.PRE_TOOL, lambda d, n=name: order.append(n), name=name, priority=prio)
    hooks.add(HookKind.PRE_TOOL, lambda d: order.append("other"), name="o", agents=["guide"])
    gateway, _ = make_gateway(hooks)
    env = await gateway.execute(ctx(), "notes.file.write", {"path": "a.txt"})
    assert env.ok
    assert order == ["first", "normal_a", "normal_b", "late", "last"]
    names = [h.name for h in hooks.for_agent(HookKind.PRE_TOOL, "engineer")]
    assert names.index("permission_check") < names.index("parameter_validation")
    assert names.index("parameter_validation") < names.index("session_scoping")
    with pytest.raises(ValueError, match="already registered"):
        hooks.add(HookKind.PRE_TOOL, lambda d: None, name="first")


@pytest.mark.parametrize("code", [ErrorCode.ACCESS_DENIED, ErrorCode.VALIDATION_ERROR])
async def test_pre_tool_rejection_stops_the_handler(code: ErrorCode) -> None:
    hooks = HookRegistry()

    def refuse(data: ToolCallData) -> None:
        raise Rejection(code, "not today")

    hooks.add(HookKind.PRE_TOOL, refuse, priority=HookPriority.LATE)
    gateway, calls = make_gateway(hooks)
    env = await gateway.execute(ctx(), "notes.file.write", {"path": "a.txt"})
    assert not env.ok and env.code is code and env.error and env.error.message == "not today"
    assert calls == []


async def test_pre_tool_hook_rewrites_args_and_post_hook_annotates() -> None:
    hooks = HookRegistry()

    async def rewrite(data: ToolCallData) -> ToolCallData:
        data.args["path"] = "rewritten.txt"
        return data

    def annotate(data: ToolCallData) -> None:
        data.warnings.append(f"saw {data.result.result['path'] if data.result else None}")

    def broken(data: ToolCallData) -> None:
        raise RuntimeError("boom")

    hooks.add(HookKind.PRE_TOOL, rewrite, priority=HookPriority.FIRST)  # before validation
    hooks.add(HookKind.POST_TOOL, annotate)
    hooks.add(HookKind.POST_TOOL, broken)
    gateway, calls = make_gateway(hooks)
    env = await gateway.execute(ctx(), "notes.file.write", {"path": "a.txt"})
    assert env.ok and calls[0].path == "rewritten.txt"
    assert "saw rewritten.txt" in env.meta.warnings
    assert any("broken failed: boom" in w for w in env.meta.warnings)


async def test_session_scoping_stamps_and_refuses_other_sessions() -> None:
    gateway, calls = make_gateway()
    assert (await gateway.execute(ctx(), "notes.file.write", {"path": "a"})).ok
    assert calls[-1].session_id == "s1"
    env = await gateway.execute(ctx(), "notes.file.write", {"path": "a", "session_id": "s2"})
    assert env.code is ErrorCode.ACCESS_DENIED
    assert env.error and env.error.details["reason"] == "cross_session"
    assert len(calls) == 1


async def test_file_tracking_records_writes_but_not_dry_runs_or_failures() -> None:
    hooks = HookRegistry()
    touched: list[FileTouch] = []
    hooks.install(file_tracking(touched.append))
    gateway, _ = make_gateway(hooks)
    await gateway.execute(ctx(), "notes.file.write", {"path": "a.txt"})
    await gateway.execute(ctx(), "notes.file.write", {"path": "b.txt"}, dry_run=True)
    await gateway.execute(ctx(), "notes.file.write", {"nope": 1})
    assert touched == [FileTouch("s1", "engineer", "notes.file.write", "a.txt", "created")]


async def test_result_logging_has_latency_and_never_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hooks = HookRegistry()
    hooks.install(result_logging(redactor=Redactor([SECRET])))
    gateway, _ = make_gateway(hooks)
    with caplog.at_level(logging.INFO, logger="sylk.skills"):
        await gateway.execute(ctx(), "notes.file.write", {"path": "a", "text": f"key={SECRET}"})
    line = caplog.records[-1].getMessage()
    assert "op=notes.file.write" in line and "latency_ms=" in line and "ok=True" in line
    assert SECRET not in line


def test_prompt_hooks_inject_context_and_use_the_route_cache() -> None:
    hooks = HookRegistry()
    hooks.install(session_context_injection(lambda sid: f"session {sid}: fixing tests"))
    cache: dict[str, Any] = {}

    class Cache:
        def get(self, text: str) -> Any:
            return cache.get(text)

        def put(self, text: str, value: Any) -> None:
            cache[text] = value

    for hook in route_cache_hooks(Cache()):
        hooks.install(hook)
    data = hooks.run_pre_prompt(PromptData("guide", "s1", request("where is auth?")))
    assert data.context == ["## Session context\nsession s1: fixing tests"]
    assert data.request.system == request().system  # the system prompt is never touched
    assert not data.skip_llm
    data.result = "librarian"
    hooks.run_post_prompt(data)
    again = hooks.run_pre_prompt(PromptData("guide", "s1", request("where is auth?")))
    assert again.skip_llm and again.cached_result == "librarian"
    other = hooks.run_pre_prompt(PromptData("engineer", "s1", request("where is auth?")))
    assert not other.skip_llm  # the route cache hooks are the guide's only


def test_context_hook_gives_the_agent_loop_the_turns_context_block() -> None:
    hooks = HookRegistry()
    hooks.install(session_context_injection(lambda sid: "ctx", agents=["architect"]))

    def notes(data: PromptData) -> None:
        data.context.extend(["", "## Notes\nfreeze the API"])  # an empty section is skipped

    hooks.add(HookKind.PRE_PROMPT, notes, priority=HookPriority.LATE, agents=["architect"])
    assert hooks.context_hook("architect", "s1")(request()) == (
        "## Session context\nctx\n\n## Notes\nfreeze the API"
    )
    assert hooks.context_hook("engineer", "s1")(request()) == ""


def _field_errors(env: Any) -> dict[str, dict[str, Any]]:
    return {e["field"]: e for e in env.error.details["field_errors"]}


async def test_validation_errors_suggest_the_argument_name_meant() -> None:
    gateway, calls = make_gateway()
    typo = await gateway.execute(ctx(), "notes.file.write", {"pth": "a.txt"})
    assert typo.code is ErrorCode.VALIDATION_ERROR and typo.error
    assert typo.error.message == (
        "invalid arguments for notes.file.write: unknown argument 'pth'; did you mean 'path'?"
    )
    errors = _field_errors(typo)
    assert errors["pth"]["did_you_mean"] == "path"
    assert errors["path"]["did_you_mean"] == "path"  # the missing one names what was sent
    assert "you sent 'pth'" in errors["path"]["message"]
    assert typo.error.help_path == "notes.file.write"
    case = await gateway.execute(ctx(), "notes.file.write", {"path": "a", "Text": "x"})
    assert case.error and _field_errors(case)["Text"]["did_you_mean"] == "text"
    # Nothing close: the message lists the arguments there are instead of guessing.
    far = await gateway.execute(ctx(), "notes.file.write", {"path": "a", "colour": "red"})
    assert far.error and "did_you_mean" not in _field_errors(far)["colour"]
    assert "valid: path, text, session_id" in _field_errors(far)["colour"]["message"]
    assert far.error.message == "invalid arguments for notes.file.write"
    bare = await gateway.execute(ctx(), "notes.file.write", {})
    assert bare.error and "did_you_mean" not in _field_errors(bare)["path"]
    assert calls == []


async def test_suggestions_survive_without_the_validation_hook() -> None:
    hooks = HookRegistry()
    gateway, calls = make_gateway(hooks)
    assert hooks.remove("parameter_validation")
    env = await gateway.execute(ctx(), "notes.file.write", {"pth": "a.txt"})
    assert env.code is ErrorCode.VALIDATION_ERROR and env.error
    assert _field_errors(env)["pth"]["did_you_mean"] == "path"
    assert "did you mean 'path'" in env.error.message and calls == []
