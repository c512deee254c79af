"""The gateway as the agent loop's ToolExecutor: the six-tool budget, dispatch, loading."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from backend.agents.gateway_tools import MAX_INITIAL_TOOLS, GatewayToolExecutor, tool_name
from backend.llm.types import ChatMessage, ChatOptions, ChatRequest, ToolCall
from backend.roles import AGENT_ROLES
from backend.skills.builtin.catalog import agent_context, build_gateway
from backend.skills.models import SkillTier

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
ALL_SCOPES = frozenset({"shell", "history.cross_session"})


def executor(agent: str, workspace: Path, **ctx: Any) -> GatewayToolExecutor:
    gateway = build_gateway()
    return GatewayToolExecutor(gateway, agent_context(agent, "s1", workspace, **ctx))


async def call(ex: GatewayToolExecutor, name: str, **arguments: Any) -> dict[str, Any]:
    outcome = await ex.execute(ToolCall(id="c1", name=name, arguments=arguments))
    data: dict[str, Any] = json.loads(outcome.content)
    assert outcome.is_error is (not data["ok"])
    return data


@pytest.mark.parametrize("agent", AGENT_ROLES)
def test_each_agent_first_sees_at_most_six_valid_tools(agent: str, tmp_path: Path) -> None:
    ex = executor(agent, tmp_path)
    specs = ex.specs()
    names = [s.name for s in specs]
    assert len(specs) <= MAX_INITIAL_TOOLS
    assert names[:4] == ["search", "describe", "execute", "batch"]
    assert all(TOOL_NAME.match(n) for n in names) and len(set(names)) == len(names)
    registry = ex.gateway.registry
    for op in ex.core_ops():
        skill = registry.require(op)
        assert skill.agent == agent and skill.tier is SkillTier.CORE


def test_pinned_core_ops_follow_registration_order_and_skip_unavailable(tmp_path: Path) -> None:
    engineer = executor("engineer", tmp_path)
    assert engineer.core_ops() == [
        "engineer.file.read", "engineer.file.edit", "engineer.file.write", "engineer.shell.run",
    ]  # fmt: skip
    assert engineer.pinned_ops() == ["engineer.file.read", "engineer.file.edit"]
    assert executor("librarian", tmp_path).pinned_ops() == [
        "librarian.code.search",
        "librarian.file.read",
    ]
    assert executor("archivalist", tmp_path).pinned_ops() == []  # no chronicle wired here
    assert executor("tester", tmp_path).pinned_ops() == ["tester.tests.run"]
    assert executor("tester", tmp_path, scopes=frozenset()).pinned_ops() == []  # lacks 'shell'


def test_tool_names_are_valid_even_for_long_ops() -> None:
    assert tool_name("engineer.file.read") == "engineer__file__read"
    long = "a" + ".segment_with_a_long_name" * 5
    assert TOOL_NAME.match(tool_name(long)) and tool_name(long) != tool_name(long + "x")


async def test_every_builtin_op_is_reachable_through_execute(tmp_path: Path) -> None:
    """Each op's first example runs: real handlers succeed, the rest say not available."""
    (tmp_path / "README.md").write_text("hello\n")
    for rel, text in {"src/app.py": "def main():\n    return old_name()\n",
                      "backend/engine.py": "import os\n"}.items():  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    real = 0
    for agent in AGENT_ROLES:
        ex = executor(agent, tmp_path, scopes=ALL_SCOPES, can_write=True)
        for skill in ex.gateway.registry:
            data = await call(ex, "execute", op=skill.op, args=skill.examples[0].args)
            assert data["op"] == skill.op
            if data["ok"]:
                real += 1
                continue
            error = data["error"]
            assert error["code"] == "INTERNAL", (agent, skill.op, error)
            assert error["details"]["reason"] == "not_available", (skill.op, error)
            assert "not built" in error["message"] or "not wired" in error["message"]
    # Twelve ops run without an engine's services (the engineer's consults need them).
    assert real == 9 * 12


async def test_verbs_dispatch_and_bad_input_is_an_error_envelope(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    ex = executor("engineer", tmp_path)
    found = await call(ex, "search", query="read a file")
    assert found["result"]["hits"][0]["op"] in ("engineer.file.read", "librarian.file.read")
    described = await call(ex, "describe", op="engineer__file__edit", level="schema")
    assert described["ok"] and described["result"]["op"] == "engineer.file.edit"
    by_path = await call(ex, "describe", path="librarian.code")
    assert by_path["result"]["directory"] and len(by_path["result"]["ops"]) == 5
    direct = await call(ex, "engineer__file__read", path="notes.txt")
    assert direct["result"]["content"] == "remember the milk\n"
    preview = await call(ex, "engineer__file__edit", path="notes.txt", old_content="milk",
                         new_content="eggs")  # fmt: skip
    assert preview["result"]["dry_run"] and (tmp_path / "notes.txt").read_text().endswith("milk\n")
    applied = await call(ex, "engineer__file__edit", path="notes.txt", old_content="milk",
                         new_content="eggs", dry_run=False)  # fmt: skip
    assert applied["ok"] and (tmp_path / "notes.txt").read_text() == "remember the eggs\n"
    batch = await call(ex, "batch", calls=[{"verb": "describe", "op": "librarian"},
                                           {"verb": "execute", "op": "engineer.file.read",
                                            "args": {"path": "notes.txt"}}])  # fmt: skip
    assert [r["ok"] for r in batch["result"]["results"]] == [True, True]
    # Paging, tags and per-domain caps reach the gateway from the tool and from batch.
    first = await call(ex, "search", query="read a file", limit=1, per_domain=1)
    second = await call(ex, "search", query="read a file", limit=1, per_domain=1,
                        cursor=first["result"]["next_cursor"])  # fmt: skip
    assert first["result"]["hits"][0]["op"] != second["result"]["hits"][0]["op"]
    tagged = await call(ex, "batch", calls=[{"verb": "search", "query": "file",
                                             "tags": ["edit", "patch"]}])  # fmt: skip
    (found,) = tagged["result"]["results"]
    assert [h["op"] for h in found["result"]["hits"]] == ["engineer.file.edit"]
    # The model's own batch tool chains too: step 1 lists, step 2 reads what it listed.
    chained = await call(ex, "batch", chain=True, calls=[
        {"verb": "execute", "op": "librarian.file.list", "args": {"pattern": "*.txt"}},
        {"verb": "execute", "op": "engineer.file.read",
         "args": {"path": {"$ref": "0.result.files.0"}}},
    ])  # fmt: skip
    assert [r["ok"] for r in chained["result"]["results"]] == [True, True]
    assert "remember the eggs" in str(chained["result"]["results"][1]["result"])
    etag = described["meta"]["etag"]
    same = await call(ex, "describe", op="engineer.file.edit", level="schema", if_none_match=etag)
    assert same["result"] == {"path": "engineer.file.edit", "unchanged": True}
    bad = await call(ex, "search", limit=3)
    assert bad["error"]["code"] == "VALIDATION_ERROR"
    assert bad["error"]["details"]["field_errors"][0]["field"] == "query"
    unknown = await call(ex, "engineer__file__reed", path="x")
    assert unknown["error"]["code"] == "NOT_FOUND" and unknown["error"]["suggestions"]


def _request(*texts: str, system: str | None = None) -> ChatRequest:
    return ChatRequest(system=system, messages=[ChatMessage.user(t) for t in texts],
                       options=ChatOptions(model="m"))  # fmt: skip


async def test_loaded_contextual_skills_are_named_in_the_context_never_the_tools(
    tmp_path: Path,
) -> None:
    ex = executor("librarian", tmp_path)
    before = ex.specs()
    assert {s.name for s in before} == {"search", "describe", "execute", "batch",
                                        "librarian__code__search",
                                        "librarian__file__read"}  # fmt: skip

    first = _request("which modules import the engine?", system="Be brief.")
    note = ex.context_note(first)
    # The loaded op is one `execute` away and said so; the tools and system keep their bytes.
    assert ex.loaded_ops() == ["librarian.code.dependencies"]
    assert note.startswith("Also ready through `execute`: `librarian.code.dependencies`, ")
    assert "`librarian.file.list`" in note  # a core op without a slot, after the loaded ones
    amended = ex.prompt_hook(first)
    assert amended.tools == before and amended.system == "Be brief."
    later = ex.prompt_hook(_request("which modules import the engine?", "ok", "thanks", "bye"))
    assert later.tools == before and not ex.loaded_ops()
    # Naming an op explicitly loads it too, unless it is not built yet; the tools stay.
    await call(ex, "describe", op="librarian.code.dependencies")
    assert ex.loaded_ops() == ["librarian.code.dependencies"] and ex.specs() == before
    await call(ex, "describe", op="librarian.code.patterns")  # no index wired: a placeholder
    assert "librarian.code.patterns" not in ex.loaded_ops()


def test_tool_schemas_serialise_with_sorted_keys(tmp_path: Path) -> None:
    for spec in executor("engineer", tmp_path).specs():
        text = json.dumps(spec.input_schema)
        assert text == json.dumps(spec.input_schema, sort_keys=True), spec.name


@pytest.mark.parametrize("agent", AGENT_ROLES)
async def test_no_agent_is_ever_offered_more_than_six_tools(agent: str, tmp_path: Path) -> None:
    """Every trigger fired and every op described at once: still six tools, all reachable."""
    ex = executor(agent, tmp_path, scopes=ALL_SCOPES, can_write=True)
    registry = ex.gateway.registry
    triggers = " ".join(t.strip("\\b()?") for s in registry for t in s.triggers)
    for skill in registry:
        await call(ex, "describe", op=skill.op)
    note = ex.context_note(_request(triggers))
    request = ex.prompt_hook(_request(triggers))
    names = [t.name for t in request.tools]
    assert len(names) <= MAX_INITIAL_TOOLS and names[:4] == [
        "search",
        "describe",
        "execute",
        "batch",
    ]
    assert names == [s.name for s in ex.specs()]  # loading never moves the tools
    if agent == "librarian":  # real contextual ops to load even without an engine
        assert ex.loaded_ops() and len(names) == MAX_INITIAL_TOOLS
    # Whatever has no slot is named in the turn's context, and execute reaches it.
    for op in ex.loaded_ops() + ex.core_ops():
        assert tool_name(op) in names or f"`{op}`" in note, op
