"""The gateway verbs: search visibility, describe, execute envelopes, idempotency, batch."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from backend.skills.builtin.catalog import agent_context, build_gateway
from backend.skills.call_flags import is_dry_run
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.gateway.contextual import ContextTracker
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import (
    Guidance,
    OpKind,
    Skill,
    SkillContext,
    SkillResult,
    SkillTier,
)
from backend.skills.registry import Registry, Resource


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sql: str = Field(min_length=1)
    limit: int = Field(default=10, ge=1)


class Nap(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = 0.0
    fail: bool = False


class World:
    """A small registry whose handlers record their calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.napping = 0  # naps in flight now, and the most seen at once
        self.most_napping = 0
        self.registry = Registry()
        self.registry.define_domain("warehouse", description="Data warehouse", scopes=("staff",))
        add = self.registry.register
        add(
            self._skill(
                "warehouse.analyst.guide",
                "Teaches how to query the warehouse",
                guidance=(Guidance(op="warehouse.sql.query", prose="Run SQL"),),
                entry_point=True,
                tags=("guide", "sql"),
            )
        )
        add(
            self._skill(
                "warehouse.sql.query",
                "Execute SQL against the warehouse",
                searchable=False,
                scopes=("sql",),
                handler=self._query,
            )
        )
        add(
            self._skill(
                "warehouse.sql.drop",
                "Drop a warehouse table",
                kind=OpKind.WRITE,
                destructive=True,
                tags=("sql", "ddl"),
            )
        )
        add(
            self._skill(
                "warehouse.sql.truncate",
                "Truncate a warehouse table",
                kind=OpKind.WRITE,
                destructive=True,
                handler=self._truncate,
                supports_dry_run=True,
            )
        )
        add(self._skill("logs.activity.user", "User activity logs", searchable=False))
        add(
            self._skill(
                "util.time.nap",
                "Sleep for a while",
                params=Nap,
                handler=self._nap,
                kind=OpKind.WRITE,
            )
        )
        add(self._skill("util.special.report", "A specialised report", tier=SkillTier.SPECIALISED))
        add(
            self._skill(
                "util.graph.render",
                "Render a dependency graph picture",
                tier=SkillTier.CONTEXTUAL,
                triggers=(r"\bgraph",),
            )
        )
        self.registry.add_resource(
            Resource(uri="warehouse.sql.query/tables/orders", op="warehouse.sql.query",
                     name="orders", description="Orders fact table", args={"sql": "select"})
        )  # fmt: skip
        self.gateway = Gateway(self.registry, context_tracker=ContextTracker(self.registry))

    def _skill(self, op: str, description: str, **kw: Any) -> Skill:
        fields: dict[str, Any] = {"op": op, "agent": "analyst", "description": description,
                                  "params": Query, "handler": self._record(op)}  # fmt: skip
        fields.update(kw)
        return Skill(**fields)

    def _record(self, op: str) -> Any:
        async def handler(ctx: SkillContext, params: Any) -> Any:
            self.calls.append((op, params))
            return {"ran": op}

        return handler

    async def _query(self, ctx: SkillContext, params: Query) -> SkillResult:
        self.calls.append(("warehouse.sql.query", params))
        guidance = [Guidance(op="logs.activity.user", prose="Check the user's activity")]
        if "boom" in params.sql:
            raise SkillError(ErrorCode.CONFLICT, "table is locked", details={"table": "t"})
        if "crash" in params.sql:
            raise RuntimeError("driver exploded")
        return SkillResult(result=[{"n": 1}], guidance=guidance, warnings=["sampled"])

    async def _truncate(self, ctx: SkillContext, params: Query) -> dict[str, Any]:
        self.calls.append(("warehouse.sql.truncate", is_dry_run(ctx)))
        return {"would_remove_rows": 3} if is_dry_run(ctx) else {"removed_rows": 3}

    async def _nap(self, ctx: SkillContext, params: Nap) -> dict[str, float]:
        self.calls.append(("util.time.nap", params))
        self.napping += 1
        self.most_napping = max(self.most_napping, self.napping)
        try:
            await asyncio.sleep(params.seconds)
        finally:
            self.napping -= 1
        if params.fail:
            raise RuntimeError("nap failed")
        return {"slept": params.seconds}


def caller(session: str = "s1", scopes: tuple[str, ...] = ("staff", "sql"), **kw: Any) -> Any:
    return SkillContext(session_id=session, agent="analyst", workspace=Path("."),
                        scopes=frozenset(scopes), can_write=True, **kw)  # fmt: skip


def ops(envelope: Any) -> list[str]:
    return [hit["op"] for hit in envelope.result["hits"]]


async def test_hidden_ops_appear_only_after_guidance_and_only_in_that_session() -> None:
    world = World()
    gw = world.gateway
    assert "warehouse.sql.query" not in ops(gw.search(caller(), "execute sql query"))
    guide = await gw.execute(caller(), "warehouse.analyst.guide", {"sql": "x"})
    assert [g.op for g in guide.guidance] == ["warehouse.sql.query"]
    assert "warehouse.sql.query" in ops(gw.search(caller(), "execute sql query"))
    assert "warehouse.sql.query" not in ops(gw.search(caller("s2"), "execute sql query"))
    # Conditional, cross-domain guidance unveils the next hidden op.
    result = await gw.execute(caller(), "warehouse.sql.query", {"sql": "select 1"})
    assert result.ok and result.result == [{"n": 1}] and result.meta.warnings == ["sampled"]
    assert "logs.activity.user" in ops(gw.search(caller(), "user activity logs"))
    gw.forget_session("s1")
    assert "logs.activity.user" not in ops(gw.search(caller(), "user activity logs"))


async def test_ops_and_resources_without_scopes_are_not_offered() -> None:
    world = World()
    gw = world.gateway
    await gw.execute(caller(), "warehouse.analyst.guide", {"sql": "x"})
    hits = gw.search(caller(), "orders table").result["hits"]
    assert hits[0]["op"] == "warehouse.sql.query/tables/orders" and hits[0]["kind"] == "resource"
    assert hits[0]["execute_with"] == {"op": "warehouse.sql.query", "args": {"sql": "select"}}
    no_sql = ops(gw.search(caller(scopes=("staff",)), "orders table sql query"))
    assert not {"warehouse.sql.query", "warehouse.sql.query/tables/orders"} & set(no_sql)
    assert ops(gw.search(caller(scopes=()), "warehouse")) == []  # domain scope missing
    assert ops(gw.search(caller(), "sleep", domain="warehouse")) == []


async def test_access_denied_never_executes() -> None:
    world = World()
    env = await world.gateway.execute(caller(scopes=("staff",)), "warehouse.sql.query",
                                      {"sql": "select"})  # fmt: skip
    assert env.code is ErrorCode.ACCESS_DENIED and env.error
    assert env.error.details["missing"] == ["sql"] and env.error.help_path == "warehouse.sql.query"
    read_only = SkillContext(session_id="s1", agent="analyst", workspace=Path("."),
                             scopes=frozenset({"staff"}), can_write=False)  # fmt: skip
    env = await world.gateway.execute(read_only, "util.time.nap", {})
    assert env.code is ErrorCode.ACCESS_DENIED
    assert world.calls == []
    assert world.gateway.describe(read_only, "warehouse.sql.query").code is ErrorCode.ACCESS_DENIED


async def test_execute_envelope_and_error_codes() -> None:
    world = World()
    gw = world.gateway
    env = await gw.execute(caller(trace_id="tr_fixed"), "warehouse.sql.query", {"sql": "select"})
    data = env.to_model()
    assert set(data) == {"op", "ok", "result", "guidance", "meta"}
    assert data["meta"]["trace_id"] == "tr_fixed" and data["meta"]["latency_ms"] >= 0
    bad = await gw.execute(caller(), "warehouse.sql.query", {"sql": "", "limit": 0, "x": 1})
    assert bad.code is ErrorCode.VALIDATION_ERROR and bad.error
    fields = {e["field"] for e in bad.error.details["field_errors"]}
    assert fields == {"sql", "limit", "x"} and bad.error.help_path == "warehouse.sql.query"
    typo = await gw.execute(caller(), "warehouse.sql.drp", {})
    assert typo.code is ErrorCode.NOT_FOUND and typo.error and typo.error.suggestions
    assert typo.error.suggestions[0] == "warehouse.sql.drop" and typo.error.help_path == "search"
    hidden = await gw.execute(caller(), "warehouse.sql.quary", {})
    assert hidden.error and "warehouse.sql.query" not in (hidden.error.suggestions or [])
    conflict = await gw.execute(caller(), "warehouse.sql.query", {"sql": "boom"})
    assert conflict.code is ErrorCode.CONFLICT and conflict.error
    assert conflict.error.details == {"table": "t"}
    crash = await gw.execute(caller(), "warehouse.sql.query", {"sql": "crash"})
    assert crash.code is ErrorCode.INTERNAL and crash.error
    assert "driver exploded" in crash.error.message
    assert "error" in crash.to_model() and "result" not in crash.to_model()


async def test_destructive_ops_default_to_dry_run() -> None:
    world = World()
    gw = world.gateway
    preview = await gw.execute(caller(), "warehouse.sql.drop", {"sql": "drop t"})
    assert preview.ok and preview.meta.dry_run and preview.result["would_execute"]
    assert world.calls == []  # handler does not support dry runs: never called
    applied = await gw.execute(caller(), "warehouse.sql.drop", {"sql": "drop t"}, dry_run=False)
    assert (
        applied.ok and applied.meta.dry_run is False and world.calls[-1][0] == "warehouse.sql.drop"
    )
    preview = await gw.execute(caller(), "warehouse.sql.truncate", {"sql": "t"})
    assert preview.result == {"would_remove_rows": 3}
    applied = await gw.execute(caller(), "warehouse.sql.truncate", {"sql": "t"}, dry_run=False)
    assert applied.result == {"removed_rows": 3}
    assert world.calls[-2:] == [("warehouse.sql.truncate", True), ("warehouse.sql.truncate", False)]


async def test_idempotency_key_runs_once_and_conflicts_on_other_args() -> None:
    world = World()
    gw = world.gateway
    first, second = await asyncio.gather(
        gw.execute(caller(), "util.time.nap", {"seconds": 0.02}, idempotency_key="k1"),
        gw.execute(caller(), "util.time.nap", {"seconds": 0.02}, idempotency_key="k1"),
    )
    third = await gw.execute(caller(), "util.time.nap", {"seconds": 0.02}, idempotency_key="k1")
    assert first.ok and second.ok and third.ok and third.meta.replayed
    assert len(world.calls) == 1
    other = await gw.execute(caller(), "util.time.nap", {"seconds": 0.5}, idempotency_key="k1")
    assert other.code is ErrorCode.CONFLICT and len(world.calls) == 1
    elsewhere = await gw.execute(
        caller("s2"), "util.time.nap", {"seconds": 0}, idempotency_key="k1"
    )
    assert elsewhere.ok and len(world.calls) == 2  # keys are per session
    failed = await gw.execute(caller(), "util.time.nap", {"fail": True}, idempotency_key="k2")
    retried = await gw.execute(caller(), "util.time.nap", {"fail": True}, idempotency_key="k2")
    assert not failed.ok and not retried.ok and len(world.calls) == 4  # failures release the key


async def test_batch_runs_concurrently_in_order_and_isolates_failures() -> None:
    world = World()
    calls: list[Any] = [
        {"verb": "execute", "op": "util.time.nap", "args": {"seconds": 0.2}},
        {"verb": "execute", "op": "util.time.nap", "args": {"seconds": 0.2, "fail": True}},
        {"verb": "execute", "op": "util.time.nap", "args": {"seconds": 0.2}},
        {"verb": "describe", "op": "warehouse"},
        {"verb": "search", "query": "sleep"},
        {"verb": "teleport"},
        "not even a dict",
        {"verb": "execute", "op": "no.such.op"},
    ]
    env = await world.gateway.batch(caller(), calls)
    assert world.most_napping == 3  # the three executes ran concurrently, not one by one
    results = env.result["results"]
    assert [r["ok"] for r in results] == [True, False, True, True, True, False, False, False]
    assert results[1]["error"]["code"] == "INTERNAL"
    assert results[3]["result"]["directory"] and results[4]["result"]["hits"]
    assert results[5]["error"]["code"] == "VALIDATION_ERROR"
    assert results[7]["error"]["code"] == "NOT_FOUND"
    assert env.result["summary"] == {"total": 8, "ok": 4, "failed": 4}
    too_many = await world.gateway.batch(caller(), [{"verb": "search", "query": "x"}] * 26)
    assert too_many.code is ErrorCode.VALIDATION_ERROR


async def test_describe_levels_directory_root_and_cache() -> None:
    world = World()
    gw = world.gateway
    summary = gw.describe(caller(), "warehouse.sql.drop")
    assert summary.result["usage"].startswith('execute(op="warehouse.sql.drop"')
    assert "input_schema" not in summary.result and summary.result["destructive"]
    schema = gw.describe(caller(), "warehouse.sql.drop", "schema").result
    assert schema["input_schema"]["required"] == ["sql"]
    assert schema["scopes"] == ["staff"] and "examples" not in schema
    full = gw.describe(caller(), "warehouse.analyst.guide", "full").result
    assert full["leads_to"][0]["op"] == "warehouse.sql.query" and "examples" in full
    directory = gw.describe(caller(), "warehouse").result
    listed = [row["op"] for row in directory["ops"]]
    assert listed == ["warehouse.analyst.guide", "warehouse.sql.drop", "warehouse.sql.truncate"]
    assert directory["groups"] == [{"path": "warehouse.analyst", "ops": 1},
                                   {"path": "warehouse.sql", "ops": 2}]  # fmt: skip
    domains = {row["domain"] for row in gw.describe(caller(), "").result["domains"]}
    assert domains == {"warehouse", "util"}  # 'logs' holds only a hidden op
    again = gw.describe(caller(), "warehouse.sql.drop")
    assert again.meta.cached and not summary.meta.cached
    gw.registry.unregister("util.special.report")  # the version moves: caches miss
    assert not gw.describe(caller(), "warehouse.sql.drop").meta.cached
    missing = gw.describe(caller(), "warehous.sql")
    assert missing.code is ErrorCode.NOT_FOUND and missing.error and missing.error.suggestions
    assert gw.describe(caller(), "warehouse", "everything").code is ErrorCode.VALIDATION_ERROR
    resource = gw.describe(caller(), "warehouse.sql.query/tables/orders").result
    assert resource["read_with"]["op"] == "warehouse.sql.query"


async def test_contextual_skills_load_on_triggers_and_unload_later() -> None:
    world = World()
    tracker = world.gateway.tracker
    assert tracker is not None
    loaded, _ = tracker.observe("s1", "analyst", "can you draw the dependency graph?")
    assert loaded == {"util.graph.render"}
    tracker.observe("s1", "analyst", "thanks")
    tracker.observe("s1", "analyst", "now the tables")
    _, unloaded = tracker.observe("s1", "analyst", "and the columns")
    assert unloaded == {"util.graph.render"} and tracker.loaded("s1", "analyst") == []
    assert tracker.loaded("s2", "analyst") == []
    # Specialised skills ignore triggers; naming them loads them.
    tracker.observe("s1", "analyst", "special report please")
    assert "util.special.report" not in tracker.loaded("s1", "analyst")
    world.gateway.describe(caller(), "util.special.report")
    assert tracker.loaded("s1", "analyst") == ["util.special.report"]
    assert world.gateway.load(caller(), "util.graph.render").result == {"loaded": True}
    assert world.gateway.load(caller(), "nope.no.op").code is ErrorCode.NOT_FOUND


def test_builtin_search_finds_the_right_ops() -> None:
    gw = build_gateway()
    ctx = agent_context(
        "engineer", "s1", Path("."), scopes=frozenset({"shell", "history.cross_session"})
    )
    expectations = {
        "search the codebase for a symbol": "librarian.code.search",
        "grep for text in files": "librarian.code.search",
        "edit file replace text": "engineer.file.edit",
        "run a shell command": "engineer.shell.run",
        "run the test suite": "tester.tests.run",
        "list sessions": "session.list",
        "which files import this module": "librarian.code.dependencies",
        "compare two databases tradeoffs": "academic.research.compare",
        "store a decision in the chronicle": "archivalist.chronicle.store",
        "create an implementation plan": "architect.plan.create",
        "check code style lint": "inspector.style.check",
        "readFile": "engineer.file.read",
        "codebase structure overview": "librarian.code.structure",
    }
    for query, op in expectations.items():
        found = ops(gw.search(ctx, query, limit=3))
        assert op in found, (query, found)
    assert "engineer.task.complete" not in ops(gw.search(ctx, "complete task done finish"))


@pytest.mark.parametrize("level", ["summary", "schema", "full"])
def test_every_builtin_describes_at_every_level(level: str) -> None:
    gw = build_gateway()
    ctx = agent_context(
        "engineer", "s1", Path("."), scopes=frozenset({"shell", "history.cross_session"})
    )
    for skill in gw.registry:
        env = gw.describe(ctx, skill.op, level)
        assert env.ok, (skill.op, env.error)
        if level == "full":
            assert env.result["examples"], skill.op


def groups(envelope: Any) -> list[tuple[str, list[str]]]:
    """Each touched domain's ops as a model reads them: entry points, ops, resources."""
    result = envelope.result
    described = [*result["hits"], *result.get("entry_points", [])]
    out = []
    for domain in result["domains"]:
        mine = [h for h in described if h["op"].split(".", 1)[0] == domain]
        doors = [h["op"] for h in mine if h.get("entry_point")]
        ops = [h["op"] for h in mine if h.get("kind", "op") == "op" and h["op"] not in doors]
        resources = [h["op"] for h in mine if h.get("kind") == "resource"]
        out.append((domain, [*doors, *ops, *resources]))
    return out


async def test_search_groups_hits_by_domain_with_entry_points_first() -> None:
    world = World()
    gw = world.gateway
    await gw.execute(caller(), "warehouse.analyst.guide", {"sql": "x"})  # unveils sql.query
    env = gw.search(caller(), "truncate table orders", limit=3)
    # The flat ranking is what it was; the guide is not among its best three.
    assert "warehouse.analyst.guide" not in ops(env)
    (domain, listed), *rest = groups(env)
    assert rest == [] and domain == "warehouse"
    assert env.result["domains"] == {"warehouse": "Data warehouse"}
    # Entry point first, then the ops that scored, resources last.
    assert listed[0] == "warehouse.analyst.guide"
    assert listed[-1] == "warehouse.sql.query/tables/orders"
    assert set(listed[1:-1]) == {"warehouse.sql.truncate", "warehouse.sql.drop"}
    # Each op is described once: the guide did not score, so it is in entry_points.
    (guide,) = env.result["entry_points"]
    assert guide["op"] == "warehouse.analyst.guide"
    assert guide["entry_point"] is True and guide["score"] == 0.0  # listed, not a hit
    assert "warehouse.analyst.guide" not in str(env.result["hits"])  # said once, not twice
    # A domain the search did not touch gets no group; asking for it by name does.
    assert [d for d, _ in groups(gw.search(caller(), "sleep"))] == ["util"]
    assert groups(gw.search(caller(), "sleep", domain="warehouse")) == [
        ("warehouse", ["warehouse.analyst.guide"])
    ]
    # An entry point the caller may not run is never listed.
    assert groups(gw.search(caller(scopes=()), "truncate table")) == []


async def test_per_domain_caps_each_domain_but_not_its_entry_points() -> None:
    world = World()
    gw = world.gateway
    uncapped = ops(gw.search(caller(), "table warehouse sleep", limit=10))
    assert sum(op.startswith("warehouse.") for op in uncapped) >= 2
    env = gw.search(caller(), "table warehouse sleep", limit=10, per_domain=1)
    capped = ops(env)
    assert sum(op.startswith("warehouse.") for op in capped) == 1
    assert capped[0] == uncapped[0]  # the best hit of each domain is the one kept
    warehouse = dict(groups(env))["warehouse"]
    assert warehouse[0] == "warehouse.analyst.guide" and len(warehouse) <= 2


async def test_search_pages_follow_next_cursor_to_the_end() -> None:
    world = World()
    gw = world.gateway
    everything = ops(gw.search(caller(), "table warehouse", limit=50))
    assert len(everything) >= 3
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        env = gw.search(caller(), "table warehouse", limit=1, cursor=cursor)
        assert env.ok
        seen.extend(ops(env))
        listed = [op for _, hits in groups(env) for op in hits]
        # Entry points lead the first page only; later pages group just their own hits.
        if pages == 0:
            assert listed[0] == "warehouse.analyst.guide"
        else:
            assert listed == ops(env)
        pages += 1
        cursor = env.result.get("next_cursor")
        if cursor is None:
            break
    assert seen == everything and pages == len(everything)


async def test_a_cursor_only_continues_the_search_it_came_from() -> None:
    world = World()
    gw = world.gateway
    first = gw.search(caller(), "table warehouse", limit=1)
    cursor = first.result["next_cursor"]
    for other in (
        gw.search(caller(), "sleep", limit=1, cursor=cursor),
        gw.search(caller(), "table warehouse", limit=1, tags=["sql"], cursor=cursor),
        gw.search(caller(), "table warehouse", limit=1, cursor="not-a-cursor"),
    ):
        assert other.code is ErrorCode.VALIDATION_ERROR and other.error
        assert other.error.details["field_errors"][0]["field"] == "cursor"
        assert other.error.help_path == "search"
    gw.registry.unregister("util.special.report")
    later = gw.search(caller(), "table warehouse", limit=1, cursor=cursor)
    assert later.ok and any("changed since this cursor" in w for w in later.meta.warnings)


async def test_tags_keep_only_ops_carrying_every_tag() -> None:
    world = World()
    gw = world.gateway
    assert ops(gw.search(caller(), "", tags=["SQL"])) == [
        "warehouse.analyst.guide",
        "warehouse.sql.drop",
    ]
    assert ops(gw.search(caller(), "table", tags=["sql", "ddl"])) == ["warehouse.sql.drop"]
    assert ops(gw.search(caller(), "table", tags=["nope"])) == []
    # Entry points obey the filter too.
    assert groups(gw.search(caller(), "drop", tags=["ddl"])) == [
        ("warehouse", ["warehouse.sql.drop"])
    ]


def _versioned_world(version: int) -> World:
    world = World()
    world.registry.unregister("warehouse.sql.drop")
    world.registry.register(
        world._skill(
            "warehouse.sql.drop", "Drop a warehouse table", kind=OpKind.WRITE, version=version
        )
    )
    return world


async def test_versioned_ids_pin_an_ops_contract() -> None:
    world = _versioned_world(2)
    gw = world.gateway
    schema = gw.describe(caller(), "warehouse.sql.drop", "schema").result
    assert schema["id"] == "warehouse.sql.drop@2" and schema["version"] == 2
    assert gw.describe(caller(), "warehouse.sql.drop@2").result["op"] == "warehouse.sql.drop"
    ran = await gw.execute(caller(), "warehouse.sql.drop@2", {"sql": "t"}, dry_run=False)
    assert ran.ok and ran.op == "warehouse.sql.drop"
    stale = await gw.execute(caller(), "warehouse.sql.drop@1", {"sql": "t"}, dry_run=False)
    assert stale.code is ErrorCode.NOT_FOUND and stale.error
    assert "at version 2, not 1" in stale.error.message
    assert stale.error.suggestions == ["warehouse.sql.drop@2"]
    assert stale.error.help_path == "warehouse.sql.drop"
    assert world.calls == [("warehouse.sql.drop", Query(sql="t"))]  # the stale call never ran
    assert gw.describe(caller(), "warehouse.sql.drop@9").code is ErrorCode.NOT_FOUND
    denied = gw.describe(caller(scopes=()), "warehouse.sql.drop@1")
    assert denied.code is ErrorCode.ACCESS_DENIED  # no version details for a denied caller


async def test_describe_etag_spares_resending_an_unchanged_page() -> None:
    world = World()
    gw = world.gateway
    first = gw.describe(caller(), "warehouse.sql.drop", "schema")
    etag = first.meta.etag
    assert etag and first.result["input_schema"]
    again = gw.describe(caller(), "warehouse.sql.drop", "schema", if_none_match=etag)
    assert again.ok and again.result == {"path": "warehouse.sql.drop", "unchanged": True}
    # Another op changing does not change this page.
    gw.registry.unregister("util.special.report")
    same = gw.describe(caller(), "warehouse.sql.drop", "schema", if_none_match=etag)
    assert same.result.get("unchanged") is True
    # The op itself changing does: the caller gets the new page.
    gw.registry.unregister("warehouse.sql.drop")
    gw.registry.register(world._skill("warehouse.sql.drop", "Drop a table, for good"))
    changed = gw.describe(caller(), "warehouse.sql.drop", "schema", if_none_match=etag)
    assert changed.meta.etag != etag and changed.result["description"] == "Drop a table, for good"


async def test_search_hits_carry_usage_once_the_session_read_the_help() -> None:
    world = World()
    gw = world.gateway

    def drop_hit(session: str) -> dict[str, Any]:
        hits = gw.search(caller(session), "drop table").result["hits"]
        return next(h for h in hits if h["op"] == "warehouse.sql.drop")

    assert "usage" not in drop_hit("s1")
    gw.describe(caller("s1"), "warehouse.sql.drop")
    assert drop_hit("s1")["usage"].startswith('execute(op="warehouse.sql.drop", args={sql: str')
    assert gw.described("s1") == {"warehouse.sql.drop"}
    assert "usage" not in drop_hit("s2")
    gw.forget_session("s1")
    assert "usage" not in drop_hit("s1")


async def test_every_error_names_where_to_find_help() -> None:
    world = World()
    gw = world.gateway
    errors = [
        await gw.execute(caller(), "warehouse.sql.query", {"sql": ""}),
        await gw.execute(caller(), "no.such.op", {}),
        await gw.execute(caller(scopes=("staff",)), "warehouse.sql.query", {"sql": "x"}),
        await gw.execute(caller(), "warehouse.sql.query", {"sql": "crash"}),
        gw.describe(caller(), "warehouse", "everything"),
        gw.search(caller(), "x", cursor="garbage"),
    ]
    for env in errors:
        assert not env.ok and env.error and env.error.help_path is not None, env
