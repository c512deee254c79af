"""``batch(chain=true)`` through the engine's real gateway and real builtin ops: steps
run in order, a step reads an earlier step's result through ``{"$ref": "N.path"}``,
the first failure stops the chain with what ran so far, and a reference that cannot
be followed is a field error before (later step) or at (missing path) its step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine, EngineParts
from backend.skills.models import SkillContext


@pytest.fixture
async def ctx(engine: Engine, workspace: Path) -> SkillContext:
    (workspace / "notes.md").write_text("alpha\nbeta\n")
    (workspace / "todo.txt").write_text("ship it\n")
    session = await engine.create_session("chains")
    return SkillContext(
        session_id=session.id,
        agent="librarian",
        workspace=workspace,
        confinement=engine.confinement(workspace),
    )


def ref(path: str) -> dict[str, str]:
    return {"$ref": path}


async def test_a_step_reads_the_file_an_earlier_step_listed(
    engine_parts: EngineParts, ctx: SkillContext
) -> None:
    calls: list[Any] = [
        {"verb": "execute", "op": "librarian.file.list", "args": {"pattern": "*.md"}},
        {"verb": "execute", "op": "librarian.file.read", "args": {"path": ref("0.result.files.0")}},
        {
            "verb": "execute",
            "op": "librarian.file.read",
            # a number stays a number, and a step may read any earlier one
            "args": {"path": ref("0.result.files.0"), "start_line": ref("0.result.count")},
        },
    ]
    out = await engine_parts.gateway.batch(ctx, calls, chain=True)
    assert out.ok, out
    listed, whole, first_line = out.result["results"]
    assert listed["result"]["files"] == ["notes.md"]
    assert "alpha" in str(whole["result"]) and "beta" in str(whole["result"])
    assert "alpha" in str(first_line["result"])
    assert out.result["summary"] == {"total": 3, "ok": 3, "failed": 0, "not_run": 0}
    assert "stopped_at" not in out.result and not out.meta.warnings


async def test_the_chain_stops_at_the_first_failing_step_with_what_ran(
    engine_parts: EngineParts, ctx: SkillContext, workspace: Path
) -> None:
    calls: list[Any] = [
        {"verb": "execute", "op": "librarian.file.list", "args": {"pattern": "*.txt"}},
        {"verb": "execute", "op": "librarian.file.read", "args": {"path": "gone.md"}},
        {"verb": "execute", "op": "librarian.file.read", "args": {"path": ref("0.result.files.0")}},
        {"verb": "search", "query": "read a file"},
    ]
    out = await engine_parts.gateway.batch(ctx, calls, chain=True)
    assert out.ok  # the batch answered; its steps say what happened
    ran = out.result["results"]
    assert [step["ok"] for step in ran] == [True, False]
    assert ran[1]["op"] == "librarian.file.read" and ran[1]["error"]["code"]
    assert out.result["stopped_at"] == 1
    assert out.result["not_run"] == [
        {"step": 2, "verb": "execute", "op": "librarian.file.read"},
        {"step": 3, "verb": "search", "query": "read a file"},
    ]
    assert out.result["summary"] == {"total": 4, "ok": 1, "failed": 1, "not_run": 2}
    assert any("chain stopped at step 1" in w for w in out.meta.warnings)


async def test_a_malformed_step_stops_the_chain_too(
    engine_parts: EngineParts, ctx: SkillContext
) -> None:
    calls: list[Any] = [
        {"verb": "describe", "op": "librarian.file.read"},
        {"verb": "summon", "op": "librarian.file.read"},
        {"verb": "execute", "op": "librarian.file.list", "args": {}},
    ]
    out = await engine_parts.gateway.batch(ctx, calls, chain=True)
    assert [step["ok"] for step in out.result["results"]] == [True, False]
    assert out.result["results"][1]["error"]["code"] == "VALIDATION_ERROR"
    assert out.result["stopped_at"] == 1 and len(out.result["not_run"]) == 1


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        ("1.result.files.0", "names step 1, which has not run before step 1"),
        ("2.result", "names step 2, which has not run before step 1"),
        ("steps[0].result", "is not a reference"),
    ],
)
async def test_a_reference_to_no_earlier_step_runs_nothing(
    engine_parts: EngineParts, ctx: SkillContext, workspace: Path, reference: str, why: str
) -> None:
    calls: list[Any] = [
        {
            "verb": "execute",
            "op": "engineer.file.write",
            "args": {"path": "made.txt", "content": "x"},
            "dry_run": False,
        },
        {"verb": "execute", "op": "librarian.file.read", "args": {"opts": [ref(reference)]}},
        {"verb": "search", "query": "anything"},
    ]
    out = await engine_parts.gateway.batch(ctx, calls, chain=True)
    assert not out.ok and out.error is not None
    assert out.error.code == "VALIDATION_ERROR" and out.error.help_path == "batch"
    (problem,) = out.error.details["field_errors"]
    assert problem["field"] == "calls.1.args.opts.0" and why in problem["message"]
    assert not (workspace / "made.txt").exists()  # step 0 never ran


async def test_a_path_the_earlier_result_lacks_fails_at_its_step(
    engine_parts: EngineParts, ctx: SkillContext
) -> None:
    calls: list[Any] = [
        {"verb": "execute", "op": "librarian.file.list", "args": {"pattern": "*.md"}},
        {"verb": "execute", "op": "librarian.file.read", "args": {"path": ref("0.result.files.4")}},
        {"verb": "execute", "op": "librarian.file.read", "args": {"path": ref("0.result.nope")}},
    ]
    out = await engine_parts.gateway.batch(ctx, calls, chain=True)
    first, second = out.result["results"]
    assert first["ok"] and not second["ok"]
    error = second["error"]
    assert error["code"] == "VALIDATION_ERROR"
    (problem,) = error["details"]["field_errors"]
    assert problem["field"] == "calls.1.args.path"
    assert "0.result.files has no '4' (it holds 1 items)" in problem["message"]
    assert out.result["stopped_at"] == 1


async def test_a_json_schema_ref_is_passed_on_and_a_plain_batch_resolves_nothing(
    engine_parts: EngineParts, ctx: SkillContext
) -> None:
    schema_ref = {"verb": "execute", "op": "librarian.file.read", "args": {"path": ref("#/x")}}
    out = await engine_parts.gateway.batch(ctx, [schema_ref], chain=True)
    (step,) = out.result["results"]  # the op itself refuses an object for a path
    assert step["error"]["code"] == "VALIDATION_ERROR"
    assert "field_errors" in step["error"]["details"]
    plain: list[Any] = [
        {"verb": "execute", "op": "librarian.file.list", "args": {"pattern": "*.md"}},
        {"verb": "execute", "op": "librarian.file.read", "args": {"path": ref("0.result.files.0")}},
    ]
    out = await engine_parts.gateway.batch(ctx, plain)
    ok, refused = out.result["results"]
    assert ok["ok"] and not refused["ok"]  # concurrent: nothing to read yet, no resolving
    assert "stopped_at" not in out.result and "not_run" not in out.result["summary"]


async def test_search_then_run_and_describe_its_first_hit_in_one_chain(
    engine_parts: EngineParts, ctx: SkillContext
) -> None:
    """The canonical chain: find an op, then run it, the op's name taken from the search
    (a reference may stand for an op or a query, not only inside args)."""
    calls: list[Any] = [
        {"verb": "search", "query": "list files matching a glob pattern", "limit": 1},
        {"verb": "describe", "op": ref("0.result.hits.0.op")},
        {"verb": "execute", "op": ref("0.result.hits.0.op"), "args": {"pattern": "*.txt"}},
        {"verb": "search", "query": ref("2.result.files.0")},
    ]
    out = await engine_parts.gateway.batch(ctx, calls, chain=True)
    found, described, listed, searched = out.result["results"]
    assert found["result"]["hits"][0]["op"] == "librarian.file.list"
    assert described["ok"] and described["op"] == "librarian.file.list"
    assert listed["ok"] and listed["result"]["files"] == ["todo.txt"]
    assert searched["ok"]  # the query was the file name step 2 listed
    assert out.result["summary"]["ok"] == 4


async def test_a_reference_outside_a_chain_or_to_a_later_step_in_an_op_is_refused(
    engine_parts: EngineParts, ctx: SkillContext
) -> None:
    early: list[Any] = [
        {"verb": "execute", "op": ref("1.result.hits.0.op"), "args": {}},
        {"verb": "search", "query": "read a file"},
    ]
    out = await engine_parts.gateway.batch(ctx, early, chain=True)
    assert out.error is not None
    assert out.error.details["field_errors"][0]["field"] == "calls.0.op"
    plain: list[Any] = [
        {"verb": "search", "query": "read a file"},
        {"verb": "describe", "op": ref("0.result.hits.0.op")},
    ]
    out = await engine_parts.gateway.batch(ctx, plain)
    _, refused = out.result["results"]
    assert refused["error"]["code"] == "VALIDATION_ERROR"
    assert "only in a chain" in refused["error"]["message"]
